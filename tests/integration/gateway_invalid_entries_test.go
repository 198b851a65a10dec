//go:build integration

package integration

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayInvalidEntries: the body (4 entries, 3 invalid: a bad
// decimal, an unknown column, a missing primary-key column). Without the
// extension header the 400 names all three; with
// `X-Fluss-Invalid-Entries: report` the three get invalid_argument/"no"
// verdicts and the valid one is written (checked with the peer client).
func TestGatewayInvalidEntries(t *testing.T) {
	g := startGateway(t, "FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE=0s")
	db := newDatabase(t, g, "gw_invalid")
	createTable(t, g.base, db, "t", columns("id BIGINT", "amount DECIMAL(10,2)"), map[string]any{"primary_key": []any{"id"}})
	req := map[string]any{"entries": []any{
		map[string]any{"id": "a", "upsert": map[string]any{"id": 1, "amount": "1.50"}},
		map[string]any{"id": "b", "upsert": map[string]any{"id": 2, "amount": "not-a-number"}},
		map[string]any{"id": "c", "upsert": map[string]any{"id": 3, "nope": 1}},
		map[string]any{"id": "d", "upsert": map[string]any{"amount": "2.00"}},
	}}
	url := g.base + "/databases/" + db + "/tables/t/records"

	status, body := httpJSON(t, http.MethodPost, url, req)
	require.Equal(t, http.StatusBadRequest, status, "%v", body)
	msg := body["error"].(map[string]any)["message"].(string)
	t.Logf("400: %s", msg)
	assert.True(t, strings.HasPrefix(msg, "3 of 4 entries are invalid"), msg)
	for _, want := range []string{"entry `b`: column `amount`", "entry `c`: column `nope`", "entry `d`: column `id`"} {
		assert.Contains(t, msg, want)
	}
	assert.Equal(t, false, peerCmd(t, "lookup", db, "t", "--key", `{"id":1}`)["found"], "nothing written")

	status, body = httpJSON(t, http.MethodPost, url, req, "X-Fluss-Invalid-Entries", "report")
	require.Equal(t, http.StatusOK, status, "%v", body)
	t.Logf("report: %v", body)
	assert.EqualValues(t, 1, body["success_count"])
	assert.EqualValues(t, 3, body["error_count"])
	f := failuresByID(body)
	for _, id := range []string{"b", "c", "d"} {
		require.Contains(t, f, id)
		assert.Equal(t, "invalid_argument", f[id]["error_code"])
		assert.Equal(t, "no", f[id]["applied"])
		assert.Contains(t, f[id]["message"], "entry `"+id+"`")
	}
	got := peerCmd(t, "lookup", db, "t", "--key", `{"id":1}`)
	require.Equal(t, true, got["found"], "%v", got)
	assert.Equal(t, "1.50", got["row"].(map[string]any)["amount"])
	for _, id := range []string{`{"id":2}`, `{"id":3}`} {
		assert.Equal(t, false, peerCmd(t, "lookup", db, "t", "--key", id)["found"])
	}
}

// TestGatewayEpochMillisString: an epoch-millis string for a TIMESTAMP_LTZ
// column is refused with a message saying timestamps take ISO-8601 text or
// a JSON number; the JSON number is written.
func TestGatewayEpochMillisString(t *testing.T) {
	g := startGateway(t, "FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE=0s")
	db := newDatabase(t, g, "gw_ltz")
	createTable(t, g.base, db, "t", columns("id BIGINT", "ts TIMESTAMP_WITH_LOCAL_TIME_ZONE(3)"), map[string]any{"primary_key": []any{"id"}})
	status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/t/records", map[string]any{"entries": []any{
		map[string]any{"id": "a", "upsert": map[string]any{"id": 1, "ts": "1764576000000"}}}})
	require.Equal(t, http.StatusBadRequest, status, "%v", body)
	msg := body["error"].(map[string]any)["message"].(string)
	t.Logf("%s", msg)
	assert.Contains(t, msg, "ISO-8601")
	assert.Contains(t, msg, "JSON number")
	status, body = g.do(http.MethodPost, "/databases/"+db+"/tables/t/records", map[string]any{"entries": []any{
		map[string]any{"id": "a", "upsert": map[string]any{"id": 1, "ts": 1764576000000}}}})
	require.Equal(t, http.StatusOK, status, "%v", body)
	assert.EqualValues(t, 1, body["success_count"], "%v", body)
	got := peerCmd(t, "lookup", db, "t", "--key", `{"id":1}`)
	require.Equal(t, true, got["found"], "%v", got)
	assert.Contains(t, got["row"].(map[string]any)["ts"], "2025-12-01T08:00:00")
}
