package membudget

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBudgetAcquire(t *testing.T) {
	tests := []struct {
		name     string
		capacity int64
		held     int64 // taken before the acquisition under test
		want     int64
		granted  int64 // bytes the acquisition takes; -1: refused
	}{
		{name: "fits", capacity: 100, want: 60, granted: 60},
		{name: "fits exactly", capacity: 100, held: 40, want: 60, granted: 60},
		{name: "larger than the budget takes all of it", capacity: 100, want: 1000, granted: 100},
		{name: "zero is free", capacity: 100, held: 100, want: 0, granted: 0},
		{name: "does not fit", capacity: 100, held: 50, want: 60, granted: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(tt.capacity, 20*time.Millisecond)
			if tt.held > 0 {
				_, err := b.Acquire(context.Background(), tt.held)
				require.NoError(t, err)
			}
			got, err := b.Acquire(context.Background(), tt.want)
			if tt.granted < 0 {
				var ex *ExhaustedError
				require.ErrorAs(t, err, &ex)
				assert.Equal(t, tt.want, ex.Wanted)
				assert.Equal(t, tt.held, ex.InUse)
				assert.Equal(t, tt.capacity, ex.Capacity)
				assert.Positive(t, ex.RetryAfter)
				assert.Equal(t, int64(1), b.Stats().Refused)
				assert.Equal(t, tt.want, b.Stats().WaitedBytes)
				assert.Equal(t, tt.held, b.Stats().InUse)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.granted, got)
			assert.Equal(t, tt.held+tt.granted, b.Stats().InUse)
		})
	}
}

func TestBudgetTryAcquire(t *testing.T) {
	b := New(100, time.Second)
	n, ok := b.TryAcquire(60)
	assert.True(t, ok)
	assert.Equal(t, int64(60), n)
	n, ok = b.TryAcquire(50)
	assert.False(t, ok, "not free now: no wait")
	assert.Zero(t, n)
	assert.Equal(t, Stats{Capacity: 100, InUse: 60}, b.Stats(), "a refused try is not a refusal")
	b.Release(60, 0)
	n, ok = b.TryAcquire(500)
	assert.True(t, ok)
	assert.Equal(t, int64(100), n, "capped to the capacity, as Acquire")
	b.Release(n, 0)
	var none *Budget
	n, ok = none.TryAcquire(10)
	assert.True(t, ok)
	assert.Zero(t, n)
}

func TestBudgetWaitsForRelease(t *testing.T) {
	b := New(100, 2*time.Second)
	n, err := b.Acquire(context.Background(), 80)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := b.Acquire(context.Background(), 50)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("granted while the budget was full")
	default:
	}
	b.Release(n, 10*time.Millisecond)
	require.NoError(t, <-done)
	assert.Equal(t, int64(50), b.Stats().InUse)
	assert.Equal(t, int64(50), b.Stats().WaitedBytes)
}

func TestBudgetNeverWaitsPastDeadline(t *testing.T) {
	b := New(10, time.Minute)
	_, err := b.Acquire(context.Background(), 10)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = b.Acquire(ctx, 1)
	var ex *ExhaustedError
	require.ErrorAs(t, err, &ex)
	assert.Less(t, time.Since(start), 5*time.Second)

	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	_, err = b.Acquire(cctx, 1)
	assert.True(t, errors.Is(err, context.Canceled), "cancelled callers get their own error, not 429: %v", err)
}

func TestRetryAfterFollowsHoldTime(t *testing.T) {
	b := New(100, 10*time.Millisecond)
	n, _ := b.Acquire(context.Background(), 100)
	b.Release(n, 4*time.Second) // charges are held about 4 s
	n, _ = b.Acquire(context.Background(), 100)
	defer b.Release(n, 0)
	_, err := b.Acquire(context.Background(), 50)
	var ex *ExhaustedError
	require.ErrorAs(t, err, &ex)
	// Half the budget must be released: about half the hold time.
	assert.InDelta(t, float64(2*time.Second), float64(ex.RetryAfter), float64(100*time.Millisecond))
}

func TestChargeReleasesEverything(t *testing.T) {
	b := New(1000, 10*time.Millisecond)
	c := b.NewCharge()
	require.NoError(t, c.Acquire(context.Background(), 300))
	require.NoError(t, c.Acquire(context.Background(), 200))
	assert.Equal(t, int64(500), c.Held())
	assert.Equal(t, int64(500), b.Stats().InUse)
	c.Release()
	c.Release()
	assert.Zero(t, b.Stats().InUse)
	assert.Zero(t, c.Held())

	var nilCharge *Charge
	require.NoError(t, nilCharge.Acquire(context.Background(), 5))
	nilCharge.Release()
	var nilBudget *Budget
	require.NoError(t, nilBudget.NewCharge().Acquire(context.Background(), 5))
}

func TestChargeReaderCountsAsItReads(t *testing.T) {
	b := New(1<<20, 10*time.Millisecond)
	c := b.NewCharge()
	data := bytes.Repeat([]byte("x"), 100_000)
	out, err := io.ReadAll(c.Reader(context.Background(), bytes.NewReader(data), 4096))
	require.NoError(t, err)
	assert.Equal(t, data, out)
	assert.GreaterOrEqual(t, c.Held(), int64(len(data)))
	c.Release()

	small := New(10_000, 10*time.Millisecond)
	other := small.NewCharge()
	require.NoError(t, other.Acquire(context.Background(), 5_000))
	sc := small.NewCharge()
	_, err = io.ReadAll(sc.Reader(context.Background(), bytes.NewReader(data), 4096))
	var ex *ExhaustedError
	require.ErrorAs(t, err, &ex, "a reader past what others leave fails instead of growing")
	sc.Release()
	other.Release()
	assert.Zero(t, small.Stats().InUse)
}

func TestBudgetConcurrentNeverExceedsCapacity(t *testing.T) {
	const capacity = 1000
	b := New(capacity, time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	peak := int64(0)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				c := b.NewCharge()
				if err := c.Acquire(context.Background(), int64(50+(i*j)%300)); err != nil {
					continue
				}
				mu.Lock()
				peak = max(peak, b.Stats().InUse)
				mu.Unlock()
				c.Release()
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, peak, int64(capacity))
	assert.Zero(t, b.Stats().InUse)
}

func TestChargeNeverHoldsMoreThanTheBudget(t *testing.T) {
	b := New(100, 10*time.Millisecond)
	c := b.NewCharge()
	require.NoError(t, c.Acquire(context.Background(), 70))
	require.NoError(t, c.Acquire(context.Background(), 70), "the rest of the budget, not a wait on itself")
	assert.Equal(t, int64(100), c.Held())
	require.NoError(t, c.Acquire(context.Background(), 500))
	assert.Equal(t, int64(100), b.Stats().InUse)
	c.Release()
	assert.Zero(t, b.Stats().InUse)
}

func TestChargeReturn(t *testing.T) {
	tests := []struct {
		name     string
		acquired int64
		returned int64
		wantHeld int64
	}{
		{name: "part of it", acquired: 100, returned: 30, wantHeld: 70},
		{name: "all of it", acquired: 100, returned: 100, wantHeld: 0},
		{name: "more than held gives back what is held", acquired: 100, returned: 500, wantHeld: 0},
		{name: "nothing", acquired: 100, returned: 0, wantHeld: 100},
		{name: "negative is nothing", acquired: 100, returned: -5, wantHeld: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(1000, 20*time.Millisecond)
			c := b.NewCharge()
			require.NoError(t, c.Acquire(context.Background(), tt.acquired))
			c.Return(tt.returned)
			assert.Equal(t, tt.wantHeld, c.Held())
			assert.Equal(t, tt.wantHeld, b.Stats().InUse)
			// What was returned is free for others at once.
			_, err := b.Acquire(context.Background(), 1000-tt.wantHeld)
			require.NoError(t, err)
			c.Release()
			assert.Equal(t, 1000-tt.wantHeld, b.Stats().InUse)
		})
	}
	var nilCharge *Charge
	nilCharge.Return(10) // a nil ledger admits everything
}

func TestChargeReaderPrepaid(t *testing.T) {
	tests := []struct {
		name     string
		data     int
		prepaid  int64
		step     int64
		wantHeld int64 // held after reading everything (prepaid included)
	}{
		{name: "prepaid covers the stream", data: 10_000, prepaid: 10_001, step: 4096, wantHeld: 10_001},
		{name: "stream longer than prepaid", data: 10_000, prepaid: 2_000, step: 4096, wantHeld: 2_000 + 2*4096},
		{name: "nothing prepaid", data: 10_000, prepaid: 0, step: 4096, wantHeld: 3 * 4096},
		{name: "negative is nothing", data: 100, prepaid: -50, step: 4096, wantHeld: 4096},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(1<<20, 10*time.Millisecond)
			c := b.NewCharge()
			require.NoError(t, c.Acquire(context.Background(), max(tt.prepaid, 0)))
			data := bytes.Repeat([]byte("x"), tt.data)
			out, err := io.ReadAll(c.Reader(context.Background(), bytes.NewReader(data), tt.step).Prepaid(tt.prepaid))
			require.NoError(t, err)
			assert.Equal(t, data, out)
			assert.Equal(t, tt.wantHeld, c.Held(), "prepaid bytes are not charged twice")
			c.Release()
			assert.Zero(t, b.Stats().InUse)
		})
	}
}
