package identity

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Defaults of the failed-login throttle of the password and token modes.
const (
	DefaultMaxFailedLogins   = 10
	DefaultFailedLoginWindow = time.Minute
	// DefaultAddressFailureFactor: an address's own budget is this many
	// times the budget of one (user, address) pair, so one user's typos do
	// not lock out everyone behind the same proxy.
	DefaultAddressFailureFactor = 10
	// loginDelayBase and maxLoginDelay shape the delay of a user name that
	// failed more than its budget from all addresses together: base,
	// doubled per further failure, at most max. The login is delayed, never
	// refused, so the right password still gets in.
	loginDelayBase = 50 * time.Millisecond
	maxLoginDelay  = 2 * time.Second
)

// Count-min sketch dimensions: 4 rows of 2^16 uint32 counters, two
// generations (1 MiB each). Whatever the number of distinct keys a flood
// brings, the memory stays fixed and no counter is ever evicted: a flood can
// only raise estimates (by about failures/width per counter), never lower
// them. Sized for about 100,000 failures per window with rare false
// refusals; a password failure costs the gateway a bcrypt comparison, so
// reaching that takes a flood hours of the gateway's CPU per window. Beyond
// it the throttle fails closed (more 429s), never open.
const (
	sketchDepth = 4
	sketchWidth = 1 << 16
)

// failureSketch counts failures per key in a sliding window of two
// generations: an estimate is the count of the current generation plus the
// previous one, and the generations rotate every window. Keys are hashed
// with a per-process random seed so a client cannot aim collisions.
type failureSketch struct {
	seeds [sketchDepth]maphash.Seed
	gens  [2][sketchDepth][sketchWidth]uint32
	cur   int
	// since is when the current generation started.
	since time.Time
}

func newFailureSketch(now time.Time) *failureSketch {
	s := &failureSketch{since: now}
	for i := range s.seeds {
		s.seeds[i] = maphash.MakeSeed()
	}
	return s
}

// rotate ages the generations so that a failure counts for between one and
// two windows.
func (s *failureSketch) rotate(now time.Time, window time.Duration) {
	switch elapsed := now.Sub(s.since); {
	case elapsed < window:
		return
	case elapsed < 2*window:
		s.cur ^= 1
		s.since = s.since.Add(window)
	default:
		s.gens = [2][sketchDepth][sketchWidth]uint32{}
		s.since = now
	}
	s.gens[s.cur] = [sketchDepth][sketchWidth]uint32{}
}

func (s *failureSketch) index(row int, key string) int {
	return int(maphash.String(s.seeds[row], key) % sketchWidth)
}

func (s *failureSketch) estimate(key string) uint32 {
	est := ^uint32(0)
	for row := range sketchDepth {
		i := s.index(row, key)
		est = min(est, s.gens[0][row][i]+s.gens[1][row][i])
	}
	return est
}

// add counts one failure for key (conservative update: only the counters
// at the current minimum grow, which keeps over-estimates low).
func (s *failureSketch) add(key string) {
	est := s.estimate(key)
	for row := range sketchDepth {
		i := s.index(row, key)
		c := &s.gens[s.cur][row][i]
		if s.gens[0][row][i]+s.gens[1][row][i] <= est && *c < ^uint32(0) {
			*c++
		}
	}
}

// loginThrottle limits failed logins with separate budgets, in a fixed
// amount of memory (failureSketch):
//
//   - per (user, address): max failures per window, then 429 with
//     Retry-After for that pair only: a guesser exhausts its own budget,
//     not the user's;
//   - per address (an IPv6 client by its /64): max×DefaultAddressFailureFactor
//     (or the configured per-address budget), then 429 for that address;
//   - per user name across all addresses: beyond max failures each login
//     of the name is delayed (loginDelayBase doubled per further failure,
//     at most maxLoginDelay) and then verified: a distributed guesser is
//     slowed, the right password still gets in.
//
// Token mode uses the address budget only (its tokens have no user name).
type loginThrottle struct {
	max     uint32
	perAddr uint32
	window  time.Duration
	now     func() time.Time
	sleep   func(ctx context.Context, d time.Duration) error

	mu     sync.Mutex
	sketch *failureSketch
}

func newLoginThrottle(max, perAddr int, window time.Duration) *loginThrottle {
	if max <= 0 || window <= 0 {
		return nil
	}
	if perAddr <= 0 {
		perAddr = max * DefaultAddressFailureFactor
	}
	t := &loginThrottle{max: uint32(max), perAddr: uint32(perAddr), window: window, now: time.Now, sleep: sleepCtx}
	t.sketch = newFailureSketch(t.now())
	return t
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// throttleAddr is the key of a client address: the address itself, or for
// IPv6 its /64 (one subscriber usually holds a whole /64).
func throttleAddr(remote string) string {
	ip, ok := sourceAddr(remote)
	if !ok {
		return remote
	}
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

func pairKey(user, addr string) string { return "p\x00" + addr + "\x00" + user }

// check refuses a login attempt from addr (a throttleAddr) for user ("" in
// token mode) while the pair's or the address's budget is spent, and
// otherwise returns how long to delay it for the user name's failures.
func (t *loginThrottle) check(addr, user string) (time.Duration, error) {
	if t == nil {
		return 0, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.sketch.rotate(now, t.window)
	retry := t.sketch.since.Add(2 * t.window).Sub(now) // when the current failures are forgotten
	switch {
	case t.sketch.estimate("a\x00"+addr) >= t.perAddr:
		return 0, t.refuse(retry, fmt.Sprintf("too many failed logins from this address (%d per %s)", t.perAddr, t.window))
	case user != "" && t.sketch.estimate(pairKey(user, addr)) >= t.max:
		return 0, t.refuse(retry, fmt.Sprintf("too many failed logins for this user name from this address (%d per %s)", t.max, t.window))
	}
	if user == "" {
		return 0, nil
	}
	over := int64(t.sketch.estimate("u\x00"+user)) - int64(t.max)
	if over < 0 {
		return 0, nil
	}
	return loginDelayBase << min(over, 6) /* 50ms·2^6 > 2s */, nil
}

func (t *loginThrottle) refuse(retry time.Duration, msg string) error {
	retry = max(retry, time.Second)
	return &domain.Error{
		Kind:             domain.KindResourceExhausted,
		Retryable:        true,
		RetryAfterMillis: retry.Milliseconds(),
		Message:          fmt.Sprintf("%s; retry after %s", msg, retry.Round(time.Second)),
	}
}

// delay sleeps for d (at most maxLoginDelay), or fails when ctx ends first.
func (t *loginThrottle) delay(ctx context.Context, d time.Duration) error {
	if t == nil || d <= 0 {
		return nil
	}
	if err := t.sleep(ctx, min(d, maxLoginDelay)); err != nil {
		kind := domain.KindTimeout
		if errors.Is(err, context.Canceled) {
			kind = domain.KindCancelled
		}
		return &domain.Error{Kind: kind, Message: "the request ended while its login was delayed after failed logins for this user name", Cause: err}
	}
	return nil
}

// failed records a failed attempt from addr for user ("" in token mode).
func (t *loginThrottle) failed(addr, user string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sketch.rotate(t.now(), t.window)
	t.sketch.add("a\x00" + addr)
	if user != "" {
		t.sketch.add(pairKey(user, addr))
		t.sketch.add("u\x00" + user)
	}
}
