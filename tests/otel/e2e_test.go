//go:build otel

// Package otel holds the end-to-end telemetry test: a real OpenTelemetry
// Collector (tools/otelcol, config deployments/otel/collector.yaml) receives
// the traces and metrics of the gateway binary, and the test asserts on what
// the collector wrote to its file.
//
//	bash tests/otel/run.sh                  # builds the collector if needed, runs the test
//	go test -tags otel -count=1 -v ./tests/otel/...   # with .cache/otelcol/bin/otelcol-test built
//
// Environment:
//
//	OTELCOL_BIN          collector binary (default $OTELCOL_CACHE_DIR/bin/otelcol-test, OTELCOL_CACHE_DIR
//	                     defaulting to .cache/otelcol as in tools/otelcol/build.sh)
//	GATEWAY_BIN          gateway binary (default: go build ./bootstrap/cmd/gateway)
//	FLUSS_BOOTSTRAP      a running Fluss cluster (else the memory backend is used)
//	OTEL_TEST_REQUIRED=1 fail instead of skipping when the collector is missing
//	OTEL_TEST_STRICT=1   fail instead of skipping the checks that wait for
//	                     wiring in other packages (see pending below)
package otel

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/telemetry"
	"github.com/fluss-gateway/fluss-gateway-go/internal/testlog"
)

// Collector endpoints of deployments/otel/collector.yaml.
const (
	collectorGRPC = "127.0.0.1:14317"
	collectorHTTP = "127.0.0.1:14318"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// process is a started child process.
type process struct {
	name string
	cmd  *exec.Cmd
	out  *testlog.Buffer
	done chan error
}

func start(t *testing.T, name string, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{name: name, cmd: cmd, out: &testlog.Buffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	require.NoError(t, cmd.Start(), "starting %s", name)
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if !p.exited() {
			_ = cmd.Process.Kill()
			err := <-p.done
			p.done <- err
		}
		if t.Failed() {
			t.Logf("--- %s output ---\n%s", name, tail(p.out.String(), 8000))
		}
	})
	return p
}

// stop sends SIGTERM and waits; the error is the process's exit error.
func (p *process) stop(t *testing.T, timeout time.Duration) error {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err // keep it for the cleanup
		return err
	case <-time.After(timeout):
		t.Fatalf("%s did not stop within %s", p.name, timeout)
		return nil
	}
}

func (p *process) exited() bool {
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func waitFor(t *testing.T, what string, timeout time.Duration, p *process, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if p != nil && p.exited() {
			t.Fatalf("%s exited while waiting for %s", p.name, what)
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func dialable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// strict makes the pending checks mandatory.
var strict = os.Getenv("OTEL_TEST_STRICT") == "1"

// pending runs a check that depends on wiring other packages own: it fails
// in strict mode and is skipped (with the reason) otherwise.
func pending(t *testing.T, name string, ok bool, why string) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		if ok {
			return
		}
		if strict {
			t.Fatalf("missing: %s", why)
		}
		t.Skipf("pending: %s", why)
	})
}

type httpResult struct {
	status int
	header http.Header
	body   string
}

func call(t *testing.T, method, url, body string, header ...string) httpResult {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "%s %s", method, url)
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	return httpResult{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func findSpan(spans []span, pred func(span) bool) *span {
	for i := range spans {
		if pred(spans[i]) {
			return &spans[i]
		}
	}
	return nil
}

func TestGatewayTelemetryReachesCollector(t *testing.T) {
	root := repoRoot(t)

	// The collector.
	collectorBin := os.Getenv("OTELCOL_BIN")
	if collectorBin == "" {
		cache := os.Getenv("OTELCOL_CACHE_DIR") // as tools/otelcol/build.sh
		if cache == "" {
			cache = filepath.Join(root, ".cache", "otelcol")
		}
		collectorBin = filepath.Join(cache, "bin", "otelcol-test")
	}
	if _, err := os.Stat(collectorBin); err != nil {
		if os.Getenv("OTEL_TEST_REQUIRED") == "1" {
			t.Fatalf("no collector at %s: run bash tools/otelcol/build.sh", collectorBin)
		}
		t.Skipf("no collector at %s: run bash tools/otelcol/build.sh (or bash tests/otel/run.sh)", collectorBin)
	}
	for _, addr := range []string{collectorGRPC, collectorHTTP} {
		require.Falsef(t, dialable(addr), "%s is taken: is another collector running?", addr)
	}
	dir := t.TempDir()
	outFile := filepath.Join(dir, "otel-out.jsonl")
	collector := exec.Command(collectorBin, "--config", filepath.Join(root, "deployments", "otel", "collector.yaml"))
	collector.Env = append(os.Environ(), "OTELCOL_OUTPUT_FILE="+outFile)
	col := start(t, "collector", collector)
	waitFor(t, "the collector's OTLP ports", 20*time.Second, col, func() bool { return dialable(collectorGRPC) && dialable(collectorHTTP) })

	// The gateway binary.
	gatewayBin := os.Getenv("GATEWAY_BIN")
	if gatewayBin == "" {
		gatewayBin = filepath.Join(dir, "fluss-gateway")
		build := exec.Command("go", "build", "-o", gatewayBin, "./bootstrap/cmd/gateway")
		build.Dir = root
		out, err := build.CombinedOutput()
		require.NoError(t, err, "go build ./bootstrap/cmd/gateway:\n%s", out)
	}
	restAddr, metricsAddr := freeAddr(t), freeAddr(t)
	run := randomHex(t, 4)
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, "FLUSS_GATEWAY") {
			env = append(env, kv)
		}
	}
	env = append(env,
		// Traces over OTLP/gRPC, metrics over OTLP/HTTP: both exporters at once.
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+collectorHTTP,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://"+collectorGRPC,
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc",
		"OTEL_METRIC_EXPORT_INTERVAL=60000", // only the flush at shutdown exports
		"OTEL_BSP_SCHEDULE_DELAY=100",
		"OTEL_RESOURCE_ATTRIBUTES=deployment.environment.name=otel-test,test.run="+run,
		"FLUSS_GATEWAY__METRICS__ENABLED=true",
		"FLUSS_GATEWAY__METRICS__EXPORTER__PROMETHEUS__LISTEN="+metricsAddr,
	)
	flussBootstrap := os.Getenv("FLUSS_BOOTSTRAP")
	if flussBootstrap != "" {
		env = append(env, "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS="+flussBootstrap)
		t.Logf("backend: Fluss cluster at %s", flussBootstrap)
	} else {
		env = append(env, "FLUSS_GATEWAY__CLUSTER__DEFAULT__BACKEND=memory")
		t.Log("backend: memory (set FLUSS_BOOTSTRAP to use a Fluss cluster)")
	}
	gw := exec.Command(gatewayBin, "--config", filepath.Join(root, "configs", "local.yaml"), "--bind-address", restAddr)
	gw.Env = env
	gateway := start(t, "gateway", gw)
	base := "http://" + restAddr
	waitFor(t, "the gateway's /ready", 30*time.Second, gateway, func() bool {
		resp, err := http.Get(base + "/ready")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == 200
	})

	// Requests. The create carries a W3C traceparent: its span must continue
	// that trace under that parent.
	traceID, parentID := randomHex(t, 16), randomHex(t, 8)
	db := "otel_" + run
	dbs := base + "/v1/clusters/default/databases"
	createID, listID := uuid.NewString(), uuid.NewString() // the gateway keeps only a UUID x-request-id
	r := call(t, "POST", dbs, fmt.Sprintf(`{"database":%q}`, db),
		"X-Request-Id", createID, "traceparent", "00-"+traceID+"-"+parentID+"-01")
	require.Equal(t, 201, r.status, r.body)
	require.Equal(t, createID, r.header.Get("X-Request-Id"))
	r = call(t, "GET", dbs, "", "X-Request-Id", listID)
	require.Equal(t, 200, r.status, r.body)
	require.Contains(t, r.body, db)
	r = call(t, "GET", dbs+"/missing_"+run, "")
	require.Equal(t, 404, r.status, r.body)

	// A write, once the records route serves: a primary-key table and one upsert.
	wrote := false
	tables := dbs + "/" + db + "/tables"
	r = call(t, "POST", tables, `{"table_name":"events","columns":[{"name":"id","data_type":{"type":"BIGINT"}},{"name":"msg","data_type":{"type":"STRING"}}],"primary_key":["id"]}`)
	require.Equal(t, 201, r.status, r.body)
	r = call(t, "POST", tables+"/events/records", `{"entries":[{"id":"e1","upsert":{"id":1,"msg":"hello"}}]}`, "X-Request-Id", uuid.NewString())
	if r.status == 200 {
		wrote = true
	} else {
		t.Logf("write route answered %d (%s): write telemetry not checked", r.status, tail(r.body, 300))
	}

	// The Prometheus listener serves at the same time as OTLP export.
	prom := call(t, "GET", "http://"+metricsAddr+"/metrics", "")
	require.Equal(t, 200, prom.status)
	assert.Contains(t, prom.body, "# TYPE go_goroutine_count gauge", "Go runtime metrics")
	assert.Contains(t, prom.body, "target_info{", "resource as target_info")
	assert.Contains(t, prom.body, `deployment_environment_name="otel-test"`, "resource from OTEL_RESOURCE_ATTRIBUTES")

	// Cleanup of the catalog (a real cluster keeps state between runs).
	call(t, "DELETE", dbs+"/"+db+"?cascade=true", "")

	// SIGTERM: the gateway drains and flushes its telemetry before exiting.
	require.NoError(t, gateway.stop(t, 30*time.Second), "the gateway exits cleanly")

	// Wait until the collector wrote the flushed data, then stop it.
	var spans []span
	var metrics []metricEntry
	waitFor(t, "the request span and metrics in the collector's file", 15*time.Second, col, func() bool {
		var err error
		spans, metrics, err = readOTLP(outFile)
		if err != nil {
			return false
		}
		return findSpan(spans, func(s span) bool { return s.TraceID == traceID }) != nil &&
			slices.ContainsFunc(metrics, func(m metricEntry) bool { return m.Resource["test.run"] == run })
	})
	require.NoError(t, col.stop(t, 15*time.Second))
	spans, metrics, err := readOTLP(outFile)
	require.NoError(t, err)

	// The request span: route template name, server kind, HTTP attributes,
	// the caller's trace and parent, the gateway's resource.
	create := findSpan(spans, func(s span) bool { return s.TraceID == traceID && s.Kind == spanKindServer })
	require.NotNil(t, create)
	assert.Equal(t, "POST /v1/clusters/{cluster}/databases", create.Name)
	assert.Equal(t, parentID, create.ParentSpanID, "the caller's span is the parent")
	a := attrs(create.Attributes)
	assert.Equal(t, "POST", a["http.method"])
	assert.Equal(t, "201", a["http.status_code"])
	assert.Contains(t, a["http.route"], "/databases")
	assert.Equal(t, "fluss-gateway", create.Resource["service.name"])
	assert.Equal(t, "otel-test", create.Resource["deployment.environment.name"])
	assert.Equal(t, run, create.Resource["test.run"])

	list := findSpan(spans, func(s span) bool {
		return s.Resource["test.run"] == run && s.Name == "GET /v1/clusters/{cluster}/databases"
	})
	require.NotNil(t, list, "the list request is traced too")
	assert.Equal(t, "200", attrs(list.Attributes)["http.status_code"])
	assert.NotNil(t, findSpan(spans, func(s span) bool {
		return s.Resource["test.run"] == run && s.Name == "GET /v1/clusters/{cluster}/databases/{database}" &&
			attrs(s.Attributes)["http.status_code"] == "404"
	}), "the 404 is traced under its route template")

	// Metrics exported over OTLP at shutdown.
	names := map[string]bool{}
	for _, m := range metrics {
		if m.Resource["test.run"] == run {
			names[m.Name] = true
		}
	}
	assert.True(t, names["go.goroutine.count"], "Go runtime metrics: %v", names)
	assert.True(t, names["fluss.gateway.rest.requests"], "REST request metrics: %v", names)
	assert.False(t, names["http.server.duration"], "otelfiber's Host-labelled metrics stay off: %v", names)

	// Checks that need wiring in packages other owners hold (see the
	// telemetry report): they pass as soon as the wiring lands.
	pending(t, "request id on the server span", a[string(telemetry.RequestIDKey)] == createID,
		"adapters/http must set "+string(telemetry.RequestIDKey)+" on the server span (otelfiber.WithCustomAttributes or telemetry.SetRequestID semantics)")
	pending(t, "REST metric families", names[telemetry.MetricRESTRequests] && names[telemetry.MetricRESTRequestDuration],
		"adapters/http must call GatewayMetrics.ObserveRequest through bootstrap")
	if flussBootstrap != "" {
		pending(t, "Fluss connection metrics", names[telemetry.MetricConnectionsCreated] && names[telemetry.MetricBackendRequests],
			"bootstrap must pass Instrumentation.FlussHooks(cluster) in fluss.Config.Hooks")
		pending(t, "Fluss request spans under the REST span", findSpan(spans, func(s span) bool {
			return s.TraceID == traceID && s.Name == "fluss.CreateDatabase" && s.Kind == spanKindClient && s.ParentSpanID == create.SpanID
		}) != nil, "bootstrap must pass Instrumentation.FlussHooks(cluster) in fluss.Config.Hooks")
	}
	if wrote {
		pending(t, "write entry metrics", names[telemetry.MetricWriteEntries],
			"the write use case must call GatewayMetrics.RecordEntries")
		if flussBootstrap != "" {
			pending(t, "backend write metrics", names[telemetry.MetricBackendWriteRows] && names[telemetry.MetricWriterBatches],
				"the writer must receive Instrumentation.WriterHooks(cluster) as writer.Options.Metrics")
			write := findSpan(spans, func(s span) bool {
				return s.Resource["test.run"] == run && s.Kind == spanKindServer &&
					s.Name == "POST /v1/clusters/{cluster}/databases/{database}/tables/{table}/records"
			})
			require.NotNil(t, write, "the write request is traced")
			// The request's trace holds its wait for the Fluss write
			// (fluss.write.wait, a child of the request span), linked both
			// ways with the shared fluss.PutKv span.
			wait := findSpan(spans, func(s span) bool {
				return s.TraceID == write.TraceID && s.ParentSpanID == write.SpanID && s.Name == telemetry.WaitSpanName
			})
			require.NotNil(t, wait, "the write's trace has its fluss.write.wait span")
			wa := attrs(wait.Attributes)
			assert.Equal(t, "1", wa[string(telemetry.SpanAttrAttempts)], "%v", wa)
			assert.Equal(t, "1", wa[string(telemetry.SpanAttrEntriesOK)], "%v", wa)
			assert.Equal(t, "1", wa[string(telemetry.SpanAttrBucketCount)], "%v", wa)
			put := findSpan(spans, func(s span) bool {
				linked := slices.Contains(s.Links, spanLink{TraceID: wait.TraceID, SpanID: wait.SpanID})
				a := attrs(s.Attributes)
				return s.Name == "fluss.PutKv" && s.Kind == spanKindClient && linked &&
					a[string(telemetry.SpanAttrRowCount)] == "1" && a[string(telemetry.SpanAttrAPI)] == "PUT_KV"
			})
			require.NotNil(t, put, "the PutKv span links the request's wait span")
			assert.True(t, slices.Contains(wait.Links, spanLink{TraceID: put.TraceID, SpanID: put.SpanID}),
				"the wait span links the PutKv span")
		}
	}
	pending(t, "access log carries trace_id", strings.Contains(gateway.out.String(), `"request_id":"`+createID+`"`) &&
		strings.Contains(gateway.out.String(), `"trace_id":"`+traceID+`"`),
		"adapters/http must log the access line with the span's context (it logs after otelfiber restored the parent context)")
}
