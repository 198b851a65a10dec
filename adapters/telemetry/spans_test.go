package telemetry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
)

func spanContext(t *testing.T, traceHex, spanHex string) trace.SpanContext {
	t.Helper()
	tid, err := trace.TraceIDFromHex(traceHex)
	require.NoError(t, err)
	sid, err := trace.SpanIDFromHex(spanHex)
	require.NoError(t, err)
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
}

func attrMap(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestSpanName(t *testing.T) {
	t.Parallel()
	cases := []struct{ api, name, wire string }{
		{"PUT_KV", "fluss.PutKv", "PUT_KV"},
		{"PutKv", "fluss.PutKv", "PUT_KV"},
		{"PRODUCE_LOG", "fluss.ProduceLog", "PRODUCE_LOG"},
		{"LOOKUP", "fluss.Lookup", "LOOKUP"},
		{"Lookup", "fluss.Lookup", "LOOKUP"},
		{"PREFIX_LOOKUP", "fluss.PrefixLookup", "PREFIX_LOOKUP"},
		{"API_VERSIONS", "fluss.ApiVersions", "API_VERSIONS"},
		{"API_4242", "fluss.Api4242", "API_4242"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.name, SpanName(tc.api), tc.api)
		assert.Equal(t, tc.wire, wireName(tc.api), tc.api)
	}
}

// TestWriterBackendSpan follows the writer's path: a sender without a span
// in its context starts the PutKv span with links to the request spans, runs
// the rpc call in the returned context (the request hook annotates the same
// span) and ends it with the outcome.
func TestWriterBackendSpan(t *testing.T) {
	t.Parallel()
	h := newHarness(t, InstrumentationOptions{})
	w, f := h.in.WriterHooks("c1"), h.in.FlussHooks("c1")

	req1 := spanContext(t, "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
	req2 := spanContext(t, "1af7651916cd43dd8448eb211c80319c", "c7ad6b7169203331")
	in := func(sc trace.SpanContext) context.Context {
		return trace.ContextWithSpanContext(context.Background(), sc)
	}
	// duplicate and invalid are dropped
	links := []context.Context{in(req1), in(req2), in(req1), context.Background()}

	ctx, done := w.StartBackendRequest(context.Background(), "PUT_KV", 3, 2, 17, links)
	f.OnFlussRequest(ctx, "127.0.0.1:9124", "PUT_KV", 2, 2048, 64, 3*time.Millisecond, nil)
	done(writer.BackendOutcome{Pressure: 0.5, Throttle: 750 * time.Millisecond})

	ctx, done = w.StartBackendRequest(context.Background(), "ProduceLog", 4, 1, 5, []context.Context{in(req2)})
	f.OnFlussRequest(ctx, "127.0.0.1:9125", "PRODUCE_LOG", 0, 512, 32, time.Millisecond, nil)
	done(writer.BackendOutcome{ErrorCode: 12, FailedBuckets: 1})

	spans := h.spans.Ended()
	require.Len(t, spans, 2, "the request hook annotates the backend span instead of starting another")

	put := spans[0]
	assert.Equal(t, "fluss.PutKv", put.Name())
	assert.Equal(t, trace.SpanKindClient, put.SpanKind())
	assert.False(t, put.Parent().IsValid(), "the sender has no parent span")
	require.Len(t, put.Links(), 2)
	assert.Equal(t, req1, put.Links()[0].SpanContext)
	assert.Equal(t, req2, put.Links()[1].SpanContext)
	a := attrMap(put.Attributes())
	assert.Equal(t, "PUT_KV", a[SpanAttrAPI].AsString())
	assert.Equal(t, "c1", a[SpanAttrCluster].AsString())
	assert.Equal(t, int64(3), a[SpanAttrNodeID].AsInt64())
	assert.Equal(t, int64(2), a[SpanAttrBucketCount].AsInt64())
	assert.Equal(t, int64(17), a[SpanAttrRowCount].AsInt64())
	assert.Equal(t, int64(2), a[SpanAttrAPIVersion].AsInt64())
	assert.Equal(t, int64(2048), a[SpanAttrRequestSize].AsInt64())
	assert.Equal(t, int64(64), a[SpanAttrResponseSize].AsInt64())
	assert.Equal(t, "127.0.0.1", a[SpanAttrServerAddr].AsString())
	assert.Equal(t, int64(9124), a[SpanAttrServerPort].AsInt64())
	assert.NotContains(t, a, SpanAttrErrorCode)
	assert.Equal(t, 0.5, a[SpanAttrKvPressure].AsFloat64())
	assert.Equal(t, int64(750), a[SpanAttrKvThrottle].AsInt64())
	assert.Equal(t, codes.Unset, put.Status().Code)

	produce := spans[1]
	assert.Equal(t, "fluss.ProduceLog", produce.Name())
	a = attrMap(produce.Attributes())
	assert.Equal(t, "PRODUCE_LOG", a[SpanAttrAPI].AsString())
	assert.Equal(t, int64(12), a[SpanAttrErrorCode].AsInt64())
	assert.Equal(t, int64(1), a[SpanAttrFailed].AsInt64())
	assert.Equal(t, codes.Error, produce.Status().Code)
}

func TestBackendSpanLinkLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, InstrumentationOptions{})
	links := make([]trace.SpanContext, 0, MaxBackendLinks+5)
	for i := range MaxBackendLinks + 5 {
		var sid trace.SpanID
		sid[0], sid[1], sid[7] = byte(i>>8), byte(i), 1
		links = append(links, trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	}
	_, span := h.in.StartBackendSpan(context.Background(), "PUT_KV", links)
	EndBackendSpan(span, 0, 0, errors.New("connection reset"))

	got := h.spans.Ended()
	require.Len(t, got, 1)
	assert.Len(t, got[0].Links(), MaxBackendLinks)
	assert.Equal(t, int64(5), attrMap(got[0].Attributes())[SpanAttrLinksDropped].AsInt64())
	assert.Equal(t, codes.Error, got[0].Status().Code)
	assert.Equal(t, "connection reset", got[0].Status().Description)
	require.Len(t, got[0].Events(), 1, "the error is recorded")
	assert.Equal(t, "exception", got[0].Events()[0].Name)
}

// TestRequestSpansUnderParent: a Fluss request made in a context with a span
// (a catalog call under the REST span, a lookup) gets a child client span that
// covers the call.
func TestRequestSpansUnderParent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, InstrumentationOptions{})
	f := h.in.FlussHooks("c1")

	ctx, parent := h.tp.Tracer("test").Start(context.Background(), "POST /v1/clusters/{cluster}/databases")
	before := time.Now()
	f.OnFlussRequest(ctx, "127.0.0.1:9123", "CREATE_DATABASE", 0, 80, 8, 40*time.Millisecond, nil)
	f.OnFlussRequest(ctx, "coordinator", "GET_DATABASE_INFO", 0, 80, 0, time.Millisecond, &fakeRPCError{code: 36})
	// A span started for another API does not swallow a nested request.
	bctx, backend := h.in.StartBackendSpan(ctx, "LOOKUP", nil)
	f.OnFlussRequest(bctx, "127.0.0.1:9124", "GET_METADATA", 0, 10, 10, time.Millisecond, nil)
	backend.End()
	parent.End()

	spans := h.spans.Ended()
	require.Len(t, spans, 5)
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[s.Name()] = s
	}

	create := byName["fluss.CreateDatabase"]
	require.NotNil(t, create, "spans: %v", keys(byName))
	assert.Equal(t, parent.SpanContext().SpanID(), create.Parent().SpanID())
	assert.Equal(t, parent.SpanContext().TraceID(), create.SpanContext().TraceID())
	assert.Equal(t, trace.SpanKindClient, create.SpanKind())
	assert.InDelta(t, 40*time.Millisecond, create.EndTime().Sub(create.StartTime()), float64(time.Millisecond))
	assert.False(t, create.StartTime().After(before), "the span starts when the call started")
	a := attrMap(create.Attributes())
	assert.Equal(t, "CREATE_DATABASE", a[SpanAttrAPI].AsString())
	assert.Equal(t, "c1", a[SpanAttrCluster].AsString())
	assert.Equal(t, int64(9123), a[SpanAttrServerPort].AsInt64())

	info := byName["fluss.GetDatabaseInfo"]
	require.NotNil(t, info)
	assert.Equal(t, codes.Error, info.Status().Code)
	assert.Equal(t, int64(36), attrMap(info.Attributes())[SpanAttrErrorCode].AsInt64())
	assert.Equal(t, "coordinator", attrMap(info.Attributes())[SpanAttrServerAddr].AsString())

	meta := byName["fluss.GetMetadata"]
	require.NotNil(t, meta)
	assert.Equal(t, byName["fluss.Lookup"].SpanContext().SpanID(), meta.Parent().SpanID())
}

func TestSetRequestID(t *testing.T) {
	t.Parallel()
	h := newHarness(t, InstrumentationOptions{})
	ctx, span := h.tp.Tracer("test").Start(context.Background(), "GET /v1/clusters")
	ctx = SetRequestID(ctx, "req-1")
	span.End()
	assert.Equal(t, "req-1", RequestIDFromContext(ctx))
	assert.Equal(t, "", RequestIDFromContext(context.Background()))
	require.Len(t, h.spans.Ended(), 1)
	assert.Contains(t, h.spans.Ended()[0].Attributes(), RequestIDKey.String("req-1"))
	assert.Equal(t, context.Background(), SetRequestID(context.Background(), ""), "an empty id changes nothing")
}
