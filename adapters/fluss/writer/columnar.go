package writer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record/arrowlog"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Columnar appends (WriteBatch.Columns): the rows of a log table arrive column
// by column in the table's Arrow layout (an Arrow IPC record batch a client
// sent, domain.ColumnarRows) and reach the ARROW log batch without a Datum or
// an encoded row per row. The write is cut into chunks of consecutive rows of
// about a batch size each; a chunk is one queued record of the request (one
// rec), so everything the writer does with records applies to a chunk as a
// whole, and its verdict is given to each of its rows:
//
//   - Bucket: a table without a bucket key has no per-row bucket, so a chunk
//     goes to the sticky bucket as one record (the Java client's
//     StickyBucketAssigner gives a whole batch's worth of rows to one bucket
//     too); rows of other requests and chunks share batches as usual.
//   - Build: the sender copies a chunk's columns into the batch's Arrow
//     builder (arrowlog.Builder.AppendColumns: a copy per column, bitmaps
//     shifted, offsets rebased) and compresses with the table's codec.
//   - Verdicts, deadline, retries, idempotence, memory: as for any record;
//     a chunk's rows share its verdict (the rows of a batch always do).
//
// Only log tables in the ARROW format (the default) without ARRAY, MAP or
// ROW columns, without partitions and without a bucket key take columnar
// rows (domain.ColumnarAppendable); Write refuses others as a whole (unsupported), and
// callers send such rows as entries.

// columnChunk is the rows [from, to) of a columnar write: the record of
// request.recs with the same index.
type columnChunk struct{ from, to int }

// columnAppender is implemented by Arrow builders that take columnar rows
// (arrowlog.Builder for flat schemas).
type columnAppender interface {
	AppendColumns(cols *domain.ColumnarRows, from, to int) error
}

// columnarCodecErr says why rows of codec c cannot be written as columns.
func columnarCodecErr(c *codec) error {
	switch {
	case c.pk:
		return fmt.Errorf("table `%s` has a primary key", c.path)
	case c.logFmt != logArrow:
		return fmt.Errorf("table `%s` is not in the ARROW log format", c.path)
	case c.arrowErr != nil:
		return c.arrowErr
	case c.arrowEnc == nil:
		return fmt.Errorf("table `%s` has nested columns", c.path)
	case len(c.partPos) > 0:
		return fmt.Errorf("table `%s` is partitioned", c.path)
	case !c.noBucketKey:
		return fmt.Errorf("table `%s` has a bucket key", c.path)
	}
	return nil
}

// writeColumns is Write for a batch of columnar rows (wb.Columns): the
// verdicts of columnRuns, one per row.
func (w *Writer) writeColumns(ctx context.Context, wb *domain.WriteBatch) ([]domain.EntryResult, error) {
	runs, err := w.columnRuns(ctx, wb)
	if err != nil {
		return nil, err
	}
	return domain.ExpandRuns(make([]domain.EntryResult, 0, wb.Columns.Rows), runs), nil
}

// WriteColumnRuns implements domain.ColumnarRunWriter: Write for a batch
// of columnar rows, answered with a verdict per chunk (a run of rows)
// instead of one per row.
func (w *Writer) WriteColumnRuns(ctx context.Context, wb *domain.WriteBatch) ([]domain.ResultRun, error) {
	if wb.Columns == nil {
		return nil, domain.InvalidArgument("WriteColumnRuns takes columnar rows")
	}
	return w.columnRuns(ctx, wb)
}

// columnRuns writes a batch of columnar rows (wb.Columns) and returns the
// verdicts of its chunks in row order, one run each.
func (w *Writer) columnRuns(ctx context.Context, wb *domain.WriteBatch) ([]domain.ResultRun, error) {
	cols := wb.Columns
	n := cols.Rows
	if n < 0 {
		return nil, domain.InvalidArgument("columnar rows: %d rows", n)
	}
	if n == 0 {
		return nil, nil
	}
	if wb.PartialUpdateColumns != nil || len(wb.Entries) > 0 {
		return nil, domain.InvalidArgument("columnar rows take no entries and no partial_update_columns")
	}
	w.mu.Lock()
	closed := w.closing
	w.mu.Unlock()
	if closed {
		return nil, &domain.Error{Kind: domain.KindUnavailable, Retryable: true, Message: "the writer is closed"}
	}
	c, err := w.codecFor(ctx, wb)
	if err != nil {
		return nil, err
	}
	if err := columnarCodecErr(c); err != nil {
		var de *domain.Error
		if errors.As(err, &de) {
			return nil, err
		}
		return nil, &domain.Error{Kind: domain.KindUnsupported, Message: "columnar appends: " + err.Error()}
	}
	if err := c.arrowEnc.CheckColumns(cols); err != nil {
		return nil, err
	}
	req := &request{ctx: ctx, codec: c, cols: cols, done: make(chan struct{})}
	if req.tl = domain.WriteTimelineFrom(ctx); req.tl != nil {
		req.start = w.opts.Now()
	}
	req.deadline, req.hasDeadline = ctx.Deadline()
	req.urgent = wb.Urgent
	req.compat = compatKey(c.schemaID, nil)

	// Chunks of about a batch size (at least one row each), or the
	// packed rows as they are: one record, a batch of its own.
	total := c.arrowEnc.ColumnsSize(cols, 0, n)
	per := n
	if p := cols.Packed; p != nil && p.Size <= w.opts.BatchSize && strings.EqualFold(p.Codec, c.arrowComp) {
		req.packed, total = true, p.Size
	} else if total > w.opts.BatchSize {
		per = max(1, int(int64(n)*int64(w.opts.BatchSize)/int64(total)))
	}
	count := (n + per - 1) / per
	req.chunks = make([]columnChunk, 0, count)
	req.chunkRes = make([]domain.EntryResult, count)
	req.recs = make([]rec, count)
	for i := range req.recs {
		from := i * per
		to := min(from+per, n)
		req.chunks = append(req.chunks, columnChunk{from, to})
		r := &req.recs[i]
		r.req, r.idx = req, int32(i)
		r.enc.bucket = -1
		r.part = meta.NoPartition
		r.size = int32(min(c.arrowEnc.ColumnsSize(cols, from, to), 1<<30))
		if req.packed {
			r.size = int32(total)
		}
		r.state = recQueued
		req.pending++
	}

	// The columns stay with the caller; the reservation covers the copy
	// the batches make of them.
	req.reserved = int64(total) + int64(count)*recOverhead
	if err := w.buf.acquire(ctx, req.reserved); err != nil {
		msg, retryable := "no buffer space for the request's rows before its deadline", true
		if errors.Is(err, errTooLarge) {
			msg = fmt.Sprintf("the request's rows need %d bytes, more than the writer's whole buffer (%d); split the request",
				req.reserved, w.opts.BufferMemory)
			retryable = false
		}
		// One verdict for every row: the request as one chunk.
		req.chunks = []columnChunk{{0, n}}
		req.chunkRes = []domain.EntryResult{{Code: CodeResourceExhausted, Message: msg, Retryable: retryable, Applied: domain.AppliedNo}}
		w.settleChunks(req, c.path)
		return req.runs(), nil
	}
	used, _ := w.buf.stats()
	w.opts.Metrics.BufferUsage(used, w.opts.BufferMemory)

	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		w.buf.release(req.reserved)
		return nil, &domain.Error{Kind: domain.KindUnavailable, Retryable: true, Message: "the writer is closed"}
	}
	w.enqueueAndWait(ctx, req, c.path, n, nil)
	return req.runs(), nil
}

// runs returns a columnar request's verdicts: a run per chunk, in row order.
func (req *request) runs() []domain.ResultRun {
	runs := make([]domain.ResultRun, len(req.chunks))
	for k, ch := range req.chunks {
		runs[k] = domain.ResultRun{Rows: ch.to - ch.from, Result: req.chunkRes[k]}
	}
	return runs
}

// setResults gives res to the entries of record r: its own, or, for a
// columnar write, its chunk's (request.chunkRes: one verdict per chunk,
// the chunk's run of rows in columnRuns' answer).
func (req *request) setResults(r *rec, res domain.EntryResult) {
	if req.chunks == nil {
		req.results[r.idx] = res
		return
	}
	req.chunkRes[r.idx] = res
}

// settleChunks ends a columnar request once nothing else sets its
// verdicts (done, or expired): the chunks' verdicts get their kinds and
// are counted, each for its chunk's rows.
func (w *Writer) settleChunks(req *request, path domain.TablePath) {
	withKinds(req.chunkRes)
	w.reportChunks(path, req)
}

// rows returns the entries record r stands for.
func (r *rec) rows() int {
	if r.req.chunks == nil {
		return 1
	}
	ch := r.req.chunks[r.idx]
	return ch.to - ch.from
}

// appendChunk adds the rows of the columnar record r to the Arrow builder
// ab.
func appendChunk(ab ArrowBuilder, r *rec) error {
	ca, ok := ab.(columnAppender)
	if !ok {
		return &domain.Error{Kind: domain.KindInternal, Message: "the Arrow builder takes no columnar rows"}
	}
	ch := r.req.chunks[r.idx]
	return ca.AppendColumns(r.req.cols, ch.from, ch.to)
}

// buildPacked builds the batch of one packed record (request.packed): the
// client's compressed buffers framed as the table's Arrow record batch
// (arrowlog.RowEncoder.AppendPacked), nothing decompressed or compressed.
func (w *Writer) buildPacked(c *codec, bt *batch, out *builtBatch) {
	r := bt.recs[0]
	comp, err := arrowlog.ParseCompression(c.arrowComp)
	if err != nil {
		out.err = err
		return
	}
	data, _ := record.BeginLogBatch(getBufFor(record.LogBatchHeaderSizeV0 + int(r.size) + 64*len(r.req.cols.Columns) + 256))
	if data, err = c.arrowEnc.AppendPacked(data, r.req.cols.Rows, comp, r.req.cols.Packed); err != nil {
		putBuf(data)
		out.failed, out.failErr = []*rec{r}, []error{err}
		out.kept = []*rec{}
		return
	}
	out.data = data
	out.count = int32(r.req.cols.Rows)
	out.kept = bt.recs
	if m, ok := w.opts.Metrics.(packedMetrics); ok {
		m.ArrowPacked(c.path, r.req.cols.Rows)
	}
}
