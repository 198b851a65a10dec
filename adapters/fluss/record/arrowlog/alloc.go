package arrowlog

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// poolAllocator is an arrow-go memory.Allocator that recycles freed buffers
// by power-of-two size class, so that a Builder reaches a steady state in
// which building a batch allocates (almost) no new buffer memory: the arrays
// of one batch are released after serialisation and their buffers feed the
// builders of the next one.
//
// Buffers are handed out zeroed, like memory.GoAllocator's (arrow-go builders
// leave the value slots of null entries untouched, and Java writes zeros
// there). Each class keeps at most poolDepth buffers, which bounds what an
// idle Builder holds. The mutex is cheap insurance should arrow-go ever
// release a buffer from another goroutine; a Builder itself is not safe for
// concurrent use.
type poolAllocator struct {
	mu   sync.Mutex
	free [maxClass + 1][][]byte
}

const (
	minClass  = 6  // 64 bytes, arrow-go's allocation granularity
	maxClass  = 30 // 1 GiB; larger buffers are not pooled
	poolDepth = 16
)

var _ memory.Allocator = (*poolAllocator)(nil)

func sizeClass(size int) int {
	if size <= 1<<minClass {
		return minClass
	}
	return bits.Len(uint(size - 1))
}

// Allocate returns a zeroed slice of length size.
func (a *poolAllocator) Allocate(size int) []byte {
	if size <= 0 {
		return []byte{}
	}
	c := sizeClass(size)
	if c > maxClass {
		return make([]byte, size)
	}
	a.mu.Lock()
	if n := len(a.free[c]); n > 0 {
		b := a.free[c][n-1]
		a.free[c][n-1] = nil
		a.free[c] = a.free[c][:n-1]
		a.mu.Unlock()
		b = b[:size]
		clear(b)
		return b
	}
	a.mu.Unlock()
	return make([]byte, size, 1<<c)
}

// Reallocate resizes b to size, keeping its contents; bytes beyond the old
// length are zero.
func (a *poolAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free returns b to its class pool if it came from this allocator.
func (a *poolAllocator) Free(b []byte) {
	c := cap(b)
	if c < 1<<minClass || c&(c-1) != 0 {
		return
	}
	k := bits.Len(uint(c)) - 1
	if k > maxClass {
		return
	}
	a.mu.Lock()
	if len(a.free[k]) < poolDepth {
		a.free[k] = append(a.free[k], b[:c])
	}
	a.mu.Unlock()
}
