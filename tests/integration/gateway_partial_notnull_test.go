//go:build integration

package integration

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestGatewayPartialUpdateNotNullColumn: Fluss refuses a partial update
// while any non-key column is NOT NULL, even when that column is a target
// (shown through our writer straight against the cluster); the gateway
// therefore answers such a request 400 invalid_argument up front, naming
// the column and quoting the Fluss rule, and writes nothing. Whole-row
// writes to the same table work.
func TestGatewayPartialUpdateNotNullColumn(t *testing.T) {
	db := wrDatabase(t)
	path := wrCreateTable(t, db, "pnn", [][2]string{{"id", "int NOT NULL"}, {"a", "string NOT NULL"}, {"b", "string"}},
		"--primary-key", "id", "--buckets", "1")

	// The Fluss rule itself: targeting the NOT NULL column does not help.
	e := wrNewWriter(t, writer.Options{})
	res := e.write(t, wrCtx(t, 60*time.Second), &domain.WriteBatch{Table: path, PartialUpdateColumns: []int{0, 1},
		Entries: []domain.WriteEntry{{Op: domain.OpUpsert, Row: []domain.Datum{{I64: 1}, {Bytes: []byte("x")}, {Null: true}}}}})
	require.Len(t, res, 1)
	assert.Equal(t, "invalid_target_column", res[0].Code, "%+v", res[0])

	g := startGateway(t)
	records := "/databases/" + db + "/tables/pnn/records"
	for _, cols := range [][]any{{"id", "a"}, {"id", "b"}, {"id", "a", "b"}} {
		status, body := g.do(http.MethodPost, records, map[string]any{
			"partial_update_columns": cols,
			"entries":                []any{map[string]any{"id": "p", "upsert": map[string]any{"id": 2, "a": "x", "b": "y"}}},
		})
		require.Equal(t, http.StatusBadRequest, status, "%v: %v", cols, body)
		e := body["error"].(map[string]any)
		assert.Equal(t, "invalid_argument", e["code"])
		assert.Contains(t, e["message"], "`a` is NOT NULL")
		assert.Contains(t, e["message"], "Partial Update requires all columns except primary key to be nullable")
	}
	assert.Equal(t, false, peerCmd(t, "lookup", db, "pnn", "--key", `{"id": 2}`)["found"], "nothing of a refused request is written")

	status, body := g.do(http.MethodPost, records, map[string]any{
		"entries": []any{map[string]any{"id": "w", "upsert": map[string]any{"id": 3, "a": "x"}}},
	})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.EqualValues(t, 1, body["success_count"], "%v", body)
	assert.Equal(t, true, peerCmd(t, "lookup", db, "pnn", "--key", `{"id": 3}`)["found"])
}
