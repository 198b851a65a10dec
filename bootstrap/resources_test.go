package bootstrap

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
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

func TestReclaimerFreesAfterABurstOnly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	b := membudget.New(100, 10*time.Millisecond)
	r := newReclaimer(b, 50*time.Millisecond)
	r.start()
	ch := b.NewCharge()
	require.NoError(t, ch.Acquire(context.Background(), 10))
	time.Sleep(120 * time.Millisecond) // a small use is no burst
	ch.Release()
	time.Sleep(120 * time.Millisecond)
	require.NoError(t, ch.Acquire(context.Background(), 60))
	time.Sleep(40 * time.Millisecond)
	ch.Release()
	time.Sleep(200 * time.Millisecond)
	r.close()
	assert.Equal(t, 1, r.reclaims)
}
