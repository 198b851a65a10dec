package telemetry

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestWriterHooksOnARealWriter wires the production hooks (WriterHooks as
// the writer's Options.Metrics, Pressure and Tracer, as bootstrap does) into
// a real writer over the protocol fake: a PutKv answered with code 72, then
// one answered with pressure 0.5. The backend spans link the request span
// and carry the pressure and throttle; the pressure histogram and the
// throttle counter see both signals.
func TestWriterHooksOnARealWriter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, InstrumentationOptions{})
	hooks := h.in.WriterHooks("c1")
	fake, path := kvCluster()
	var attempt atomic.Int32
	fake.BucketError = func(int32, metatest.BucketRef, int32) wire.ErrorCode {
		if attempt.Add(1) == 1 {
			return wire.CodeStorageBackpressureException
		}
		return 0
	}
	fake.BucketPressure = func(int32, metatest.BucketRef) float32 {
		if attempt.Load() >= 2 {
			return 0.5
		}
		return 0
	}
	w := writer.New(fake, meta.New(fake, meta.Options{}), writer.Options{
		Linger: time.Millisecond, MaxThrottle: 100 * time.Millisecond,
		Metrics: hooks, Pressure: hooks, Tracer: hooks,
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = w.Close(ctx)
	})

	ctx, reqSpan := h.tp.Tracer("test").Start(context.Background(), "POST records")
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := w.Write(ctx, &domain.WriteBatch{Table: path, Entries: []domain.WriteEntry{{Op: domain.OpUpsert, Row: []domain.Datum{{I64: 1}}}}})
	reqSpan.End()
	require.NoError(t, err)
	require.True(t, res[0].OK(), "%+v", res[0])

	// The resend's span ends on the sender goroutine, possibly after the
	// Write it answered has returned.
	putKvEnded := func() int {
		n := 0
		for _, s := range h.spans.Ended() {
			if s.Name() == "fluss.PutKv" {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return putKvEnded() >= 2 }, 2*time.Second, 5*time.Millisecond)
	var puts []map[string]any
	for _, s := range h.spans.Ended() {
		if s.Name() != "fluss.PutKv" {
			continue
		}
		a := map[string]any{}
		for _, kv := range s.Attributes() {
			a[string(kv.Key)] = kv.Value.AsInterface()
		}
		require.Len(t, s.Links(), 1)
		assert.Equal(t, reqSpan.SpanContext().TraceID(), s.Links()[0].SpanContext.TraceID(), "linked to the request span")
		assert.Equal(t, trace.SpanKindClient, s.SpanKind())
		puts = append(puts, a)
	}
	require.Len(t, puts, 2, "the rejected attempt and the resend")
	assert.Equal(t, 1.0, puts[0][string(SpanAttrKvPressure)])
	assert.Equal(t, int64(100), puts[0][string(SpanAttrKvThrottle)])
	assert.Equal(t, int64(1), puts[0][string(SpanAttrFailed)])
	assert.Equal(t, 0.5, puts[1][string(SpanAttrKvPressure)])
	assert.Equal(t, int64(25), puts[1][string(SpanAttrKvThrottle)], "100 ms × 0.5²")

	m := h.metrics(t)
	hist := m[MetricWriterKvPressure].Data.(metricdata.Histogram[float64])
	require.Len(t, hist.DataPoints, 1)
	assert.Equal(t, uint64(2), hist.DataPoints[0].Count)
	assert.InDelta(t, 1.5, hist.DataPoints[0].Sum, 1e-9)
	thr := m[MetricWriterKvThrottle].Data.(metricdata.Sum[float64])
	require.Len(t, thr.DataPoints, 1)
	assert.InDelta(t, 0.125, thr.DataPoints[0].Value, 1e-9, "100 ms + 25 ms")
	assert.Contains(t, m, MetricWriterBatches)
}

// kvCluster is a fake Fluss cluster of one tablet server holding one
// primary-key table, d.kv (id BIGINT, one bucket), for a real writer.
func kvCluster() (*metatest.Cluster, domain.TablePath) {
	path := domain.TablePath{Database: "d", Table: "kv"}
	fake := metatest.New(1)
	fake.AddTable(&metatest.Table{ID: 5, Path: path, Desc: domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			{Name: "id", Type: domain.DataType{Root: domain.TypeBigInt}, ID: 0},
		}, PrimaryKey: []string{"id"}, HighestFieldID: 0},
		BucketCount: 1, Properties: map[string]string{}, CustomProperties: map[string]string{},
	}})
	return fake, path
}
