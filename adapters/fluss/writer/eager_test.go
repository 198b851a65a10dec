package writer

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// queuedRows returns the rows queued (not yet in a batch) over all buckets.
func queuedRows(w *Writer) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, b := range w.buckets {
		n += b.live
	}
	return n
}

// TestBatchingPolicy: a bucket with nothing in flight sends its rows at once
// (Linger does not apply), rows arriving while a batch is in flight gather
// into one batch sent when the in-flight one is answered, and
// LingerAfterInFlight -1 restores the Java rule (always wait for Linger).
func TestBatchingPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		after     int
		wantFirst bool // the first write is answered before the linger passes
	}{
		{"idle bucket sends at once", 0, true},
		{"java rule waits for linger", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Options{Linger: time.Hour, LingerAfterInFlight: tc.after}, pkTable(10, 1))
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			res, err := e.w.Write(ctx, &domain.WriteBatch{Table: pkPath, Entries: []domain.WriteEntry{upsert(1, "a", 1)}})
			require.NoError(t, err)
			if tc.wantFirst {
				assert.True(t, res[0].OK(), "%+v", res[0])
			} else {
				assert.Equal(t, CodeTimeout, res[0].Code)
				assert.Equal(t, domain.AppliedNo, res[0].Applied)
			}
		})
	}

	t.Run("rows gather while a batch is in flight", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, Options{Linger: time.Hour, KvLinger: time.Hour}, pkTable(10, 1))
		// Warm up (writer id, metadata) so the first PutKv below is the
		// one held.
		require.True(t, e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(0, "w", 0))[0].OK())
		release := make(chan struct{})
		var once sync.Once
		e.fake.AfterWrite = func(ctx context.Context, _ int32) error {
			once.Do(func() { <-release })
			return nil
		}
		calls0 := e.fake.Calls(wire.KeyPutKv)
		var wg sync.WaitGroup
		results := make([][]domain.EntryResult, 6)
		write := func(i int) {
			defer wg.Done()
			results[i] = e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(int64(100+i), "b", 1))
		}
		wg.Add(1)
		go write(0)
		require.Eventually(t, func() bool { return e.fake.Calls(wire.KeyPutKv) == calls0+1 }, 2*time.Second, time.Millisecond)
		for i := 1; i < 6; i++ {
			wg.Add(1)
			go write(i)
		}
		// Held back by the batch in flight, not by Linger (an hour).
		require.Eventually(t, func() bool { return queuedRows(e.w) == 5 }, 2*time.Second, time.Millisecond)
		close(release)
		wg.Wait()
		for i, r := range results {
			assert.True(t, r[0].OK(), "write %d: %+v", i, r[0])
		}
		assert.Equal(t, calls0+2, e.fake.Calls(wire.KeyPutKv), "the 5 gathered rows went in one PutKv")
	})
}

// TestKvLinger: PutKv rows queued behind a batch in flight wait up to
// KvLinger (not Linger) and then go as a second batch in flight, even
// while the first is still unanswered.
func TestKvLinger(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Hour, KvLinger: 50 * time.Millisecond}, pkTable(10, 1))
	require.True(t, e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(0, "w", 0))[0].OK())
	release := make(chan struct{})
	var held atomic.Bool
	e.fake.AfterWrite = func(ctx context.Context, _ int32) error {
		if held.CompareAndSwap(false, true) { // only the first call is held
			<-release
		}
		return nil
	}
	calls0 := e.fake.Calls(wire.KeyPutKv)
	first := make(chan []domain.EntryResult, 1)
	go func() { first <- e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1, "a", 1)) }()
	require.Eventually(t, func() bool { return e.fake.Calls(wire.KeyPutKv) == calls0+1 }, 2*time.Second, time.Millisecond)
	start := time.Now()
	res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(2, "b", 1))
	took := time.Since(start)
	assert.True(t, res[0].OK(), "%+v", res[0])
	assert.GreaterOrEqual(t, took, 45*time.Millisecond, "waited for KvLinger")
	assert.Equal(t, calls0+2, e.fake.Calls(wire.KeyPutKv), "sent while the first batch was still in flight")
	close(release)
	assert.True(t, (<-first)[0].OK())
}

// TestLanes: the buckets of a table are spread over Options.Lanes
// connections (1..Lanes, never the shared lane 0), each bucket always on the
// same one, so its batches keep their order.
func TestLanes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lanes, buckets, want int
	}{
		{1, 4, 1},
		{4, 4, 4},
		{2, 8, 2},
	} {
		e := newEnv(t, Options{Linger: time.Millisecond, Lanes: tc.lanes}, pkTable(10, tc.buckets))
		for round := range 3 {
			var entries []domain.WriteEntry
			for i := range 64 {
				entries = append(entries, upsert(int64(round*1000+i), "x", 1))
			}
			for _, r := range e.write(t, ctxTimeout(t, 5*time.Second), pkPath, entries...) {
				require.True(t, r.OK(), "%+v", r)
			}
		}
		laneOf := map[int32]int{}
		used := map[int]bool{}
		for _, b := range e.fake.Batches() {
			assert.GreaterOrEqual(t, b.Lane, 1)
			assert.LessOrEqual(t, b.Lane, tc.lanes)
			if l, seen := laneOf[b.Bucket]; seen {
				assert.Equal(t, l, b.Lane, "bucket %d changed lanes", b.Bucket)
			}
			laneOf[b.Bucket] = b.Lane
			used[b.Lane] = true
		}
		assert.Len(t, used, tc.want, "lanes %d, buckets %d", tc.lanes, tc.buckets)
	}
}

// TestWriteTimeline: a Write whose context carries a WriteTimeline gets it
// filled: the batches, the last batch's rows and sends, and phases that add
// up to no more than the call took.
func TestWriteTimeline(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond}, pkTable(10, 2))
	e.fake.AfterWrite = func(ctx context.Context, _ int32) error {
		time.Sleep(20 * time.Millisecond) // a visible round trip
		return nil
	}
	var entries []domain.WriteEntry
	for i := range 40 {
		entries = append(entries, upsert(int64(i), "t", 1))
	}
	var tl domain.WriteTimeline
	start := time.Now()
	res, err := e.w.Write(domain.WithWriteTimeline(ctxTimeout(t, 5*time.Second), &tl), &domain.WriteBatch{Table: pkPath, Entries: entries})
	took := time.Since(start)
	require.NoError(t, err)
	for _, r := range res {
		require.True(t, r.OK(), "%+v", r)
	}
	assert.Equal(t, 2, tl.Batches, "two buckets, one batch each")
	assert.Equal(t, 1, tl.Attempts)
	assert.Positive(t, tl.BatchRows)
	assert.GreaterOrEqual(t, tl.InFlight, 1)
	assert.GreaterOrEqual(t, tl.Backend, 20*time.Millisecond)
	assert.LessOrEqual(t, tl.Encode+tl.Queue+tl.Build+tl.Backend+tl.Resolve, took)
	assert.LessOrEqual(t, tl.Slot, tl.Queue)

	// Without a timeline in the context nothing is recorded (and nothing breaks).
	assert.True(t, e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1000, "x", 1))[0].OK())
}
