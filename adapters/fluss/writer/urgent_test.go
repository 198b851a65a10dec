package writer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestUrgentSkipsLinger: with a long linger, an ordinary write waits for it
// and an urgent one (WriteBatch.Urgent, the Idempotency-Key ledger's) is
// sent at once.
func TestUrgentSkipsLinger(t *testing.T) {
	const linger = 400 * time.Millisecond
	// LingerAfterInFlight -1: every batch waits for its linger (the Java
	// client's rule), not only those behind a batch in flight.
	e := newEnv(t, Options{Linger: linger, LingerAfterInFlight: -1}, pkTable(10, 1))
	for _, tc := range []struct {
		urgent bool
		key    int64
	}{{false, 1}, {true, 2}} {
		start := time.Now()
		res, err := e.w.Write(ctxTimeout(t, 5*time.Second), &domain.WriteBatch{Table: pkPath, Urgent: tc.urgent,
			Entries: []domain.WriteEntry{upsert(tc.key, "n", tc.key)}})
		took := time.Since(start)
		require.NoError(t, err)
		require.True(t, res[0].OK(), "%+v", res[0])
		if tc.urgent {
			assert.Less(t, took, linger/2, "an urgent write does not wait for the linger")
		} else {
			assert.GreaterOrEqual(t, took, linger, "an ordinary write waits for the linger")
		}
	}
}
