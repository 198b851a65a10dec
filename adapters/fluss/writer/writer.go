package writer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Writer is the domain.RowWriter of one cluster connection. It is safe for
// concurrent use; all its requests share one buffer, one writer id and one
// sender goroutine.
type Writer struct {
	opts Options
	call meta.Caller
	meta *meta.Cache
	buf  *bufferPool

	codecs *meta.PerTable[*codec] // of the tables w.meta holds

	// mu guards everything below and the state of requests, records,
	// buckets and batches.
	mu         sync.Mutex
	buckets    map[bucketKey]*bucket
	active     map[*bucket]struct{}
	sticky     map[physKey]int32
	availBuf   []int32                   // scratch of nextStickyLocked
	laneTail   map[laneKey]chan struct{} // the last request dispatched per lane (sendReq.written)
	refreshing map[physKey]bool
	refreshed  map[physKey]time.Time
	writerID   int64
	initing    bool
	initRetry  time.Time
	initFails  int
	closing    bool
	closed     bool
	rng        *rand.Rand

	wake    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	// drained is closed by the sender once Close has begun and no bucket
	// holds rows any more (drainedSent under mu says it has been).
	drained     chan struct{}
	drainedSent bool
	// life is the context of every goroutine the writer starts (sends,
	// writer-id and leader requests); Close cancels it and waits for them
	// through goroutines.
	life       context.Context
	endLife    context.CancelFunc
	goroutines sync.WaitGroup
}

var _ domain.RowWriter = (*Writer)(nil)

// physKey identifies a physical table: a table or one of its partitions.
type physKey struct {
	table int64
	part  int64
}

type bucketKey struct {
	physKey
	bucket int32
}

// New returns a Writer that sends through call and resolves tables through
// cache (which should use the same call). It starts the sender goroutine;
// Close stops it.
func New(call meta.Caller, cache *meta.Cache, opts Options) *Writer {
	o := opts.withDefaults()
	w := &Writer{
		opts:       o,
		call:       call,
		meta:       cache,
		buf:        newBufferPool(o.BufferMemory),
		codecs:     meta.NewPerTable[*codec](cache, 4096),
		buckets:    make(map[bucketKey]*bucket),
		active:     make(map[*bucket]struct{}),
		sticky:     make(map[physKey]int32),
		refreshing: make(map[physKey]bool),
		laneTail:   make(map[laneKey]chan struct{}),
		refreshed:  make(map[physKey]time.Time),
		writerID:   record.NoWriterID,
		rng:        rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		wake:       make(chan struct{}, 1),
		stop:       make(chan struct{}),
		stopped:    make(chan struct{}),
		drained:    make(chan struct{}),
	}
	w.life, w.endLife = context.WithCancel(context.Background())
	w.goroutines.Add(1)
	go func() {
		defer w.goroutines.Done()
		w.run()
	}()
	return w
}

// spawn runs f on a goroutine that Close waits for. f gets the writer's
// life context bounded by the request timeout. Every caller runs on a
// goroutine the writer already counts (the sender, or a send completing),
// so that the count never rises from zero while Close waits.
func (w *Writer) spawn(f func(ctx context.Context)) {
	w.goroutines.Add(1)
	go func() {
		defer w.goroutines.Done()
		ctx, cancel := context.WithTimeout(w.life, w.opts.RequestTimeout)
		defer cancel()
		f(ctx)
	}()
}

// request is one Write call in flight.
type request struct {
	ctx         context.Context // the Write call's context (tracing links)
	deadline    time.Time       // ctx's deadline, if hasDeadline
	hasDeadline bool
	codec       *codec
	results     []domain.EntryResult
	recs        []rec
	arena       []byte
	reserved    int64
	pending     int  // records without a verdict
	expiring    bool // expire is assigning verdicts; it finishes the request
	finished    bool
	done        chan struct{}
	compat      string // batch compatibility: schema id and target columns
	targetCols  []int32

	// urgent: the batch asked to be sent without linger (WriteBatch.Urgent).
	urgent bool
	// Columnar writes (columnar.go): the rows, and the rows of each record.
	cols   *domain.ColumnarRows
	chunks []columnChunk
	// chunkRes holds the verdict of each chunk (setResults); results is
	// nil.
	chunkRes []domain.EntryResult
	// packed: the request's one record is cols.Packed, a batch of its own
	// sent as the client compressed it (columnar.go).
	packed bool
	// Timeline (only when the caller asked for one, tl != nil): the Write
	// call's start, when its rows were queued, the batch that resolved its
	// rows last and how many batches did, and that batch's answer time.
	tl         *domain.WriteTimeline
	start      time.Time
	enqAt      time.Time
	tlBatch    *batch
	tlBatches  int
	tlAnswered time.Time
}

// rec is one entry's record; it lives in request.recs.
type rec struct {
	req   *request
	idx   int32
	state recState
	enc   encoded
	size  int32
	at    time.Time // enqueue time
	part  int64
	b     *bucket
	batch *batch
}

type recState uint8

const (
	recNone    recState = iota // failed before enqueue, or resolved
	recQueued                  // in its bucket's queue
	recBatched                 // in a batch (building, built, maybe sent)
	recRemoved                 // removed from the queue after its deadline
	recDone
)

func (r *rec) key() []byte {
	return r.req.arena[r.enc.keyOff : r.enc.keyOff+r.enc.keyLen]
}

// value returns the value row, or nil for a delete.
func (r *rec) value() []byte {
	if r.enc.valLen < 0 {
		return nil
	}
	return r.req.arena[r.enc.valOff : r.enc.valOff+r.enc.valLen]
}

// Write implements domain.RowWriter. It returns an error, and no results,
// only when the request as a whole cannot be attempted: unknown table, table
// re-created with another id, unknown schema, writer closed. Every other
// failure is a per-entry verdict.
func (w *Writer) Write(ctx context.Context, wb *domain.WriteBatch) ([]domain.EntryResult, error) {
	if wb.Columns != nil {
		return w.writeColumns(ctx, wb) // columnar.go
	}
	n := len(wb.Entries)
	results := make([]domain.EntryResult, n)
	if n == 0 {
		return results, nil
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
	req := &request{ctx: ctx, codec: c, results: results, recs: make([]rec, n), done: make(chan struct{})}
	if req.tl = domain.WriteTimelineFrom(ctx); req.tl != nil {
		req.start = w.opts.Now()
	}
	req.deadline, req.hasDeadline = ctx.Deadline()
	req.urgent = wb.Urgent
	defer func() {
		withKinds(results)
		w.report(c.path, results)
	}()
	if wb.PartialUpdateColumns != nil {
		if !c.pk {
			return nil, domain.InvalidArgument("partial_update_columns: only primary-key tables support partial updates")
		}
		cols := make([]int32, 0, len(wb.PartialUpdateColumns))
		for _, p := range wb.PartialUpdateColumns {
			if p < 0 || p >= len(c.types) {
				return nil, domain.InvalidArgument("partial_update_columns: column position %d out of range", p)
			}
			cols = append(cols, int32(p))
		}
		slices.Sort(cols)
		req.targetCols = slices.Compact(cols)
	}
	req.compat = compatKey(c.schemaID, req.targetCols)

	// Encode every entry into the arena.
	est, variable := estimateArena(wb, int(c.fixedPerRow.Load()))
	req.arena = make([]byte, 0, est)
	var scratch []domain.Datum
	var parts map[string]int64
	var partErr map[string]error
	var partRule map[string]error   // auto-partition rule verdict per name (upserts)
	var partMissing map[string]bool // partitions a delete found missing
	auto := domain.AutoPartitionOf(c.table.Info.Descriptor)
	at := w.opts.Now()
	for i := range wb.Entries {
		r := &req.recs[i]
		r.req, r.idx = req, int32(i)
		var err error
		req.arena, r.enc, scratch, err = c.encode(req.arena, &wb.Entries[i], scratch)
		if err != nil {
			results[i] = notWritten(err)
			continue
		}
		r.part = meta.NoPartition
		if len(c.partPos) > 0 {
			del := wb.Entries[i].Op == domain.OpDelete
			if auto.Checked() {
				if err := autoPartitionRule(auto, r.enc.partName, del, at, &partRule); err != nil {
					results[i] = domain.EntryResult{Code: CodeInvalidArgument, Message: err.Error(), Applied: domain.AppliedNo}
					continue
				}
			}
			id, ok := parts[r.enc.partName]
			if !ok && del && partMissing[r.enc.partName] {
				continue // a delete in a missing partition: success, nothing to change
			}
			if !ok && del {
				// A delete never creates a partition: where the partition
				// does not exist there is no row to delete, and creating
				// it would leave an empty partition behind (and, past the
				// retention, one Fluss drops again).
				id, err = w.meta.Partition(ctx, c.table, r.enc.partName, false)
				if de := domain.AsError(err); de != nil && de.Kind == domain.KindNotFound && de.Resource == domain.ResourcePartition {
					if partMissing == nil {
						partMissing = make(map[string]bool)
					}
					partMissing[r.enc.partName] = true
					continue
				}
				if err != nil {
					results[i] = notWritten(err)
					continue
				}
				if parts == nil {
					parts = make(map[string]int64)
				}
				parts[r.enc.partName] = id
				ok = true
			}
			if !ok {
				if err, failed := partErr[r.enc.partName]; failed {
					results[i] = notWritten(err)
					continue
				}
				id, err = w.meta.Partition(ctx, c.table, r.enc.partName, !w.opts.DisableDynamicPartitions)
				if err != nil {
					if partErr == nil {
						partErr = make(map[string]error)
					}
					partErr[r.enc.partName] = err
					results[i] = notWritten(err)
					continue
				}
				if parts == nil {
					parts = make(map[string]int64)
				}
				parts[r.enc.partName] = id
			}
			r.part = id
		}
		r.size = int32(c.recordSize(int(r.enc.keyLen), int(r.enc.valLen)))
		r.state = recQueued
		req.pending++
	}
	c.learnFixed(len(req.arena), variable, n, len(wb.Entries[0].Row))
	if req.pending == 0 {
		return results, nil
	}

	// Reserve buffer memory for the whole request (all or nothing).
	req.reserved = int64(len(req.arena)) + int64(req.pending)*recOverhead
	if err := w.buf.acquire(ctx, req.reserved); err != nil {
		msg, retryable := "no buffer space for the request's rows before its deadline", true
		if errors.Is(err, errTooLarge) {
			msg = fmt.Sprintf("the request's rows need %d bytes, more than the writer's whole buffer (%d); split the request",
				req.reserved, w.opts.BufferMemory)
			retryable = false
		}
		for i := range req.recs {
			if req.recs[i].state == recQueued {
				results[i] = domain.EntryResult{Code: CodeResourceExhausted, Message: msg, Retryable: retryable, Applied: domain.AppliedNo}
			}
		}
		return results, nil
	}
	used, _ := w.buf.stats()
	w.opts.Metrics.BufferUsage(used, w.opts.BufferMemory)

	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		w.buf.release(req.reserved)
		return nil, &domain.Error{Kind: domain.KindUnavailable, Retryable: true, Message: "the writer is closed"}
	}
	return w.enqueueAndWait(ctx, req, c.path, req.pending, results), nil
}

// recOverhead is the accounted per-record memory besides its bytes.
const recOverhead = 64

// estimateArena returns the capacity to give a request's arena and the
// variable-length bytes (strings, bytes, wide decimals, nested values) it
// counted or estimated for the rows. fixed is what the table's rows were
// seen to take besides their variable bytes (codec.fixedPerRow; 0: not yet
// seen, when the bound of 16 bytes per value is used).
func estimateArena(wb *domain.WriteBatch, fixed int) (capacity, variable int) {
	if len(wb.Entries) == 0 {
		return 0, 0
	}
	// The fixed part: 16 bytes per value bound a value's encoding (a
	// 10-byte varint and its length), but the benchmark's rows take about
	// a third of that (6.5 bytes per value), so once rows of the table
	// were encoded their fixed part (learnFixed) is used, plus an eighth:
	// the bound made the arena three times what the rows encode to, and
	// each 500-row request allocated and zeroed 65 KB that nothing used.
	// Rows whose fixed part is longer than the last request's only make
	// append grow the arena (once: the margin is per row).
	//
	// The variable bytes are counted, not learned: without them a request
	// of wide strings grew the arena by append many times over (Go grows
	// large slices by 1.25x), allocating about five times the rows' size
	// (issue 21). Those of a large request are estimated from a sample of
	// arenaSample rows, plus an eighth: summing every row read each row's
	// Datums once more before encoding read them again (1.7 % of the
	// gateway's CPU at 500 × 16 PK upserts).
	entries := len(wb.Entries)
	perRow := 16 * len(wb.Entries[0].Row)
	if fixed > 0 && fixed < perRow {
		perRow = fixed + fixed/8 + 1
	}
	n := entries * perRow
	if entries <= arenaSample {
		v := 0
		for i := range wb.Entries {
			v += variableBytes(wb.Entries[i].Row)
		}
		return n + v, v
	}
	// One row from each of arenaSample equal strides, at an offset that
	// moves from stride to stride (so rows that repeat with the stride's
	// period are not the only ones read).
	stride := entries / arenaSample
	v := 0
	for j := range arenaSample {
		v += variableBytes(wb.Entries[j*stride+(j*7919)%stride].Row)
	}
	v = v * entries / arenaSample
	return n + v + v/8, v
}

// arenaSample is the number of rows estimateArena reads of a large request.
const arenaSample = 64

// variableBytes sums the byte lengths of the values of row (nested
// included).
func variableBytes(row []domain.Datum) int {
	n := 0
	for i := range row {
		n += len(row[i].Bytes)
		if len(row[i].Elems) > 0 {
			n += 16*len(row[i].Elems) + variableBytes(row[i].Elems)
		}
	}
	return n
}

func compatKey(schemaID int32, cols []int32) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(int(schemaID)))
	for _, c := range cols {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(int(c)))
	}
	return b.String()
}

// codecFor resolves the table and returns the codec for the batch's schema.
func (w *Writer) codecFor(ctx context.Context, wb *domain.WriteBatch) (*codec, error) {
	t, err := w.meta.Table(ctx, wb.Table)
	if err != nil {
		return nil, err
	}
	if (wb.TableID != 0 && t.ID() != wb.TableID) || wb.SchemaID > t.Info.SchemaID {
		if t, err = w.meta.Reload(ctx, wb.Table); err != nil {
			return nil, err
		}
	}
	if (wb.TableID != 0 && t.ID() != wb.TableID) || wb.SchemaID > t.Info.SchemaID {
		return nil, domain.NewStaleDefinition(&domain.StaleDefinitionError{Table: wb.Table,
			UsedTableID: wb.TableID, TableID: t.ID(), UsedSchemaID: wb.SchemaID, SchemaID: t.Info.SchemaID})
	}
	schemaID := wb.SchemaID
	if schemaID <= 0 && wb.TableID == 0 {
		schemaID = t.Info.SchemaID
	}
	c, ok := w.codecs.Get(t.ID(), schemaID)
	if ok && c.table == t {
		return c, nil
	}
	schema, err := w.meta.Schema(ctx, t, schemaID)
	if err != nil {
		return nil, err
	}
	if c, err = newCodec(t, schemaID, schema, w.opts.Arrow); err != nil {
		return nil, err
	}
	w.codecs.Put(t.ID(), schemaID, c)
	return c, nil
}

// enqueueCache remembers, within one request's enqueue loop (under mu), the
// buckets already resolved for one physical table, so that a record costs
// no map lookups when its bucket was seen before: byID for hashed buckets,
// sticky for the current sticky bucket of key-less log rows.
type enqueueCache struct {
	pk     physKey
	valid  bool
	byID   []*bucket
	sticky *bucket
}

// enqueueLocked appends r to its bucket's queue.
func (w *Writer) enqueueLocked(r *rec, now time.Time, ec *enqueueCache) {
	c := r.req.codec
	pk := physKey{c.tableID, r.part}
	if !ec.valid || ec.pk != pk {
		*ec = enqueueCache{pk: pk, valid: true, byID: ec.byID[:0]}
	}
	bucketID := r.enc.bucket
	var b *bucket
	fresh := true // b was looked up now: mark it active (nothing leaves w.active during the loop)
	switch {
	case bucketID < 0:
		// The open batch of the sticky bucket takes the row (stickyLocked
		// would keep it): nothing was taken from it during this loop.
		if sb := ec.sticky; sb != nil && sb.accepts(r, w.opts.BatchSize) {
			b, fresh = sb, false
		} else {
			b = w.stickyLocked(r, pk)
			ec.sticky = b
		}
	case int(bucketID) < c.buckets && c.buckets <= 4096:
		if len(ec.byID) < c.buckets {
			ec.byID = append(ec.byID[:0], make([]*bucket, c.buckets)...)
		}
		if b = ec.byID[bucketID]; b == nil {
			b = w.bucketLocked(bucketKey{pk, bucketID}, c)
			ec.byID[bucketID] = b
		} else {
			fresh = false
		}
	default:
		b = w.bucketLocked(bucketKey{pk, bucketID}, c)
	}
	if r.req.hasDeadline && b.blockedUntil.After(r.req.deadline) {
		// Throttled past the deadline: the row could not be sent in time.
		r.state = recNone
		w.resolveLocked(r, throttleVerdict(b, b.blockedUntil.Sub(now), ""))
		return
	}
	r.at = now
	r.b = b
	b.queue = append(b.queue, r)
	b.live++
	b.liveBytes += int(r.size)
	if r.req.packed {
		b.seal() // a whole batch: ready to send (accepts keeps it alone)
	}
	if fresh {
		w.active[b] = struct{}{}
	}
}

func (w *Writer) bucketLocked(k bucketKey, c *codec) *bucket {
	b, ok := w.buckets[k]
	if !ok {
		b = &bucket{key: k, path: c.path, writerID: record.NoWriterID, lastAcked: -1, lane: w.laneOf(k)}
		w.buckets[k] = b
	}
	return b
}

// laneOf returns the lane (Options.Lanes) of a bucket: 1..Lanes, spreading
// the buckets of a table and of its partitions over them; lane 0, the
// connection metadata and lookups share, is never used for writes.
func (w *Writer) laneOf(k bucketKey) int {
	h := uint64(k.part+1)*0x9E3779B97F4A7C15 + uint64(k.bucket) //nolint:gosec // a hash, wrapping is intended
	return 1 + int(h%uint64(w.opts.Lanes))
}

// stickyLocked picks the bucket of a key-less log row r of the physical
// table pk (the Java client's StickyBucketAssigner, as WriterClient#doSend
// and RecordAccumulator#append drive it; one sticky bucket per table or
// partition):
//
//   - The row joins the open batch of the current sticky bucket: its queued
//     rows not yet taken by the sender, when they have room for it and the
//     same schema and target columns (RecordAccumulator#tryAppend).
//   - Otherwise the row would start a new batch in the sticky bucket: the
//     sender took the open batch (the common case while it keeps up), or it
//     is full. Then the sticky bucket changes (onNewBatch): to a random
//     bucket other than the current one among those with a known leader;
//     to the only one when just one has a leader; to a random bucket of the
//     table when none has. The row goes to the new bucket whether or not its
//     queue has room (the Java retry appends with abortIfBatchFull false).
//   - A bucket left with queued rows by the switch (full, or another schema)
//     is sealed: the sender sends those rows without waiting for Linger, as
//     Java's ready check treats a closed batch as full; rows that later
//     come back to the bucket start its new open batch (bucket.sealedBytes).
//
// The first row of a physical table picks a bucket the same way.
func (w *Writer) stickyLocked(r *rec, pk physKey) *bucket {
	c := r.req.codec
	cur, ok := w.sticky[pk]
	if ok {
		b := w.bucketLocked(bucketKey{pk, cur}, c)
		if b.accepts(r, w.opts.BatchSize) {
			return b
		}
		if b.live > 0 {
			b.seal()
		}
	}
	next := w.nextStickyLocked(c, pk, cur, ok)
	w.sticky[pk] = next
	return w.bucketLocked(bucketKey{pk, next}, c)
}

// nextStickyLocked draws the next sticky bucket of pk (see stickyLocked);
// hasCur says whether cur is the current one, to be avoided.
func (w *Writer) nextStickyLocked(c *codec, pk physKey, cur int32, hasCur bool) int32 {
	avail := w.meta.AvailableBuckets(w.availBuf[:0], pk.table, pk.part)
	w.availBuf = avail
	// Candidates: buckets with a leader, within the codec's bucket count,
	// other than cur (uniformly among them, as Java's redraw loop).
	n, sawCur := 0, false
	for _, id := range avail {
		if int(id) >= c.buckets {
			continue
		}
		if hasCur && id == cur {
			sawCur = true
			continue
		}
		avail[n] = id
		n++
	}
	switch {
	case n > 0:
		return avail[w.rng.IntN(n)]
	case sawCur:
		return cur // the only bucket with a leader
	default:
		return int32(w.rng.IntN(c.buckets))
	}
}

// resolveLocked records the verdict of one record.
func (w *Writer) resolveLocked(r *rec, res domain.EntryResult) {
	if r.req.tl != nil && r.batch != nil && r.req.tlBatch != r.batch {
		r.req.tlBatch = r.batch
		r.req.tlBatches++
	}
	r.state = recDone
	r.batch = nil
	req := r.req
	if req.finished {
		return
	}
	req.setResults(r, res)
	req.pending--
	if req.pending == 0 && !req.expiring {
		w.finishLocked(req)
	}
}

func (w *Writer) finishLocked(req *request) {
	if req.finished {
		return
	}
	req.finished = true
	w.buf.release(req.reserved)
	if req.tl != nil {
		w.fillTimelineLocked(req)
	}
	close(req.done)
}

// fillTimelineLocked fills req's timeline from the batch that resolved its
// rows last (see domain.WriteTimeline).
func (w *Writer) fillTimelineLocked(req *request) {
	tl, bt := req.tl, req.tlBatch
	tl.Batches = req.tlBatches
	if bt == nil {
		return
	}
	tl.Queue = max(0, bt.created.Sub(req.enqAt))
	tl.Slot = min(bt.slotWait, tl.Queue) // the bucket may have waited before these rows came
	tl.Attempts = bt.attempts
	tl.BatchRows = int(bt.count)
	tl.InFlight = bt.inflightAtSend
	if !bt.callAt.IsZero() {
		tl.Build = bt.callAt.Sub(bt.created)
		tl.Backend = bt.answeredAt.Sub(bt.callAt)
		req.tlAnswered = bt.answeredAt
	}
}

// expire gives the request's unresolved records their deadline verdict.
func (w *Writer) expire(req *request, cause error) {
	code, msg := CodeTimeout, "the request deadline passed"
	if errors.Is(cause, context.Canceled) {
		code, msg = CodeCancelled, "the request was cancelled"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if req.finished {
		return
	}
	now := w.opts.Now()
	req.expiring = true
	// Everything here is linear in the request's rows: whether another
	// request waits for a batch is decided once per batch (it cannot change
	// during this loop, which only resolves req's rows), and the orphan
	// check runs once per batch after the loop.
	var otherOwner map[*batch]bool
	var touched []*batch
	// removedFrom are the buckets whose queues lost rows of req (a bucket
	// may appear more than once): compacted after the loop, once each.
	var removedFrom []*bucket
	for i := range req.recs {
		r := &req.recs[i]
		switch r.state {
		case recQueued:
			w.removeQueuedLocked(r)
			if len(removedFrom) == 0 || removedFrom[len(removedFrom)-1] != r.b {
				removedFrom = append(removedFrom, r.b)
			}
			if b := r.b; code == CodeTimeout && b.blockedUntil.After(r.at) {
				// The bucket was throttled while the row waited: say so,
				// with the throttle's remaining time.
				w.resolveLocked(r, throttleVerdict(b, max(b.blockedUntil.Sub(now), time.Millisecond), msg+" before the row was sent"))
				continue
			}
			w.resolveLocked(r, domain.EntryResult{Code: code, Message: msg + " before the row was sent",
				Retryable: true, Applied: domain.AppliedNo})
		case recBatched:
			bt := r.batch
			if (bt.state == batchWaitRetry || bt.state == batchBuilding) && !bt.ambiguous {
				other, ok := otherOwner[bt]
				if !ok {
					other = bt.hasOtherOwner(req)
					if otherOwner == nil {
						otherOwner = make(map[*batch]bool)
					}
					otherOwner[bt] = other
				}
				if !other {
					// Never applied (a building batch was never sent; the
					// sender drops it, see takeLocked) and nobody else waits
					// for it: drop it, so that "no" stays true.
					c, m := code, msg+" while the row waited for a retry"
					if bt.state == batchBuilding {
						m = msg + " before the row was sent"
					} else if bt.lastCode == wire.CodeOutOfOrderSequenceException || bt.lastCode == wire.CodeUnknownWriterIDException {
						// A pipelined batch answered before its predecessor
						// landed: the writer's own sequencing, not the row's
						// failure. The deadline is the verdict.
						m += " (the last attempt was answered " + bt.lastMsg + ")"
					} else if bt.lastCode != 0 {
						c, m = entryCode(bt.lastCode, bt.lastMsg), m+": "+bt.lastMsg
					}
					res := domain.EntryResult{Code: c, Message: m, Retryable: true, Applied: domain.AppliedNo}
					if bt.lastCode == wire.CodeStorageBackpressureException {
						res.RetryAfter = max(bt.b.blockedUntil.Sub(now), bt.retryAt.Sub(now), time.Millisecond)
					}
					w.failBatchLocked(bt, res, true, now)
					continue
				}
			}
			w.resolveLocked(r, domain.EntryResult{Code: code, Message: msg + " after the row was sent; it may or may not have been written",
				Retryable: true, Applied: domain.AppliedUnknown})
			if len(touched) == 0 || touched[len(touched)-1] != bt {
				touched = append(touched, bt)
			}
		}
	}
	for _, bt := range touched {
		if bt.state != batchDone && bt.orphanSince.IsZero() && !bt.hasOwner() {
			bt.orphanSince = now
		}
	}
	// The rows removed from the queues were never sent: drop every
	// reference to them now, so that the request's arena and records are
	// garbage once its answer is written (its memory-budget charge is
	// released then), instead of lingering until the bucket's queue is
	// next compacted (issue 21).
	compacted := make(map[*bucket]bool, len(removedFrom))
	for _, b := range removedFrom {
		if !compacted[b] {
			compacted[b] = true
			b.compact()
		}
	}
	w.finishLocked(req)
}

// removeQueuedLocked takes the queued record r out of its bucket's counts;
// the caller compacts the bucket's queue (expire).
func (w *Writer) removeQueuedLocked(r *rec) {
	b := r.b
	b.live--
	b.liveBytes -= int(r.size)
	b.sealedBytes = min(b.sealedBytes, b.liveBytes)
}

// report sends the verdict counts to the metrics hook.
func (w *Writer) report(path domain.TablePath, results []domain.EntryResult) {
	w.reportRows(path, results, nil)
}

// reportChunks is report for a columnar request's chunk verdicts, each
// counted for its chunk's rows.
func (w *Writer) reportChunks(path domain.TablePath, req *request) {
	w.reportRows(path, req.chunkRes, req.chunks)
}

// reportRows counts results[i] once, or for chunks[i]'s rows when chunks
// is not nil.
func (w *Writer) reportRows(path domain.TablePath, results []domain.EntryResult, chunks []columnChunk) {
	ok := 0
	applied, split := w.opts.Metrics.(appliedMetrics)
	var failed, unknown map[string]int
	for i := range results {
		rows := 1
		if chunks != nil {
			rows = chunks[i].to - chunks[i].from
		}
		if results[i].Code == "" {
			ok += rows
			continue
		}
		m := &failed
		if split && results[i].Applied == domain.AppliedUnknown {
			m = &unknown
		}
		if *m == nil {
			*m = make(map[string]int)
		}
		(*m)[results[i].Code] += rows
	}
	if split {
		applied.EntriesDoneApplied(path, ok, failed, unknown)
		return
	}
	w.opts.Metrics.EntriesDone(path, ok, failed)
}

// appliedMetrics is implemented by Metrics that count failed entries apart
// from maybe-applied ones (applied "unknown"), as the REST-level entry
// counter does (telemetry.WriterHooks).
type appliedMetrics interface {
	EntriesDoneApplied(table domain.TablePath, ok int, failed, unknown map[string]int)
}

// packedMetrics is implemented by Metrics that also count the rows of
// Arrow log batches built from a client's compressed record batch as it was
// (columnar.go buildPacked).
type packedMetrics interface {
	ArrowPacked(table domain.TablePath, rows int)
}

// kick wakes the sender.
func (w *Writer) kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Close stops accepting writes, lets queued rows be sent until ctx ends, then
// stops the sender. Rows still unresolved then fail with `unavailable`.
// Close returns once every goroutine the writer started has ended: requests
// still in the air are canceled (their rows' verdicts are already given).
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closing = true
	w.mu.Unlock()
	w.kick()
	select {
	case <-w.drained:
	case <-ctx.Done():
	}
	w.mu.Lock()
	w.closed = true
	now := w.opts.Now()
	for b := range w.active {
		removed := false
		for _, r := range b.queue[b.head:] {
			if r.state == recQueued {
				// Out of the bucket's counts as well: the sender may run
				// one more round before it sees the stop.
				w.removeQueuedLocked(r)
				removed = true
				w.resolveLocked(r, domain.EntryResult{Code: CodeClosed, Message: "the writer was closed before the row was sent",
					Retryable: true, Applied: domain.AppliedNo})
			}
		}
		if removed {
			b.compact()
		}
		for _, bt := range slices.Clone(b.inflight) {
			w.failBatchLocked(bt, domain.EntryResult{Code: CodeClosed, Message: "the writer was closed",
				Retryable: true, Applied: domain.AppliedUnknown}, false, now)
		}
	}
	w.mu.Unlock()
	close(w.stop)
	<-w.stopped
	w.endLife()
	w.goroutines.Wait()
	return ctx.Err()
}

// autoPartitionRule applies a table's auto-partition rule to the partition
// an entry goes to (apache/fluss: PartitionUtils#validateAutoPartitionTime):
// the time value must have the table's format (auto.Pattern: its
// table.auto-partition.time-format or the unit's default), for every entry:
// a value of another form, e.g. `2026-12-01` beside Fluss's own `20261201`,
// names a second partition for the same day, and since it sorts before every
// well-formed value Fluss's retention drops it, rows included, at its next
// check. An upsert's value must also lie within the retention, since a
// partition created for an older value is dropped with its rows at Fluss's
// next auto-partition check (only with auto-partitioning on: a table with
// just a time format keeps every partition). A delete is not held to the
// retention: it never creates a partition. Verdicts are kept per partition
// name in *memo.
func autoPartitionRule(auto domain.AutoPartition, name string, del bool, now time.Time, memo *map[string]error) error {
	v := auto.TimeValue(name)
	if err := auto.CheckFormat(v); err != nil {
		return err
	}
	if del {
		return nil
	}
	if err, seen := (*memo)[name]; seen {
		return err
	}
	err := auto.CheckRetention(v, now)
	if *memo == nil {
		*memo = make(map[string]error)
	}
	if err != nil {
		(*memo)[name] = err
		return err
	}
	(*memo)[name] = nil
	return nil
}

// enqueueAndWait queues req's records (w.mu held; it unlocks it), wakes the
// sender and waits for every verdict or ctx's end (then the records not yet
// sent are expired). It reports the wait (rows: the rows of the call) to a
// WaitTracer and fills the request's timeline; it returns results, filled in
// by then. Write and the columnar path share it.
func (w *Writer) enqueueAndWait(ctx context.Context, req *request, path domain.TablePath, rows int, results []domain.EntryResult) []domain.EntryResult {
	var waitDone func(WaitOutcome)
	if wt, ok := w.opts.Tracer.(WaitTracer); ok {
		req.ctx, waitDone = wt.StartWait(ctx, path, rows)
	}
	now := w.opts.Now()
	req.enqAt = now
	var ec enqueueCache
	var wo WaitOutcome
	for i := range req.recs {
		if r := &req.recs[i]; r.state == recQueued {
			w.enqueueLocked(r, now, &ec)
			if waitDone != nil && r.b != nil {
				wo.AddBucket(r.b.key.bucket)
			}
		}
	}
	w.mu.Unlock()
	w.kick()

	select {
	case <-req.done:
	case <-ctx.Done():
		w.expire(req, ctx.Err())
		wo.Expired = true
	}
	if req.chunks != nil {
		w.settleChunks(req, path)
	}
	if waitDone != nil {
		verdicts, chunks := results, []columnChunk(nil)
		if req.chunks != nil {
			verdicts, chunks = req.chunkRes, req.chunks
		}
		for i, res := range verdicts {
			rows := 1
			if chunks != nil {
				rows = chunks[i].to - chunks[i].from
			}
			switch res.Applied {
			case domain.AppliedNo:
				wo.Failed += rows
			case domain.AppliedUnknown:
				wo.Unknown += rows
			default:
				wo.OK += rows
			}
		}
		waitDone(wo)
	}
	if tl := req.tl; tl != nil {
		// Written by finishLocked before done was closed (or by expire on
		// this goroutine); the writer no longer touches req.
		tl.Encode = req.enqAt.Sub(req.start)
		if !req.tlAnswered.IsZero() {
			tl.Resolve = w.opts.Now().Sub(req.tlAnswered)
		}
	}
	return results
}
