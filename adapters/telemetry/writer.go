package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// WriterHooks observes the Fluss writer (adapters/fluss/writer) of one
// cluster: it is the writer's Options.Metrics (writer.Metrics),
// Options.Pressure (writer.PressureObserver) and Options.Tracer
// (writer.RequestTracer), whose signatures use standard and domain types
// only, so the writer imports no telemetry library.
//
// None blocks; all may be called with the writer's locks held.
type WriterHooks struct {
	in          *Instrumentation
	cluster     attribute.KeyValue
	spanCluster attribute.KeyValue
}

// WriterHooks returns the writer hooks for one cluster.
func (in *Instrumentation) WriterHooks(cluster string) *WriterHooks {
	return &WriterHooks{in: in, cluster: AttrCluster.String(cluster), spanCluster: SpanAttrCluster.String(cluster)}
}

func (w *WriterHooks) attrs(table domain.TablePath, extra ...attribute.KeyValue) metric.MeasurementOption {
	attrs := make([]attribute.KeyValue, 0, len(extra)+2)
	attrs = append(attrs, w.cluster)
	attrs = append(attrs, extra...)
	return metric.WithAttributes(w.in.tableAttr(attrs, table)...)
}

// BatchesSent counts one PutKv or ProduceLog request: its record batches,
// rows and record bytes (fluss_gateway_backend_write_rows_total,
// fluss_gateway_backend_write_bytes_total, fluss_client_writer_batches_total)
// and the batch size distributions (fluss_client_writer_batch_size_bytes,
// fluss_client_writer_batch_rows). The histograms get one observation per
// batch of the request's mean size; counts and sums are exact.
func (w *WriterHooks) BatchesSent(table domain.TablePath, batches, rows, bytes int) {
	ctx := context.Background()
	opt := w.attrs(table)
	w.in.backendRows.Add(ctx, int64(rows), opt)
	w.in.backendBytes.Add(ctx, int64(bytes), opt)
	if batches <= 0 {
		return
	}
	w.in.writerBatches.Add(ctx, int64(batches), opt)
	for i := range batches {
		// Spread the remainders so the sums stay exact.
		size, n := bytes/batches, rows/batches
		if i < bytes%batches {
			size++
		}
		if i < rows%batches {
			n++
		}
		w.in.writerBatchSize.Record(ctx, int64(size), opt)
		w.in.writerBatchRows.Record(ctx, int64(n), opt)
	}
}

// Retried counts batches re-queued after a retriable failure with the
// failure's snake_case code (fluss_client_writer_retries_total{code}).
func (w *WriterHooks) Retried(table domain.TablePath, batches int, code string) {
	w.in.writerRetries.Add(context.Background(), int64(batches), w.attrs(table, AttrCode.String(code)))
}

// EntriesDoneApplied counts the writer's verdicts for one call
// (fluss_client_writer_entries_total{outcome,code}) with the same outcomes as
// fluss_gateway_write_entries_total: success/"ok", failed (applied "no") or
// unknown (maybe applied) with the entry code. The writer calls it instead
// of EntriesDone when its hooks have it.
func (w *WriterHooks) EntriesDoneApplied(table domain.TablePath, ok int, failed, unknown map[string]int) {
	ctx := context.Background()
	w.EntriesDone(table, ok, failed)
	for code, n := range unknown {
		if n > 0 {
			w.in.writerEntries.Add(ctx, int64(n), w.attrs(table, AttrOutcome.String(OutcomeUnknown), AttrCode.String(code)))
		}
	}
}

// EntriesDone counts the writer's verdicts for one write
// (fluss_client_writer_entries_total{outcome,code}: success/"ok", or failed
// with the entry code). The REST-level family fluss_gateway_write_entries_total
// is fed by GatewayMetrics.RecordEntries, so nothing is counted twice.
func (w *WriterHooks) EntriesDone(table domain.TablePath, ok int, failed map[string]int) {
	ctx := context.Background()
	if ok > 0 {
		w.in.writerEntries.Add(ctx, int64(ok), w.attrs(table, AttrOutcome.String(OutcomeSuccess), AttrCode.String(CodeOK)))
	}
	for code, n := range failed {
		if n > 0 {
			w.in.writerEntries.Add(ctx, int64(n), w.attrs(table, AttrOutcome.String(OutcomeFailed), AttrCode.String(code)))
		}
	}
}

// BufferUsage reports the reserved writer buffer bytes and the buffer's
// capacity (fluss_client_writer_buffer_used_bytes,
// fluss_client_writer_buffer_capacity_bytes; last value wins).
func (w *WriterHooks) BufferUsage(used, capacity int64) {
	ctx := context.Background()
	opt := metric.WithAttributes(w.cluster)
	w.in.writerBufUsed.Record(ctx, used, opt)
	w.in.writerBufCap.Record(ctx, capacity, opt)
}

// KvPressure records one cooperative backpressure signal for a bucket: the
// PutKv response's pressure in (0, 1), or 1 for a STORAGE_BACKPRESSURE (72)
// rejection (fluss_client_writer_kv_pressure), and the throttle the writer
// applied to the bucket (fluss_client_writer_kv_throttle_seconds_total).
// The bucket is not an attribute (unbounded); table only with TableLabel.
func (w *WriterHooks) KvPressure(table domain.TablePath, _ int32, pressure float64, throttle time.Duration) {
	ctx := context.Background()
	opt := w.attrs(table)
	w.in.writerPressure.Record(ctx, min(max(pressure, 0), 1), opt)
	if throttle > 0 {
		w.in.writerThrottle.Add(ctx, seconds(throttle), opt)
	}
}

// StartBackendRequest starts the span of one request to one tablet server
// (StartBackendSpan with fluss.node.id, fluss.bucket.count, fluss.row.count
// and fluss.cluster). links are the contexts of the REST requests whose rows
// the request carries; their span contexts become the span's links. The rpc
// call uses the returned context; the returned function ends the span with
// the outcome: error code, failed buckets, and the answer's KV backpressure
// (fluss.kv.pressure, fluss.kv.throttle_ms).
func (w *WriterHooks) StartBackendRequest(ctx context.Context, api string, nodeID int32, buckets, rows int, links []context.Context) (context.Context, func(domain.BackendOutcome)) {
	scs := make([]trace.SpanContext, 0, len(links))
	for _, l := range links {
		scs = append(scs, trace.SpanContextFromContext(l))
	}
	ctx, span := w.in.StartBackendSpan(ctx, api, scs,
		w.spanCluster, SpanAttrNodeID.Int(int(nodeID)), SpanAttrBucketCount.Int(buckets), SpanAttrRowCount.Int(rows))
	return ctx, func(o domain.BackendOutcome) {
		if o.Pressure > 0 {
			span.SetAttributes(SpanAttrKvPressure.Float64(o.Pressure))
		}
		if o.Throttle > 0 {
			span.SetAttributes(SpanAttrKvThrottle.Int64(o.Throttle.Milliseconds()))
		}
		EndBackendSpan(span, o.ErrorCode, o.FailedBuckets, o.Err)
	}
}
