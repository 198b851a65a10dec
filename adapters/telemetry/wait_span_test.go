package telemetry

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// remoteParent returns a context whose parent is a remote span with the
// given sampled flag (as an incoming traceparent would give).
func remoteParent(traceByte byte, sampled bool) context.Context {
	var flags trace.TraceFlags
	if sampled {
		flags = trace.FlagsSampled
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{traceByte, 1}, SpanID: trace.SpanID{traceByte, 2}, TraceFlags: flags, Remote: true,
	})
	return trace.ContextWithRemoteSpanContext(context.Background(), sc)
}

// TestWaitSpanAndSharedBatchSampling runs writes through a real writer over
// the protocol fake with the gateway's sampler at ratio 0 for roots
// (parentbased_traceidratio, arg 0). Each case sends three concurrent
// writes whose rows share one PutKv; sampled says which of their incoming
// requests were sampled. Every sampled request gets a fluss.write.wait span
// in its own trace (parent: the request span) with the bucket, attempts and
// batch size, linked to the PutKv span; the PutKv span is recorded exactly
// when one linked request is sampled.
func TestWaitSpanAndSharedBatchSampling(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cases := []struct {
		name    string
		sampled []bool
	}{
		{name: "one of three sampled", sampled: []bool{false, true, false}},
		{name: "none sampled", sampled: []bool{false, false, false}},
		{name: "all sampled", sampled: []bool{true, true, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(samplerFromEnv(env(map[string]string{
				"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0",
			}), func(string) {})))
			defer func() { _ = tp.Shutdown(context.Background()) }()
			in, err := NewInstrumentation(InstrumentationOptions{TracerProvider: tp})
			require.NoError(t, err)
			hooks := in.WriterHooks("c1")

			fake, path := kvCluster()
			w := writer.New(fake, meta.New(fake, meta.Options{}), writer.Options{
				Linger: 50 * time.Millisecond, LingerAfterInFlight: -1, Metrics: hooks, Pressure: hooks, Tracer: hooks,
			})
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				_ = w.Close(ctx)
			}()

			reqSpans := make([]trace.SpanContext, len(tc.sampled))
			var wg sync.WaitGroup
			for i, sampled := range tc.sampled {
				ctx, span := tp.Tracer("test").Start(remoteParent(byte(i+1), sampled), "POST records")
				reqSpans[i] = span.SpanContext()
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer span.End()
					ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
					defer cancel()
					res, err := w.Write(ctx, &domain.WriteBatch{Table: path, Entries: []domain.WriteEntry{
						{Op: domain.OpUpsert, Row: []domain.Datum{{I64: int64(i)}}},
					}})
					assert.NoError(t, err)
					assert.True(t, res[0].OK(), "%+v", res[0])
				}()
			}
			wg.Wait()

			nSampled := 0
			for _, s := range tc.sampled {
				if s {
					nSampled++
				}
			}
			var waits, puts []sdktrace.ReadOnlySpan
			collect := func() bool {
				waits, puts = nil, nil
				for _, s := range rec.Ended() {
					switch s.Name() {
					case WaitSpanName:
						waits = append(waits, s)
					case "fluss.PutKv":
						puts = append(puts, s)
					}
				}
				return nSampled == 0 || len(puts) > 0
			}
			// The PutKv span ends on the sender goroutine, possibly after
			// the Writes it answered have returned.
			require.Eventually(t, collect, 2*time.Second, 5*time.Millisecond)
			require.Len(t, waits, nSampled, "one wait span per sampled request")
			if nSampled == 0 {
				assert.Empty(t, puts, "no sampled request: the batch span is not recorded")
				return
			}
			require.Len(t, puts, 1, "the three writes share one PutKv, recorded once")
			put := puts[0]
			assert.Len(t, put.Links(), len(tc.sampled), "the batch links every request's wait, sampled or not")
			for _, ws := range waits {
				i := int(ws.SpanContext().TraceID()[0]) - 1
				require.True(t, tc.sampled[i])
				assert.Equal(t, reqSpans[i].TraceID(), ws.SpanContext().TraceID(), "in the request's trace")
				assert.Equal(t, reqSpans[i].SpanID(), ws.Parent().SpanID(), "a child of the request span")
				a := map[string]any{}
				for _, kv := range ws.Attributes() {
					a[string(kv.Key)] = kv.Value.AsInterface()
				}
				assert.Equal(t, []int64{0}, a[string(SpanAttrBuckets)])
				assert.Equal(t, int64(1), a[string(SpanAttrAttempts)])
				assert.Equal(t, int64(len(tc.sampled)), a[string(SpanAttrBatchRows)], "the shared batch's rows")
				assert.Equal(t, int64(1), a[string(SpanAttrEntriesOK)])
				assert.Equal(t, "d.kv", a[string(SpanAttrTable)])
				require.Len(t, ws.Links(), 1)
				assert.Equal(t, put.SpanContext().SpanID(), ws.Links()[0].SpanContext.SpanID(), "linked to the shared batch span")
			}
		})
	}
}

// TestSamplerFromEnv: each OTEL_TRACES_SAMPLER value decides for a root
// span as the specification says; a root span with a sampled link is
// sampled whatever the base decision; unknown values warn and fall back.
func TestSamplerFromEnv(t *testing.T) {
	t.Parallel()
	sampled := trace.SpanContextFromContext(remoteParent(9, true))
	unsampled := trace.SpanContextFromContext(remoteParent(8, false))
	cases := []struct {
		sampler, arg string
		wantRoot     bool
		wantWarn     bool
	}{
		{sampler: "", wantRoot: true},
		{sampler: "always_on", wantRoot: true},
		{sampler: "always_off"},
		{sampler: "traceidratio", arg: "0"},
		{sampler: "traceidratio", arg: "1", wantRoot: true},
		{sampler: "parentbased_always_off"},
		{sampler: "parentbased_traceidratio", arg: "0"},
		{sampler: "parentbased_traceidratio", arg: "2", wantRoot: true, wantWarn: true},
		{sampler: "jaeger_remote", wantRoot: true, wantWarn: true},
	}
	for _, tc := range cases {
		t.Run(tc.sampler+"/"+tc.arg, func(t *testing.T) {
			t.Parallel()
			var warned []string
			s := samplerFromEnv(env(map[string]string{"OTEL_TRACES_SAMPLER": tc.sampler, "OTEL_TRACES_SAMPLER_ARG": tc.arg}),
				func(w string) { warned = append(warned, w) })
			root := sdktrace.SamplingParameters{ParentContext: context.Background(), TraceID: trace.TraceID{0xff, 1}, Name: "fluss.PutKv"}
			assert.Equal(t, tc.wantRoot, s.ShouldSample(root).Decision == sdktrace.RecordAndSample, "root span")
			root.Links = []trace.Link{{SpanContext: unsampled}}
			assert.Equal(t, tc.wantRoot, s.ShouldSample(root).Decision == sdktrace.RecordAndSample, "root span, unsampled link")
			root.Links = append(root.Links, trace.Link{SpanContext: sampled})
			assert.Equal(t, sdktrace.RecordAndSample, s.ShouldSample(root).Decision, "a sampled link samples")
			assert.Equal(t, tc.wantWarn, len(warned) > 0, "%v", warned)
		})
	}
}
