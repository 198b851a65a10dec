//go:build integration

package integration

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayDatabaseLifecycle drives database DDL through the gateway's REST
// API against the real cluster and checks every step with the independent
// peer client (official pyfluss).
func TestGatewayDatabaseLifecycle(t *testing.T) {
	g := startGateway(t)
	db := fmt.Sprintf("gw_db_%d", time.Now().UnixNano()%1e9)

	status, body := g.do(http.MethodPost, "/databases", map[string]any{
		"database": db, "comment": "made by the gateway", "custom_properties": map[string]string{"team": "go"},
	})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	assert.Equal(t, map[string]any{"database": db}, body)

	// The independent client sees it.
	assert.Equal(t, true, peerCmd(t, "database-exists", db)["exists"])
	assert.Contains(t, peerCmd(t, "list-databases")["databases"], db)

	// Listing through the gateway, page by page with max_results=1, finds it.
	found, token, pages := false, "", 0
	for {
		path := "/databases?max_results=1"
		if token != "" {
			path += "&page_token=" + token
		}
		status, body = g.do(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, status, "%v", body)
		pages++
		for _, d := range body["databases"].([]any) {
			if d == db {
				found = true
			}
		}
		next, ok := body["next_page_token"].(string)
		if !ok || next == "" {
			break
		}
		token = next
		require.Less(t, pages, 1000)
	}
	assert.True(t, found)
	assert.GreaterOrEqual(t, pages, 2, "the default database `fluss` exists too, so max_results=1 pages")

	status, body = g.do(http.MethodGet, "/databases/"+db, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "made by the gateway", body["comment"])
	assert.Equal(t, map[string]any{"team": "go"}, body["custom_properties"])

	status, body = g.do(http.MethodPost, "/databases", map[string]any{"database": db})
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "database_already_exists", body["error"].(map[string]any)["code"])

	// A database with a table is not empty: 409 without cascade.
	createTable(t, g.base, db, "t", columns("id INTEGER"), nil)
	status, body = g.do(http.MethodDelete, "/databases/"+db, nil)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "database_not_empty", body["error"].(map[string]any)["code"])

	status, _ = g.do(http.MethodDelete, "/databases/"+db+"?cascade=true", nil)
	assert.Equal(t, http.StatusNoContent, status)
	assert.Equal(t, false, peerCmd(t, "database-exists", db)["exists"])

	status, body = g.do(http.MethodGet, "/databases/"+db, nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "database_not_found", body["error"].(map[string]any)["code"])
}

// TestGatewayUnreachableCluster: a cluster that cannot be reached answers 503
// `unavailable` within the request deadline, and the gateway keeps serving.
func TestGatewayUnreachableCluster(t *testing.T) {
	g := startGateway(t,
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS=127.0.0.1:1",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECT_TIMEOUT=2s",
	)
	start := time.Now()
	status, body := g.do(http.MethodGet, "/databases", nil)
	assert.Equal(t, http.StatusServiceUnavailable, status, "%v", body)
	assert.Equal(t, "unavailable", body["error"].(map[string]any)["code"])
	assert.Less(t, time.Since(start), 35*time.Second)
}

// TestGatewayWrongSASLPassword: the gateway starts with a wrong service
// secret; requests get 503 `unavailable` saying authentication failed.
func TestGatewayWrongSASLPassword(t *testing.T) {
	sasl := bootstrap(t, "FLUSS_SASL_BOOTSTRAP")
	g := startGateway(t,
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS="+sasl,
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__ACCOUNT=admin",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET=wrong-secret",
	)
	status, body := g.do(http.MethodGet, "/databases", nil)
	assert.Equal(t, http.StatusServiceUnavailable, status, "%v", body)
	e := body["error"].(map[string]any)
	assert.Equal(t, "unavailable", e["code"])
	assert.Contains(t, e["message"], "authentication")
	assert.NotContains(t, e["message"], "wrong-secret")
}
