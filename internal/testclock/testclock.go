// Package testclock is a settable clock for tests of code that reads the
// time through a Now function (rate limits, windows, leases): Now returns
// the set time until Advance moves it. For tests only.
package testclock

import (
	"sync"
	"time"
)

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock set to a fixed instant (2027-01-15T08:00:00Z).
func New() *Clock { return &Clock{t: time.Unix(1_800_000_000, 0)} }

// Now returns the set time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
