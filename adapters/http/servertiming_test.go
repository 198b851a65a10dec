package http

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestServerTiming: a write's Server-Timing value carries the delivery, the
// handler and every phase of the writer's timeline in milliseconds, and the
// last batch's counts as a desc.
func TestServerTiming(t *testing.T) {
	for _, tc := range []struct {
		name string
		tl   domain.WriteTimeline
		want string
	}{
		{"nothing reached", domain.WriteTimeline{},
			`delivery;dur=1.500, handler;dur=2.000, w-encode;dur=0.000, w-queue;dur=0.000, w-slot;dur=0.000, w-build;dur=0.000, ` +
				`w-fluss;dur=0.000, w-resolve;dur=0.000, w-batch;desc="batches=0 rows=0 inflight=0 attempts=0"`},
		{"every phase", domain.WriteTimeline{Encode: 100 * time.Microsecond, Queue: 3 * time.Millisecond, Slot: time.Millisecond,
			Build: 250 * time.Microsecond, Backend: 12345 * time.Microsecond, Resolve: 50 * time.Microsecond,
			Batches: 4, Attempts: 2, BatchRows: 900, InFlight: 3},
			`delivery;dur=1.500, handler;dur=2.000, w-encode;dur=0.100, w-queue;dur=3.000, w-slot;dur=1.000, w-build;dur=0.250, ` +
				`w-fluss;dur=12.345, w-resolve;dur=0.050, w-batch;desc="batches=4 rows=900 inflight=3 attempts=2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, serverTiming(1500*time.Microsecond, 2*time.Millisecond, &tc.tl))
		})
	}
}
