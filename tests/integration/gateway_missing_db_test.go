//go:build integration

package integration

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayWriteToMissingDatabase: the official contract answers a write
// to an unknown table with 404 table_not_found (POST records lists no
// database_not_found); when the table's database is the missing part, the
// message says so.
func TestGatewayWriteToMissingDatabase(t *testing.T) {
	g := startGateway(t, "FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE=0s")
	db := gwName("gw_nodb")
	status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/t/records", map[string]any{"entries": []any{
		map[string]any{"id": "a", "upsert": map[string]any{"id": 1}}}})
	require.Equal(t, http.StatusNotFound, status, "%v", body)
	e := body["error"].(map[string]any)
	t.Logf("%v", e)
	assert.Equal(t, "table_not_found", e["code"])
	assert.Contains(t, e["message"], "database `"+db+"` does not exist")
}
