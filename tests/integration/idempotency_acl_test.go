//go:build integration

package integration

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIdempotencyKeyLedgerPermissions (authorizer cluster): a principal that
// may not create the ledger gets a 403 naming the ledger table and the way
// out, while its writes without a key are unaffected; once an administrator's
// keyed write created the ledger and alice was granted READ and WRITE on it,
// alice's keyed writes work and replay.
func TestIdempotencyKeyLedgerPermissions(t *testing.T) {
	_, sasl := aclCluster(t)
	db := gwName("acl_idem")
	ledgerDB := gwName("acl_ledger")
	ledger := map[string]string{"FLUSS_GATEWAY__IDEMPOTENCY__DATABASE": ledgerDB}
	admin, ops := startACLGateway(t, sasl, "admin", "ops", ledger)
	t.Cleanup(func() {
		admin.call(http.MethodDelete, "/v1/clusters/acl/databases/"+db+"?cascade=true", nil, ops...)
		admin.call(http.MethodDelete, "/v1/clusters/acl/databases/"+ledgerDB+"?cascade=true", nil, ops...)
	})
	admin.createKVTables(ops, db, "a")
	runJavaAdmin(t, sasl, "grant", "alice", "READ", "table:"+db+".a")
	runJavaAdmin(t, sasl, "grant", "alice", "WRITE", "table:"+db+".a")

	g, carol := startACLGateway(t, sasl, "alice", "carol", ledger)
	records := "/v1/clusters/acl/databases/" + db + "/tables/a/records"
	require.Eventually(t, func() bool {
		status, _ := g.call(http.MethodPost, records, kvEntries("a", 1), carol...)
		return status == 200
	}, 60*time.Second, 500*time.Millisecond, "alice's grants on the table")

	// No ledger, and alice may not create it: 403 naming it.
	status, body := g.call(http.MethodPost, records, kvEntries("a", 2), append([]string{"Idempotency-Key", "k1"}, carol...)...)
	require.Equal(t, 403, status, "%v", body)
	msg := body["error"].(map[string]any)["message"].(string)
	assert.Contains(t, msg, "idempotency ledger table `"+ledgerDB+".idempotency_keys`")
	assert.Contains(t, msg, "create it ahead")
	t.Logf("keyed write without a ledger: %s", msg)

	// The administrator's keyed write creates the ledger; alice gets READ
	// and WRITE on it.
	status, body = admin.call(http.MethodPost, records, kvEntries("a", 3), append([]string{"Idempotency-Key", "k0"}, ops...)...)
	require.Equal(t, 200, status, "%v", body)
	runJavaAdmin(t, sasl, "grant", "alice", "READ", "table:"+ledgerDB+".idempotency_keys")
	runJavaAdmin(t, sasl, "grant", "alice", "WRITE", "table:"+ledgerDB+".idempotency_keys")
	require.Eventually(t, func() bool {
		status, body = g.call(http.MethodPost, records, kvEntries("a", 2), append([]string{"Idempotency-Key", "k1"}, carol...)...)
		return status == 200
	}, 60*time.Second, 500*time.Millisecond, "alice's keyed write once granted: last %d %v", status, body)
	raw, err := json.Marshal(kvEntries("a", 2))
	require.NoError(t, err)
	again := (&idemGateway{t: t, base: g.base}).mustPost(records, raw, append([]string{"Idempotency-Key", "k1"}, carol...)...)
	require.Equal(t, 200, again.status, "%s", again.body)
	assert.Equal(t, "true", again.replayed)
	assert.Equal(t, body, again.json(t), "the replay answers the recorded verdicts")
}
