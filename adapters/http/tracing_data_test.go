package http

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestDataRoutesAreTraced: a write and a lookup each get a server span named
// after the route template, carrying the request id, and the context handed
// to the RowWriter and Lookup ports carries that span, so the Fluss adapter's
// backend spans (PutKv, Lookup per tablet server) become its children.
func TestDataRoutesAreTraced(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	g := newGateway(t, withTracing(tp)).withTables()
	backend := tp.Tracer("test-backend")

	g.writer.set(func(ctx context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		_, span := backend.Start(ctx, "fluss.PutKv")
		span.End()
		return make([]domain.EntryResult, len(b.Entries)), nil
	})
	g.lookup.setLookup(func(ctx context.Context, r *domain.LookupRequest) (*domain.LookupResponse, error) {
		_, span := backend.Start(ctx, "fluss.Lookup")
		span.End()
		return &domain.LookupResponse{SchemaID: r.SchemaID, Results: make([]domain.LookupResult, len(r.Keys))}, nil
	})

	w := g.call("POST", usersWrite, `{"entries":[{"id":"a","upsert":{"region":"eu","id":1}}]}`, "x-request-id", "00000000-0000-4000-8000-0000000000a1")
	require.Equal(t, 200, w.status, w.body)
	l := g.call("POST", usersLookup, `{"keys":[{"region":"eu","id":1}]}`, "x-request-id", "00000000-0000-4000-8000-0000000000a2")
	require.Equal(t, 200, l.status, l.body)

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = s
	}
	for _, c := range []struct{ server, backend, requestID string }{
		{"POST /v1/clusters/{cluster}/databases/{database}/tables/{table}/records", "fluss.PutKv", "00000000-0000-4000-8000-0000000000a1"},
		{"POST /v1/clusters/{cluster}/databases/{database}/tables/{table}/records/lookup", "fluss.Lookup", "00000000-0000-4000-8000-0000000000a2"},
	} {
		server := byName[c.server]
		require.NotNil(t, server, "server span %q among %v", c.server, names(byName))
		assert.Equal(t, trace.SpanKindServer, server.SpanKind())
		assert.Contains(t, server.Attributes(), attribute.String("gateway.request_id", c.requestID))
		assert.Contains(t, server.Attributes(), attribute.Int("http.status_code", 200))
		child := byName[c.backend]
		require.NotNil(t, child, "backend span %q", c.backend)
		assert.Equal(t, server.SpanContext().SpanID(), child.Parent().SpanID(), "%s is a child of the request span", c.backend)
		assert.Equal(t, server.SpanContext().TraceID(), child.SpanContext().TraceID())
	}
}

func names(m map[string]sdktrace.ReadOnlySpan) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
