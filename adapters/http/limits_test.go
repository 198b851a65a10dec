package http

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/testclock"
)

func exhausted(t *testing.T, err error) *domain.Error {
	t.Helper()
	de := domain.AsError(err)
	require.NotNil(t, de, "%v", err)
	require.Equal(t, domain.KindResourceExhausted, de.Kind)
	require.True(t, de.Retryable)
	return de
}

func TestConcurrencyLimitRetryAfterFromHolderAge(t *testing.T) {
	t.Parallel()
	clock := testclock.New()
	l := newConcurrencyLimit("write", 2, 20*time.Millisecond)
	l.now = clock.Now
	r1, err := l.Acquire(context.Background())
	require.NoError(t, err)
	r2, err := l.Acquire(context.Background())
	require.NoError(t, err)

	// No release yet: the holders have run 3s each, so a slot frees in
	// about 3s/2 slots.
	clock.Advance(3 * time.Second)
	_, err = l.Acquire(context.Background())
	de := exhausted(t, err)
	assert.Equal(t, int64(1500), de.RetryAfterMillis)
	assert.Contains(t, de.Message, "too many concurrent write requests (2 in progress, 0 waiting)")
	assert.Contains(t, de.Message, "retry after 2 seconds")

	// Releases feed the service-time EWMA: 3s, then 1s → 3 + 0.2×(1−3) = 2.6s.
	r1()
	r1() // idempotent
	again, err := l.Acquire(context.Background())
	require.NoError(t, err)
	clock.Advance(time.Second)
	again()
	_, err = l.Acquire(context.Background())
	require.NoError(t, err)
	clock.Advance(time.Hour) // the holders' age no longer matters once sampled
	_, err = l.Acquire(context.Background())
	de = exhausted(t, err)
	assert.Equal(t, int64(1300), de.RetryAfterMillis, "position 1 × 2.6s / 2 slots")
	r2()
	held, waiting := l.InUse()
	assert.Equal(t, 1, held)
	assert.Zero(t, waiting)
}

func TestConcurrencyLimitQueuePositionAndFIFO(t *testing.T) {
	t.Parallel()
	clock := testclock.New()
	l := newConcurrencyLimit("lookup", 1, 5*time.Second)
	l.now = clock.Now
	release, err := l.Acquire(context.Background())
	require.NoError(t, err)
	clock.Advance(2 * time.Second)

	// A waits without a deadline of its own; B queues behind it with a
	// short deadline, so B gives up at position 2.
	granted := make(chan func(), 1)
	go func() {
		r, err := l.Acquire(context.Background())
		if err == nil {
			granted <- r
		}
	}()
	require.Eventually(t, func() bool { _, w := l.InUse(); return w == 1 }, time.Second, time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err = l.Acquire(ctx)
	de := exhausted(t, err)
	assert.Equal(t, int64(4000), de.RetryAfterMillis, "two releases of a 2s holder")
	assert.Contains(t, de.Message, "(1 in progress, 1 waiting)")

	// The release hands the slot to A.
	release()
	select {
	case r := <-granted:
		held, waiting := l.InUse()
		assert.Equal(t, 1, held)
		assert.Zero(t, waiting)
		r()
	case <-time.After(time.Second):
		t.Fatal("the waiter was not granted the released slot")
	}
	held, _ := l.InUse()
	assert.Zero(t, held)
	assert.Zero(t, l.holdSum, "acquisition times are balanced")
}

func TestConcurrencyLimitCancelledWaiter(t *testing.T) {
	t.Parallel()
	l := newConcurrencyLimit("metadata", 1, time.Second)
	release, err := l.Acquire(context.Background())
	require.NoError(t, err)
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(10 * time.Millisecond)
		cancel()
	}()
	_, err = l.Acquire(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	_, waiting := l.InUse()
	assert.Zero(t, waiting)
}

func TestRateLimitRetryAfterAndCancel(t *testing.T) {
	t.Parallel()
	clock := testclock.New()
	r := newRateLimit("write", 1, 0, 0, 10*time.Millisecond)
	r.now = clock.Now
	require.NoError(t, r.Admit(context.Background(), 100))
	de := exhausted(t, r.Admit(context.Background(), 100))
	assert.Equal(t, int64(1000), de.RetryAfterMillis)
	assert.Contains(t, de.Message, "write rate limit reached")

	clock.Advance(time.Second)
	require.NoError(t, r.Admit(context.Background(), 100), "the refused request's reservation was cancelled")

	// Bytes: the burst is one second of bytes or one whole body, whichever
	// is larger.
	b := newRateLimit("write", 0, 1000, 4000, 10*time.Millisecond)
	b.now = clock.Now
	require.NoError(t, b.Admit(context.Background(), 4000))
	de = exhausted(t, b.Admit(context.Background(), 500))
	assert.Equal(t, int64(500), de.RetryAfterMillis)
	clock.Advance(250 * time.Millisecond)
	de = exhausted(t, b.Admit(context.Background(), 500))
	assert.Equal(t, int64(250), de.RetryAfterMillis, "the exact remaining delay")
	var nilLimit *rateLimit
	assert.NoError(t, nilLimit.Admit(context.Background(), 1))
}

func TestRateLimitWaitsShortDelays(t *testing.T) {
	t.Parallel()
	r := newRateLimit("write", 20, 0, 0, time.Second)
	for i := 0; i < 20; i++ {
		require.NoError(t, r.Admit(context.Background(), 1))
	}
	start := time.Now()
	require.NoError(t, r.Admit(context.Background(), 1))
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond, "waited for the next token (50ms)")

	// Never past the request's deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_ = exhausted(t, r.Admit(ctx, 1))
}
