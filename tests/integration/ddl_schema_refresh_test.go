//go:build integration

package integration

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestDDLElsewhereAddColumnRefreshesOnce: two gateway instances on one
// cluster; B has the table's definition cached. Four times, A adds a
// column; B's very next write naming the new column (no wait, no retry by
// the test) succeeds, the peer client reads the value where it landed, and
// B's very next lookup projecting the new column returns it. A column that
// exists in no version is still refused by B with 400 invalid_argument
// naming it (after the one refresh).
func TestDDLElsewhereAddColumnRefreshesOnce(t *testing.T) {
	a, b := startDDLGateway(t), startDDLGateway(t)
	db := gwName("ddl_addcol")
	ddlCreateDatabase(t, a, db)
	path := domain.TablePath{Database: db, Table: "t"}
	ddlCreatePKTable(t, a, path, 2, ddlColumn("id", domain.TypeInteger, false), ddlColumn("name", domain.TypeString, true))
	// Warm B's caches with the old definition.
	b.writeOne(path, map[string]any{"id": 0, "name": "before"})
	require.Equal(t, "before", b.lookupOne(path, map[string]any{"id": 0})["name"])

	records := fmt.Sprintf("/databases/%s/tables/%s/records", db, path.Table)
	for trial := 1; trial <= 4; trial++ {
		col := fmt.Sprintf("c%d", trial)
		ddlAddColumn(t, a, path, ddlColumn(col, domain.TypeBigInt, true))

		b.writeOne(path, map[string]any{"id": trial, "name": "after", col: trial * 100})
		status, body := b.do(http.MethodPost, records+"/lookup", map[string]any{
			"keys": []any{map[string]any{"id": trial}}, "columns": []any{"id", col},
		})
		require.Equal(t, http.StatusOK, status, "trial %d: %v", trial, body)
		res := body["results"].([]any)[0].(map[string]any)
		require.Equal(t, true, res["found"], "trial %d: %v", trial, body)
		assert.Equal(t, fmt.Sprint(trial*100), res["row"].(map[string]any)[col], "trial %d", trial)

		p := peerCmd(t, "lookup", db, path.Table, "--key", fmt.Sprintf(`{"id": %d}`, trial))
		require.Equal(t, true, p["found"], "%v", p)
		assert.EqualValues(t, trial*100, p["row"].(map[string]any)[col], "trial %d", trial)
	}

	status, body := b.do(http.MethodPost, records, map[string]any{"entries": []any{
		map[string]any{"id": "e1", "upsert": map[string]any{"id": 9, "no_such_col": 1}},
	}})
	require.Equal(t, http.StatusBadRequest, status, "%v", body)
	errBody := body["error"].(map[string]any)
	assert.Equal(t, "invalid_argument", errBody["code"], "%v", body)
	assert.Contains(t, errBody["message"], "no_such_col")
}
