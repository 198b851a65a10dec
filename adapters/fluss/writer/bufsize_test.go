package writer

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// getBufFor hands out an empty buffer with room for at least n bytes, from
// the pool when a pooled one is large enough.
func TestGetBufFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		n    int
	}{
		{"header only", 28},
		{"within the pool's first size", 8 << 10},
		{"a 962-row batch", 100 << 10},
		{"a 2 MiB batch", 2 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := getBufFor(tc.n)
			assert.Empty(t, b)
			assert.GreaterOrEqual(t, cap(b), tc.n)
			putBuf(b)
		})
	}
}
