package http

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func withTracing(tp *sdktrace.TracerProvider) gatewayOption {
	return func(o *Options, _ *Deps) {
		o.TracerProvider = tp
		o.Propagators = propagation.TraceContext{}
	}
}

func TestRoutesAreTraced(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	g := newGateway(t, withTracing(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

	require.Equal(t, 200, g.call("GET", "/health", "").status)
	require.Equal(t, 201, g.call("POST", db, `{"database":"d"}`, "traceparent", parent).status)
	require.Equal(t, 404, g.call("GET", db+"/nope", "").status)
	require.Equal(t, 500, func() int {
		g.clusters.Cluster("default").Catalog().SetHook(func(context.Context, string) error { panic("boom") })
		return g.call("GET", db, "").status
	}())

	spans := rec.Ended()
	require.Len(t, spans, 3, "health is not traced")
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[s.Name()] = s
	}

	created := byName["POST /v1/clusters/{cluster}/databases"]
	require.NotNil(t, created, "span names use the route template: %v", byName)
	assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", created.SpanContext().TraceID().String(), "the caller's trace continues")
	assert.Contains(t, created.Attributes(), attribute.Int("http.status_code", 201))

	missing := byName["GET /v1/clusters/{cluster}/databases/{database}"]
	require.NotNil(t, missing)
	assert.Contains(t, missing.Attributes(), attribute.Int("http.status_code", 404))

	failed := byName["GET /v1/clusters/{cluster}/databases"]
	require.NotNil(t, failed)
	assert.Equal(t, codes.Error, failed.Status().Code, "a 500 marks the span as failed")
}
