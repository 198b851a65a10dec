package http

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestQuotaEvictsLeastRecentPrincipal: with room for two principals, a third
// evicts the least recently used one, which starts again with full buckets;
// the recently used one keeps its drained bucket.
func TestQuotaEvictsLeastRecentPrincipal(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	q := newQuotas(Quota{RequestsPerSecond: 1, MaxPrincipals: 2, Now: func() time.Time { return at }}, 0)
	assert.Zero(t, q.admit("a", 0))
	assert.Zero(t, q.admit("b", 0))
	assert.Positive(t, q.admit("a", 0), "a's bucket is empty")
	assert.Zero(t, q.admit("c", 0), "c evicts b, the least recently used")
	assert.Positive(t, q.admit("a", 0), "a was kept")
	assert.Zero(t, q.admit("b", 0), "b starts again with a full bucket")
}
