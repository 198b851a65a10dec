package lookup

import (
	"context"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
)

// Cross-call coalescing.
//
// A Fluss tablet server handles the requests of one connection one after the
// other, and each Lookup or PrefixLookup request costs it a fixed amount on
// top of its keys. Calls that each send a few keys (16 prefixes of one HTTP
// request spread over 4 buckets) therefore pay mostly the per-request part.
// The Java client avoids it by queueing single lookups and letting its
// LookupSender drain them into one request per server (apache/fluss, tag
// v0.9.1-incubating, fluss-client/.../client/lookup/LookupSender.java).
//
// The gateway coalesces in flight instead of lingering: the request of a
// call for one (server, table, kind) line is sent at once while fewer than
// Options.MaxInFlightPerServer requests of the line are in flight. Otherwise
// it waits, joined with the other calls that arrive meanwhile (up to
// Options.MaxKeysPerRequest keys), and the group goes as one request when an
// in-flight request of the line is answered. At low load nothing waits; under
// load requests grow with the load. The keys of one bucket from several calls
// become one bucket entry (a server keys its per-bucket answers by bucket),
// and each call gets back the slice of the answer that belongs to its keys,
// in the shape it would have had alone.

// Defaults of the coalescing options. One request in flight per line: the
// server handles a connection's requests one after the other anyway, and
// paired runs of the lookup benchmark (128 keys or 16 prefixes per call x 16
// calls, one tablet server, a loaded 2-core machine) gave 1 the lowest CPU
// per key on both sides and the most prefix keys/s (2 was between 1 and no
// bound).
const (
	DefaultMaxInFlightPerServer = 1
	DefaultMaxKeysPerRequest    = 4096
)

// lineKey names the requests that may be merged: same server, same table,
// same kind.
type lineKey struct {
	node   int32
	table  int64
	prefix bool
}

// bucketKeys is the keys of one bucket in a call's request to a server.
type bucketKeys struct {
	part   int64
	bucket int32
	keys   [][]byte
}

// share is one call's part of a coalesced request.
type share struct {
	ctx     context.Context
	buckets []bucketKeys
	keys    int
	gone    bool           // the call stopped waiting before the group was sent
	answers []bucketAnswer // filled before the group's done is closed
	err     error
}

// group is one request to send: the shares of one or more calls.
type group struct {
	dest   meta.Dest
	shares []*share
	keys   int
	done   chan struct{}
}

// line is the queue of one lineKey.
type line struct {
	inflight int
	queue    []*group
}

// coalescer merges the requests of concurrent calls per line. It starts a
// goroutine only to send a group that waited; that goroutine ends when the
// line's queue is empty.
type coalescer struct {
	call        meta.Caller
	maxInFlight int
	maxKeys     int

	mu    sync.Mutex
	lines map[lineKey]*line
}

func newCoalescer(call meta.Caller, maxInFlight, maxKeys int) *coalescer {
	return &coalescer{call: call, maxInFlight: maxInFlight, maxKeys: maxKeys, lines: make(map[lineKey]*line)}
}

// do sends the keys of one call to dest, alone or merged with other calls'
// keys, and returns the per-bucket answers for exactly the buckets it asked
// (a bucket the server's answer omits is omitted too), or the request's
// error. When ctx ends first it returns ctx.Err() and the group, if already
// sent, goes on without it.
func (c *coalescer) do(ctx context.Context, dest meta.Dest, k lineKey, buckets []bucketKeys) ([]bucketAnswer, error) {
	s := &share{ctx: ctx, buckets: buckets}
	for _, b := range buckets {
		s.keys += len(b.keys)
	}
	c.mu.Lock()
	ln := c.lines[k]
	if ln == nil {
		ln = &line{}
		c.lines[k] = ln
	}
	if ln.inflight < c.maxInFlight && len(ln.queue) == 0 {
		// Nothing is waiting and the line has room: send now, on the
		// caller's goroutine and context.
		ln.inflight++
		c.mu.Unlock()
		g := &group{dest: dest, shares: []*share{s}, keys: s.keys}
		c.send(ctx, k, g)
		c.finish(k)
		return s.answers, s.err
	}
	var g *group
	if n := len(ln.queue); n > 0 && ln.queue[n-1].keys+s.keys <= c.maxKeys {
		g = ln.queue[n-1]
	} else {
		g = &group{dest: dest, done: make(chan struct{})}
		ln.queue = append(ln.queue, g)
	}
	g.shares = append(g.shares, s)
	g.keys += s.keys
	c.mu.Unlock()
	select {
	case <-g.done:
		return s.answers, s.err
	case <-ctx.Done():
		c.mu.Lock()
		s.gone = true
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// finish ends one in-flight request of line k and starts the groups that
// waited for room.
func (c *coalescer) finish(k lineKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ln := c.lines[k]
	ln.inflight--
	for ln.inflight < c.maxInFlight && len(ln.queue) > 0 {
		g := ln.queue[0]
		ln.queue[0] = nil
		ln.queue = ln.queue[1:]
		live := g.shares[:0]
		for _, s := range g.shares {
			if !s.gone {
				live = append(live, s)
			}
		}
		g.shares = live
		if len(live) == 0 {
			close(g.done)
			continue
		}
		ln.inflight++
		go c.sendWaited(k, g)
	}
	if ln.inflight == 0 && len(ln.queue) == 0 {
		delete(c.lines, k)
	}
}

// sendWaited sends a group that waited. Its context carries the values of
// its first call (trace parent) and the latest deadline of its calls, so
// that no call's deadline is cut short by another's.
func (c *coalescer) sendWaited(k lineKey, g *group) {
	ctx, cancel := groupContext(g)
	c.send(ctx, k, g)
	cancel()
	close(g.done)
	c.finish(k)
}

func groupContext(g *group) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(g.shares[0].ctx)
	var latest time.Time
	for _, s := range g.shares {
		d, ok := s.ctx.Deadline()
		if !ok {
			return context.WithCancel(base)
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(base, latest)
}

// slot is where one call's bucket sits in the merged request.
type slot struct {
	merged int // index of the merged bucket
	off, n int // the call's keys in the merged bucket's keys
}

// send sends group g as one request and hands every share its answers.
func (c *coalescer) send(ctx context.Context, k lineKey, g *group) {
	if len(g.shares) == 1 {
		s := g.shares[0]
		s.answers, s.err = c.roundTrip(ctx, g.dest, k, s.buckets)
		return
	}
	// Number the merged buckets and count their keys, then lay every
	// merged bucket's keys out in one array, each bucket exactly its size.
	var merged []bucketKeys
	var counts []int
	index := make(map[physBucket]int)
	nslots := 0
	for _, s := range g.shares {
		nslots += len(s.buckets)
		for _, b := range s.buckets {
			pb := physBucket{b.part, b.bucket}
			m, ok := index[pb]
			if !ok {
				m = len(merged)
				index[pb] = m
				merged = append(merged, bucketKeys{part: b.part, bucket: b.bucket})
				counts = append(counts, 0)
			}
			counts[m] += len(b.keys)
		}
	}
	all := make([][]byte, g.keys)
	for m := range merged {
		merged[m].keys, all = all[:0:counts[m]], all[counts[m]:]
	}
	slots := make([][]slot, len(g.shares))
	flat := make([]slot, nslots)
	for i, s := range g.shares {
		slots[i], flat = flat[:len(s.buckets):len(s.buckets)], flat[len(s.buckets):]
		for j, b := range s.buckets {
			m := index[physBucket{b.part, b.bucket}]
			slots[i][j] = slot{merged: m, off: len(merged[m].keys), n: len(b.keys)}
			merged[m].keys = append(merged[m].keys, b.keys...)
		}
	}
	answers, err := c.roundTrip(ctx, g.dest, k, merged)
	if err != nil {
		for _, s := range g.shares {
			s.err = err
		}
		return
	}
	// The answer of each merged bucket, by merged index (-1: not answered).
	byMerged := make([]int, len(merged))
	for i := range byMerged {
		byMerged[i] = -1
	}
	for a := range answers {
		if m, ok := index[physBucket{answers[a].part, answers[a].bucket}]; ok && byMerged[m] < 0 {
			byMerged[m] = a
		}
	}
	for i, s := range g.shares {
		s.answers = make([]bucketAnswer, 0, len(s.buckets))
		for j := range s.buckets {
			sl := slots[i][j]
			a := byMerged[sl.merged]
			if a < 0 {
				continue
			}
			s.answers = append(s.answers, answers[a].cut(sl.off, sl.n, len(merged[sl.merged].keys)))
		}
	}
}

// cut is the part of a merged bucket's answer for keys [off, off+n) of its
// total keys. An error answer is every call's; an answer whose count does
// not match the keys asked is passed on whole, so each call reports the
// mismatch.
func (a bucketAnswer) cut(off, n, total int) bucketAnswer {
	if (a.code != nil && *a.code != int32(wire.CodeNone)) || a.count != total {
		return a
	}
	out := bucketAnswer{part: a.part, bucket: a.bucket, code: a.code, msg: a.msg, count: n}
	if a.lists != nil {
		out.lists = a.lists[off : off+n : off+n]
	}
	if a.values != nil {
		out.values = a.values[off : off+n : off+n]
	}
	return out
}

// roundTrip sends one Lookup or PrefixLookup request for buckets and
// returns its per-bucket answers.
func (c *coalescer) roundTrip(ctx context.Context, dest meta.Dest, k lineKey, buckets []bucketKeys) ([]bucketAnswer, error) {
	if k.prefix {
		return sendKind(ctx, c.call, dest, k.table, buckets, &prefixLookupKind)
	}
	return sendKind(ctx, c.call, dest, k.table, buckets, &lookupKind)
}

// requestKind is what differs between a Lookup and a PrefixLookup round
// trip: the API key and the generated message types. Their per-bucket
// entries have the same fields (partition_id, bucket_id, keys; the answers
// error_code, error_message and the values or value lists, field 5) but are
// distinct Go types, so a kind names how to set and read them (apache/fluss
// v0.9.1-incubating, fluss-rpc/src/main/proto/FlussApi.proto).
type requestKind[E, A any, Req, Resp proto.Message] struct {
	api wire.APIKey
	// request makes the request of table with entries.
	request func(table int64, entries []*E) Req
	// entry fills one per-bucket entry; part is nil for a non-partitioned table.
	entry func(e *E, bucket *int32, part *int64, keys [][]byte)
	// response makes an empty answer and answers lists its per-bucket entries.
	response func() Resp
	answers  func(Resp) []*A
	// answer reads one per-bucket entry (partOf for its partition).
	answer func(a *A) bucketAnswer
}

var lookupKind = requestKind[flusspb.PbLookupReqForBucket, flusspb.PbLookupRespForBucket, *flusspb.LookupRequest, *flusspb.LookupResponse]{
	api: wire.KeyLookup,
	request: func(table int64, entries []*flusspb.PbLookupReqForBucket) *flusspb.LookupRequest {
		return &flusspb.LookupRequest{TableId: proto.Int64(table), BucketsReq: entries}
	},
	entry: func(e *flusspb.PbLookupReqForBucket, bucket *int32, part *int64, keys [][]byte) {
		e.BucketId, e.PartitionId, e.Keys = bucket, part, keys
	},
	response: func() *flusspb.LookupResponse { return &flusspb.LookupResponse{} },
	answers:  (*flusspb.LookupResponse).GetBucketsResp,
	answer: func(r *flusspb.PbLookupRespForBucket) bucketAnswer {
		return bucketAnswer{part: partOf(r.PartitionId), bucket: r.GetBucketId(), code: r.ErrorCode, msg: r.GetErrorMessage(),
			values: r.GetValues(), count: len(r.GetValues())}
	},
}

var prefixLookupKind = requestKind[flusspb.PbPrefixLookupReqForBucket, flusspb.PbPrefixLookupRespForBucket, *flusspb.PrefixLookupRequest, *flusspb.PrefixLookupResponse]{
	api: wire.KeyPrefixLookup,
	request: func(table int64, entries []*flusspb.PbPrefixLookupReqForBucket) *flusspb.PrefixLookupRequest {
		return &flusspb.PrefixLookupRequest{TableId: proto.Int64(table), BucketsReq: entries}
	},
	entry: func(e *flusspb.PbPrefixLookupReqForBucket, bucket *int32, part *int64, keys [][]byte) {
		e.BucketId, e.PartitionId, e.Keys = bucket, part, keys
	},
	response: func() *flusspb.PrefixLookupResponse { return &flusspb.PrefixLookupResponse{} },
	answers:  (*flusspb.PrefixLookupResponse).GetBucketsResp,
	answer: func(r *flusspb.PbPrefixLookupRespForBucket) bucketAnswer {
		return bucketAnswer{part: partOf(r.PartitionId), bucket: r.GetBucketId(), code: r.ErrorCode, msg: r.GetErrorMessage(),
			lists: r.GetValueLists(), count: len(r.GetValueLists())}
	},
}

// sendKind sends one request of kind kd for buckets of table to dest and
// returns its per-bucket answers, in the server's order.
func sendKind[E, A any, Req, Resp proto.Message](ctx context.Context, call meta.Caller, dest meta.Dest, table int64,
	buckets []bucketKeys, kd *requestKind[E, A, Req, Resp]) ([]bucketAnswer, error) {
	n := len(buckets)
	ids := make([]int32, n)
	pids := make([]int64, n)
	entries := make([]E, n)
	ptrs := make([]*E, n)
	for i, b := range buckets {
		ids[i], pids[i] = b.bucket, b.part
		var part *int64
		if b.part != meta.NoPartition {
			part = &pids[i]
		}
		kd.entry(&entries[i], &ids[i], part, b.keys)
		ptrs[i] = &entries[i]
	}
	resp := kd.response()
	if err := call.Call(ctx, dest, kd.api, kd.request(table, ptrs), resp); err != nil {
		return nil, err
	}
	got := kd.answers(resp)
	answers := make([]bucketAnswer, 0, len(got))
	for _, r := range got {
		answers = append(answers, kd.answer(r))
	}
	return answers, nil
}
