package writer

import (
	"context"
	"sync"
)

// bufferPool is a FIFO byte semaphore bounding the memory of queued records.
// A reservation is all-or-nothing per request, and waiters are served in
// arrival order, so a large request is not starved by a stream of small ones
// and two requests can never each hold half of what both need.
type bufferPool struct {
	mu       sync.Mutex
	capacity int64
	used     int64
	waiters  []*bufWaiter
}

type bufWaiter struct {
	n     int64
	ready chan struct{} // closed once the bytes are granted
}

func newBufferPool(capacity int64) *bufferPool { return &bufferPool{capacity: capacity} }

// acquire reserves n bytes, waiting in FIFO order until they are free or ctx
// ends. It fails at once when n exceeds the capacity.
func (p *bufferPool) acquire(ctx context.Context, n int64) error {
	p.mu.Lock()
	if n > p.capacity {
		p.mu.Unlock()
		return errTooLarge
	}
	if len(p.waiters) == 0 && p.used+n <= p.capacity {
		p.used += n
		p.mu.Unlock()
		return nil
	}
	w := &bufWaiter{n: n, ready: make(chan struct{})}
	p.waiters = append(p.waiters, w)
	p.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		defer p.mu.Unlock()
		select {
		case <-w.ready: // granted while we gave up: hand the bytes back
			p.used -= n
			p.grantLocked()
		default:
			for i, x := range p.waiters {
				if x == w {
					p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
					break
				}
			}
			p.grantLocked() // the head may have changed
		}
		return ctx.Err()
	}
}

// release returns n bytes and wakes waiters that now fit.
func (p *bufferPool) release(n int64) {
	if n == 0 {
		return
	}
	p.mu.Lock()
	p.used -= n
	p.grantLocked()
	p.mu.Unlock()
}

func (p *bufferPool) grantLocked() {
	for len(p.waiters) > 0 && p.used+p.waiters[0].n <= p.capacity {
		w := p.waiters[0]
		p.waiters = p.waiters[1:]
		p.used += w.n
		close(w.ready)
	}
}

// stats returns the reserved bytes and the number of waiting requests.
func (p *bufferPool) stats() (used int64, waiting int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.used, len(p.waiters)
}
