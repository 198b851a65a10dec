// Package backoff is the one retry-wait policy of the gateway: exponential
// waits (doubling from a first wait up to a cap), optional jitter, and
// context-aware sleeping. Every retry loop of the gateway draws its waits
// from here: in the Fluss adapter the writer's resends, lookup retries,
// metadata rounds, SASL re-authentication, the metadata cache's catch-up and
// leader polls, and the scan adapter's ListOffsets rounds; in the
// application the Idempotency-Key claim poll and the scan long poll; in the
// REST adapter the listener's accept retries. It imports only the standard library, so that any
// layer may use it. The numbers (first wait, cap, jitter) stay each
// caller's; only the mechanism is shared.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy describes a sequence of waits: the attempt-th wait (attempt counted
// from 1) is Initial·2^(attempt−1), capped at Max, then spread by Jitter.
// The zero Policy waits 0.
type Policy struct {
	// Initial is the first wait (> 0 for any wait at all).
	Initial time.Duration
	// Max caps every wait before jitter; 0 means no cap.
	Max time.Duration
	// Jitter, in [0, 1], spreads each wait d uniformly over
	// [d·(1−Jitter), d·(1+Jitter)]; 0 means no jitter. Values outside
	// [0, 1] are clamped.
	Jitter float64
}

// Delay returns the wait before the attempt-th retry (attempt ≥ 1; smaller
// values count as 1). It is safe for concurrent use (the jitter draws from
// math/rand/v2's goroutine-safe source).
func (p Policy) Delay(attempt int) time.Duration {
	d := p.Initial
	if d <= 0 {
		return 0
	}
	for i := 1; i < attempt && (p.Max <= 0 || d < p.Max); i++ {
		if d >= 1<<61 {
			break // keeps d and d·(1+Jitter) clear of overflow
		}
		d *= 2
	}
	if p.Max > 0 {
		d = min(d, p.Max)
	}
	j := min(max(p.Jitter, 0), 1)
	if j == 0 {
		return d
	}
	spread := time.Duration(float64(d) * j)
	return d - spread + time.Duration(rand.Int64N(2*int64(spread)+1))
}

// Start returns a fresh sequence of the policy's waits.
func (p Policy) Start() *Sequence { return &Sequence{p: p} }

// Sequence hands out a policy's waits in order. It is not safe for
// concurrent use: each retry loop starts its own.
type Sequence struct {
	p Policy
	n int
}

// Next returns the next wait and advances the sequence.
func (s *Sequence) Next() time.Duration {
	s.n++
	return s.p.Delay(s.n)
}

// Wait sleeps the next wait. It returns false, at once, when ctx ends first.
func (s *Sequence) Wait(ctx context.Context) bool { return Sleep(ctx, s.Next()) }

// Sleep waits d. It returns false when ctx ends first (true for d ≤ 0 unless
// ctx has already ended).
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// SleepWithin is Sleep that declines, returning false at once, when ctx's
// deadline is d or less away: a wait that would outlive the caller's
// deadline is not worth starting.
func SleepWithin(ctx context.Context, d time.Duration) bool {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return false
	}
	return Sleep(ctx, d)
}
