package writer

import (
	"encoding/binary"
	"math"
	"sync"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// bucket is the queue and idempotence state of one physical bucket. All
// fields are guarded by Writer.mu.
type bucket struct {
	key  bucketKey
	path domain.TablePath

	// queue holds records not yet in a batch, oldest first, from head on;
	// records removed after their deadline stay until compaction.
	queue     []*rec
	head      int
	live      int
	liveBytes int

	// inflight are the batches built and not completed, ordered by
	// sequence: in the air or waiting for a retry.
	inflight []*batch

	// Idempotence (§7.4): the writer id the sequences refer to, the next
	// sequence to assign and the last acknowledged one.
	writerID  int64
	nextSeq   int32
	lastAcked int32

	// blockedUntil is the throttle hook: nothing is drained from the bucket
	// before it (storage backpressure, code 72 on Fluss 1.0, or a future
	// per-bucket pressure value).
	blockedUntil time.Time
}

// firstLive returns the oldest queued record, dropping dead ones at the head.
func (b *bucket) firstLive() *rec {
	for b.head < len(b.queue) {
		r := b.queue[b.head]
		if r.state == recQueued {
			return r
		}
		b.queue[b.head] = nil
		b.head++
	}
	return nil
}

// compact drops dead records and the consumed head of the queue.
func (b *bucket) compact() {
	out := b.queue[:0]
	for _, r := range b.queue[b.head:] {
		if r.state == recQueued {
			out = append(out, r)
		}
	}
	clear(b.queue[len(out):])
	b.queue, b.head = out, 0
}

// idle reports whether the bucket holds nothing.
func (b *bucket) idle() bool { return b.live == 0 && len(b.inflight) == 0 }

// firstRetry returns the lowest-sequence batch waiting for a retry.
func (b *bucket) firstRetry() *batch {
	for _, bt := range b.inflight {
		if bt.state == batchWaitRetry {
			return bt
		}
	}
	return nil
}

func nextSeq(s int32) int32 {
	if s == math.MaxInt32 {
		return 0 // the server accepts 0 after MaxInt32
	}
	return s + 1
}

func prevSeq(s int32) int32 {
	if s == 0 {
		return math.MaxInt32
	}
	return s - 1
}

type batchState uint8

const (
	batchInAir batchState = iota + 1
	batchWaitRetry
	batchDone
)

// batch is one bucket's record batch: built once, sent, possibly resent.
type batch struct {
	b          *bucket
	recs       []*rec
	data       []byte
	kvb        *record.KvBatchBuilder // KV batches: re-stamps the header
	log        bool
	schemaID   int32
	count      int32
	tableID    int64
	compat     string
	targetCols []int32

	writerID int64
	seq      int32
	restamp  bool // the writer state changed after the bytes were built
	seqReset bool // the sequence was shifted after an earlier batch failed
	// headAtSend: when last sent, every lower sequence of the bucket was
	// resolved, so the server must have known the previous sequence.
	headAtSend bool

	state       batchState
	attempts    int
	retryAt     time.Time
	ambiguous   bool // some send may have been applied
	lastCode    wire.ErrorCode
	lastMsg     string
	created     time.Time
	orphanSince time.Time
}

// hasOtherOwner reports whether an entry of another request than req still
// waits for this batch.
func (bt *batch) hasOtherOwner(req *request) bool {
	for _, r := range bt.recs {
		if r.req != req && r.state == recBatched && !r.req.finished {
			return true
		}
	}
	return false
}

// hasOwner reports whether any entry still waits for this batch.
func (bt *batch) hasOwner() bool { return bt.hasOtherOwner(nil) }

// stamp writes the writer id and sequence into the header (and the CRC).
func (bt *batch) stamp() {
	if bt.kvb != nil {
		bt.data = bt.kvb.Build(bt.writerID, bt.seq)
	} else {
		// Cannot fail: the header was reserved and the schema id checked.
		_ = record.FinishLogBatch(bt.data, 0, record.LogBatchParams{
			SchemaID: bt.schemaID, Attributes: record.AttrAppendOnly,
			WriterID: bt.writerID, BatchSequence: bt.seq, RecordCount: bt.count,
		})
	}
	bt.restamp = false
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func getBuf() []byte { return (*bufPool.Get().(*[]byte))[:0] }

func putBuf(b []byte) {
	if cap(b) > 4<<20 {
		return
	}
	b = b[:0]
	bufPool.Put(&b)
}

// buildLocked takes the oldest compatible queued records of b (up to a batch
// size, at least one) and materializes their batch. Records whose row the
// batch builder rejects fail alone. It returns nil when nothing was taken.
func (w *Writer) buildLocked(b *bucket, now time.Time) *batch {
	first := b.firstLive()
	if first == nil {
		return nil
	}
	c := first.req.codec
	bt := &batch{
		b: b, log: !c.pk, schemaID: c.schemaID, tableID: c.tableID,
		compat: first.req.compat, targetCols: first.req.targetCols, created: now,
	}
	size := 0
	taken := 0
	for i := b.head; i < len(b.queue); i++ {
		r := b.queue[i]
		if r.state != recQueued {
			continue
		}
		if r.req.compat != bt.compat || (taken > 0 && size+int(r.size) > w.opts.BatchSize) {
			break
		}
		r.state = recBatched
		r.batch = bt
		bt.recs = append(bt.recs, r)
		size += int(r.size)
		taken++
		b.live--
		b.liveBytes -= int(r.size)
	}
	b.firstLive() // advance the head past what was taken
	if b.live == 0 {
		clear(b.queue)
		b.queue, b.head = b.queue[:0], 0
	} else if b.head > len(b.queue)/2 {
		b.compact()
	}

	switch {
	case c.pk:
		kvb, err := record.NewKvBatchBuilder(c.schemaID, getBuf())
		if err != nil {
			w.failRecsLocked(bt.recs, err)
			return nil
		}
		for _, r := range bt.recs {
			if v := r.value(); v != nil {
				_ = kvb.UpsertEncoded(r.key(), v)
			} else {
				_ = kvb.Delete(r.key())
			}
		}
		bt.kvb = kvb
		bt.count = int32(len(bt.recs))
	case c.logFmt == logArrow:
		if !w.buildArrowLocked(c, bt) {
			return nil
		}
	default:
		data, _ := record.BeginLogBatch(getBuf())
		for _, r := range bt.recs {
			v := r.value()
			data = binary.LittleEndian.AppendUint32(data, uint32(len(v)+1))
			data = append(data, byte(record.ChangeAppendOnly))
			data = append(data, v...)
		}
		bt.data = data
		bt.count = int32(len(bt.recs))
	}

	if w.opts.DisableIdempotence {
		bt.writerID, bt.seq = record.NoWriterID, record.NoBatchSequence
	} else {
		bt.writerID, bt.seq = w.writerID, b.nextSeq
		b.nextSeq = nextSeq(b.nextSeq)
	}
	bt.stamp()
	b.inflight = append(b.inflight, bt)
	return bt
}

// buildArrowLocked decodes the CompactedRows of bt back into Datums and
// feeds the table's Arrow builder.
func (w *Writer) buildArrowLocked(c *codec, bt *batch) bool {
	ab, err := c.arrowBuilder(w.opts.Arrow)
	if err != nil {
		w.failRecsLocked(bt.recs, err)
		return false
	}
	ab.Reset()
	kept := bt.recs[:0]
	var row []domain.Datum
	for _, r := range bt.recs {
		row, err = c.rowDec.DecodeRow(row, r.value())
		if err == nil {
			err = ab.Append(row)
		}
		if err != nil {
			w.failRecsLocked([]*rec{r}, err)
			continue
		}
		kept = append(kept, r)
	}
	bt.recs = kept
	if len(kept) == 0 {
		return false
	}
	data, _ := record.BeginLogBatch(getBuf())
	if data, err = ab.AppendTo(data); err != nil {
		w.failRecsLocked(bt.recs, err)
		return false
	}
	bt.data = data
	bt.count = int32(len(kept))
	return true
}

// arrowBuilder returns the codec's Arrow builder, used only by the sender
// under Writer.mu.
func (c *codec) arrowBuilder(f ArrowFactory) (ArrowBuilder, error) {
	if c.arrowB != nil {
		return c.arrowB, nil
	}
	if f == nil {
		return nil, c.arrowErr
	}
	ab, err := f(c.types, c.arrowComp, c.zstdLevel)
	if err != nil {
		return nil, err
	}
	c.arrowB = ab
	return ab, nil
}

// failRecsLocked fails records that never left the gateway.
func (w *Writer) failRecsLocked(recs []*rec, err error) {
	code, retryable := domainCode(err)
	for _, r := range recs {
		w.resolveLocked(r, domain.EntryResult{Code: code, Message: err.Error(), Retryable: retryable, Applied: domain.AppliedNo})
	}
}

// completeBatchLocked resolves a batch the server accepted (or reported as a
// duplicate of one it accepted).
func (w *Writer) completeBatchLocked(bt *batch) {
	b := bt.b
	w.removeInflightLocked(bt)
	if !w.opts.DisableIdempotence && bt.writerID == b.writerID && bt.writerID == w.writerID {
		if b.lastAcked < 0 || seqAfter(bt.seq, b.lastAcked) {
			b.lastAcked = bt.seq
		}
	}
	for _, r := range bt.recs {
		if r.state == recBatched && r.batch == bt {
			w.resolveLocked(r, domain.EntryResult{})
		}
	}
	w.releaseBatch(bt)
}

// failBatchLocked fails every waiting entry of bt with res. adjust shifts
// the sequences of the bucket's later batches down by one, for a batch the
// server definitely did not accept (Java adjustSequencesDueToFailedBatch).
func (w *Writer) failBatchLocked(bt *batch, res domain.EntryResult, adjust bool, now time.Time) {
	b := bt.b
	inAir := bt.state == batchInAir
	w.removeInflightLocked(bt)
	if adjust && !w.opts.DisableIdempotence && bt.writerID == b.writerID && bt.writerID == w.writerID {
		b.nextSeq = prevSeq(b.nextSeq)
		for _, x := range b.inflight {
			if x.writerID == bt.writerID && seqAfter(x.seq, bt.seq) {
				x.seq = prevSeq(x.seq)
				x.seqReset = true
				x.restamp = true
			}
		}
	}
	for _, r := range bt.recs {
		if r.state == recBatched && r.batch == bt {
			w.resolveLocked(r, res)
		}
	}
	if !inAir { // a send still reads the bytes of a batch in the air
		w.releaseBatch(bt)
	}
}

func (w *Writer) removeInflightLocked(bt *batch) {
	bt.state = batchDone
	b := bt.b
	for i, x := range b.inflight {
		if x == bt {
			b.inflight = append(b.inflight[:i], b.inflight[i+1:]...)
			break
		}
	}
}

func (w *Writer) releaseBatch(bt *batch) {
	if bt.data != nil {
		putBuf(bt.data)
		bt.data = nil
	}
	bt.kvb = nil
}

// seqAfter reports whether sequence a comes after b (with the wrap at
// MaxInt32: 0 follows MaxInt32).
func seqAfter(a, b int32) bool {
	d := (int64(a) - int64(b)) & math.MaxInt32 // modulo 2^31
	return d > 0 && d < 1<<30
}
