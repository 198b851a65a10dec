//go:build otel

package otel

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/telemetry"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestFlussHooksOnRealConnections passes the telemetry hooks to the Fluss
// adapter as bootstrap would, against a real cluster (FLUSS_BOOTSTRAP), and
// checks the connection and request metrics and the request spans that the
// rpc layer's calls produce.
func TestFlussHooksOnRealConnections(t *testing.T) {
	addr := os.Getenv("FLUSS_BOOTSTRAP")
	if addr == "" {
		t.Skip("FLUSS_BOOTSTRAP is not set; start a cluster with deployments/local/fluss-cluster.sh")
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	in, err := telemetry.NewInstrumentation(telemetry.InstrumentationOptions{TracerProvider: tp, MeterProvider: mp})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := fluss.Open(ctx, fluss.Config{
		ID:               "default",
		BootstrapServers: []string{addr},
		ClientVersion:    "otel-test",
		Hooks:            []any{in.FlussHooks("default")},
	}, nil)
	require.NoError(t, err)
	session, err := cl.Session(ctx, domain.Principal{})
	require.NoError(t, err)

	reqCtx, reqSpan := tp.Tracer("test").Start(ctx, "POST /v1/clusters/{cluster}/databases", trace.WithSpanKind(trace.SpanKindServer))
	db := "otel_hooks_" + randomHex(t, 4)
	require.NoError(t, session.Catalog().CreateDatabase(reqCtx, db, domain.DatabaseDescriptor{}, false))
	reqSpan.End()
	require.NoError(t, session.Catalog().DropDatabase(ctx, db, true, true))
	require.NoError(t, cl.Close(ctx))

	// Spans: the CreateDatabase call is a client child of the request span;
	// the drop ran without a span and is not traced.
	var create sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "fluss.CreateDatabase" {
			create = s
		}
		assert.NotEqual(t, "fluss.DropDatabase", s.Name(), "no span without a parent")
	}
	require.NotNil(t, create, "spans: %v", spanNames(rec.Ended()))
	assert.Equal(t, reqSpan.SpanContext().SpanID(), create.Parent().SpanID())
	assert.Equal(t, trace.SpanKindClient, create.SpanKind())
	assert.Contains(t, create.Attributes(), telemetry.SpanAttrAPI.String("CREATE_DATABASE"))
	assert.Contains(t, create.Attributes(), telemetry.SpanAttrCluster.String("default"))

	// Metrics.
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	sums := map[string]map[attribute.Distinct]int64{}
	sets := map[attribute.Distinct]attribute.Set{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok {
				sums[m.Name] = map[attribute.Distinct]int64{}
				for _, p := range s.DataPoints {
					sums[m.Name][p.Attributes.Equivalent()] = p.Value
					sets[p.Attributes.Equivalent()] = p.Attributes
				}
			}
		}
	}
	total := func(name string) int64 {
		var n int64
		for _, v := range sums[name] {
			n += v
		}
		return n
	}
	t.Logf("spans %v; connections created %d, closed %d", spanNames(rec.Ended()), total(telemetry.MetricConnectionsCreated), total(telemetry.MetricConnectionsClosed))
	assert.GreaterOrEqual(t, total(telemetry.MetricConnectionsCreated), int64(1), "connections were made")
	assert.Equal(t, total(telemetry.MetricConnectionsCreated), total(telemetry.MetricConnectionsClosed), "Close ends every connection")
	assert.Equal(t, int64(0), total(telemetry.MetricConnectionsActive))
	found := false
	for k, v := range sums[telemetry.MetricBackendRequests] {
		s := sets[k]
		api, _ := s.Value(telemetry.AttrAPI)
		outcome, _ := s.Value(telemetry.AttrOutcome)
		if api.AsString() == "CREATE_DATABASE" && outcome.AsString() == "ok" {
			found = v == 1
		}
	}
	assert.True(t, found, "one successful CREATE_DATABASE request is counted")
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	out := make([]string, 0, len(spans))
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}
