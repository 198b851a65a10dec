//go:build integration

package integration

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScanNeedsRead (authorizer cluster): a scan runs as the Fluss principal
// of the connection; alice, with READ on table a and only DESCRIBE on table d,
// reads a's changelog and is refused d's with 403 `unauthorized`. Offsets are
// what Fluss's ListOffsets allows: on 0.9.1 it answers with DESCRIBE alone.
func TestScanNeedsRead(t *testing.T) {
	_, sasl := aclCluster(t)
	db := gwName("aclscan")
	admin, ops := startACLGateway(t, sasl, "admin", "ops", nil)
	admin.createKVTables(ops, db, "a", "d")
	tables := "/v1/clusters/acl/databases/" + db + "/tables/"
	for _, table := range []string{"a", "d"} {
		status, body := admin.call(http.MethodPost, tables+table+"/records", kvEntries(table, 1, 2), ops...)
		require.Equal(t, 200, status, "%v", body)
	}
	runJavaAdmin(t, sasl, "grant", "alice", "READ", "table:"+db+".a")
	runJavaAdmin(t, sasl, "grant", "alice", "DESCRIBE", "table:"+db+".d")

	g, carol := startACLGateway(t, sasl, "alice", "carol", nil)
	scan := map[string]any{"start": map[string]any{"position": "earliest"}}

	// Grants reach the tablet servers asynchronously: poll.
	var status int
	var last map[string]any
	require.Eventually(t, func() bool {
		status, last = g.call(http.MethodPost, tables+"a/records/scan", scan, carol...)
		return status == 200
	}, 60*time.Second, 500*time.Millisecond, "alice's scan of a: last answer %d %v", status, last)
	assert.Len(t, last["records"], 2, "%v", last)

	require.Eventually(t, func() bool {
		status, last = g.call(http.MethodGet, tables+"d", nil, carol...)
		return status == 200
	}, 60*time.Second, 500*time.Millisecond, "alice's DESCRIBE of d: %d %v", status, last)
	status, body := g.call(http.MethodPost, tables+"d/records/scan", scan, carol...)
	assert.Equal(t, 403, status, "%v", body)
	errBody, _ := body["error"].(map[string]any)
	assert.Equal(t, "unauthorized", errBody["code"], "%v", body)
	t.Logf("scan of d: %d %v", status, errBody["message"])
	status, body = g.call(http.MethodGet, tables+"d/offsets", nil, carol...)
	assert.Equal(t, 200, status, "ListOffsets needs no READ on 0.9.1: %v", body)
}
