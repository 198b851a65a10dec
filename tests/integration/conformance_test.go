//go:build integration

package integration

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/tests/conformance"
)

// TestConformanceOnTheRealCluster runs the official-contract scenario
// (tests/conformance: every official operation in the official request
// shapes, every answer validated against the gateway's served OpenAPI
// document with kin-openapi) through the gateway against the real Fluss
// cluster, and checks the catalog and the written rows with the
// independent peer client (official pyfluss).
func TestConformanceOnTheRealCluster(t *testing.T) {
	g := startGateway(t)
	db := gwName("conformance")
	t.Cleanup(func() { g.do(http.MethodDelete, "/databases/"+db+"?cascade=true", nil) })
	base := strings.TrimSuffix(g.base, "/v1/clusters/default")
	res := conformance.Run(t, conformance.Target{
		Base:     base,
		Do:       http.DefaultClient.Do,
		Cluster:  "default",
		Database: db,
		Records:  true,
		Fluss:    true,
		// Fluss 1.0 alters table.log.ttl; 0.9.1 refuses it.
		LogTTLAlterable: fluss10(),
		After: func(t *testing.T, name string) {
			switch name {
			case "create database":
				assert.Equal(t, true, peerCmd(t, "database-exists", db)["exists"])
			case "create table":
				peer := peerCmd(t, "get-table", db, "orders")
				assert.Equal(t, []any{"id", "dt"}, peer["primary_keys"])
				assert.EqualValues(t, 2, peer["num_buckets"])
			case "describe altered table":
				assert.Len(t, peerCmd(t, "get-table", db, "orders")["columns"], 4, "the added column is in Fluss")
			case "write: upsert":
				p := peerCmd(t, "lookup", db, "orders", "--key", `{"id": 1, "dt": "2026-08-25"}`)
				require.Equal(t, true, p["found"], "%v", p)
				assert.Equal(t, "10.50", p["row"].(map[string]any)["amount"])
			case "write: partial update and delete":
				p := peerCmd(t, "lookup", db, "orders", "--key", `{"id": 1, "dt": "2026-08-25"}`)
				require.Equal(t, true, p["found"], "%v", p)
				row := p["row"].(map[string]any)
				assert.Equal(t, "updated", row["note"], "the targeted column is written")
				assert.Equal(t, "10.50", row["amount"], "the other columns keep their values")
				// A delete under targets clears the targeted non-key columns;
				// `amount` is not targeted and keeps the row alive.
				p = peerCmd(t, "lookup", db, "orders", "--key", `{"id": 2, "dt": "2026-08-25"}`)
				require.Equal(t, true, p["found"], "%v", p)
				row = p["row"].(map[string]any)
				assert.Nil(t, row["note"], "the partial delete cleared the targeted column")
				assert.Equal(t, "3.00", row["amount"])
			case "drop database":
				assert.Equal(t, false, peerCmd(t, "database-exists", db)["exists"])
			}
		},
	})
	t.Logf("conformance on Fluss: %d cases, %d passed, %d skipped, %d operations: %v",
		res.Cases, res.Passed, res.Skipped, len(res.Operations), res.Operations)
	assert.Equal(t, res.Cases, res.Passed)
	assert.Len(t, res.Operations, 16, "every official operation is exercised")
}
