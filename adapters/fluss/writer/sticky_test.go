package writer

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Sticky assignment of key-less log rows (stickyLocked): the sticky bucket
// changes whenever a row would start a new batch in it, as the Java client's
// StickyBucketAssigner#onNewBatch.

func fakeArrowFactory([]domain.DataType, string, int) (ArrowBuilder, error) { return &fakeArrow{}, nil }

func keylessRows(base, n int, pad int) []domain.WriteEntry {
	s := []byte(strings.Repeat("x", pad))
	out := make([]domain.WriteEntry, n)
	for i := range out {
		out[i] = domain.WriteEntry{Op: domain.OpAppend, Row: []domain.Datum{{I64: int64(base + i)}, {Bytes: s}}}
	}
	return out
}

func requireAllOK(t *testing.T, res []domain.EntryResult) {
	t.Helper()
	for i, r := range res {
		require.True(t, r.OK(), "entry %d: %+v", i, r)
	}
}

// appendedLog returns the appended log batches of a physical table in the
// order the fake applied them.
func appendedLog(fake *metatest.Cluster, part int64) []metatest.Batch {
	var out []metatest.Batch
	for _, b := range fake.Batches() {
		if b.Appended && b.API == wire.KeyProduceLog && b.Partition == part {
			out = append(out, b)
		}
	}
	return out
}

// While the sender keeps up (each request's batch is taken before the next
// request), every request starts a new batch, so the sticky bucket moves on
// each time: consecutive batches never share a bucket and all buckets fill
// about evenly. Before, one bucket took every row (the perf run's
// {0=0,1=220000,2=0,3=0}).
func TestStickySpreadsWhileSenderKeepsUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond, Arrow: fakeArrowFactory}, logTable(40, 4))
	const requests, perReq = 120, 10
	for i := range requests {
		requireAllOK(t, e.write(t, ctxTimeout(t, 5*time.Second), logTable(40, 4).Path, keylessRows(i*perReq, perReq, 8)...))
	}
	batches := appendedLog(e.fake, meta.NoPartition)
	require.Len(t, batches, requests, "one batch per request: the rows of one request share the open batch")
	rows := map[int32]int{}
	for i, b := range batches {
		assert.EqualValues(t, perReq, b.Log.RecordCount)
		rows[b.Bucket] += int(b.Log.RecordCount)
		if i > 0 {
			assert.NotEqual(t, batches[i-1].Bucket, b.Bucket, "batch %d: a new batch moves the sticky bucket", i)
		}
	}
	require.Len(t, rows, 4, "%v", rows)
	for b, n := range rows {
		// Uniform among the 3 other buckets: 300 rows expected per bucket.
		assert.GreaterOrEqual(t, n, requests*perReq/10, "bucket %d: %v", b, rows)
		assert.LessOrEqual(t, n, requests*perReq*6/10, "bucket %d: %v", b, rows)
	}
}

// A request larger than a batch fills the sticky bucket's batch, moves on,
// fills the next one... Every bucket left behind with queued rows is sealed
// and sent at once, not after Linger: with a one-hour Linger, the full
// batches still reach the server within the request's first second; only the last, open batch waits for Linger
// (and its rows time out, applied "no"). This is the failure mode of a
// switch that leaves a partly filled batch nobody drains.
func TestStickySwitchSealsTheBatchLeftBehind(t *testing.T) {
	t.Parallel()
	tb := logTable(41, 4)
	// Rows of ~1 KiB; a batch holds 4 of them.
	e := newEnv(t, Options{Linger: time.Hour, BatchSize: 4*1050 + 100, Arrow: fakeArrowFactory, LingerAfterInFlight: -1}, tb)
	const n = 26
	done := make(chan []domain.EntryResult, 1)
	start := time.Now()
	go func() {
		res, err := e.w.Write(ctxTimeout(t, 2500*time.Millisecond), &domain.WriteBatch{Table: tb.Path, Entries: keylessRows(0, n, 1000)})
		assert.NoError(t, err)
		done <- res
	}()
	// 26 rows: 6 full batches of 4, sealed by the switch, and an open one of 2.
	require.Eventually(t, func() bool { return len(appendedLog(e.fake, meta.NoPartition)) == 6 },
		time.Second, 5*time.Millisecond, "the full batches left behind are sent without waiting for Linger: %v", appendedLog(e.fake, meta.NoPartition))
	assert.Less(t, time.Since(start), 2*time.Second)
	// (The sender takes one batch per bucket per round, so the arrival order
	// is not the fill order: only the spread is checked here.)
	buckets := map[int32]int{}
	for i, b := range appendedLog(e.fake, meta.NoPartition) {
		assert.EqualValues(t, 4, b.Log.RecordCount, "batch %d", i)
		buckets[b.Bucket]++
	}
	assert.GreaterOrEqual(t, len(buckets), 2, "a full batch moves the sticky bucket: %v", buckets)
	res := <-done
	for i, r := range res {
		if i < 24 {
			assert.True(t, r.OK(), "entry %d: %+v", i, r)
		} else {
			assert.Equal(t, CodeTimeout, r.Code, "entry %d: the open batch waits for Linger", i)
			assert.Equal(t, domain.AppliedNo, r.Applied)
		}
	}
}

// A bucket without a leader is never chosen while some bucket has one; with
// a single bucket led, every row goes there.
func TestStickyChoosesBucketsWithLeaders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		leaders []int32
		want    []int32
	}{
		{[]int32{meta.NoLeader, 1, meta.NoLeader, 2}, []int32{1, 3}},
		{[]int32{meta.NoLeader, meta.NoLeader, 1, meta.NoLeader}, []int32{2}},
	} {
		tb := logTable(42, 4)
		tb.Leaders = c.leaders
		e := newEnv(t, Options{Linger: time.Millisecond, Arrow: fakeArrowFactory}, tb)
		for i := range 30 {
			requireAllOK(t, e.write(t, ctxTimeout(t, 5*time.Second), tb.Path, keylessRows(i*5, 5, 8)...))
		}
		seen := map[int32]bool{}
		for _, b := range appendedLog(e.fake, meta.NoPartition) {
			seen[b.Bucket] = true
		}
		var got []int32
		for b := range int32(4) {
			if seen[b] {
				got = append(got, b)
			}
		}
		assert.Equal(t, c.want, got, "leaders %v", c.leaders)
	}
}

// A fresh table whose buckets have no leader yet: rows pick random buckets
// (Java: random over the bucket count), wait for the leaders, and are all
// written once they appear; no row waits for its deadline. Concurrent
// writers, and a slow server so that queues build up behind batches in the
// air: every Write returns well before its 10 s deadline.
func TestStickyNoRowStuck(t *testing.T) {
	t.Parallel()
	tb := logTable(43, 4)
	tb.Leaders = []int32{meta.NoLeader, meta.NoLeader, meta.NoLeader, meta.NoLeader}
	e := newEnv(t, Options{Linger: 5 * time.Millisecond, BatchSize: 16 << 10, Arrow: fakeArrowFactory}, tb)
	e.fake.BeforeWrite = func(context.Context, int32, wire.APIKey, int64) error {
		time.Sleep(3 * time.Millisecond)
		return nil
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		e.fake.SetLeaders(tb.Path, 1, 2, 1, 2)
	}()
	const writers, requests, perReq = 8, 25, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range requests {
				start := time.Now()
				res, err := e.w.Write(ctxTimeout(t, 10*time.Second), &domain.WriteBatch{Table: tb.Path,
					Entries: keylessRows((g*requests+i)*perReq, perReq, 100)})
				d := time.Since(start)
				if !assert.NoError(t, err) {
					return
				}
				for j, r := range res {
					assert.True(t, r.OK(), "writer %d request %d entry %d: %+v", g, i, j, r)
				}
				mu.Lock()
				slowest = max(slowest, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Less(t, slowest, 3*time.Second, "every row has its verdict well before the deadline")
	rows := map[int32]int{}
	total := 0
	for _, b := range appendedLog(e.fake, meta.NoPartition) {
		rows[b.Bucket] += int(b.Log.RecordCount)
		total += int(b.Log.RecordCount)
	}
	assert.Equal(t, writers*requests*perReq, total, "each row appended once")
	assert.Len(t, rows, 4, "%v", rows)
	for b, n := range rows {
		assert.LessOrEqual(t, n, total*6/10, "bucket %d: %v", b, rows)
	}
	t.Logf("rows per bucket %v, slowest write %v", rows, slowest)
}

// Each partition of a partitioned key-less log table has its own sticky
// bucket: rows of one partition move on only when that partition's batch
// was taken, whatever the other partition does.
func TestStickyPerPartition(t *testing.T) {
	t.Parallel()
	tb := &metatest.Table{ID: 44, Path: domain.TablePath{Database: "db", Table: "plog"}, Desc: domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			col("id", domain.TypeBigInt, true, 0), col("region", domain.TypeString, false, 1),
		}, HighestFieldID: 1},
		PartitionKeys: []string{"region"}, BucketCount: 4, Properties: map[string]string{}, CustomProperties: map[string]string{},
	}}
	e := newEnv(t, Options{Linger: time.Millisecond, Arrow: fakeArrowFactory}, tb)
	row := func(id int, region string) domain.WriteEntry {
		return domain.WriteEntry{Op: domain.OpAppend, Row: []domain.Datum{{I64: int64(id)}, {Bytes: []byte(region)}}}
	}
	const rounds = 60
	for i := range rounds {
		// One request with rows of both partitions, then one of "eu" only.
		requireAllOK(t, e.write(t, ctxTimeout(t, 5*time.Second), tb.Path, row(i, "eu"), row(i, "us"), row(i, "eu")))
		requireAllOK(t, e.write(t, ctxTimeout(t, 5*time.Second), tb.Path, row(i, "eu")))
	}
	parts := map[int64]bool{}
	for _, b := range e.fake.Batches() {
		parts[b.Partition] = true
	}
	require.Len(t, parts, 2)
	for p := range parts {
		batches := appendedLog(e.fake, p)
		rows := map[int32]int{}
		for i, b := range batches {
			rows[b.Bucket] += int(b.Log.RecordCount)
			if i > 0 {
				assert.NotEqual(t, batches[i-1].Bucket, b.Bucket, "partition %d batch %d", p, i)
			}
		}
		assert.Len(t, rows, 4, "partition %d: %v", p, rows)
		t.Logf("partition %d: %d batches, rows per bucket %v", p, len(batches), fmt.Sprint(rows))
	}
}

// Fresh replicas: the first two sends to each bucket are answered with a
// retriable error (the leader is not ready yet), so each bucket's queue
// waits behind a batch backing off. Rows keep moving to other buckets, and
// every row is written long before its deadline.
func TestStickyFreshReplicasRetry(t *testing.T) {
	t.Parallel()
	tb := logTable(45, 4)
	e := newEnv(t, Options{Linger: 2 * time.Millisecond, RetryBackoff: 20 * time.Millisecond, Arrow: fakeArrowFactory}, tb)
	var mu sync.Mutex
	fails := map[int32]int{}
	e.fake.BucketError = func(_ int32, b metatest.BucketRef, _ int32) wire.ErrorCode {
		mu.Lock()
		defer mu.Unlock()
		if fails[b.Bucket] < 2 {
			fails[b.Bucket]++
			return wire.CodeNotLeaderOrFollower
		}
		return 0
	}
	var wg sync.WaitGroup
	start := time.Now()
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				res, err := e.w.Write(ctxTimeout(t, 10*time.Second), &domain.WriteBatch{Table: tb.Path,
					Entries: keylessRows((g*20+i)*25, 25, 16)})
				if assert.NoError(t, err) {
					for j, r := range res {
						assert.True(t, r.OK(), "writer %d request %d entry %d: %+v", g, i, j, r)
					}
				}
			}
		}()
	}
	wg.Wait()
	assert.Less(t, time.Since(start), 5*time.Second)
	rows := map[int32]int{}
	total := 0
	for _, b := range appendedLog(e.fake, meta.NoPartition) {
		rows[b.Bucket] += int(b.Log.RecordCount)
		total += int(b.Log.RecordCount)
	}
	assert.Equal(t, 4*20*25, total)
	assert.Len(t, rows, 4, "%v", rows)
}
