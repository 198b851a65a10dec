package writer

import (
	"encoding/binary"
	"math"
	"slices"
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
	lane int // the connection to the leader its requests use (Options.Lanes)

	// queue holds records not yet in a batch, oldest first, from head on;
	// records removed after their deadline stay until compaction.
	queue     []*rec
	head      int
	live      int
	liveBytes int

	// inflight are the batches built and not completed, ordered by
	// sequence: in the air or waiting for a retry.
	inflight []*batch

	// Idempotence (docs/fluss-writer.md#idempotence): the writer id the sequences refer to, the next
	// sequence to assign and the last acknowledged one.
	writerID  int64
	nextSeq   int32
	lastAcked int32

	// sealedBytes: the queued bytes, from the head, of batches the sticky
	// assignment of key-less log rows moved away from (full, or of another
	// schema). They are ready to send without waiting for Linger, like a
	// closed batch in the Java accumulator; the rows queued after them form
	// the bucket's open batch (see accepts).
	sealedBytes int

	// blockedUntil is the throttle hook: nothing is drained from the bucket
	// before it (storage backpressure, code 72 on Fluss 1.0, or a future
	// per-bucket pressure value).
	blockedUntil time.Time

	// slotSince: since when the bucket's queued rows were ready to send but
	// all its in-flight slots were taken (zero: not waiting for a slot); the
	// timeline's Slot (domain.WriteTimeline).
	slotSince time.Time
}

// accepts reports whether r may join the bucket's open batch (Java
// RecordAccumulator#tryAppend on the last batch of the bucket): rows are
// queued after the sealed ones, the last has r's schema and target columns,
// and r fits in batchSize with them.
func (b *bucket) accepts(r *rec, batchSize int) bool {
	open := b.liveBytes - b.sealedBytes
	if b.live == 0 || open <= 0 || open+int(r.size) > batchSize {
		return false
	}
	last := b.queue[len(b.queue)-1]
	if r.req.packed || last.req.packed {
		return false // a packed record is a batch of its own
	}
	return last.req == r.req || last.req.compat == r.req.compat
}

// seal closes the open batch: its rows are ready to send.
func (b *bucket) seal() { b.sealedBytes = b.liveBytes }

// sealed reports whether queued rows are in a sealed batch.
func (b *bucket) sealed() bool { return b.live > 0 && b.sealedBytes > 0 }

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
	// batchBuilding: taken by the sender, bytes being built without
	// Writer.mu; never sent yet (see takeLocked).
	batchBuilding
)

// batch is one bucket's record batch: built once, sent, possibly resent.
type batch struct {
	b          *bucket
	codec      *codec
	recs       []*rec
	size       int // the records' bytes (rec.size summed): the batch's size without its header
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

	// Timeline (domain.WriteTimeline): how long the bucket waited for an
	// in-flight slot before this batch was taken, its bucket's batches in
	// flight when it was last sent, and its last call and answer.
	slotWait       time.Duration
	inflightAtSend int
	callAt         time.Time
	answeredAt     time.Time
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

// getBufFor is getBuf with room for n bytes: a batch whose size is known is
// built without growing its buffer by append (a copy of what it held at
// every step; 1 % of the gateway's CPU at 500 × 16 PK upserts). A pooled
// buffer that is too small goes back to the pool.
func getBufFor(n int) []byte {
	b := getBuf()
	if cap(b) >= n {
		return b
	}
	putBuf(b)
	return make([]byte, 0, n)
}

func putBuf(b []byte) {
	if cap(b) > 4<<20 {
		return
	}
	b = b[:0]
	bufPool.Put(&b)
}

// Building a batch happens in three steps, so that the expensive part
// (copying the rows, Arrow encoding, ZSTD compression, the CRC) runs without
// Writer.mu, which every Write needs at its deadline (expire):
//
//  1. takeLocked (under mu) picks the records, assigns the writer id and
//     sequence and appends the batch to the bucket's inflight list in state
//     batchBuilding. Records in a building batch are recBatched.
//  2. build (sender goroutine or its build helpers, buildAll; without mu)
//     materializes the bytes into a
//     separate builtBatch; it reads only immutable data: bt.codec, bt.recs
//     (the slice is replaced only under mu by finishBuildLocked, which runs
//     on the same goroutine after build), and each record's arena and
//     encoding. It never touches record or batch state.
//  3. finishBuildLocked (under mu) installs the bytes unless the batch was
//     dropped meanwhile, fails the rows the builder rejected, and (re)stamps
//     the header with the batch's current writer id and sequence.
//
// While a batch is building, the rest of the writer treats it as an unsent
// batch that owns its bytes:
//   - expire drops it when no other request waits for it (its rows get
//     applied "no", like a batch waiting for a retry); failBatchLocked
//     removes it from inflight and gives its sequence back, and
//     finishBuildLocked then sees batchDone and never sends it. Otherwise
//     the expiring rows get "unknown": the batch will be sent for the other
//     requests (the old single critical section gave the same verdict, as
//     expire then ran after the batch was in the air).
//   - Close fails it like any inflight batch; it is not sent either.
//   - Its sequence may be shifted down (failBatchLocked adjust of an
//     earlier batch): finishBuildLocked stamps after reading bt.seq under mu.
//   - It counts against MaxInFlightPerBucket and keeps the bucket non-idle
//     (it is in b.inflight), and it is never a retry candidate.
// Only one sender goroutine takes batches, and it waits for every batch of
// a drain round to be built (buildAll) before the next round, so a building
// batch is always the highest sequence of its bucket.

// takeLocked takes the oldest compatible queued records of b (up to a batch
// size, at least one) into a new batch in state batchBuilding. It returns
// nil when nothing was taken.
func (w *Writer) takeLocked(b *bucket, now time.Time) *batch {
	first := b.firstLive()
	if first == nil {
		return nil
	}
	c := first.req.codec
	bt := &batch{
		b: b, codec: c, log: !c.pk, schemaID: c.schemaID, tableID: c.tableID,
		compat: first.req.compat, targetCols: first.req.targetCols, created: now,
		state: batchBuilding,
	}
	size := 0
	taken := 0
	for i := b.head; i < len(b.queue); i++ {
		r := b.queue[i]
		if r.state != recQueued {
			continue
		}
		if r.req.compat != bt.compat || (taken > 0 && (size+int(r.size) > w.opts.BatchSize || r.req.packed || first.req.packed)) {
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
	bt.size = size
	if !b.slotSince.IsZero() {
		bt.slotWait = now.Sub(b.slotSince)
		b.slotSince = time.Time{}
	}
	b.sealedBytes = max(0, b.sealedBytes-size)
	if b.live == 0 {
		b.sealedBytes = 0
		clear(b.queue)
		b.queue, b.head = b.queue[:0], 0
	} else if b.head > len(b.queue)/2 {
		b.compact()
	}
	if w.opts.DisableIdempotence {
		bt.writerID, bt.seq = record.NoWriterID, record.NoBatchSequence
	} else {
		bt.writerID, bt.seq = w.writerID, b.nextSeq
		b.nextSeq = nextSeq(b.nextSeq)
	}
	b.inflight = append(b.inflight, bt)
	return bt
}

// builtBatch is the output of build, installed by finishBuildLocked.
type builtBatch struct {
	writerID int64 // the header was stamped with these
	seq      int32
	data     []byte
	kvb      *record.KvBatchBuilder
	count    int32
	kept     []*rec // the records in data (nil: all of bt.recs)
	failed   []*rec // records the builder rejected, with failErr
	failErr  []error
	err      error // the whole batch failed
}

// build materializes the bytes of a batch taken by takeLocked. It runs on
// the sender goroutine without Writer.mu: writerID and seq are the values
// read under mu by the caller (they are re-checked by finishBuildLocked).
func (w *Writer) build(bt *batch, writerID int64, seq int32) *builtBatch {
	c := bt.codec
	out := &builtBatch{writerID: writerID, seq: seq}
	switch {
	case c.pk:
		kvb, err := record.NewKvBatchBuilder(c.schemaID, getBufFor(record.KvBatchHeaderSize+bt.size))
		if err != nil {
			out.err = err
			return out
		}
		for _, r := range bt.recs {
			if v := r.value(); v != nil {
				_ = kvb.UpsertEncoded(r.key(), v)
			} else {
				_ = kvb.Delete(r.key())
			}
		}
		out.kvb = kvb
		out.count = int32(len(bt.recs))
		out.data = kvb.Build(writerID, seq)
		return out
	case c.logFmt == logArrow:
		if bt.recs[0].req.packed {
			w.buildPacked(c, bt, out) // columnar.go
		} else {
			w.buildArrow(c, bt, out)
		}
		if out.err != nil {
			return out
		}
	default:
		data, _ := record.BeginLogBatch(getBuf())
		for _, r := range bt.recs {
			v := r.value()
			data = binary.LittleEndian.AppendUint32(data, uint32(len(v)+1))
			data = append(data, byte(record.ChangeAppendOnly))
			data = append(data, v...)
		}
		out.data = data
		out.count = int32(len(bt.recs))
	}
	// Cannot fail: the header was reserved and the schema id checked.
	_ = record.FinishLogBatch(out.data, 0, record.LogBatchParams{
		SchemaID: bt.schemaID, Attributes: record.AttrAppendOnly,
		WriterID: writerID, BatchSequence: seq, RecordCount: out.count,
	})
	return out
}

// buildArrow feeds the rows of bt to the table's Arrow builder (owned by
// the sender goroutine): as encoded rows when the codec has an encoder, else
// decoding their CompactedRows back into Datums.
func (w *Writer) buildArrow(c *codec, bt *batch, out *builtBatch) {
	ab, err := c.arrowBuilder(w.opts.Arrow)
	if err != nil {
		out.err = err
		return
	}
	defer c.releaseArrowBuilder(ab)
	ab.Reset()
	var enc arrowEncoded
	if c.arrowEnc != nil {
		enc = ab.(arrowEncoded)
	}
	kept := make([]*rec, 0, len(bt.recs))
	var row []domain.Datum
	rows := 0
	for _, r := range bt.recs {
		if r.req.chunks != nil {
			err = appendChunk(ab, r) // columnar.go
		} else if enc != nil {
			err = enc.AppendEncoded(r.value())
		} else if row, err = c.rowDec.DecodeRow(row, r.value()); err == nil {
			err = ab.Append(row)
		}
		if err != nil {
			out.failed = append(out.failed, r)
			out.failErr = append(out.failErr, err)
			continue
		}
		kept = append(kept, r)
		rows += r.rows()
	}
	out.kept = kept
	if len(kept) == 0 {
		return
	}
	data, _ := record.BeginLogBatch(getBuf())
	if data, err = ab.AppendTo(data); err != nil {
		putBuf(data)
		out.err = err
		return
	}
	out.data = data
	out.count = int32(rows)
}

// finishBuildLocked installs the output of build into bt. It reports false
// when bt is not to be sent: dropped while it was building (deadline,
// close), or left without rows.
func (w *Writer) finishBuildLocked(bt *batch, out *builtBatch, now time.Time) bool {
	if bt.state != batchBuilding {
		// Dropped meanwhile by expire or Close: already out of inflight,
		// its rows resolved. It was never sent and never will be.
		releaseBuilt(out)
		return false
	}
	for i, r := range out.failed {
		if r.state == recBatched && r.batch == bt {
			w.failRecsLocked([]*rec{r}, out.failErr[i])
		}
	}
	if out.kept != nil {
		bt.recs = out.kept
	}
	if out.err != nil || len(bt.recs) == 0 {
		res := domain.EntryResult{}
		if out.err != nil {
			res = notWritten(out.err)
		}
		// Never sent: give the sequence back (bt is the highest sequence of
		// its bucket, see takeLocked).
		w.failBatchLocked(bt, res, true, now)
		releaseBuilt(out)
		return false
	}
	bt.data, bt.kvb, bt.count = out.data, out.kvb, out.count
	if bt.restamp || bt.writerID != out.writerID || bt.seq != out.seq {
		bt.stamp() // the sequence was shifted while the batch was building
	}
	return true
}

func releaseBuilt(out *builtBatch) {
	if out.data != nil {
		putBuf(out.data)
	}
}

// arrowBuilder takes an idle Arrow builder of the codec, or makes one; the
// caller (build, without Writer.mu) gives it back with releaseArrowBuilder.
// There are at most as many as batches of the table built at once.
func (c *codec) arrowBuilder(f ArrowFactory) (ArrowBuilder, error) {
	c.arrowMu.Lock()
	if n := len(c.arrowFree); n > 0 {
		ab := c.arrowFree[n-1]
		c.arrowFree = c.arrowFree[:n-1]
		c.arrowMu.Unlock()
		return ab, nil
	}
	c.arrowMu.Unlock()
	if f == nil || c.arrowErr != nil {
		return nil, c.arrowErr
	}
	return f(c.types, c.arrowComp, c.zstdLevel)
}

func (c *codec) releaseArrowBuilder(ab ArrowBuilder) {
	c.arrowMu.Lock()
	c.arrowFree = append(c.arrowFree, ab)
	c.arrowMu.Unlock()
}

// failRecsLocked fails records that never left the gateway.
func (w *Writer) failRecsLocked(recs []*rec, err error) {
	res := notWritten(err)
	for _, r := range recs {
		w.resolveLocked(r, res)
	}
}

// completeBatchLocked resolves a batch the server accepted (or reported as a
// duplicate of one it accepted). at is the offset the answer gave, when it
// gave one (at.Known): the batch's base offset for a log batch, the
// changelog's end offset after it for a KV batch; each row's verdict
// carries its own position from it (domain.WrittenAt).
func (w *Writer) completeBatchLocked(bt *batch, at domain.WrittenAt) {
	b := bt.b
	w.removeInflightLocked(bt)
	if !w.opts.DisableIdempotence && bt.writerID == b.writerID && bt.writerID == w.writerID {
		if b.lastAcked < 0 || seqAfter(bt.seq, b.lastAcked) {
			b.lastAcked = bt.seq
		}
	}
	// bt.recs are the batch's records in order (build keeps only those it
	// wrote), so the rows before a record are its index in the batch, or
	// more when columnar records (several rows each) precede it.
	row := int64(0)
	for _, r := range bt.recs {
		if r.state == recBatched && r.batch == bt {
			var res domain.EntryResult
			if at.Known {
				res.At = domain.WrittenAt{Known: true, Partition: r.enc.partName, Bucket: b.key.bucket,
					Offset: at.Offset, Exact: bt.log}
				if bt.log {
					res.At.Offset += row
				}
			}
			row += int64(r.rows())
			w.resolveLocked(r, res)
			continue
		}
		row += int64(r.rows())
	}
	w.releaseBatch(bt)
}

// failBatchLocked fails every waiting entry of bt with res. adjust shifts
// the sequences of the bucket's later batches down by one, for a batch the
// server definitely did not accept (Java adjustSequencesDueToFailedBatch).
func (w *Writer) failBatchLocked(bt *batch, res domain.EntryResult, adjust bool, now time.Time) {
	b := bt.b
	// A send still reads the bytes of a batch in the air; the sender still
	// writes those of a building batch (finishBuildLocked releases them).
	keepBytes := bt.state == batchInAir || bt.state == batchBuilding
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
	if !keepBytes {
		w.releaseBatch(bt)
	}
}

func (w *Writer) removeInflightLocked(bt *batch) {
	bt.state = batchDone
	b := bt.b
	for i, x := range b.inflight {
		if x == bt {
			// slices.Delete clears the vacated slot: append(s[:i],
			// s[i+1:]...) left the last batch's pointer in the array
			// past the slice's end, so every bucket kept its last
			// finished batch (and, through its records, whole requests'
			// arenas) alive until its next send (issue 21: 200 MiB held
			// by an idle gateway after the resource benchmark).
			b.inflight = slices.Delete(b.inflight, i, i+1)
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
