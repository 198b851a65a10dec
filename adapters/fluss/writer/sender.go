package writer

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
)

// refreshInterval is the least time between two metadata refreshes of the
// same physical table while its leaders stay unknown.
const refreshInterval = 100 * time.Millisecond

// sendReq is one PutKv or ProduceLog request: the batches drained for one
// (tablet server, table, target columns).
type sendReq struct {
	node    meta.ServerNode
	tableID int64
	path    domain.TablePath
	kv      bool
	cols    []int32
	lane    int
	batches []*batch
	// prev is closed once the previous request of the same (tablet server,
	// lane) was written to the connection, written once this one was: the
	// requests of a lane reach the server in the order dispatchLocked made
	// them, so a bucket's pipelined batches arrive in sequence order.
	prev, written chan struct{}
	bytes         int
	rows          int
}

type groupKey struct {
	node    int32
	tableID int64
	compat  string
	lane    int
}

// drained is one batch picked by drainLocked: a retry (already stamped and
// in the air) or a new batch still to be built (state batchBuilding).
type drained struct {
	bt   *batch
	node meta.ServerNode
	// fresh: taken by takeLocked; wid and seq are its header values read
	// under Writer.mu for build.
	fresh bool
	wid   int64
	seq   int32
	out   *builtBatch
}

// run is the sender loop: drain what is ready, send it, and sleep until new
// data, a response, a linger or backoff expiry, or a metadata answer.
//
// A round holds Writer.mu only to pick batches (drainLocked) and to install
// their bytes and group them into requests (dispatchLocked); the bytes of new
// batches are built in between without the lock, so that a Write reaching
// its deadline (expire) never waits for batch building.
func (w *Writer) run() {
	defer close(w.stopped)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		w.mu.Lock()
		ready, wait := w.drainLocked(w.opts.Now())
		if w.closing && len(w.active) == 0 && !w.drainedSent {
			w.drainedSent = true
			close(w.drained)
		}
		w.mu.Unlock()
		if len(ready) > 0 {
			w.buildAll(ready)
			w.mu.Lock()
			reqs := w.dispatchLocked(ready, w.opts.Now())
			w.mu.Unlock()
			for _, sr := range reqs {
				w.spawn(func(ctx context.Context) { w.send(ctx, sr) })
			}
			// More may be ready (one batch per bucket per round).
			select {
			case <-w.stop:
				return
			default:
				continue
			}
		}
		timer.Reset(wait)
		select {
		case <-w.stop:
			return
		case <-w.wake:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// buildAll builds the new batches of a round (without Writer.mu), several at
// once on GOMAXPROCS-1 goroutines (one P stays free for the Write calls,
// their deadlines and the answers; with 2 or fewer, one by one): ARROW
// batches (row conversion, compression) take milliseconds each, and one
// goroutine building a round's batches one by one holds back every request
// of the round. All of them are built before it returns, so a building batch
// is still the highest sequence of its bucket (see takeLocked).
func (w *Writer) buildAll(ready []drained) {
	var fresh []*drained
	for i := range ready {
		if ready[i].fresh {
			fresh = append(fresh, &ready[i])
		}
	}
	workers := min(len(fresh), runtime.GOMAXPROCS(0)-1)
	if workers <= 1 {
		for _, d := range fresh {
			d.out = w.build(d.bt, d.wid, d.seq)
		}
		return
	}
	var next atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(fresh) {
					return
				}
				d := fresh[i]
				d.out = w.build(d.bt, d.wid, d.seq)
			}
		}()
	}
	wg.Wait()
}

// drainLocked picks the batches to send now (retries due, and new batches
// taken from ready queues, to be built by the caller without the lock) and
// returns how long the sender may sleep when nothing is ready.
func (w *Writer) drainLocked(now time.Time) ([]drained, time.Duration) {
	wakeAt := now.Add(time.Hour)
	soon := func(t time.Time) {
		if t.Before(wakeAt) {
			wakeAt = t
		}
	}
	idem := !w.opts.DisableIdempotence
	if idem && w.writerID < 0 {
		if len(w.active) > 0 {
			if !w.initing && !now.Before(w.initRetry) {
				w.initing = true
				tables := w.activeTablesLocked()
				w.spawn(func(ctx context.Context) { w.initWriter(ctx, tables) })
			} else if !w.initing {
				soon(w.initRetry)
			}
		}
		return nil, max(wakeAt.Sub(now), time.Millisecond)
	}
	if len(w.buckets) > maxBucketStates {
		w.sweepLocked()
	}
	_, bufWaiters := w.buf.stats()
	var out []drained
	for b := range w.active {
		if b.idle() {
			b.compact() // release what expired records still reference
			delete(w.active, b)
			continue
		}
		if now.Before(b.blockedUntil) {
			soon(b.blockedUntil)
			continue
		}
		if idem && b.writerID != w.writerID {
			// The writer id was reset: batches of the old id cannot be
			// resent (their sequence is meaningless under the new id).
			for _, bt := range slices.Clone(b.inflight) {
				if bt.state == batchWaitRetry {
					w.failBatchLocked(bt, w.failResult(bt, wire.CodeUnknownWriterIDException,
						"the writer id was reset while the batch waited for a retry"), false, now)
				}
			}
			if len(b.inflight) > 0 {
				continue // wait for the old id's batches in the air
			}
			b.writerID, b.nextSeq, b.lastAcked = w.writerID, 0, -1
		}
		var bt *batch
		if rb := b.firstRetry(); rb != nil {
			// Resend only the lowest-sequence batch, and only once the
			// batches before it have resolved, so the server sees the
			// sequences in order.
			if rb != b.inflight[0] {
				continue
			}
			if now.Before(rb.retryAt) {
				soon(rb.retryAt)
				continue
			}
			bt = rb
		} else {
			if b.live == 0 {
				continue
			}
			first := b.firstLive()
			linger := w.opts.Linger
			if first.req.codec.pk && len(b.inflight) > 0 {
				linger = w.opts.KvLinger
			}
			lingerEnd := first.at.Add(linger)
			full := b.liveBytes >= w.opts.BatchSize || b.sealed() || w.closing || bufWaiters > 0 ||
				len(b.inflight) < w.opts.LingerAfterInFlight || first.req.urgent
			ready := full || !now.Before(lingerEnd)
			if len(b.inflight) >= w.opts.MaxInFlightPerBucket {
				if ready && b.slotSince.IsZero() {
					// Ready since lingerEnd, or since now (first seen full).
					b.slotSince = now
					if !full {
						b.slotSince = lingerEnd
					}
				}
				continue
			}
			if !ready {
				soon(lingerEnd)
				continue
			}
		}
		node, ok := w.meta.Leader(b.key.table, b.key.part, b.key.bucket)
		if !ok {
			if next := w.requestRefreshLocked(b.key.physKey, now); !next.IsZero() {
				soon(next)
			}
			continue
		}
		if bt == nil {
			if bt = w.takeLocked(b, now); bt == nil {
				continue
			}
			out = append(out, drained{bt: bt, node: node, fresh: true, wid: bt.writerID, seq: bt.seq})
			continue
		}
		if bt.restamp {
			bt.stamp()
		}
		bt.state = batchInAir
		bt.attempts++
		bt.headAtSend = b.inflight[0] == bt
		bt.inflightAtSend = len(b.inflight)
		out = append(out, drained{bt: bt, node: node})
	}
	return out, max(wakeAt.Sub(now), time.Millisecond)
}

// dispatchLocked installs the bytes of the new batches of a round, puts them
// in the air, and groups the round's batches into requests per (tablet
// server, table, target columns).
func (w *Writer) dispatchLocked(ready []drained, now time.Time) []*sendReq {
	groups := make(map[groupKey][]*sendReq)
	var out []*sendReq
	for _, d := range ready {
		bt := d.bt
		if d.fresh {
			if !w.finishBuildLocked(bt, d.out, now) {
				continue
			}
			bt.state = batchInAir
			bt.attempts++
			bt.headAtSend = bt.b.inflight[0] == bt
			bt.inflightAtSend = len(bt.b.inflight)
		} else if bt.state != batchInAir {
			// A retry failed meanwhile (Close): not sent.
			w.releaseBatch(bt)
			continue
		}
		gk := groupKey{d.node.ID, bt.tableID, bt.compat, bt.b.lane}
		list := groups[gk]
		var sr *sendReq
		if n := len(list); n > 0 && list[n-1].bytes+len(bt.data) <= w.opts.MaxRequestSize {
			sr = list[n-1]
		} else {
			sr = &sendReq{node: d.node, tableID: bt.tableID, path: bt.b.path, kv: !bt.log, cols: bt.targetCols, lane: bt.b.lane,
				written: make(chan struct{})}
			lk := laneKey{d.node.ID, bt.b.lane}
			sr.prev = w.laneTail[lk]
			w.laneTail[lk] = sr.written
			groups[gk] = append(list, sr)
			out = append(out, sr)
		}
		sr.batches = append(sr.batches, bt)
		sr.bytes += len(bt.data)
		sr.rows += int(bt.count)
	}
	return out
}

// maxBucketStates bounds the per-bucket states kept between writes.
const maxBucketStates = 100_000

// sweepLocked forgets the state of idle buckets. Their sequences would be
// lost, so the writer id is reset first: every bucket restarts at sequence 0
// under the next writer id anyway.
func (w *Writer) sweepLocked() {
	if !w.opts.DisableIdempotence {
		w.resetWriterIDLocked()
	}
	for k, b := range w.buckets {
		if b.idle() {
			delete(w.buckets, k)
			delete(w.sticky, k.physKey)
		}
	}
}

// failResult is the verdict of the entries of a batch failed with code.
func (w *Writer) failResult(bt *batch, code wire.ErrorCode, msg string) domain.EntryResult {
	applied := domain.AppliedNo
	if bt.ambiguous {
		applied = domain.AppliedUnknown
	}
	retryable := retriableCode(code) || code == wire.CodeOutOfOrderSequenceException || code == wire.CodeUnknownWriterIDException
	return domain.EntryResult{Code: entryCode(code, msg), Message: msg, Retryable: retryable, Applied: applied}
}

// laneKey names one connection of the writer: a tablet server and a lane.
type laneKey struct {
	node int32
	lane int
}

// send performs one request and applies its outcome.
func (w *Writer) send(ctx context.Context, sr *sendReq) {
	if sr.prev != nil {
		select {
		case <-sr.prev: // the lane's previous request is on the wire
		case <-ctx.Done():
		}
	}
	written := sync.OnceFunc(func() { close(sr.written) })
	defer written()
	ctx = meta.WithWritten(ctx, written)
	api := wire.KeyProduceLog
	if sr.kv {
		api = wire.KeyPutKv
	}
	var out BackendOutcome
	if w.opts.Tracer != nil {
		var finish func(BackendOutcome)
		ctx, finish = w.opts.Tracer.StartBackendRequest(ctx, api.String(), sr.node.ID, len(sr.batches), sr.rows, w.links(sr))
		defer func() { finish(out) }()
	}
	timeoutMs := int32(w.opts.RequestTimeout / time.Millisecond)
	dest := meta.Dest{Kind: meta.ToNode, Node: sr.node.ID, Addr: sr.node.Addr(), Lane: sr.lane}
	w.opts.Metrics.BatchesSent(sr.path, len(sr.batches), sr.rows, sr.bytes)
	type bucketResp struct {
		part     *int64
		bucket   int32
		code     *int32
		message  string
		pressure float32
		// offset: ProduceLog's base_offset, PutKv's log_end_offset (nil when
		// the answer has none).
		offset *int64
	}
	var resps []bucketResp
	var err error
	callAt := w.opts.Now()
	if sr.kv {
		req := &flusspb.PutKvRequest{
			Acks: proto.Int32(int32(w.opts.Acks)), TableId: proto.Int64(sr.tableID),
			TimeoutMs: proto.Int32(timeoutMs), TargetColumns: sr.cols,
		}
		for _, bt := range sr.batches {
			req.BucketsReq = append(req.BucketsReq, &flusspb.PbPutKvReqForBucket{
				PartitionId: partPtr(bt.b.key.part), BucketId: proto.Int32(bt.b.key.bucket), Records: bt.data,
			})
		}
		var resp flusspb.PutKvResponse
		if err = w.call.Call(ctx, dest, wire.KeyPutKv, req, &resp); err == nil {
			for _, r := range resp.GetBucketsResp() {
				resps = append(resps, bucketResp{r.PartitionId, r.GetBucketId(), r.ErrorCode, r.GetErrorMessage(), r.GetPressure(), r.LogEndOffset})
			}
		}
	} else {
		req := &flusspb.ProduceLogRequest{
			Acks: proto.Int32(int32(w.opts.Acks)), TableId: proto.Int64(sr.tableID),
			TimeoutMs: proto.Int32(timeoutMs),
		}
		for _, bt := range sr.batches {
			req.BucketsReq = append(req.BucketsReq, &flusspb.PbProduceLogReqForBucket{
				PartitionId: partPtr(bt.b.key.part), BucketId: proto.Int32(bt.b.key.bucket), Records: bt.data,
			})
		}
		var resp flusspb.ProduceLogResponse
		if err = w.call.Call(ctx, dest, wire.KeyProduceLog, req, &resp); err == nil {
			for _, r := range resp.GetBucketsResp() {
				resps = append(resps, bucketResp{r.PartitionId, r.GetBucketId(), r.ErrorCode, r.GetErrorMessage(), 0, r.BaseOffset})
			}
		}
	}

	out.Err = err
	out.ErrorCode = int32(meta.ErrorCode(err))
	for _, r := range resps {
		if r.code != nil && *r.code != 0 {
			out.FailedBuckets++
		}
	}
	retried := make(map[string]int)
	invalid := make(map[physKey]bool)
	w.mu.Lock()
	now := w.opts.Now()
	for _, bt := range sr.batches {
		bt.callAt, bt.answeredAt = callAt, now
	}
	if err != nil {
		code, ambiguous, retriable := classify(err)
		for _, bt := range sr.batches {
			w.batchFailedLocked(bt, code, err.Error(), ambiguous, retriable, now, retried, invalid)
		}
	} else {
		for _, bt := range sr.batches {
			i := slices.IndexFunc(resps, func(r bucketResp) bool {
				return r.bucket == bt.b.key.bucket && (r.part == nil && bt.b.key.part == meta.NoPartition || r.part != nil && *r.part == bt.b.key.part)
			})
			switch {
			case i < 0:
				w.batchFailedLocked(bt, wire.CodeNetworkException, "the response has no answer for the bucket", true, true, now, retried, invalid)
			case resps[i].code != nil && *resps[i].code != 0:
				code := wire.ErrorCode(*resps[i].code)
				// No Java stack trace in per-entry messages: first line and cause.
				msg := (&wire.ServerError{Code: code, Message: resps[i].message}).Summary()
				if msg == "" {
					msg = code.Description()
				}
				w.batchFailedLocked(bt, code, fmt.Sprintf("%s (code %d): %s", code, int32(code), msg), mayHaveBeenAppended(code), retriableCode(code), now, retried, invalid)
				if code == wire.CodeStorageBackpressureException {
					out.Pressure = 1
					out.Throttle = max(out.Throttle, w.opts.MaxThrottle)
				}
			default:
				if bt.state == batchInAir {
					var at domain.WrittenAt
					if o := resps[i].offset; o != nil && *o >= 0 {
						at = domain.WrittenAt{Known: true, Offset: *o}
					}
					w.completeBatchLocked(bt, at)
				}
			}
			// The pressure field (Fluss 1.0) throttles the bucket whatever
			// the answer, as the Java Sender does; a 72 already did.
			if i >= 0 && resps[i].pressure > 0 && (resps[i].code == nil || *resps[i].code != int32(wire.CodeStorageBackpressureException)) {
				p := float64(resps[i].pressure)
				d := w.throttleLocked(bt.b, p, now)
				out.Pressure = max(out.Pressure, p)
				out.Throttle = max(out.Throttle, d)
			}
		}
	}
	for pk := range invalid {
		w.meta.InvalidateLeaders(pk.table, pk.part)
		w.requestRefreshLocked(pk, time.Time{})
	}
	w.mu.Unlock()
	for code, n := range retried {
		w.opts.Metrics.Retried(sr.path, n, code)
	}
	w.kick()
}

// maxLinks bounds the Write calls one request is linked to (the
// OpenTelemetry SDK's default link limit).
const maxLinks = 128

// links returns the contexts of the Write calls whose rows sr carries (at
// most maxLinks).
func (w *Writer) links(sr *sendReq) []context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []context.Context
	seen := make(map[*request]bool)
	var last *request
	for _, bt := range sr.batches {
		for _, r := range bt.recs {
			if len(out) == maxLinks {
				return out
			}
			if r.req == last {
				continue // rows of one request are adjacent: no map look-up each
			}
			last = r.req
			if req := r.req; !seen[req] && req.ctx != nil && !req.finished {
				seen[req] = true
				out = append(out, req.ctx)
			}
		}
	}
	return out
}

func partPtr(p int64) *int64 {
	if p == meta.NoPartition {
		return nil
	}
	return proto.Int64(p)
}

// classify turns a request-level failure into a Fluss code, whether the
// request may have been applied, and whether a resend may succeed.
func classify(err error) (code wire.ErrorCode, ambiguous, retriable bool) {
	code = meta.ErrorCode(err)
	switch {
	case meta.Answered(err):
		return code, false, retriableCode(code)
	case meta.NotSent(err):
		if code == wire.CodeNone {
			code = wire.CodeNetworkException
		}
		return code, false, meta.Retriable(err) || errors.Is(err, context.DeadlineExceeded)
	default:
		// Ambiguous, or not classified at all: the request may have been
		// applied. Our own per-send timeout is retriable like any timeout.
		if code == wire.CodeNone {
			code = wire.CodeNetworkException
		}
		if errors.Is(err, context.DeadlineExceeded) {
			code = wire.CodeRequestTimeOut
		}
		return code, true, true
	}
}

// mayHaveBeenAppended reports whether a per-bucket error may be answered
// after the leader appended the batch to its log. Fluss appends first and
// then waits for the in-sync replicas (fluss-server: DelayedWrite,
// Replica#checkEnoughReplicasReachOffset); that wait can end with
// NOT_LEADER_OR_FOLLOWER (leadership moved), REQUEST_TIME_OUT or
// NOT_ENOUGH_REPLICAS_AFTER_APPEND while the batch is in the log and may
// already be on the new leader. Storage and network failures may come from
// any stage. A batch answered with one of these is ambiguous: its rows are
// never reported applied "no", and its sequence is never reused.
func mayHaveBeenAppended(code wire.ErrorCode) bool {
	switch code {
	case wire.CodeNotLeaderOrFollower, wire.CodeRequestTimeOut, wire.CodeNotEnoughReplicasAfterAppendException,
		wire.CodeNetworkException, wire.CodeLogStorageException, wire.CodeKvStorageException, wire.CodeStorageException:
		return true
	}
	return false
}

// batchFailedLocked applies a failed send of bt (docs/fluss-writer.md,
// Idempotence and Retry classification).
func (w *Writer) batchFailedLocked(bt *batch, code wire.ErrorCode, msg string, ambiguous, retriable bool,
	now time.Time, retried map[string]int, invalid map[physKey]bool) {
	if bt.state != batchInAir {
		return // resolved meanwhile (deadline drop, close)
	}
	b := bt.b
	if ambiguous {
		bt.ambiguous = true
	}
	bt.lastCode, bt.lastMsg = code, msg
	idem := !w.opts.DisableIdempotence
	if code == wire.CodeDuplicateSequenceException {
		w.completeBatchLocked(bt, domain.WrittenAt{}) // the answer gives no offset for a duplicate
		return
	}
	canRetry := retriable ||
		// OUT_OF_ORDER_SEQUENCE is expected for a batch sent while earlier
		// ones were in flight (the server may handle pipelined requests out
		// of order); it is fatal only for the bucket's head batch whose
		// predecessor was acknowledged.
		idem && code == wire.CodeOutOfOrderSequenceException &&
			(bt.seqReset || !bt.headAtSend || bt.seq != nextSeq(b.lastAcked)) ||
		idem && code == wire.CodeUnknownWriterIDException && bt.seqReset
	if code.InvalidatesMetadata() {
		invalid[b.key.physKey] = true
	}
	if !canRetry {
		seqBroken := code == wire.CodeOutOfOrderSequenceException || code == wire.CodeUnknownWriterIDException
		// A batch that may be in the leader's log keeps its sequence: giving
		// the sequence to the next batch would make the server acknowledge
		// that batch as a duplicate of this one without writing it. Start a
		// new writer id instead.
		w.failBatchLocked(bt, w.failResult(bt, code, msg), idem && !seqBroken && !bt.ambiguous, now)
		if idem && (seqBroken || bt.ambiguous) {
			w.resetWriterIDLocked()
		}
		return
	}
	if idem && bt.writerID != w.writerID {
		w.failBatchLocked(bt, w.failResult(bt, wire.CodeUnknownWriterIDException,
			"the writer id was reset before the batch could be retried: "+msg), false, now)
		return
	}
	if !bt.hasOwner() {
		if bt.orphanSince.IsZero() {
			bt.orphanSince = now
		}
		if !bt.ambiguous {
			// Nobody waits and it never landed: drop it.
			w.failBatchLocked(bt, domain.EntryResult{}, true, now)
			return
		}
		if now.Sub(bt.orphanSince) > w.opts.OrphanTimeout {
			// Its fate is unknown and nobody waits: give up, and start a
			// new writer id since the bucket's sequence is now unknown.
			w.failBatchLocked(bt, domain.EntryResult{}, false, now)
			if idem {
				w.resetWriterIDLocked()
			}
			return
		}
	}
	bt.state = batchWaitRetry
	bt.retryAt = now.Add(w.backoff(bt.attempts))
	retried[entryCode(code, msg)]++
	if code == wire.CodeStorageBackpressureException {
		w.throttleLocked(b, 1, now)
	}
}

// throttleLocked applies one cooperative backpressure signal to a bucket
// (Fluss 1.0 client rule, RecordAccumulator#updateThrottle): it blocks the
// bucket for floor(MaxThrottle × pressure²) ms, the whole MaxThrottle for
// pressure >= 1 (code 72 counts as 1), never shortening a block already in
// place. Rows that cannot be sent before their request's deadline because of
// the block fail at once (failThrottledLocked). It returns the block applied.
func (w *Writer) throttleLocked(b *bucket, pressure float64, now time.Time) time.Duration {
	if pressure <= 0 {
		return 0
	}
	d := w.opts.MaxThrottle
	if pressure < 1 {
		// float32 arithmetic, as Java's (long) (maxThrottleMs * p * p) with
		// a float p: the same milliseconds for the same wire value.
		p := float32(pressure)
		d = time.Duration(int64(float32(w.opts.MaxThrottle.Milliseconds())*p*p)) * time.Millisecond
	}
	if until := now.Add(d); d > 0 && until.After(b.blockedUntil) {
		b.blockedUntil = until
	}
	if w.opts.Pressure != nil {
		w.opts.Pressure.KvPressure(b.path, b.key.bucket, pressure, d)
	}
	if d > 0 {
		w.failThrottledLocked(b, now)
	}
	return d
}

// throttleVerdict is the verdict of a row held back by its bucket's throttle
// until after its request's deadline: never sent (or rejected with code 72,
// which a PutKv v2 server answers before writing anything), retryable after
// the throttle.
func throttleVerdict(b *bucket, wait time.Duration, msg string) domain.EntryResult {
	if msg == "" {
		msg = "the tablet server signalled KV storage backpressure"
	}
	return domain.EntryResult{Code: entryCode(wire.CodeStorageBackpressureException, ""),
		Message: fmt.Sprintf("%s; bucket %d is throttled for %s more, past the request deadline; the row was not written",
			msg, b.key.bucket, wait.Round(time.Millisecond)),
		Retryable: true, Applied: domain.AppliedNo, RetryAfter: wait}
}

// failThrottledLocked fails, with throttleVerdict, the rows of b that its
// block keeps from being sent before their request's deadline: queued rows,
// and batches waiting for a retry that were never possibly written (not
// ambiguous) and whose every waiting row's deadline ends before the block.
func (w *Writer) failThrottledLocked(b *bucket, now time.Time) {
	until := b.blockedUntil
	wait := until.Sub(now)
	if wait <= 0 {
		return
	}
	dropped := 0
	for _, r := range b.queue[b.head:] {
		if r.state == recQueued && r.req.hasDeadline && r.req.deadline.Before(until) {
			r.state = recRemoved
			b.live--
			b.liveBytes -= int(r.size)
			w.resolveLocked(r, throttleVerdict(b, wait, ""))
			dropped++
		}
	}
	if dropped > 0 {
		b.compact()
	}
	for _, bt := range slices.Clone(b.inflight) {
		if bt.state != batchWaitRetry || bt.ambiguous {
			continue
		}
		retryAt := until
		if bt.retryAt.After(retryAt) {
			retryAt = bt.retryAt
		}
		late := true
		for _, r := range bt.recs {
			if r.state == recBatched && r.batch == bt && !r.req.finished && (!r.req.hasDeadline || !r.req.deadline.Before(retryAt)) {
				late = false
				break
			}
		}
		if late {
			msg := "" // another last code (a pipelined OUT_OF_ORDER_SEQUENCE) is not the reason
			if bt.lastCode == wire.CodeStorageBackpressureException {
				msg = bt.lastMsg
			}
			w.failBatchLocked(bt, throttleVerdict(b, retryAt.Sub(now), msg), true, now)
		}
	}
}

// backoff returns the wait before the attempt-th resend: exponential from
// RetryBackoff up to RetryBackoffMax, with ±20 % jitter.
func (w *Writer) backoff(attempt int) time.Duration {
	return backoff.Policy{Initial: w.opts.RetryBackoff, Max: w.opts.RetryBackoffMax, Jitter: 0.2}.Delay(attempt)
}

// resetWriterIDLocked forgets the writer id; the sender fetches a new one and
// every bucket restarts its sequence at 0 once its old batches resolved.
func (w *Writer) resetWriterIDLocked() {
	w.writerID = record.NoWriterID
}

func (w *Writer) activeTablesLocked() []domain.TablePath {
	seen := make(map[domain.TablePath]bool)
	var out []domain.TablePath
	for b := range w.active {
		if !seen[b.path] {
			seen[b.path] = true
			out = append(out, b.path)
		}
	}
	return out
}

// initBackoff spaces the InitWriter attempts after failures: 200 ms
// doubling to 2 s.
var initBackoff = backoff.Policy{Initial: 200 * time.Millisecond, Max: 2 * time.Second}

// initWriter obtains a writer id with InitWriter. It retries retriable
// failures with backoff; a non-retriable failure (e.g. authorization) fails
// every queued record with its code.
func (w *Writer) initWriter(ctx context.Context, tables []domain.TablePath) {
	req := &flusspb.InitWriterRequest{}
	for _, t := range tables {
		req.TablePath = append(req.TablePath, &flusspb.PbTablePath{DatabaseName: proto.String(t.Database), TableName: proto.String(t.Table)})
	}
	var resp flusspb.InitWriterResponse
	err := w.call.Call(ctx, meta.Any(), wire.KeyInitWriter, req, &resp)
	w.mu.Lock()
	w.initing = false
	if err == nil {
		w.writerID = resp.GetWriterId()
		w.initFails = 0
	} else {
		w.initFails++
		w.initRetry = w.opts.Now().Add(initBackoff.Delay(w.initFails))
		code, _, retriable := classify(err)
		if !retriable {
			res := domain.EntryResult{Code: entryCode(code, err.Error()), Message: "cannot obtain a writer id: " + err.Error(),
				Applied: domain.AppliedNo}
			for b := range w.active {
				for _, r := range b.queue[b.head:] {
					if r.state == recQueued {
						b.live--
						b.liveBytes -= int(r.size)
						w.resolveLocked(r, res)
					}
				}
				b.compact()
			}
		}
	}
	w.mu.Unlock()
	w.kick()
}

// requestRefreshLocked starts a leader refresh of one physical table unless
// one runs or ran within refreshInterval; it returns when to look again.
func (w *Writer) requestRefreshLocked(pk physKey, now time.Time) time.Time {
	if w.refreshing[pk] {
		return time.Time{}
	}
	if last, ok := w.refreshed[pk]; ok && !now.IsZero() && now.Sub(last) < refreshInterval {
		return last.Add(refreshInterval)
	}
	w.refreshing[pk] = true
	w.spawn(func(ctx context.Context) {
		err := w.meta.RefreshLeaders(ctx, pk.table, pk.part)
		w.mu.Lock()
		delete(w.refreshing, pk)
		w.refreshed[pk] = w.opts.Now()
		if len(w.refreshed) > 4096 {
			clear(w.refreshed)
		}
		if de := domain.AsError(err); de != nil && de.Kind == domain.KindNotFound {
			w.failPhysLocked(pk, de)
		}
		w.mu.Unlock()
		w.kick()
	})
	return time.Time{}
}

// failPhysLocked fails everything queued or waiting for a retry on a
// physical table that no longer exists.
func (w *Writer) failPhysLocked(pk physKey, de *domain.Error) {
	now := w.opts.Now()
	for b := range w.active {
		if b.key.physKey != pk {
			continue
		}
		res := domain.EntryResult{Code: de.Code(), Message: de.Error(), Applied: domain.AppliedNo}
		for _, r := range b.queue[b.head:] {
			if r.state == recQueued {
				b.live--
				b.liveBytes -= int(r.size)
				w.resolveLocked(r, res)
			}
		}
		b.compact()
		for _, bt := range slices.Clone(b.inflight) {
			if bt.state == batchWaitRetry {
				r := res
				if bt.ambiguous {
					r.Applied = domain.AppliedUnknown
				}
				w.failBatchLocked(bt, r, true, now)
			}
		}
	}
}
