package lookup

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
)

// gateCaller answers Lookup with each key as its value and PrefixLookup with
// [key, key] per prefix. The first request waits until release is closed;
// it records every request's buckets and keys.
type gateCaller struct {
	release chan struct{}
	mu      sync.Mutex
	reqs    [][]bucketKeys
	// fail: the error of every request after the first; code: the error
	// code of every bucket answer after the first request; short: answer
	// one value less per bucket after the first request.
	fail  error
	code  wire.ErrorCode
	short bool
}

func (g *gateCaller) Call(ctx context.Context, _ meta.Dest, key wire.APIKey, req, resp proto.Message) error {
	g.mu.Lock()
	first := len(g.reqs) == 0
	var got []bucketKeys
	switch r := req.(type) {
	case *flusspb.LookupRequest:
		for _, b := range r.BucketsReq {
			got = append(got, bucketKeys{part: partOf(b.PartitionId), bucket: b.GetBucketId(), keys: b.Keys})
		}
	case *flusspb.PrefixLookupRequest:
		for _, b := range r.BucketsReq {
			got = append(got, bucketKeys{part: partOf(b.PartitionId), bucket: b.GetBucketId(), keys: b.Keys})
		}
	}
	g.reqs = append(g.reqs, got)
	fail, code, short := g.fail, g.code, g.short
	g.mu.Unlock()
	if first {
		select {
		case <-g.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	} else if fail != nil {
		return fail
	}
	for _, b := range got {
		keys := b.keys
		if !first && short {
			keys = keys[1:]
		}
		var ec *int32
		if !first && code != wire.CodeNone {
			ec = proto.Int32(int32(code))
		}
		switch key {
		case wire.KeyLookup:
			r := &flusspb.PbLookupRespForBucket{BucketId: proto.Int32(b.bucket), ErrorCode: ec}
			if b.part != meta.NoPartition {
				r.PartitionId = proto.Int64(b.part)
			}
			for _, k := range keys {
				r.Values = append(r.Values, &flusspb.PbValue{Values: k})
			}
			lr := resp.(*flusspb.LookupResponse)
			lr.BucketsResp = append(lr.BucketsResp, r)
		case wire.KeyPrefixLookup:
			r := &flusspb.PbPrefixLookupRespForBucket{BucketId: proto.Int32(b.bucket), ErrorCode: ec}
			if b.part != meta.NoPartition {
				r.PartitionId = proto.Int64(b.part)
			}
			for _, k := range keys {
				r.ValueLists = append(r.ValueLists, &flusspb.PbValueList{Values: [][]byte{k, k}})
			}
			pr := resp.(*flusspb.PrefixLookupResponse)
			pr.BucketsResp = append(pr.BucketsResp, r)
		}
	}
	return nil
}

func (g *gateCaller) requests() [][]bucketKeys {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]bucketKeys(nil), g.reqs...)
}

func keysOf(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// queued waits until line k holds n waiting shares in total.
func queued(t *testing.T, c *coalescer, k lineKey, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		got := 0
		if ln := c.lines[k]; ln != nil {
			for _, g := range ln.queue {
				got += len(g.shares)
			}
		}
		return got == n
	}, 5*time.Second, time.Millisecond)
}

// answerKeys renders a share's answers as bucket -> the keys its values
// (Lookup) or first list entries (PrefixLookup) name.
func answerKeys(as []bucketAnswer) map[int32][]string {
	out := map[int32][]string{}
	for _, a := range as {
		out[a.bucket] = []string{}
		for _, v := range a.values {
			out[a.bucket] = append(out[a.bucket], string(v.Values))
		}
		for _, l := range a.lists {
			out[a.bucket] = append(out[a.bucket], string(l.Values[0]))
		}
	}
	return out
}

type callResult struct {
	answers []bucketAnswer
	err     error
}

// TestCoalescerMergesWaitingCalls: with one request in flight, the calls
// that arrive meanwhile go together in one request when it is answered;
// keys of one bucket from several calls share one bucket entry, and every
// call gets back exactly its own keys' answers.
func TestCoalescerMergesWaitingCalls(t *testing.T) {
	for _, prefix := range []bool{false, true} {
		t.Run(map[bool]string{false: "lookup", true: "prefix"}[prefix], func(t *testing.T) {
			gc := &gateCaller{release: make(chan struct{})}
			c := newCoalescer(gc, 1, 100)
			k := lineKey{node: 1, table: 7, prefix: prefix}
			dest := meta.Dest{Kind: meta.ToNode, Node: 1}
			calls := [][]bucketKeys{
				{{part: meta.NoPartition, bucket: 0, keys: keysOf("a1")}},
				{{part: meta.NoPartition, bucket: 0, keys: keysOf("b1", "b2")}, {part: meta.NoPartition, bucket: 1, keys: keysOf("b3")}},
				{{part: meta.NoPartition, bucket: 1, keys: keysOf("c1")}, {part: 5, bucket: 1, keys: keysOf("c2")}},
			}
			results := make([]callResult, len(calls))
			var wg sync.WaitGroup
			for i := range calls {
				wg.Go(func() {
					as, err := c.do(context.Background(), dest, k, calls[i])
					results[i] = callResult{as, err}
				})
				if i == 0 {
					require.Eventually(t, func() bool { return len(gc.requests()) == 1 }, 5*time.Second, time.Millisecond)
				} else {
					queued(t, c, k, i)
				}
			}
			close(gc.release)
			wg.Wait()

			reqs := gc.requests()
			require.Len(t, reqs, 2, "the two waiting calls go in one request")
			assert.Equal(t, []bucketKeys{
				{part: meta.NoPartition, bucket: 0, keys: keysOf("b1", "b2")},
				{part: meta.NoPartition, bucket: 1, keys: keysOf("b3", "c1")},
				{part: 5, bucket: 1, keys: keysOf("c2")},
			}, reqs[1])
			for i := range results {
				require.NoError(t, results[i].err)
			}
			assert.Equal(t, map[int32][]string{0: {"a1"}}, answerKeys(results[0].answers))
			assert.Equal(t, map[int32][]string{0: {"b1", "b2"}, 1: {"b3"}}, answerKeys(results[1].answers))
			require.Len(t, results[2].answers, 2)
			assert.Equal(t, meta.NoPartition, results[2].answers[0].part)
			assert.Equal(t, []string{"c1"}, answerKeys(results[2].answers[:1])[1])
			assert.Equal(t, int64(5), results[2].answers[1].part)
			assert.Equal(t, []string{"c2"}, answerKeys(results[2].answers[1:])[1])
			// The waiting calls return once their group's answers are in
			// (g.done); sendWaited ends the line's request (finish) just
			// after that, on its own goroutine.
			assert.Eventually(t, func() bool {
				c.mu.Lock()
				defer c.mu.Unlock()
				return len(c.lines) == 0
			}, 5*time.Second, time.Millisecond, "an idle line is forgotten")
		})
	}
}

// TestCoalescerFailures: a merged request's error, a bucket's error code and
// an answer with the wrong number of values reach every call of the group.
func TestCoalescerFailures(t *testing.T) {
	boom := errors.New("connection reset")
	tests := []struct {
		name  string
		setup func(*gateCaller)
		check func(t *testing.T, r callResult)
	}{
		{"request error", func(g *gateCaller) { g.fail = boom }, func(t *testing.T, r callResult) {
			assert.ErrorIs(t, r.err, boom)
		}},
		{"bucket error code", func(g *gateCaller) { g.code = wire.CodeNotLeaderOrFollower }, func(t *testing.T, r callResult) {
			require.NoError(t, r.err)
			require.Len(t, r.answers, 1)
			assert.Equal(t, int32(wire.CodeNotLeaderOrFollower), r.answers[0].code)
		}},
		{"wrong count", func(g *gateCaller) { g.short = true }, func(t *testing.T, r callResult) {
			require.NoError(t, r.err)
			require.Len(t, r.answers, 1)
			assert.Equal(t, 2, r.answers[0].count, "the merged answer's count (3 keys, 2 values) is passed on")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gc := &gateCaller{release: make(chan struct{})}
			tc.setup(gc)
			c := newCoalescer(gc, 1, 100)
			k := lineKey{node: 1, table: 7}
			dest := meta.Dest{Kind: meta.ToNode, Node: 1}
			var wg sync.WaitGroup
			wg.Go(func() {
				_, err := c.do(context.Background(), dest, k, []bucketKeys{{part: meta.NoPartition, bucket: 0, keys: keysOf("a")}})
				assert.NoError(t, err)
			})
			require.Eventually(t, func() bool { return len(gc.requests()) == 1 }, 5*time.Second, time.Millisecond)
			results := make([]callResult, 2)
			for i, keys := range [][][]byte{keysOf("b1", "b2"), keysOf("c1")} {
				wg.Go(func() {
					as, err := c.do(context.Background(), dest, k, []bucketKeys{{part: meta.NoPartition, bucket: 0, keys: keys}})
					results[i] = callResult{as, err}
				})
				queued(t, c, k, i+1)
			}
			close(gc.release)
			wg.Wait()
			require.Len(t, gc.requests(), 2)
			for _, r := range results {
				tc.check(t, r)
			}
		})
	}
}

// TestCoalescerLimits: a call whose context ends while it waits returns at
// once and its keys are not sent; MaxKeysPerRequest splits the waiting
// calls into several requests; with room in flight, calls do not wait.
func TestCoalescerLimits(t *testing.T) {
	t.Run("gone while waiting", func(t *testing.T) {
		gc := &gateCaller{release: make(chan struct{})}
		c := newCoalescer(gc, 1, 100)
		k := lineKey{node: 1, table: 7}
		dest := meta.Dest{Kind: meta.ToNode, Node: 1}
		var wg sync.WaitGroup
		wg.Go(func() {
			_, err := c.do(context.Background(), dest, k, []bucketKeys{{part: meta.NoPartition, bucket: 0, keys: keysOf("a")}})
			assert.NoError(t, err)
		})
		require.Eventually(t, func() bool { return len(gc.requests()) == 1 }, 5*time.Second, time.Millisecond)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := c.do(ctx, dest, k, []bucketKeys{{part: meta.NoPartition, bucket: 0, keys: keysOf("b")}})
			done <- err
		}()
		queued(t, c, k, 1)
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
		close(gc.release)
		wg.Wait()
		assert.Len(t, gc.requests(), 1, "the abandoned keys are not sent")
	})
	t.Run("max keys per request", func(t *testing.T) {
		gc := &gateCaller{release: make(chan struct{})}
		c := newCoalescer(gc, 1, 3)
		k := lineKey{node: 1, table: 7}
		dest := meta.Dest{Kind: meta.ToNode, Node: 1}
		var wg sync.WaitGroup
		wg.Go(func() {
			_, err := c.do(context.Background(), dest, k, []bucketKeys{{part: meta.NoPartition, bucket: 0, keys: keysOf("a")}})
			assert.NoError(t, err)
		})
		require.Eventually(t, func() bool { return len(gc.requests()) == 1 }, 5*time.Second, time.Millisecond)
		for i, keys := range [][][]byte{keysOf("b1", "b2"), keysOf("c1"), keysOf("d1", "d2")} {
			wg.Go(func() {
				as, err := c.do(context.Background(), dest, k, []bucketKeys{{part: meta.NoPartition, bucket: 0, keys: keys}})
				assert.NoError(t, err)
				assert.Len(t, as[0].values, len(keys))
			})
			queued(t, c, k, i+1)
		}
		close(gc.release)
		wg.Wait()
		reqs := gc.requests()
		require.Len(t, reqs, 3)
		assert.Equal(t, keysOf("b1", "b2", "c1"), reqs[1][0].keys)
		assert.Equal(t, keysOf("d1", "d2"), reqs[2][0].keys)
	})
	t.Run("room in flight", func(t *testing.T) {
		gc := &gateCaller{release: make(chan struct{})}
		c := newCoalescer(gc, 2, 100)
		k := lineKey{node: 1, table: 7}
		dest := meta.Dest{Kind: meta.ToNode, Node: 1}
		var wg sync.WaitGroup
		wg.Go(func() {
			_, err := c.do(context.Background(), dest, k, []bucketKeys{{part: meta.NoPartition, bucket: 0, keys: keysOf("a")}})
			assert.NoError(t, err)
		})
		require.Eventually(t, func() bool { return len(gc.requests()) == 1 }, 5*time.Second, time.Millisecond)
		as, err := c.do(context.Background(), dest, k, []bucketKeys{{part: meta.NoPartition, bucket: 0, keys: keysOf("b")}})
		require.NoError(t, err, "the second call goes at once: the line has room for two")
		assert.Equal(t, map[int32][]string{0: {"b"}}, answerKeys(as))
		close(gc.release)
		wg.Wait()
	})
}
