package lookup

import (
	"context"
	"slices"
	"sync"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
)

// item is one key (or prefix) of a call.
type item struct {
	keyOff, keyLen int32
	bucket         int32
	part           string // partition name, "" for a non-partitioned table
	partID         int64  // resolved in each attempt
	group          int32  // bucket group in the current attempt
}

// outcome is the answer for one item: its stored value(s), or its error. The
// zero outcome of a settled item means not found (a missing partition, or
// an answer without value).
type outcome struct {
	value []byte   // Lookup: the stored value; empty when not found
	list  [][]byte // PrefixLookup: the stored values of the prefix
	err   *domain.Error
}

// physBucket names a bucket of a table or of one of its partitions.
type physBucket struct {
	part   int64
	bucket int32
}

// bucketGroup is the keys of one bucket sent in one request.
type bucketGroup struct {
	physBucket
	node  meta.ServerNode // the leader the keys are sent to
	name  string          // partition name, for messages
	n     int             // number of items
	items []int
	seen  bool
}

// nodeGroup is one request: the buckets led by one node.
type nodeGroup struct {
	node    meta.ServerNode
	n       int // number of buckets
	buckets []*bucketGroup
	answers []bucketAnswer // per-bucket answers of the request
	err     error
}

// exchange carries the keys of one Lookup or PrefixLookup call through the
// attempts: routing, sending, retrying.
type exchange struct {
	l      *Lookuper
	c      *codec
	prefix bool
	arena  []byte
	items  []item
	out    []outcome
	last   []*domain.Error // last retriable failure of each pending item
}

func newExchange(l *Lookuper, c *codec, prefix bool, n int) *exchange {
	return &exchange{l: l, c: c, prefix: prefix, items: make([]item, n), out: make([]outcome, n), last: make([]*domain.Error, n)}
}

func (x *exchange) key(i int) []byte {
	it := &x.items[i]
	return x.arena[it.keyOff : it.keyOff+it.keyLen : it.keyOff+it.keyLen]
}

// encodeAll encodes every key row; a row that cannot be encoded (wrong
// width, null key column, value out of range) fails alone.
func (x *exchange) encodeAll(s *keyShape, rows [][]domain.Datum) {
	size := 0
	for _, r := range rows {
		size += 8 * len(r)
	}
	x.arena = make([]byte, 0, size)
	var sc scratch
	for i, row := range rows {
		start := len(x.arena)
		var err error
		var b int32
		if x.arena, b, err = x.c.encode(s, x.arena, row, &sc); err != nil {
			de := domain.AsError(err)
			if de == nil {
				de = &domain.Error{Kind: domain.KindInvalidArgument, Message: err.Error(), Cause: err}
			}
			cp := *de
			cp.Message = keyWord(x.prefix) + " " + itoa(i) + ": " + de.Message
			x.out[i].err = &cp
			continue
		}
		x.items[i] = item{keyOff: int32(start), keyLen: int32(len(x.arena) - start), bucket: b, part: sc.intern()}
	}
}

// run sends the pending items until every one is settled, retrying
// retriable failures with backoff. It returns an error only when ctx ends.
func (x *exchange) run(ctx context.Context) error {
	pending := make([]int, 0, len(x.items))
	for i := range x.items {
		if x.out[i].err == nil {
			pending = append(pending, i)
		}
	}
	wait := backoff.Policy{Initial: x.l.opts.RetryBackoff, Max: x.l.opts.MaxRetryBackoff}.Start()
	for attempt := 1; len(pending) > 0; attempt++ {
		retry, err := x.attempt(ctx, pending)
		if err != nil {
			return err
		}
		if len(retry) == 0 {
			return nil
		}
		if attempt >= x.l.opts.MaxAttempts || !backoff.SleepWithin(ctx, wait.Next()) {
			if ctx.Err() != nil {
				return ctxError(ctx, x.c.path)
			}
			// Out of attempts, or the deadline would pass while waiting:
			// report the last failure of each remaining key.
			for _, i := range retry {
				x.out[i].err = x.last[i]
			}
			return nil
		}
		pending = retry
	}
	return nil
}

// partMissing marks a partition name that does not exist.
const partMissing int64 = -2

// attempt routes and sends the pending items once and returns those to try
// again.
func (x *exchange) attempt(ctx context.Context, pending []int) ([]int, error) {
	md, t := x.l.md, x.c.table
	tid := x.c.tableID
	var retry []int
	fail := func(i int, err error) error {
		if ctx.Err() != nil {
			return ctxError(ctx, x.c.path)
		}
		de := domain.AsError(err)
		if de == nil {
			de = &domain.Error{Kind: domain.KindInternal, Message: err.Error(), Cause: err}
		}
		if de.Retryable {
			x.last[i] = de
			retry = append(retry, i)
		} else {
			x.out[i].err = de
		}
		return nil
	}

	// Route: partition, then leader. Partition ids are resolved once per
	// attempt and name (the cache keeps them across calls).
	var parts map[string]int64
	index := make(map[physBucket]int32, min(len(pending), 32))
	groups := make([]bucketGroup, 0, min(len(pending), 32))
	routed := make([]int, 0, len(pending))
	var unrouted []int
	add := func(i int, n meta.ServerNode) {
		it := &x.items[i]
		pb := physBucket{it.partID, it.bucket}
		g, ok := index[pb]
		if !ok {
			g = int32(len(groups))
			index[pb] = g
			groups = append(groups, bucketGroup{physBucket: pb, node: n, name: it.part})
		}
		groups[g].n++
		it.group = g
		routed = append(routed, i)
	}
	for _, i := range pending {
		it := &x.items[i]
		it.partID = meta.NoPartition
		// Every key of a partitioned table names a partition, even one whose
		// value is empty (which meta.Partition refuses).
		if t.Partitioned {
			id, ok := parts[it.part]
			if !ok {
				var err error
				if id, err = md.Partition(ctx, t, it.part, false); err != nil {
					if !partitionNotFound(err) {
						if err := fail(i, err); err != nil {
							return nil, err
						}
						continue
					}
					id = partMissing
				}
				if parts == nil {
					parts = make(map[string]int64)
				}
				parts[it.part] = id
			}
			if id == partMissing {
				continue // a key in a missing partition is not found
			}
			it.partID = id
		}
		if n, ok := md.Leader(tid, it.partID, it.bucket); ok {
			add(i, n)
		} else {
			unrouted = append(unrouted, i)
		}
	}
	if len(unrouted) > 0 {
		refreshed := make(map[int64]error)
		for _, i := range unrouted {
			it := &x.items[i]
			err, ok := refreshed[it.partID]
			if !ok {
				err = md.RefreshLeaders(ctx, tid, it.partID)
				refreshed[it.partID] = err
			}
			switch {
			case err != nil && partitionNotFound(err):
				// The partition was dropped: its keys are not found.
			case err != nil:
				if err := fail(i, err); err != nil {
					return nil, err
				}
			default:
				if n, ok := md.Leader(tid, it.partID, it.bucket); ok {
					add(i, n)
				} else {
					x.last[i] = x.leaderUnknown(it)
					retry = append(retry, i)
				}
			}
		}
	}
	if len(routed) == 0 {
		return retry, nil
	}

	// Lay the items out by bucket, and the buckets by node, in two shared
	// arrays (input order is kept inside each bucket).
	shared := make([]int, len(routed))
	off := 0
	for k := range groups {
		g := &groups[k]
		g.items = shared[off : off : off+g.n]
		off += g.n
	}
	for _, i := range routed {
		g := &groups[x.items[i].group]
		g.items = append(g.items, i)
	}
	nodes := make([]nodeGroup, 0, 4)
	nodeOf := make([]int, len(groups))
	for k := range groups {
		id := groups[k].node.ID
		j := slices.IndexFunc(nodes, func(ng nodeGroup) bool { return ng.node.ID == id })
		if j < 0 {
			j = len(nodes)
			nodes = append(nodes, nodeGroup{node: groups[k].node})
		}
		nodes[j].n++
		nodeOf[k] = j
	}
	byNode := make([]*bucketGroup, len(groups))
	off = 0
	for j := range nodes {
		nodes[j].buckets = byNode[off : off : off+nodes[j].n]
		off += nodes[j].n
	}
	for k := range groups {
		ng := &nodes[nodeOf[k]]
		ng.buckets = append(ng.buckets, &groups[k])
	}

	// Send one request per node, concurrently.
	if len(nodes) == 1 {
		x.send(ctx, &nodes[0])
	} else {
		var wg sync.WaitGroup
		for j := 1; j < len(nodes); j++ {
			ng := &nodes[j]
			wg.Go(func() { x.send(ctx, ng) })
		}
		x.send(ctx, &nodes[0])
		wg.Wait()
	}

	for j := range nodes {
		var err error
		if retry, err = x.handle(ctx, &nodes[j], groups, index, retry); err != nil {
			return nil, err
		}
	}
	return retry, nil
}

// send sends the keys of one node's buckets, through the coalescer (which
// may merge them with other calls' keys for the same server and table).
func (x *exchange) send(ctx context.Context, ng *nodeGroup) {
	buckets := make([]bucketKeys, len(ng.buckets))
	keys := make([][]byte, 0, x.countKeys(ng))
	for k, g := range ng.buckets {
		// Keys of all buckets share one backing array; each bucket gets
		// its sub-slice (capacity-capped, so appends cannot spill over).
		start := len(keys)
		for _, i := range g.items {
			keys = append(keys, x.key(i))
		}
		buckets[k] = bucketKeys{part: g.part, bucket: g.bucket, keys: keys[start:len(keys):len(keys)]}
	}
	dest := meta.Dest{Kind: meta.ToNode, Node: ng.node.ID, Addr: ng.node.Addr()}
	ng.answers, ng.err = x.l.co.do(ctx, dest, lineKey{node: ng.node.ID, table: x.c.tableID, prefix: x.prefix}, buckets)
}

func (x *exchange) countKeys(ng *nodeGroup) int {
	n := 0
	for _, g := range ng.buckets {
		n += len(g.items)
	}
	return n
}

// bucketAnswer is one per-bucket entry of a response.
type bucketAnswer struct {
	part   int64
	bucket int32
	code   int32 // error_code; 0 (wire.CodeNone) when absent
	msg    string
	values []*flusspb.PbValue     // Lookup
	lists  []*flusspb.PbValueList // PrefixLookup
	count  int                    // number of values or lists
}

// handle settles the items of one node's request from its answer.
func (x *exchange) handle(ctx context.Context, ng *nodeGroup, groups []bucketGroup, index map[physBucket]int32, retry []int) ([]int, error) {
	md, tid := x.l.md, x.c.tableID
	if ng.err != nil {
		if ctx.Err() != nil {
			return nil, ctxError(ctx, x.c.path)
		}
		de := x.requestError(ng, ng.err)
		code := meta.ErrorCode(ng.err)
		invalidate := code.InvalidatesMetadata() || !meta.Answered(ng.err)
		seen := make(map[int64]bool)
		for _, g := range ng.buckets {
			if de.Retryable && invalidate && !seen[g.part] {
				seen[g.part] = true
				md.InvalidateLeaders(tid, g.part)
			}
			for _, i := range g.items {
				if de.Retryable {
					x.last[i] = de
					retry = append(retry, i)
				} else {
					x.out[i].err = de
				}
			}
		}
		return retry, nil
	}

	answers := ng.answers
	for k := range answers {
		a := &answers[k]
		k, ok := index[physBucket{a.part, a.bucket}]
		if !ok || groups[k].node.ID != ng.node.ID || groups[k].seen {
			continue // not asked for in this request, or answered twice
		}
		g := &groups[k]
		g.seen = true
		if a.code != int32(wire.CodeNone) {
			code := wire.ErrorCode(a.code)
			if code == wire.CodePartitionNotExists {
				continue // its keys are not found
			}
			de := x.bucketError(g, wire.NewServerError(code, a.msg))
			if de.Retryable && code.InvalidatesMetadata() {
				md.InvalidateLeaders(tid, g.part)
			}
			for _, i := range g.items {
				if de.Retryable {
					x.last[i] = de
					retry = append(retry, i)
				} else {
					x.out[i].err = de
				}
			}
			continue
		}
		if a.count != len(g.items) {
			de := x.bucketError(g, nil)
			de.Message += ": the answer has " + itoa(a.count) + " results for " + itoa(len(g.items)) + " keys"
			for _, i := range g.items {
				x.out[i].err = de
			}
			continue
		}
		for k, i := range g.items {
			o := &x.out[i]
			if x.prefix {
				o.list = a.lists[k].GetValues()
			} else {
				o.value = a.values[k].GetValues()
			}
		}
	}
	for _, g := range ng.buckets {
		if !g.seen {
			de := x.bucketError(g, nil)
			de.Message += ": the server's answer does not mention the bucket"
			for _, i := range g.items {
				x.out[i].err = de
			}
		}
	}
	return retry, nil
}

func partOf(p *int64) int64 {
	if p == nil {
		return meta.NoPartition
	}
	return *p
}
