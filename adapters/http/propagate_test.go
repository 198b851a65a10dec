package http

import (
	"context"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// wrappedNoop never records a span either, but is not the no-op provider's
// type: the gateway then runs otelfiber, the reference propagateOnly must
// behave like.
type wrappedNoop struct{ tracenoop.TracerProvider }

// seenContext is what a request's context carried when it reached the
// writer port.
type seenContext struct {
	span    trace.SpanContext
	baggage string
}

func tracingOffGateway(t *testing.T, tp trace.TracerProvider) (*gateway, *seenContext) {
	g := newGateway(t, func(o *Options, _ *Deps) {
		o.TracerProvider = tp
		o.Propagators = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}).withTables()
	var mu sync.Mutex
	seen := &seenContext{}
	g.writer.set(func(ctx context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		mu.Lock()
		defer mu.Unlock()
		*seen = seenContext{span: trace.SpanContextFromContext(ctx), baggage: members(baggage.FromContext(ctx).String())}
		return make([]domain.EntryResult, b.Len()), nil
	})
	return g, seen
}

// members sorts the members of a baggage header (their order follows a
// map's).
func members(b string) string {
	if b == "" {
		return ""
	}
	m := strings.Split(b, ",")
	slices.Sort(m)
	return strings.Join(m, ",")
}

// sendHeaders sends a request whose headers may repeat a name.
func sendHeaders(t *testing.T, g *gateway, method, path, body string, headers [][2]string) response {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		req.Header.Add(h[0], h[1])
	}
	resp, err := g.app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// TestTracingOffCarriesTheTraceContextLikeOtelfiber: with the no-op tracer
// provider the gateway skips otelfiber (issue 22) and only carries the
// caller's trace context; answers and the context the ports see are the
// same as otelfiber's with a provider that never records.
func TestTracingOffCarriesTheTraceContextLikeOtelfiber(t *testing.T) {
	t.Parallel()
	const (
		parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		state  = "vendor=opaque"
	)
	write := entries(upsert("e1", "eu", 1))
	cases := []struct {
		name      string
		method    string
		path      string
		body      string
		headers   [][2]string
		status    int
		wantTrace string // the traceparent the answer carries ("" none)
		wantState string
		wantBag   string // the answer's baggage header
		seenTrace string // the trace id the writer port sees ("" invalid)
	}{
		{name: "no trace context", method: "POST", path: usersWrite, body: write, status: 200},
		{name: "traceparent", method: "POST", path: usersWrite, body: write, headers: [][2]string{{"traceparent", parent}},
			status: 200, wantTrace: parent, seenTrace: "0af7651916cd43dd8448eb211c80319c"},
		{name: "traceparent and tracestate", method: "POST", path: usersWrite, body: write,
			headers: [][2]string{{"Traceparent", parent}, {"tracestate", state}}, status: 200,
			wantTrace: parent, wantState: state, seenTrace: "0af7651916cd43dd8448eb211c80319c"},
		{name: "repeated baggage headers", method: "POST", path: usersWrite, body: write,
			headers: [][2]string{{"baggage", "a=1"}, {"baggage", "b=2"}}, status: 200, wantBag: "a=1,b=2"},
		{name: "malformed traceparent", method: "POST", path: usersWrite, body: write,
			headers: [][2]string{{"traceparent", "00-zz-b7ad6b7169203331-01"}}, status: 200},
		{name: "an error answer", method: "GET", path: db + "/nope", headers: [][2]string{{"traceparent", parent}},
			status: 404, wantTrace: parent},
		{name: "probes are skipped", method: "GET", path: "/health", headers: [][2]string{{"traceparent", parent}}, status: 200},
	}
	lean, leanSeen := tracingOffGateway(t, tracenoop.NewTracerProvider())
	ref, refSeen := tracingOffGateway(t, wrappedNoop{})
	require.True(t, tracingOff(tracenoop.NewTracerProvider()))
	require.False(t, tracingOff(wrappedNoop{}), "the reference runs otelfiber")
	require.False(t, tracingOff(nil), "the global provider may record")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			*leanSeen, *refSeen = seenContext{}, seenContext{}
			got := sendHeaders(t, lean, tc.method, tc.path, tc.body, tc.headers)
			want := sendHeaders(t, ref, tc.method, tc.path, tc.body, tc.headers)
			require.Equal(t, tc.status, got.status, string(got.body))
			require.Equal(t, want.status, got.status)
			for _, h := range []string{"Traceparent", "Tracestate"} {
				assert.Equal(t, want.header.Values(h), got.header.Values(h), h)
			}
			assert.Equal(t, members(want.header.Get("Baggage")), members(got.header.Get("Baggage")))
			assert.Equal(t, tc.wantTrace, got.header.Get("Traceparent"))
			assert.Equal(t, tc.wantState, got.header.Get("Tracestate"))
			assert.Equal(t, tc.wantBag, members(got.header.Get("Baggage")))
			assert.Equal(t, *refSeen, *leanSeen, "the ports see the same trace context")
			if tc.seenTrace != "" {
				assert.Equal(t, tc.seenTrace, leanSeen.span.TraceID().String())
				assert.True(t, leanSeen.span.IsRemote())
			} else {
				assert.False(t, leanSeen.span.IsValid())
			}
		})
	}
}
