// Package membudget is the gateway's data-plane memory budget: one
// byte-weighted semaphore that every request charges for the memory it is
// about to hold (its body by Content-Length before the body is read, the
// bytes a compressed body expands to as they are decoded, the decoded rows
// until their verdicts, the answer of a lookup as it is rendered) and
// releases when its answer has been written.
//
// What does not fit waits, first come first served, for at most the budget's
// bounded wait (never past the caller's deadline); then Acquire returns an
// *ExhaustedError carrying an estimate of when the bytes will be free, which
// the HTTP adapter answers as 429 resource_exhausted with Retry-After.
//
// The semaphore is golang.org/x/sync/semaphore.Weighted; this package adds
// the bounded wait, the estimate, the counters the metrics read and Charge,
// the per-request ledger that releases everything a request took at once.
package membudget

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// DefaultMaxWait is the bounded wait when New is given none.
const DefaultMaxWait = time.Second

// ewmaWeight is the weight of the newest hold time in the average.
const ewmaWeight = 0.2

// maxRetryAfter caps the Retry-After estimate.
const maxRetryAfter = 60 * time.Second

// Budget is a byte-weighted semaphore of a fixed capacity in bytes. It is
// safe for concurrent use. A nil *Budget admits everything.
type Budget struct {
	sem      *semaphore.Weighted
	capacity int64
	maxWait  time.Duration

	inUse   atomic.Int64
	waited  atomic.Int64
	refused atomic.Int64

	mu sync.Mutex
	// hold is the EWMA of how long charges are held, in nanoseconds; 0
	// until the first release.
	hold float64
}

// Stats is a snapshot of a budget's counters.
type Stats struct {
	// Capacity and InUse are in bytes.
	Capacity int64
	InUse    int64
	// WaitedBytes counts the bytes of acquisitions that could not be
	// granted at once and had to wait (granted later or refused).
	WaitedBytes int64
	// Refused counts acquisitions refused with an *ExhaustedError.
	Refused int64
}

// New returns a budget of capacity bytes (at least 1) whose acquisitions
// wait at most maxWait (<= 0: DefaultMaxWait).
func New(capacity int64, maxWait time.Duration) *Budget {
	capacity = max(capacity, 1)
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}
	return &Budget{sem: semaphore.NewWeighted(capacity), capacity: capacity, maxWait: maxWait}
}

// Capacity returns the budget's size in bytes.
func (b *Budget) Capacity() int64 {
	if b == nil {
		return 0
	}
	return b.capacity
}

// Stats returns the current counters.
func (b *Budget) Stats() Stats {
	if b == nil {
		return Stats{}
	}
	return Stats{Capacity: b.capacity, InUse: b.inUse.Load(), WaitedBytes: b.waited.Load(), Refused: b.refused.Load()}
}

// ExhaustedError is returned by Acquire when the bytes did not become free
// within the bounded wait.
type ExhaustedError struct {
	// Wanted is the number of bytes asked for (capped to the capacity);
	// InUse and Capacity describe the budget when the wait ended.
	Wanted, InUse, Capacity int64
	// RetryAfter estimates when the bytes will be free: the mean time a
	// charge is held times the share of the budget that must be released.
	RetryAfter time.Duration
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("memory budget exhausted: %d bytes wanted, %d of %d bytes in use", e.Wanted, e.InUse, e.Capacity)
}

// Acquire takes n bytes (n > Capacity takes the whole budget, so that it
// can still be granted once everything else is released), waiting at most
// the bounded wait and never past ctx's deadline. It returns the number of
// bytes taken, to hand to Release. It fails with *ExhaustedError when the
// wait ran out, or with ctx.Err() when ctx was cancelled.
func (b *Budget) Acquire(ctx context.Context, n int64) (int64, error) {
	if b == nil || n <= 0 {
		return 0, nil
	}
	n = min(n, b.capacity)
	if b.sem.TryAcquire(n) {
		b.inUse.Add(n)
		return n, nil
	}
	b.waited.Add(n)
	wait := b.maxWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl))
	}
	wctx, cancel := context.WithTimeout(ctx, max(wait, 0))
	defer cancel()
	if err := b.sem.Acquire(wctx, n); err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return 0, ctx.Err()
		}
		b.refused.Add(1)
		inUse := b.inUse.Load()
		return 0, &ExhaustedError{Wanted: n, InUse: inUse, Capacity: b.capacity, RetryAfter: b.retryAfter(n, inUse)}
	}
	b.inUse.Add(n)
	return n, nil
}

// TryAcquire takes n bytes (capped to the capacity, as Acquire) only if
// they are free now, without waiting; it returns the bytes taken (to hand
// to Release) and whether it took them. A refusal is not counted in
// Stats.Refused: the caller has a way to do without the bytes.
func (b *Budget) TryAcquire(n int64) (int64, bool) {
	if b == nil || n <= 0 {
		return 0, true
	}
	n = min(n, b.capacity)
	if !b.sem.TryAcquire(n) {
		return 0, false
	}
	b.inUse.Add(n)
	return n, true
}

// Release returns n bytes taken by Acquire or TryAcquire; held is how long they were
// held (for the Retry-After estimate; 0 if unknown).
func (b *Budget) Release(n int64, held time.Duration) {
	if b == nil || n <= 0 {
		return
	}
	if held > 0 {
		b.mu.Lock()
		if b.hold == 0 {
			b.hold = float64(held)
		} else {
			b.hold += ewmaWeight * (float64(held) - b.hold)
		}
		b.mu.Unlock()
	}
	b.inUse.Add(-n)
	b.sem.Release(n)
}

// retryAfter estimates when n bytes will be free with inUse held: charges
// are released about uniformly over the mean hold time, so freeing the
// missing share of the capacity takes that share of the hold time.
func (b *Budget) retryAfter(n, inUse int64) time.Duration {
	b.mu.Lock()
	hold := b.hold
	b.mu.Unlock()
	if hold == 0 {
		hold = float64(b.maxWait)
	}
	missing := max(n-(b.capacity-inUse), 1)
	d := time.Duration(hold * float64(missing) / float64(b.capacity))
	return min(max(d, time.Millisecond), maxRetryAfter)
}

// Charge is the ledger of one request: what it took from a budget, released
// at once by Release. It is safe for concurrent use.
type Charge struct {
	b *Budget

	mu      sync.Mutex
	n       int64
	started time.Time
}

// NewCharge starts an empty ledger on b (a nil b admits everything).
func (b *Budget) NewCharge() *Charge { return &Charge{b: b} }

// Acquire takes n more bytes for the request (see Budget.Acquire), but
// never more than the budget's capacity in all: what a request needs beyond
// the whole budget is let through without waiting, so that a request that
// runs alone always completes.
func (c *Charge) Acquire(ctx context.Context, n int64) error {
	if c == nil || c.b == nil || n <= 0 {
		return nil
	}
	// One request never holds more than the whole budget, so a request
	// larger than the budget still completes once it runs alone.
	c.mu.Lock()
	n = min(n, c.b.capacity-c.n)
	c.mu.Unlock()
	if n <= 0 {
		return nil
	}
	got, err := c.b.Acquire(ctx, n)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.n == 0 {
		c.started = time.Now()
	}
	c.n += got
	c.mu.Unlock()
	return nil
}

// Held returns the bytes the request holds.
func (c *Charge) Held() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Release returns everything the request holds; calling it again releases
// only what was acquired since.
func (c *Charge) Release() {
	if c == nil || c.b == nil {
		return
	}
	c.mu.Lock()
	n, started := c.n, c.started
	c.n = 0
	c.mu.Unlock()
	if n > 0 {
		c.b.Release(n, time.Since(started))
	}
}

// Return gives back n of the bytes the request holds (at most what it
// holds), e.g. what an estimate acquired beyond what was then used; the
// rest stays held until Release.
func (c *Charge) Return(n int64) {
	if c == nil || c.b == nil || n <= 0 {
		return
	}
	c.mu.Lock()
	n = min(n, c.n)
	c.n -= n
	started := c.started
	c.mu.Unlock()
	if n > 0 {
		c.b.Release(n, time.Since(started))
	}
}

// Reader counts the bytes read from r against the charge as they arrive,
// acquiring them in steps of at least step bytes (a streamed body whose size
// is not known in advance, or a decompressor's output). A read fails with
// the charge's error when the budget has no room within the bounded wait.
func (c *Charge) Reader(ctx context.Context, r interface{ Read([]byte) (int, error) }, step int64) *Reader {
	return &Reader{c: c, ctx: ctx, r: r, step: max(step, 1)}
}

// Reader is the io.Reader of Charge.Reader.
type Reader struct {
	c      *Charge
	ctx    context.Context
	r      interface{ Read([]byte) (int, error) }
	step   int64
	credit int64 // acquired bytes not yet read
}

// Prepaid counts n bytes the caller already acquired on the charge as
// acquired for the next reads (e.g. a buffer sized for the whole stream,
// charged before it was allocated), and returns r.
func (r *Reader) Prepaid(n int64) *Reader {
	r.credit += max(n, 0)
	return r
}

// Read implements io.Reader. It reads at most what is acquired and not yet
// read, acquiring one more step only when nothing is left, so what is
// charged follows what was read (at most one step ahead), not the size of
// the caller's buffer.
func (r *Reader) Read(p []byte) (int, error) {
	if r.credit <= 0 {
		if err := r.c.Acquire(r.ctx, r.step); err != nil {
			return 0, err
		}
		r.credit += r.step
	}
	if int64(len(p)) > r.credit {
		p = p[:r.credit]
	}
	n, err := r.r.Read(p)
	r.credit -= int64(n)
	return n, err
}
