//go:build integration

package integration

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayInvalidPartitionValues: a partition value Fluss cannot name a
// partition after ("", "..", "a/b") is a 400 naming the entry or key and the
// column, answered at once, and nothing is written; no Java stack trace
// reaches the caller.
func TestGatewayInvalidPartitionValues(t *testing.T) {
	g := startGateway(t)
	db := newDatabase(t, g, "gw_pvals")
	records := createTable(t, g.base, db, "orders", columns("id BIGINT", "region STRING", "v INTEGER"),
		map[string]any{"primary_key": []any{"id", "region"}, "partitioned_by": []any{"region"}})

	for _, bad := range []string{"", "..", "a/b", "a$b"} {
		status, body := g.do(http.MethodPost, records, map[string]any{"entries": []any{
			map[string]any{"id": "ok", "upsert": map[string]any{"id": 1, "region": "eu", "v": 1}},
			map[string]any{"id": "bad", "upsert": map[string]any{"id": 2, "region": bad, "v": 2}},
		}})
		require.Equal(t, http.StatusBadRequest, status, "%q: %v", bad, body)
		msg := body["error"].(map[string]any)["message"].(string)
		assert.Contains(t, msg, "entry `bad`")
		assert.Contains(t, msg, "`region`")
		assert.NotContains(t, msg, "\tat ")

		start := time.Now()
		status, body = g.do(http.MethodPost, records+"/lookup", map[string]any{"keys": []any{
			map[string]any{"id": 1, "region": bad},
		}})
		require.Equal(t, http.StatusBadRequest, status, "%q: %v", bad, body)
		assert.Contains(t, body["error"].(map[string]any)["message"], "keys[0]")
		assert.Less(t, time.Since(start), 2*time.Second)
	}
	status, body := g.do(http.MethodGet, "/databases/"+db+"/tables/orders/partitions", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Empty(t, body["partitions"], "nothing was written, so no partition was created")
}

// TestGatewayNullPartitionValueInAppend: an append to a log table
// partitioned by (region, dt) with a null region in one entry is a 400
// naming that entry and `region` (was: 200 with that entry failed and the
// others written); nothing is written, no partition is created.
func TestGatewayNullPartitionValueInAppend(t *testing.T) {
	g := startGateway(t)
	db := newDatabase(t, g, "gw_pnull")
	records := createTable(t, g.base, db, "clicks", columns("region STRING", "dt STRING", "v INTEGER"),
		map[string]any{"partitioned_by": []any{"region", "dt"}})
	for _, bad := range []map[string]any{
		{"region": nil, "dt": "2026-12-01", "v": 2},
		{"dt": "2026-12-01", "v": 2},
		{"region": "", "dt": "2026-12-01", "v": 2},
	} {
		status, body := g.do(http.MethodPost, records, map[string]any{"entries": []any{
			map[string]any{"id": "ok", "append": map[string]any{"region": "eu", "dt": "2026-12-01", "v": 1}},
			map[string]any{"id": "bad", "append": bad},
		}})
		require.Equal(t, http.StatusBadRequest, status, "%v: %v", bad, body)
		e := body["error"].(map[string]any)
		assert.Equal(t, "invalid_argument", e["code"])
		assert.Contains(t, e["message"], "entry `bad`")
		assert.Contains(t, e["message"], "column `region`")
	}
	status, body := g.do(http.MethodGet, "/databases/"+db+"/tables/clicks/partitions", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Empty(t, body["partitions"], "nothing was written, so no partition was created")
}
