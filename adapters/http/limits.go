// Request admission primitives: a concurrency budget with a bounded FIFO
// wait and a request/byte rate limit, both refusing with 429
// resource_exhausted and a computed Retry-After. They sit in the HTTP adapter,
// their only user (moved from package application, issue 17).

package http

import (
	"container/list"
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// defaultAdmissionWait bounds how long a request waits for a concurrency slot
// or a rate-limit token before it is refused with resource_exhausted.
const defaultAdmissionWait = time.Second

// ewmaWeight is the weight of the newest sample in the service-time average.
const ewmaWeight = 0.2

// concurrencyLimit is a counting semaphore with a bounded, first-come
// first-served wait. A request that cannot get a slot within the wait (or
// before its deadline) is refused with a KindResourceExhausted error whose
// RetryAfterMillis estimates when a slot will be free for it: the number of
// releases it would still need (its position in the queue) times the time
// between releases, which is the average service time of the budget (an
// EWMA of the time slots are held; before the first release, the age of the
// requests holding the slots) divided by the number of slots.
type concurrencyLimit struct {
	name     string
	capacity int
	maxWait  time.Duration
	now      func() time.Time

	mu      sync.Mutex
	inUse   int
	waiters list.List // of *slotWaiter, oldest first
	// holdSum is the sum of the acquisition times (UnixNano) of the held
	// slots, for their mean age.
	holdSum int64
	// service is the EWMA of how long slots are held, in nanoseconds; 0
	// until the first release.
	service float64
}

type slotWaiter struct {
	ready   chan struct{}
	granted bool
	start   int64 // acquisition time (UnixNano) once granted
}

// newConcurrencyLimit returns a limit of capacity concurrent holders named
// name (used in messages, e.g. "write"). maxWait <= 0 means
// defaultAdmissionWait.
func newConcurrencyLimit(name string, capacity int, maxWait time.Duration) *concurrencyLimit {
	if maxWait <= 0 {
		maxWait = defaultAdmissionWait
	}
	return &concurrencyLimit{name: name, capacity: max(1, capacity), maxWait: maxWait, now: time.Now}
}

// Capacity returns the number of slots.
func (l *concurrencyLimit) Capacity() int { return l.capacity }

// InUse returns the number of held slots and of waiting requests.
func (l *concurrencyLimit) InUse() (held, waiting int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inUse, l.waiters.Len()
}

// Acquire takes a slot, waiting at most the limit's bounded wait and never
// past ctx's deadline. The returned release must be called exactly once.
func (l *concurrencyLimit) Acquire(ctx context.Context) (release func(), err error) {
	l.mu.Lock()
	if l.inUse < l.capacity && l.waiters.Len() == 0 {
		start := l.takeLocked()
		l.mu.Unlock()
		return l.releaser(start), nil
	}
	w := &slotWaiter{ready: make(chan struct{})}
	el := l.waiters.PushBack(w)
	l.mu.Unlock()

	wait := l.maxWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl))
	}
	timer := time.NewTimer(max(wait, 0))
	defer timer.Stop()
	var cause error
	select {
	case <-w.ready:
		return l.releaser(w.start), nil
	case <-timer.C:
	case <-ctx.Done():
		cause = ctx.Err()
	}

	l.mu.Lock()
	if w.granted {
		// Granted while giving up: keep the slot rather than lose it.
		l.mu.Unlock()
		return l.releaser(w.start), nil
	}
	position := 1
	for e := l.waiters.Front(); e != nil && e != el; e = e.Next() {
		position++
	}
	l.waiters.Remove(el)
	retry := l.retryAfterLocked(position)
	held, waiting := l.inUse, l.waiters.Len()
	l.mu.Unlock()

	if cause == context.Canceled {
		return nil, cause
	}
	return nil, &domain.Error{
		Kind:             domain.KindResourceExhausted,
		Retryable:        true,
		RetryAfterMillis: retry.Milliseconds(),
		Message: fmt.Sprintf("too many concurrent %s requests (%d in progress, %d waiting); retry after %s",
			l.name, held, waiting, retryAfterText(retry)),
	}
}

// takeLocked counts a new holder and returns its acquisition time.
func (l *concurrencyLimit) takeLocked() int64 {
	start := l.now().UnixNano()
	l.inUse++
	l.holdSum += start
	return start
}

func (l *concurrencyLimit) releaser(start int64) func() {
	var once sync.Once
	return func() { once.Do(func() { l.release(start) }) }
}

func (l *concurrencyLimit) release(start int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now().UnixNano()
	held := float64(max(now-start, 1))
	if l.service == 0 {
		l.service = held
	} else {
		l.service += ewmaWeight * (held - l.service)
	}
	l.inUse--
	l.holdSum -= start
	if front := l.waiters.Front(); front != nil {
		// Hand the slot to the oldest waiter: it is counted from now.
		w := l.waiters.Remove(front).(*slotWaiter)
		w.granted, w.start = true, now
		l.inUse++
		l.holdSum += now
		close(w.ready)
	}
}

// retryAfterLocked estimates when position more releases will have
// happened.
func (l *concurrencyLimit) retryAfterLocked(position int) time.Duration {
	service := l.service
	if service == 0 && l.inUse > 0 {
		// No slot was released yet: the holders have been running for at
		// least their mean age.
		mean := l.holdSum / int64(l.inUse)
		service = float64(max(l.now().UnixNano()-mean, 1))
	}
	perRelease := service / float64(l.capacity)
	return time.Duration(math.Min(float64(position)*perRelease, float64(365*24*time.Hour)))
}

// rateLimit is an optional admission rate: requests per second and request
// bytes per second, each a token bucket (golang.org/x/time/rate) with one
// second of burst. A request whose tokens are not available within the
// bounded wait is refused with KindResourceExhausted and the exact delay
// after which they would be, and its reservation is cancelled.
type rateLimit struct {
	name     string
	requests *rate.Limiter // nil when not limited
	bytes    *rate.Limiter // nil when not limited
	maxWait  time.Duration
	now      func() time.Time
}

// newRateLimit limits requests per second (0: unlimited) and bytes per
// second (0: unlimited). maxBytes is the largest request, which the byte
// bucket's burst always admits eventually. maxWait <= 0 means
// defaultAdmissionWait.
func newRateLimit(name string, requestsPerSecond int, bytesPerSecond, maxBytes int64, maxWait time.Duration) *rateLimit {
	if maxWait <= 0 {
		maxWait = defaultAdmissionWait
	}
	r := &rateLimit{name: name, maxWait: maxWait, now: time.Now}
	if requestsPerSecond > 0 {
		r.requests = rate.NewLimiter(rate.Limit(requestsPerSecond), requestsPerSecond)
	}
	if bytesPerSecond > 0 {
		burst := int(min(max(bytesPerSecond, maxBytes), math.MaxInt32))
		r.bytes = rate.NewLimiter(rate.Limit(bytesPerSecond), burst)
	}
	return r
}

// reserveRequestAndBytes reserves at now one token of requests and n tokens
// of bytes (capped to its burst, so a body larger than the burst waits for a
// full bucket rather than forever); nil limiters are skipped. It returns the
// reservations (to cancel when the caller will not wait) and the longest
// delay among them.
func reserveRequestAndBytes(now time.Time, requests, bytes *rate.Limiter, n int) ([]*rate.Reservation, time.Duration) {
	var reservations []*rate.Reservation
	var delay time.Duration
	if requests != nil {
		res := requests.ReserveN(now, 1)
		reservations = append(reservations, res)
		delay = max(delay, res.DelayFrom(now))
	}
	if bytes != nil {
		res := bytes.ReserveN(now, min(max(n, 0), bytes.Burst()))
		reservations = append(reservations, res)
		delay = max(delay, res.DelayFrom(now))
	}
	return reservations, delay
}

// Admit takes one request token and n byte tokens, waiting for them when
// they are due within the bounded wait and ctx's deadline.
func (r *rateLimit) Admit(ctx context.Context, n int) error {
	if r == nil || (r.requests == nil && r.bytes == nil) {
		return nil
	}
	now := r.now()
	reservations, delay := reserveRequestAndBytes(now, r.requests, r.bytes, n)
	cancel := func() {
		for _, res := range reservations {
			res.CancelAt(now)
		}
	}
	if delay <= 0 {
		return nil
	}
	wait := r.maxWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, dl.Sub(now))
	}
	if delay > wait {
		cancel()
		return &domain.Error{
			Kind:             domain.KindResourceExhausted,
			Retryable:        true,
			RetryAfterMillis: int64((delay + time.Millisecond - 1) / time.Millisecond),
			Message:          fmt.Sprintf("%s rate limit reached; retry after %s", r.name, retryAfterText(delay)),
		}
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		cancel()
		return ctx.Err()
	}
}

// retryAfterText renders a Retry-After estimate as the whole seconds the
// header will carry.
func retryAfterText(d time.Duration) string {
	s := max(1, int64(math.Ceil(d.Seconds())))
	if s == 1 {
		return "1 second"
	}
	return fmt.Sprintf("%d seconds", s)
}
