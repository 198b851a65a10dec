package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestExportDecisions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		env         map[string]string
		prometheus  bool
		wantTraces  bool
		wantMetrics bool
		wantHandler bool
		wantErr     string
		wantWarn    string
	}{
		{name: "nothing configured", env: map[string]string{}},
		{name: "prometheus only", env: map[string]string{}, prometheus: true, wantHandler: true},
		{name: "sdk disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, prometheus: true},
		{name: "shared endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, wantTraces: true, wantMetrics: true},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, wantTraces: true, wantMetrics: true},
		{name: "traces only", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces"}, wantTraces: true},
		{name: "metrics exporter none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_METRICS_EXPORTER": "none"}, wantTraces: true},
		{name: "per-signal protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_METRICS_EXPORTER": "none"}, wantTraces: true},
		{name: "json protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, wantErr: "http/json"},
		{name: "zipkin exporter is ignored with a warning", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, wantWarn: "zipkin"},
		{name: "console traces", env: map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "console"}, wantTraces: true},
		{name: "console metrics", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "console", "OTEL_LOGS_EXPORTER": "none"}, wantMetrics: true},
		{name: "otlp and console", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "otlp,console", "OTEL_METRICS_EXPORTER": "console, otlp"}, wantTraces: true, wantMetrics: true},
		{name: "all none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}},
		{name: "otlp logs warn", env: map[string]string{"OTEL_LOGS_EXPORTER": "otlp"}, wantWarn: "OTEL_LOGS_EXPORTER"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Setup(context.Background(), Options{Prometheus: tc.prometheus, Getenv: env(tc.env), Console: io.Discard})
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			t.Cleanup(func() {
				// Nothing listens at the endpoints: do not wait for retries.
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				_ = p.Shutdown(ctx)
			})
			if tc.wantWarn != "" {
				require.Len(t, p.Warnings, 1)
				assert.Contains(t, p.Warnings[0], tc.wantWarn)
			} else {
				assert.Empty(t, p.Warnings)
			}
			assert.Equal(t, tc.wantTraces, p.TracesExported)
			assert.Equal(t, tc.wantMetrics, p.MetricsExported)
			assert.Equal(t, tc.wantHandler, p.MetricsHandler != nil)
			_, sdkTraces := p.TracerProvider.(*sdktrace.TracerProvider)
			assert.Equal(t, tc.wantTraces, sdkTraces)
			_, sdkMetrics := p.MeterProvider.(*sdkmetric.MeterProvider)
			assert.Equal(t, tc.wantMetrics || tc.wantHandler, sdkMetrics)
			assert.ElementsMatch(t, []string{"traceparent", "tracestate", "baggage"}, p.Propagators.Fields())
		})
	}
}

func TestPrometheusExposition(t *testing.T) {
	t.Parallel()
	p, err := Setup(context.Background(), Options{Prometheus: true, InstanceID: "gw-1", ServiceVersion: "1.2.3", Getenv: env(nil)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })

	counter, err := p.MeterProvider.Meter("test").Int64Counter("gateway_test_requests")
	require.NoError(t, err)
	counter.Add(context.Background(), 3)

	rec := httptest.NewRecorder()
	p.MetricsHandler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, 200, rec.Code)
	body := rec.Body.String()
	assert.Regexp(t, `(?m)^gateway_test_requests_total\{[^}]*otel_scope_name="test"[^}]*\} 3$`, body)
	assert.Contains(t, body, `service_instance_id="gw-1"`)
	assert.Contains(t, body, `service_name="fluss-gateway"`)
	assert.Contains(t, body, "go_goroutine", "runtime metrics are registered")
}

// TestShutdownFlushesSpans exports over OTLP/HTTP to a local collector stub;
// the exporters read the endpoint from the process environment, so this test
// cannot run in parallel.
func TestShutdownFlushesSpans(t *testing.T) {
	var mu sync.Mutex
	paths := map[string]int{}
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		paths[r.URL.Path]++
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")

	p, err := Setup(context.Background(), Options{})
	require.NoError(t, err)
	require.True(t, p.TracesExported)

	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{
		"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
	})
	_, span := p.TracerProvider.Tracer("test").Start(ctx, "op")
	assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", span.SpanContext().TraceID().String(), "the parent trace continues")
	span.End()

	require.NoError(t, p.Shutdown(context.Background()))
	require.NoError(t, p.Shutdown(context.Background()), "a second shutdown is a no-op")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, paths["/v1/traces"], "the batch is flushed on shutdown: %v", paths)
	for path := range paths {
		assert.True(t, strings.HasPrefix(path, "/v1/"), path)
	}
}

// TestConsoleExporter: OTEL_TRACES_EXPORTER=console writes each span as
// JSON to the console writer on flush.
func TestConsoleExporter(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	var mu sync.Mutex
	p, err := Setup(context.Background(), Options{Console: writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(b)
	}), Getenv: env(map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"})})
	require.NoError(t, err)
	_, span := p.TracerProvider.Tracer("test").Start(context.Background(), "console-op")
	span.End()
	require.NoError(t, p.Shutdown(context.Background()))
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, buf.String(), `"Name":"console-op"`)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestIdentityLabels: gateway.id and gateway.host become the gateway_id and
// host labels of every Prometheus series (and resource attributes).
func TestIdentityLabels(t *testing.T) {
	t.Parallel()
	p, err := Setup(context.Background(), Options{Prometheus: true, Getenv: env(nil),
		Labels: map[string]string{"gateway_id": "gateway-production", "host": "192.0.2.10"}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	counter, err := p.MeterProvider.Meter("test").Int64Counter("gateway_test_labelled")
	require.NoError(t, err)
	counter.Add(context.Background(), 1)
	rec := httptest.NewRecorder()
	p.MetricsHandler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	assert.Regexp(t, `(?m)^gateway_test_labelled_total\{[^}]*gateway_id="gateway-production"[^}]*host="192.0.2.10"[^}]*\} 1$`, rec.Body.String())
}
