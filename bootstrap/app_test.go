package bootstrap

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/goleak"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/memory"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/internal/testlog"
)

// The tests here install the OpenTelemetry globals, so they do not run in
// parallel.

func testConfig(t *testing.T, env map[string]string) *config.Config {
	t.Helper()
	base := map[string]string{
		"FLUSS_GATEWAY__REST__LISTEN":                          "127.0.0.1:0",
		"FLUSS_GATEWAY__METRICS__EXPORTER__PROMETHEUS__LISTEN": "127.0.0.1:0",
		"FLUSS_GATEWAY__SHUTDOWN__DRAIN_TIMEOUT":               "5s",
		"FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE":             "0s",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__BACKEND":             "memory",
	}
	for k, v := range env {
		if v == "" {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	cfg, err := config.Load(config.Options{Env: base})
	require.NoError(t, err)
	return cfg
}

// takenAddr returns a loopback address whose port is held by a listener for
// the rest of the test.
func takenAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l.Addr().String()
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestLifecycle(t *testing.T) {
	cfg := testConfig(t, nil)
	var (
		rest    *RESTServer
		metrics *MetricsServer
	)
	app := fxtest.New(t, Options(cfg, discard()), fx.Populate(&rest, &metrics))
	assert.False(t, rest.Readiness().Accepting(), "not ready before start")
	app.RequireStart()

	base := "http://" + rest.Addr().String()
	status, body := get(t, base+"/ready")
	assert.Equal(t, 200, status, body)
	status, body = get(t, base+"/v1/clusters")
	assert.Equal(t, 200, status)
	assert.JSONEq(t, `{"clusters":["default"]}`, body)

	resp, err := http.Post(base+"/v1/clusters/default/databases", "application/json", strings.NewReader(`{"database":"d"}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 201, resp.StatusCode)

	// The data-plane routes are wired; the memory backend stores no rows.
	resp, err = http.Post(base+"/v1/clusters/default/databases/d/tables", "application/json",
		strings.NewReader(`{"table_name":"t","columns":[{"name":"id","data_type":{"type":"INTEGER"}}],"primary_key":["id"]}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 201, resp.StatusCode)
	resp, err = http.Post(base+"/v1/clusters/default/databases/d/tables/t/records", "application/json",
		strings.NewReader(`{"entries":[{"id":"a","upsert":{"id":1}}]}`))
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 501, resp.StatusCode, string(raw))
	assert.Contains(t, string(raw), "memory cluster backend does not support writes")

	require.NotNil(t, metrics.Addr())
	status, body = get(t, "http://"+metrics.Addr().String()+"/metrics")
	assert.Equal(t, 200, status)
	assert.Contains(t, body, "fluss_gateway_rest_requests_total", "REST metrics reach the Prometheus exposition")
	assert.Contains(t, body, `route="/v1/clusters/{cluster}/databases"`, "requests are labelled by route template")
	// otelfiber's own metrics are off: they carry the client's Host header.
	assert.NotContains(t, body, "http_server_duration")
	assert.NotContains(t, body, "net_host_name")

	app.RequireStop()
	assert.False(t, rest.Readiness().Accepting())
	_, err = net.DialTimeout("tcp", rest.Addr().String(), time.Second)
	assert.Error(t, err, "the REST listener is closed")
	_, err = net.DialTimeout("tcp", metrics.Addr().String(), time.Second)
	assert.Error(t, err, "the metrics listener is closed")
}

func TestMetricsListenerIsOptional(t *testing.T) {
	cfg := testConfig(t, map[string]string{"FLUSS_GATEWAY__METRICS__ENABLED": "false"})
	var metrics *MetricsServer
	app := fxtest.New(t, Options(cfg, discard()), fx.Populate(&metrics))
	app.RequireStart()
	assert.Nil(t, metrics.Addr())
	app.RequireStop()
}

func TestStartFailures(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()

	cases := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{
			name: "REST port taken",
			env:  map[string]string{"FLUSS_GATEWAY__REST__LISTEN": taken.Addr().String()},
			want: []string{"gateway.rest.listen", taken.Addr().String()},
		},
		{
			name: "metrics port taken",
			env:  map[string]string{"FLUSS_GATEWAY__METRICS__EXPORTER__PROMETHEUS__LISTEN": taken.Addr().String()},
			want: []string{"address already in use"},
		},
		{
			name: "JWKS file missing",
			env: map[string]string{
				"FLUSS_GATEWAY__SECURITY__AUTHENTICATION":       "jwt",
				"FLUSS_GATEWAY__SECURITY__JWT__ISSUER":          "https://idp.example.com",
				"FLUSS_GATEWAY__SECURITY__JWT__AUDIENCE":        "gateway",
				"FLUSS_GATEWAY__SECURITY__JWT__JWKS_FILE":       "/nonexistent/jwks.json",
				"FLUSS_GATEWAY__SECURITY__ACT_AS__HEADER":       "x-act-as",
				"FLUSS_GATEWAY__SECURITY__TRUSTED_HEADER__NAME": "x-user",
			},
			want: []string{"caller authentication", "gateway.security.jwt.jwks-file"},
		},
		{
			name: "TLS certificate missing",
			env: map[string]string{
				"FLUSS_GATEWAY__SECURITY__AUTHENTICATION": "token",
				"FLUSS_GATEWAY__SECURITY__TOKENS":         "t0k3n-0123456789abcdef:alice",
				"FLUSS_GATEWAY__REST__TLS__CERT_FILE":     "/nonexistent/cert.pem",
				"FLUSS_GATEWAY__REST__TLS__KEY_FILE":      "/nonexistent/key.pem",
			},
			want: []string{"REST listener TLS", "gateway.rest.tls.cert-file"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := fx.New(Options(testConfig(t, tc.env), discard()))
			err := app.Err()
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				err = app.Start(ctx)
				if err == nil {
					require.NoError(t, app.Stop(ctx))
				}
			}
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotContains(t, err.Error(), "t0k3n-0123456789abcdef")
		})
	}
}

// TestGracefulDrain plugs a memory cluster in through the ClusterFactory,
// exactly where the Fluss adapter goes, holds a request inside the backend
// and stops the gateway: the request completes, /ready turns 503 meanwhile
// and new connections are refused.
func TestGracefulDrain(t *testing.T) {
	const grace = 600 * time.Millisecond
	cluster := memory.NewCluster()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	cluster.Catalog().SetHook(func(ctx context.Context, op string) error {
		if op == "ListDatabases" {
			once.Do(func() { close(entered) })
			<-release
		}
		return nil
	})
	cfg := testConfig(t, map[string]string{
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__BACKEND": "",
		"FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE": "600ms",
	})
	var rest *RESTServer
	app := fxtest.New(t, Options(cfg, discard()),
		fx.Decorate(func() ClusterFactory {
			return func(context.Context, config.Cluster, *slog.Logger) (ClusterBackend, error) { return cluster, nil }
		}),
		fx.Populate(&rest),
	)
	app.RequireStart()
	base := "http://" + rest.Addr().String()
	status, _ := get(t, base+"/ready")
	require.Equal(t, 200, status)

	type result struct {
		status int
		err    error
	}
	inflight := make(chan result, 1)
	go func() {
		resp, err := http.Get(base + "/v1/clusters/default/databases")
		if err != nil {
			inflight <- result{err: err}
			return
		}
		resp.Body.Close()
		inflight <- result{status: resp.StatusCode}
	}()
	<-entered

	stopAt := time.Now()
	stopped := make(chan error, 1)
	go func() { stopped <- app.Stop(context.Background()) }()
	require.Eventually(t, func() bool { return !rest.Readiness().Ready() }, 5*time.Second, 5*time.Millisecond)

	// The readiness grace: the listener still accepts, /ready answers 503
	// with the envelope and Retry-After, application requests are served.
	resp, err := http.Get(base + "/ready")
	require.NoError(t, err, "probes reach the listener during the grace")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 503, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Contains(t, string(body), `"code":"unavailable"`)
	assert.Contains(t, string(body), "shutting down")
	status, _ = get(t, base+"/v1/clusters")
	assert.Equal(t, 200, status, "application requests are still served during the grace")
	assert.Less(t, time.Since(stopAt), grace, "the probes above ran inside the grace")

	// After the grace the listener closes while the request is in flight.
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", rest.Addr().String(), 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 5*time.Second, 10*time.Millisecond, "the listener closes while the request is in flight")
	assert.GreaterOrEqual(t, time.Since(stopAt), grace, "the listener closes only after the grace")
	assert.False(t, rest.Readiness().Accepting())

	close(release)
	r := <-inflight
	require.NoError(t, r.err)
	assert.Equal(t, 200, r.status, "the in-flight request completes")
	require.NoError(t, <-stopped)
}

func TestStopTimeoutCoversTheGrace(t *testing.T) {
	cases := []struct {
		name  string
		grace string
		want  time.Duration
	}{
		{"no grace", "0s", 5*time.Second + stopMargin},
		{"with grace", "3s", 3*time.Second + 5*time.Second + stopMargin},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, map[string]string{"FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE": tc.grace})
			app := fx.New(Options(cfg, discard()))
			require.NoError(t, app.Err())
			assert.Equal(t, tc.want, app.StopTimeout())
		})
	}
}

func TestClusterStartupLogSaysConfigured(t *testing.T) {
	cases := []struct {
		name    string
		backend string
		want    []string
	}{
		{"memory", "memory", []string{`"msg":"cluster configured"`, `"backend":"memory"`, "nothing is stored in Fluss"}},
		{"fluss", "", []string{`"msg":"cluster configured"`, `"backend":"fluss"`, "opened on first use", `"auto_create_partitions":true`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs testlog.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			cfg := testConfig(t, map[string]string{
				"FLUSS_GATEWAY__CLUSTER__DEFAULT__BACKEND": tc.backend,
				"FLUSS_GATEWAY__METRICS__ENABLED":          "false",
			})
			app := fxtest.New(t, Options(cfg, log), fx.Decorate(func() ClusterFactory {
				return func(context.Context, config.Cluster, *slog.Logger) (ClusterBackend, error) {
					return memory.NewCluster(), nil
				}
			}))
			app.RequireStart()
			app.RequireStop()
			out := logs.String()
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
			assert.NotContains(t, out, "cluster ready")
		})
	}
}

func TestMain_(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		environ  []string
		wantCode int
		stdout   []string
		stderr   []string
		hidden   []string
	}{
		{
			name: "print config redacts secrets",
			args: []string{"--print-config", "--bind-address", "127.0.0.1:18080"},
			environ: []string{
				"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__ACCOUNT=svc",
				"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET=hunter2",
			},
			wantCode: ExitOK,
			stdout:   []string{`gateway.rest.listen: "127.0.0.1:18080"`, `gateway.cluster.default.connection.service.secret: "******"`, `connection.security.protocol: "SASL"`},
			hidden:   []string{"hunter2"},
		},
		{
			name:     "bad configuration",
			environ:  []string{"FLUSS_GATEWAY__REST__LISTN=1"},
			wantCode: ExitUsage,
			stderr:   []string{"FLUSS_GATEWAY__REST__LISTN"},
		},
		{
			name:     "missing config file from the environment",
			environ:  []string{"FLUSS_GATEWAY_CONFIG=/nonexistent/gateway.yaml"},
			wantCode: ExitUsage,
			stderr:   []string{"/nonexistent/gateway.yaml"},
		},
		{name: "unknown flag", args: []string{"--nope"}, wantCode: ExitUsage},
		{name: "stray argument", args: []string{"serve"}, wantCode: ExitUsage, stderr: []string{"unexpected arguments"}},
		{name: "bad log level", args: []string{"--log-level", "loud"}, wantCode: ExitUsage, stderr: []string{"--log-level"}},
		{
			name: "start failure",
			environ: []string{"FLUSS_GATEWAY__REST__LISTEN=" + takenAddr(t), "FLUSS_GATEWAY__METRICS__ENABLED=false",
				"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__ACCOUNT=admin",
				"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET=admin-secret"},
			wantCode: ExitFailed,
			stderr:   []string{"failed to start", "gateway.rest.listen"},
			hidden:   []string{"admin-secret"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(tc.args, tc.environ, &stdout, &stderr)
			assert.Equal(t, tc.wantCode, code, "stderr: %s", stderr.String())
			for _, w := range tc.stdout {
				assert.Contains(t, stdout.String(), w)
			}
			for _, w := range tc.stderr {
				assert.Contains(t, stderr.String(), w)
			}
			for _, h := range tc.hidden {
				assert.NotContains(t, stdout.String()+stderr.String(), h)
			}
		})
	}
}

// Stopping the gateway ends every goroutine its REST server started,
// including the lingering close of a connection whose client still has a
// body to send (which would otherwise read on for the linger timeout). Not
// parallel, so that the leak check sees only this test's goroutines.
func TestRESTServerStopEndsItsGoroutines(t *testing.T) {
	before := goleak.IgnoreCurrent()
	env := map[string]string{
		"FLUSS_GATEWAY__METRICS__ENABLED":     "false",
		"FLUSS_GATEWAY__REST__LINGER_TIMEOUT": "1h",
	}
	var rest *RESTServer
	app := fxtest.New(t, Options(testConfig(t, env), slog.New(slog.DiscardHandler)), fx.Populate(&rest))
	app.RequireStart()

	// A body over the limit is refused before it is read: the server closes
	// the connection and lingers, reading what the client still sends.
	c, err := net.Dial("tcp", rest.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	// The first 16 KiB of the body follow the head at once, as a real
	// client's would (the server's streamed-body prefetch reads up to 8 KiB
	// before any handler runs).
	_, err = fmt.Fprintf(c, "POST /v1/clusters/default/databases HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{%s", 1<<30, strings.Repeat(" ", 16<<10))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

	start := time.Now()
	app.RequireStop()
	assert.Less(t, time.Since(start), 30*time.Second)
	goleak.VerifyNone(t, before,
		// fasthttp's process-wide clock for the Date header, started once.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		// fasthttp's idle-worker cleaner sleeps 10 s between rounds and only
		// then sees that its pool stopped (fasthttp workerpool.go); it holds
		// nothing of ours.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"))
}
