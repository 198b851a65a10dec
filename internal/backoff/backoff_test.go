package backoff_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
)

func TestDelay(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		p       backoff.Policy
		attempt int
		want    time.Duration
	}{
		{"zero policy", backoff.Policy{}, 3, 0},
		{"first attempt", backoff.Policy{Initial: 50 * ms, Max: time.Second}, 1, 50 * ms},
		{"attempt below one counts as one", backoff.Policy{Initial: 50 * ms}, 0, 50 * ms},
		{"doubles", backoff.Policy{Initial: 50 * ms, Max: time.Second}, 3, 200 * ms},
		{"capped", backoff.Policy{Initial: 50 * ms, Max: time.Second}, 10, time.Second},
		{"cap below initial", backoff.Policy{Initial: 50 * ms, Max: 20 * ms}, 1, 20 * ms},
		{"no cap", backoff.Policy{Initial: 100 * ms}, 6, 3200 * ms},
		{"no overflow", backoff.Policy{Initial: time.Second}, 200, 0},
		{"huge attempt with cap", backoff.Policy{Initial: ms, Max: 5 * time.Second}, 1 << 30, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.p.Delay(tt.attempt)
			if tt.name == "no overflow" {
				// Doubling stops in [2^61, 2^62), so that even full jitter
				// (up to twice that) stays below 2^63.
				assert.GreaterOrEqual(t, d, time.Duration(1<<61))
				assert.Less(t, d, time.Duration(1<<62))
				for range 100 {
					assert.GreaterOrEqual(t, backoff.Policy{Initial: time.Second, Jitter: 1}.Delay(tt.attempt), time.Duration(0))
				}
				return
			}
			assert.Equal(t, tt.want, d)
		})
	}
}

func TestDelayJitter(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		p        backoff.Policy
		attempt  int
		lo, hi   time.Duration
		mustVary bool
	}{
		{"±20 %", backoff.Policy{Initial: 50 * ms, Max: time.Second, Jitter: 0.2}, 1, 40 * ms, 60 * ms, true},
		{"±20 % at the cap", backoff.Policy{Initial: 50 * ms, Max: time.Second, Jitter: 0.2}, 9, 800 * ms, 1200 * ms, true},
		{"full jitter", backoff.Policy{Initial: 100 * ms, Jitter: 1}, 1, 0, 200 * ms, true},
		{"jitter above one is clamped", backoff.Policy{Initial: 100 * ms, Jitter: 7}, 1, 0, 200 * ms, true},
		{"negative jitter is none", backoff.Policy{Initial: 100 * ms, Jitter: -1}, 1, 100 * ms, 100 * ms, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for range 200 {
				d := tt.p.Delay(tt.attempt)
				assert.GreaterOrEqual(t, d, tt.lo)
				assert.LessOrEqual(t, d, tt.hi)
				seen[d] = true
			}
			if tt.mustVary {
				assert.Greater(t, len(seen), 1, "jitter must spread the waits")
			} else {
				assert.Len(t, seen, 1)
			}
		})
	}
}

func TestSequence(t *testing.T) {
	s := backoff.Policy{Initial: 25 * time.Millisecond, Max: 200 * time.Millisecond}.Start()
	var got []time.Duration
	for range 6 {
		got = append(got, s.Next())
	}
	ms := time.Millisecond
	assert.Equal(t, []time.Duration{25 * ms, 50 * ms, 100 * ms, 200 * ms, 200 * ms, 200 * ms}, got)
}

func TestSleep(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	near, cancelNear := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelNear()
	tests := []struct {
		name   string
		ctx    context.Context
		d      time.Duration
		within bool
		want   bool
		maxDur time.Duration
	}{
		{"waits", context.Background(), 5 * time.Millisecond, false, true, time.Second},
		{"zero wait", context.Background(), 0, false, true, 50 * time.Millisecond},
		{"canceled", canceled, time.Hour, false, false, 50 * time.Millisecond},
		{"canceled zero wait", canceled, 0, false, false, 50 * time.Millisecond},
		{"within: deadline too near", near, time.Hour, true, false, 50 * time.Millisecond},
		{"within: no deadline", context.Background(), 5 * time.Millisecond, true, true, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			var ok bool
			if tt.within {
				ok = backoff.SleepWithin(tt.ctx, tt.d)
			} else {
				ok = backoff.Sleep(tt.ctx, tt.d)
			}
			assert.Equal(t, tt.want, ok)
			assert.Less(t, time.Since(start), tt.maxDur)
			if tt.want {
				assert.GreaterOrEqual(t, time.Since(start), tt.d)
			}
		})
	}
}

func TestSequenceWaitEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := backoff.Policy{Initial: time.Hour}.Start()
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	start := time.Now()
	assert.False(t, s.Wait(ctx))
	assert.Less(t, time.Since(start), 5*time.Second)
}
