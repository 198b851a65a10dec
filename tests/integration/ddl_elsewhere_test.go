//go:build integration

package integration

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestDDLElsewhereRecreateThenDrop: three gateway instances on one
// cluster. Gateways A (writes) and C (lookups) have the table's definition
// cached; gateway B drops and re-creates the table (a new table id). A's
// very next write succeeds and lands in the new table (read back by the
// peer client), and C's very next lookup finds that row. When B then drops
// the table, A's next write and C's next lookup answer 404 table_not_found
// for the request, not per-entry verdicts.
//
// After each DDL of B the test waits replicaDeletion: Fluss deletes a
// dropped table's replicas asynchronously, bucket by bucket, and until a
// tablet server has deleted its replica it still accepts writes for the
// dropped table id, from any client (they are lost with the table). A's and
// C's metadata caches keep the old id far longer (meta.DefaultMaxAge), so
// the wait does not hide the stale definition under test.
func TestDDLElsewhereRecreateThenDrop(t *testing.T) {
	a, b, c := startDDLGateway(t), startDDLGateway(t), startDDLGateway(t)
	db := gwName("ddl_else")
	ddlCreateDatabase(t, a, db)
	path := domain.TablePath{Database: db, Table: "same"}
	cols := []domain.Column{ddlColumn("id", domain.TypeInteger, false), ddlColumn("v", domain.TypeString, true)}
	ddlCreatePKTable(t, a, path, 2, cols...)
	a.writeOne(path, map[string]any{"id": 1, "v": "old"})
	require.NotNil(t, a.lookupOne(path, map[string]any{"id": 1}))
	require.NotNil(t, c.lookupOne(path, map[string]any{"id": 1}))

	ddlDropTable(t, b, path)
	ddlCreatePKTable(t, b, path, 2, cols...)
	time.Sleep(replicaDeletion)

	records := fmt.Sprintf("/databases/%s/tables/%s/records", db, path.Table)
	status, body := a.do(http.MethodPost, records, map[string]any{"entries": []any{
		map[string]any{"id": "e1", "upsert": map[string]any{"id": 2, "v": "new"}},
		map[string]any{"id": "e2", "upsert": map[string]any{"id": 3, "v": "new"}},
	}})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.EqualValues(t, 2, body["success_count"], "the first write after the re-creation elsewhere succeeds: %v", body)
	for _, id := range []int{2, 3} {
		p := peerCmd(t, "lookup", db, path.Table, "--key", fmt.Sprintf(`{"id": %d}`, id))
		require.Equal(t, true, p["found"], "%v", p)
		assert.Equal(t, "new", p["row"].(map[string]any)["v"])
	}
	assert.Equal(t, false, peerCmd(t, "lookup", db, path.Table, "--key", `{"id": 1}`)["found"], "the old table's row is gone")
	row := c.lookupOne(path, map[string]any{"id": 2})
	require.NotNil(t, row, "the first lookup after the re-creation elsewhere reads the new table")
	assert.Equal(t, "new", row["v"])

	ddlDropTable(t, b, path)
	time.Sleep(replicaDeletion)
	status, body = a.do(http.MethodPost, records, map[string]any{"entries": []any{
		map[string]any{"id": "e1", "upsert": map[string]any{"id": 5, "v": "gone"}},
	}})
	require.Equal(t, http.StatusNotFound, status, "%v", body)
	assert.Equal(t, "table_not_found", body["error"].(map[string]any)["code"], "%v", body)
	status, body = c.do(http.MethodPost, records+"/lookup", map[string]any{"keys": []any{map[string]any{"id": 2}}})
	require.Equal(t, http.StatusNotFound, status, "%v", body)
	assert.Equal(t, "table_not_found", body["error"].(map[string]any)["code"], "%v", body)
}

// replicaDeletion is how long the test lets Fluss delete a dropped table's
// replicas on the tablet servers (well under a second on an idle cluster).
const replicaDeletion = 3 * time.Second
