package telemetry

import (
	"context"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
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

// outcomeAttrs is attrs(table, outcome, code) from the cache: the writer
// records it for every write call.
func (w *WriterHooks) outcomeAttrs(table domain.TablePath, outcome, code string) metric.MeasurementOption {
	k := optKey{family: famWriter, s0: w.cluster.Value.AsString(), s1: outcome, s2: code, table: w.in.labelled(table)}
	return w.in.opts.get(k, func() []attribute.KeyValue {
		return w.in.tableAttr([]attribute.KeyValue{w.cluster, AttrOutcome.String(outcome), AttrCode.String(code)}, table)
	})
}

// tableAttrs is attrs(table) from the cache: the writer records it for
// every send.
func (w *WriterHooks) tableAttrs(table domain.TablePath) metric.MeasurementOption {
	k := optKey{family: famWriter, s0: w.cluster.Value.AsString(), table: w.in.labelled(table)}
	return w.in.opts.get(k, func() []attribute.KeyValue {
		return w.in.tableAttr([]attribute.KeyValue{w.cluster}, table)
	})
}

// BatchesSent counts one PutKv or ProduceLog request: its record batches,
// rows and record bytes (fluss_gateway_backend_write_rows_total,
// fluss_gateway_backend_write_bytes_total, fluss_client_writer_batches_total)
// and the batch size distributions (fluss_client_writer_batch_size_bytes,
// fluss_client_writer_batch_rows). The histograms get one observation per
// batch of the request's mean size; counts and sums are exact.
func (w *WriterHooks) BatchesSent(table domain.TablePath, batches, rows, bytes int) {
	ctx := context.Background()
	opt := w.tableAttrs(table)
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

// ArrowPacked counts the rows of one Arrow log batch the writer built from
// a client's compressed record batch as it was
// (fluss_client_writer_arrow_packed_total).
func (w *WriterHooks) ArrowPacked(table domain.TablePath, rows int) {
	w.in.writerPacked.Add(context.Background(), int64(rows), w.tableAttrs(table))
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
			w.in.writerEntries.Add(ctx, int64(n), w.outcomeAttrs(table, OutcomeUnknown, code))
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
		w.in.writerEntries.Add(ctx, int64(ok), w.outcomeAttrs(table, OutcomeSuccess, CodeOK))
	}
	for code, n := range failed {
		if n > 0 {
			w.in.writerEntries.Add(ctx, int64(n), w.outcomeAttrs(table, OutcomeFailed, code))
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
	// Tie every waiting Write call to this request: a link back to it and
	// one more attempt on the call's wait span.
	var waits []*waitSpan
	for _, l := range links {
		if ws := waitFrom(l); ws != nil {
			ws.sent(span.SpanContext(), rows)
			waits = append(waits, ws)
		}
	}
	return ctx, func(o domain.BackendOutcome) {
		if o.Pressure > 0 {
			span.SetAttributes(SpanAttrKvPressure.Float64(o.Pressure))
		}
		if o.Throttle > 0 {
			span.SetAttributes(SpanAttrKvThrottle.Int64(o.Throttle.Milliseconds()))
		}
		for _, ws := range waits {
			ws.answered(o)
		}
		EndBackendSpan(span, o.ErrorCode, o.FailedBuckets, o.Err)
	}
}

// WaitSpanName is the name of the span that covers one REST request's wait
// for the Fluss write of its rows (a child of the request's span).
const WaitSpanName = "fluss.write.wait"

// Attributes of the wait span (besides fluss.cluster, fluss.row.count,
// fluss.bucket.count and the highest fluss.kv.pressure and
// fluss.kv.throttle_ms of the requests that carried its rows).
const (
	// SpanAttrBuckets lists the bucket ids of the call's rows (at most 16).
	SpanAttrBuckets = attribute.Key("fluss.buckets")
	// SpanAttrAttempts counts the PutKv/ProduceLog requests that carried
	// the call's rows (more than one per bucket means retries).
	SpanAttrAttempts = attribute.Key("fluss.write.attempts")
	// SpanAttrBatchRows is the row count of the largest request that
	// carried the call's rows (the shared batch's size).
	SpanAttrBatchRows = attribute.Key("fluss.batch.row_count")
	// SpanAttrEntries* count the call's verdicts.
	SpanAttrEntriesOK      = attribute.Key("fluss.entries.ok")
	SpanAttrEntriesFailed  = attribute.Key("fluss.entries.failed")
	SpanAttrEntriesUnknown = attribute.Key("fluss.entries.unknown")
	// SpanAttrExpired is true when the call's deadline passed first.
	SpanAttrExpired = attribute.Key("fluss.write.deadline_expired")
)

// StartWait starts the wait span of one Write call (writer.WaitTracer): a
// child of ctx's span (the REST request's), named fluss.write.wait. The
// returned context is the one the writer links its backend requests to;
// each of those adds a link from the wait span to its fluss.PutKv or
// fluss.ProduceLog span and counts an attempt. The returned function ends
// the span with the call's buckets and verdict counts.
func (w *WriterHooks) StartWait(ctx context.Context, table domain.TablePath, rows int) (context.Context, func(domain.WaitOutcome)) {
	ctx, span := w.in.tracer.Start(ctx, WaitSpanName, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(w.spanCluster, SpanAttrTable.String(table.String()), SpanAttrRowCount.Int(rows)))
	ws := &waitSpan{span: span}
	ctx = context.WithValue(ctx, waitSpanKey{}, ws)
	return ctx, ws.end
}

// SpanAttrTable is the table path (database.table) on the wait span.
const SpanAttrTable = attribute.Key("fluss.table")

type waitSpanKey struct{}

func waitFrom(ctx context.Context) *waitSpan {
	if ctx == nil {
		return nil
	}
	ws, _ := ctx.Value(waitSpanKey{}).(*waitSpan)
	return ws
}

// waitSpan accumulates what the backend requests tell one wait span; the
// sender's goroutine and the Write call touch it concurrently.
type waitSpan struct {
	span     trace.Span
	mu       sync.Mutex
	attempts int
	rows     int
	pressure float64
	throttle time.Duration
}

func (ws *waitSpan) sent(backend trace.SpanContext, rows int) {
	ws.mu.Lock()
	ws.attempts++
	ws.rows = max(ws.rows, rows)
	ws.mu.Unlock()
	if backend.IsValid() && ws.span.IsRecording() {
		ws.span.AddLink(trace.Link{SpanContext: backend})
	}
}

func (ws *waitSpan) answered(o domain.BackendOutcome) {
	ws.mu.Lock()
	ws.pressure = max(ws.pressure, o.Pressure)
	ws.throttle = max(ws.throttle, o.Throttle)
	ws.mu.Unlock()
}

func (ws *waitSpan) end(o domain.WaitOutcome) {
	ws.mu.Lock()
	attrs := []attribute.KeyValue{
		SpanAttrAttempts.Int(ws.attempts),
		SpanAttrBatchRows.Int(ws.rows),
		SpanAttrBucketCount.Int(o.BucketCount),
		SpanAttrEntriesOK.Int(o.OK),
		SpanAttrEntriesFailed.Int(o.Failed),
		SpanAttrEntriesUnknown.Int(o.Unknown),
	}
	if ws.pressure > 0 {
		attrs = append(attrs, SpanAttrKvPressure.Float64(ws.pressure))
	}
	if ws.throttle > 0 {
		attrs = append(attrs, SpanAttrKvThrottle.Int64(ws.throttle.Milliseconds()))
	}
	ws.mu.Unlock()
	if len(o.Buckets) > 0 {
		ids := make([]int64, len(o.Buckets))
		for i, b := range o.Buckets {
			ids[i] = int64(b)
		}
		attrs = append(attrs, SpanAttrBuckets.Int64Slice(ids))
	}
	if o.Expired {
		attrs = append(attrs, SpanAttrExpired.Bool(true))
	}
	ws.span.SetAttributes(attrs...)
	if o.Failed+o.Unknown > 0 {
		ws.span.SetStatus(codes.Error, strconv.Itoa(o.Failed+o.Unknown)+" entries not applied or unknown")
	}
	ws.span.End()
}
