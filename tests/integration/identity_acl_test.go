//go:build integration

package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// createKVTables creates database db and in it the kv tables (kvTable)
// named, through g with the auth header pair.
func (g *secureGateway) createKVTables(auth []string, db string, tables ...string) {
	g.t.Helper()
	status, body := g.call(http.MethodPost, "/v1/clusters/acl/databases", map[string]any{"database": db}, auth...)
	require.Equal(g.t, 201, status, "%v", body)
	for _, table := range tables {
		status, body = g.call(http.MethodPost, "/v1/clusters/acl/databases/"+db+"/tables", kvTable(table), auth...)
		require.Equal(g.t, 201, status, "%v", body)
	}
}

// kvTable is the definition of the primary-key tables of the ACL tests.
func kvTable(name string) map[string]any {
	return map[string]any{
		"table_name":   name,
		"columns":      columns("id INTEGER", "v STRING"),
		"primary_key":  []string{"id"},
		"distribution": map[string]any{"bucket_count": 1},
	}
}

func kvEntries(prefix string, ids ...int) map[string]any {
	var entries []any
	for _, id := range ids {
		entries = append(entries, map[string]any{"id": fmt.Sprintf("%s%d", prefix, id), "upsert": map[string]any{"id": id, "v": fmt.Sprintf("%s-%d", prefix, id)}})
	}
	return map[string]any{"entries": entries}
}

// javaLookups parses "key value" lines of the Java admin lookup.
func javaLookups(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok {
			got[k] = v
		}
	}
	return got
}

// TestServiceAccountGrantsApply runs the gateway in identity mode service
// against a Fluss 0.9.1 cluster with the authorizer on, its service account
// being alice, who holds READ and WRITE on table a, READ only on table b
// and nothing on table c. Whoever calls the gateway, Fluss authorizes alice:
// writes to a land (checked by the official Java client as the super user),
// writes to b are refused as a whole with 403 `unauthorized` and nothing
// lands, table c is refused already at its description (403, DESCRIBE), and
// the catalog shows what alice may see.
func TestServiceAccountGrantsApply(t *testing.T) {
	_, sasl := aclCluster(t)
	db := gwName("acl")

	// The administrator's gateway (super user) sets the stage.
	admin, ops := startACLGateway(t, sasl, "admin", "ops", nil)
	admin.createKVTables(ops, db, "a", "b", "c")
	runJavaAdmin(t, sasl, "grant", "alice", "READ", "table:"+db+".a")
	runJavaAdmin(t, sasl, "grant", "alice", "WRITE", "table:"+db+".a")
	runJavaAdmin(t, sasl, "grant", "alice", "READ", "table:"+db+".b")

	// The gateway under test: callers authenticate with tokens, Fluss sees
	// the service account alice.
	g, carol := startACLGateway(t, sasl, "alice", "carol", nil)
	tables := "/v1/clusters/acl/databases/" + db + "/tables/"

	// Grants reach the tablet server asynchronously (ZooKeeper): poll.
	var status int
	var last map[string]any
	require.Eventually(t, func() bool {
		status, last = g.call(http.MethodPost, tables+"a/records", kvEntries("a", 1, 2, 3), carol...)
		return status == 200 && last["success_count"] == float64(3)
	}, 60*time.Second, 500*time.Millisecond, "alice's writes to a: last answer %d %v", status, last)

	// Table b: READ only. The whole write is denied.
	status, body := g.call(http.MethodPost, tables+"b/records", kvEntries("b", 1, 2), carol...)
	assert.Equal(t, 403, status, "%v", body)
	errBody, _ := body["error"].(map[string]any)
	assert.Equal(t, "unauthorized", errBody["code"])
	msg, _ := errBody["message"].(string)
	assert.Contains(t, msg, "table `"+db+".b`")
	t.Logf("write to b: %d %s", status, msg)

	// Table c: no grant at all. Fluss 0.9.1 refuses GET_TABLE_INFO with
	// AUTHORIZATION_EXCEPTION (DESCRIBE), so the write is 403 before any
	// entry is decoded.
	status, body = g.call(http.MethodPost, tables+"c/records", kvEntries("c", 1), carol...)
	assert.Equal(t, 403, status, "%v", body)
	errBody, _ = body["error"].(map[string]any)
	assert.Equal(t, "unauthorized", errBody["code"])
	assert.Contains(t, errBody["message"], `table "`+db+`.c" denied by the Fluss cluster`)
	assert.Contains(t, errBody["message"], "DESCRIBE")
	t.Logf("write to c: %d %v", status, errBody["message"])

	// Checked independently, as the super user with the Java client.
	got := javaLookups(runJavaAdmin(t, sasl, "lookup", db, "a", "1", "2", "3"))
	assert.Equal(t, map[string]string{"1": "a-1", "2": "a-2", "3": "a-3"}, got)
	got = javaLookups(runJavaAdmin(t, sasl, "lookup", db, "b", "1", "2"))
	assert.Equal(t, map[string]string{"1": "null", "2": "null"}, got, "nothing landed in b")
	got = javaLookups(runJavaAdmin(t, sasl, "lookup", db, "c", "1"))
	assert.Equal(t, map[string]string{"1": "null"}, got, "nothing landed in c")

	// Reads: alice may read a and b.
	status, body = g.call(http.MethodPost, tables+"a/records/lookup", map[string]any{"keys": []any{map[string]any{"id": 2}}}, carol...)
	require.Equal(t, 200, status, "%v", body)
	res := body["results"].([]any)[0].(map[string]any)
	assert.Equal(t, true, res["found"])
	status, body = g.call(http.MethodPost, tables+"b/records/lookup", map[string]any{"keys": []any{map[string]any{"id": 1}}}, carol...)
	assert.Equal(t, 200, status, "%v", body)

	// The catalog as alice sees it: a and b, not c; no database at all
	// (list_databases is filtered by DESCRIBE on the database, which table
	// grants do not give).
	status, body = g.call(http.MethodGet, "/v1/clusters/acl/databases/"+db+"/tables", nil, carol...)
	require.Equal(t, 200, status, "%v", body)
	var names []string
	for _, tb := range body["tables"].([]any) {
		names = append(names, tb.(string))
	}
	assert.ElementsMatch(t, []string{"a", "b"}, names)
	status, body = g.call(http.MethodGet, "/v1/clusters/acl/databases", nil, carol...)
	require.Equal(t, 200, status, "%v", body)
	assert.Empty(t, body["databases"])
	status, _ = admin.call(http.MethodGet, "/v1/clusters/acl/databases/"+db+"/tables/c", nil, ops...)
	assert.Equal(t, 200, status, "the super user sees c")
	status, body = g.call(http.MethodGet, "/v1/clusters/acl/databases/"+db+"/tables/c", nil, carol...)
	assert.Equal(t, 403, status, "%v", body)
	status, _ = g.call(http.MethodGet, "/v1/clusters/acl/databases/"+db+"/tables/a", nil, carol...)
	assert.Equal(t, 200, status)

	// DDL needs grants alice does not have: 403 naming the operation and object.
	status, body = g.call(http.MethodPost, "/v1/clusters/acl/databases", map[string]any{"database": db + "_x"}, carol...)
	assert.Equal(t, 403, status, "%v", body)
	errBody, _ = body["error"].(map[string]any)
	assert.Equal(t, "unauthorized", errBody["code"])
	assert.Contains(t, errBody["message"], `database "`+db+`_x"`)
	t.Logf("create database as alice: %v", errBody["message"])
	status, body = g.call(http.MethodDelete, tables+"a", nil, carol...)
	assert.Equal(t, 403, status, "%v", body)

	// One audit record per write request, with the HTTP principal.
	audit := g.logs.Records(t, "audit")
	var seen []string
	for _, r := range audit {
		seen = append(seen, fmt.Sprintf("%v %v %v", r["principal"], r["table"], r["status"]))
	}
	assert.Contains(t, seen, fmt.Sprintf("carol %s.a 200", db))
	assert.Contains(t, seen, fmt.Sprintf("carol %s.b 403", db))
	assert.Contains(t, seen, fmt.Sprintf("carol %s.c 403", db))
}
