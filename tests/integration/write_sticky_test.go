//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStickyKeylessLogSpread appends 40,000 key-less rows through the REST
// API into a 4-bucket log table without bucket keys, in sequential requests
// of 500, the sender keeping up. Each request starts a new batch, which moves
// the sticky bucket (Java StickyBucketAssigner#onNewBatch), so every bucket
// gets rows and none gets more than 60 % of them (before: one bucket took
// all). Per-bucket end offsets come from the peer client, which then scans
// every row back.
func TestStickyKeylessLogSpread(t *testing.T) {
	g := startGateway(t)
	db := newDatabase(t, g, "sticky")
	records := createTable(t, g.base, db, "events", columns("seq BIGINT", "device STRING", "v DOUBLE"),
		map[string]any{"distribution": map[string]any{"bucket_count": 4}})

	const total, perReq = 40_000, 500
	for r := 0; r < total/perReq; r++ {
		entries := make([]any, 0, perReq)
		for i := r * perReq; i < (r+1)*perReq; i++ {
			entries = append(entries, map[string]any{"id": fmt.Sprint(i), "append": map[string]any{
				"seq": i, "device": fmt.Sprintf("d%d", i%7), "v": float64(i) / 8,
			}})
		}
		status, body := g.do(http.MethodPost, records, map[string]any{"entries": entries})
		require.Equal(t, http.StatusOK, status, "request %d: %v", r, body)
		require.EqualValues(t, perReq, body["success_count"], "request %d: %v", r, body)
	}

	var off struct {
		Buckets []struct{ Bucket, Earliest, Latest int64 } `json:"buckets"`
	}
	require.NoError(t, json.Unmarshal(wrPeer(t, nil, "offsets", db, "events"), &off))
	require.Len(t, off.Buckets, 4)
	perBucket := map[int64]int64{}
	sum := int64(0)
	for _, b := range off.Buckets {
		n := b.Latest - b.Earliest
		perBucket[b.Bucket] = n
		sum += n
		assert.Positive(t, n, "bucket %d has rows", b.Bucket)
		assert.LessOrEqual(t, n, int64(total*6/10), "bucket %d holds at most 60 %% of the rows", b.Bucket)
	}
	assert.EqualValues(t, total, sum, "end offsets add up to the rows written")
	t.Logf("rows per bucket (end offsets): %v", perBucket)

	rows := peerScan(t, db, "events")
	require.Len(t, rows, total)
	seen := make(map[int64]bool, total)
	for _, r := range rows {
		seq := int64(r["row"].(map[string]any)["seq"].(float64))
		seen[seq] = true
	}
	assert.Len(t, seen, total, "each row once")
}
