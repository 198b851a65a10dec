//go:build integration

package integration

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayPolicyOnTheACLCluster (issue 27): the gateway connects as the
// super user admin, so Fluss allows everything; the gateway's own policy
// lets carol write to table a only and run no drop. carol's write to b and
// her `?cascade=true` drop are refused by the gateway (403 naming its
// policy, an audit line with the query) and nothing lands or disappears
// (checked with the Java client as the super user). Page tokens of one
// database's listing are refused on another (400).
func TestGatewayPolicyOnTheACLCluster(t *testing.T) {
	_, sasl := aclCluster(t)
	db, other := gwName("pol"), gwName("pol2")
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(policy, []byte(`
rules:
  - principals: [ops]
    operations: ["*"]
    tables: ["*"]
  - principals: [carol]
    operations: [read, write]
    tables: ["`+db+`.a"]
  - principals: [carol]
    operations: [read]
    tables: ["`+db+`.*"]
`), 0o600))
	g := startConfigured(t, map[string]string{
		"FLUSS_GATEWAY__SECURITY__AUTHENTICATION":                   "token",
		"FLUSS_GATEWAY__SECURITY__TOKENS":                           "tok-ops-0123456789abcdef:ops,tok-carol-0123456789abcdef:carol",
		"FLUSS_GATEWAY__SECURITY__AUTHORIZATION__POLICY_FILE":       policy,
		"FLUSS_GATEWAY__CLUSTERS":                                   "acl",
		"FLUSS_GATEWAY__CLUSTER__ACL__BOOTSTRAP__SERVERS":           sasl,
		"FLUSS_GATEWAY__CLUSTER__ACL__CONNECTION__SERVICE__ACCOUNT": "admin",
		"FLUSS_GATEWAY__CLUSTER__ACL__CONNECTION__SERVICE__SECRET":  "admin-secret",
	})
	ops := []string{"Authorization", "Bearer tok-ops-0123456789abcdef"}
	carol := []string{"Authorization", "Bearer tok-carol-0123456789abcdef"}
	dbs := "/v1/clusters/acl/databases"
	for _, d := range []string{db, other} {
		status, body := g.call(http.MethodPost, dbs, map[string]any{"database": d}, ops...)
		require.Equal(t, 201, status, "%v", body)
		for _, table := range []string{"a", "b"} {
			status, body = g.call(http.MethodPost, dbs+"/"+d+"/tables", kvTable(table), ops...)
			require.Equal(t, 201, status, "%v", body)
		}
	}
	tables := dbs + "/" + db + "/tables/"

	status, body := g.call(http.MethodPost, tables+"a/records", kvEntries("a", 1, 2), carol...)
	require.Equal(t, 200, status, "%v", body)
	assert.Equal(t, float64(2), body["success_count"])

	status, body = g.call(http.MethodPost, tables+"b/records", kvEntries("b", 1), carol...)
	assert.Equal(t, 403, status, "%v", body)
	errBody, _ := body["error"].(map[string]any)
	assert.Equal(t, "unauthorized", errBody["code"])
	assert.Contains(t, errBody["message"], "authorization policy")

	status, body = g.call(http.MethodDelete, dbs+"/"+db+"?cascade=true", nil, carol...)
	assert.Equal(t, 403, status, "%v", body)
	status, body = g.call(http.MethodGet, dbs+"/"+db, nil, ops...)
	assert.Equal(t, 200, status, "the database is still there: %v", body)

	// Checked independently, as the super user with the Java client.
	got := javaLookups(runJavaAdmin(t, sasl, "lookup", db, "a", "1", "2"))
	assert.Equal(t, map[string]string{"1": "a-1", "2": "a-2"}, got)
	got = javaLookups(runJavaAdmin(t, sasl, "lookup", db, "b", "1"))
	assert.Equal(t, map[string]string{"1": "null"}, got, "nothing landed in b")

	var denied []string
	for _, r := range g.logs.Records(t, "audit") {
		if ev, _ := r["event"].(string); strings.Contains(ev, "denied") {
			denied = append(denied, ev+" "+r["principal"].(string)+" "+r["operation"].(string)+" "+r["query"].(string))
		}
	}
	assert.Contains(t, denied, "denied carol writeRecords ")
	assert.Contains(t, denied, "ddl_denied carol dropDatabase cascade=true")

	// Sealed page tokens: one listing's token continues it, not another's.
	status, body = g.call(http.MethodGet, dbs+"/"+db+"/tables?max_results=1", nil, ops...)
	require.Equal(t, 200, status, "%v", body)
	tok, _ := body["next_page_token"].(string)
	require.NotEmpty(t, tok)
	status, body = g.call(http.MethodGet, dbs+"/"+db+"/tables?max_results=1&page_token="+tok, nil, ops...)
	require.Equal(t, 200, status, "%v", body)
	assert.Equal(t, []any{"b"}, body["tables"])
	status, body = g.call(http.MethodGet, dbs+"/"+other+"/tables?max_results=1&page_token="+tok, nil, ops...)
	assert.Equal(t, 400, status, "%v", body)
	errBody, _ = body["error"].(map[string]any)
	assert.Equal(t, "invalid_argument", errBody["code"])

	for _, d := range []string{db, other} {
		status, _ = g.call(http.MethodDelete, dbs+"/"+d+"?cascade=true", nil, ops...)
		assert.Equal(t, 204, status)
	}
}
