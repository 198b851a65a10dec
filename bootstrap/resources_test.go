package bootstrap

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDerivedMemoryBudget(t *testing.T) {
	tests := []struct {
		name  string
		limit int64
		want  int64
	}{
		{"no limit", math.MaxInt64, 64 << 20},
		{"unknown", 0, 64 << 20},
		{"the chart's 512Mi at 90%", 460 << 20, 115 << 20},
		{"small limits keep 16 MiB", 32 << 20, 16 << 20},
		{"large limits stop at 1 GiB", 64 << 30, 1 << 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, derivedMemoryBudget(tt.limit))
		})
	}
}

func TestDerivedMaxConnections(t *testing.T) {
	tests := []struct {
		soft uint64
		want int
	}{
		{0, 0},
		{1024, 768},
		{65536, 49152},
		{300, 44},
		{100, 16},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, derivedMaxConnections(tt.soft), "soft limit %d", tt.soft)
	}
}
