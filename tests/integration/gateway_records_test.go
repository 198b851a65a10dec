//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// peerScan runs the peer's changelog scan and returns its JSON lines.
func peerScan(t *testing.T, db, table string) []map[string]any {
	t.Helper()
	out := wrPeer(t, nil, "scan", db, table)
	var rows []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "line %s", sc.Text())
		rows = append(rows, m)
	}
	return rows
}

// TestGatewayRecordsPrimaryKey writes upserts, deletes and a partial update
// through the REST API, reads them back through the gateway's lookup route
// and through the independent peer client's lookup, value by value.
func TestGatewayRecordsPrimaryKey(t *testing.T) {
	g := startGateway(t)
	db := newDatabase(t, g, "gw_rec")
	records := createTable(t, g.base, db, "users", columns("id BIGINT", "name STRING", "score INTEGER", "amount DECIMAL(12,2)",
		"at TIMESTAMP_WITH_LOCAL_TIME_ZONE(3)", "day DATE", "blob BYTES", "ok BOOLEAN"),
		map[string]any{"primary_key": []any{"id"}, "distribution": map[string]any{"bucket_count": 4}})

	// 100 upserts (keys stay below 128: the pyfluss peer buckets larger int
	// keys differently from the Java client, see tests/peer/README.md).
	var entries []any
	for i := 1; i <= 100; i++ {
		entries = append(entries, map[string]any{"id": fmt.Sprintf("u%d", i), "upsert": map[string]any{
			"id": i, "name": fmt.Sprintf("user-%d", i), "score": i * 10, "amount": fmt.Sprintf("%d.25", i),
			"at": "2026-11-30T10:00:00.123Z", "day": "2026-11-30", "blob": "AQID", "ok": i%2 == 0,
		}})
	}
	status, body := g.do(http.MethodPost, records, map[string]any{"entries": entries})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.EqualValues(t, 100, body["success_count"], "%v", body)
	assert.EqualValues(t, 0, body["error_count"])
	assert.Equal(t, "u1", body["successes"].([]any)[0].(map[string]any)["id"])

	// Delete one, partially update another.
	status, body = g.do(http.MethodPost, records, map[string]any{"entries": []any{
		map[string]any{"id": "del", "delete": map[string]any{"id": 7}},
	}})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.EqualValues(t, 1, body["success_count"], "%v", body)
	status, body = g.do(http.MethodPost, records, map[string]any{
		"partial_update_columns": []any{"id", "score"},
		"entries":                []any{map[string]any{"id": "p", "upsert": map[string]any{"id": 8, "score": -1}}},
	})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.EqualValues(t, 1, body["success_count"], "%v", body)

	// Read back through the gateway.
	status, body = g.do(http.MethodPost, records+"/lookup", map[string]any{"keys": []any{
		map[string]any{"id": 5}, map[string]any{"id": 7}, map[string]any{"id": 8}, map[string]any{"id": 1000},
	}})
	require.Equal(t, http.StatusOK, status, "%v", body)
	res := body["results"].([]any)
	require.Len(t, res, 4)
	r0 := res[0].(map[string]any)
	require.Equal(t, true, r0["found"])
	assert.Equal(t, map[string]any{
		"id": "5", "name": "user-5", "score": float64(50), "amount": "5.25",
		"at": "2026-11-30T10:00:00.123Z", "day": "2026-11-30", "blob": "AQID", "ok": false,
	}, r0["row"])
	assert.Equal(t, false, res[1].(map[string]any)["found"], "deleted")
	r2 := res[2].(map[string]any)["row"].(map[string]any)
	assert.Equal(t, float64(-1), r2["score"], "partial update applied")
	assert.Equal(t, "user-8", r2["name"], "partial update kept the other columns")
	assert.Equal(t, false, res[3].(map[string]any)["found"])

	// And through the independent client.
	p := peerCmd(t, "lookup", db, "users", "--key", `{"id": 5}`)
	require.Equal(t, true, p["found"])
	row := p["row"].(map[string]any)
	assert.EqualValues(t, 5, row["id"])
	assert.Equal(t, "user-5", row["name"])
	assert.EqualValues(t, 50, row["score"])
	assert.Equal(t, "5.25", row["amount"])
	assert.Equal(t, "AQID", row["blob"])
	assert.Equal(t, false, peerCmd(t, "lookup", db, "users", "--key", `{"id": 7}`)["found"])
	assert.EqualValues(t, -1, peerCmd(t, "lookup", db, "users", "--key", `{"id": 8}`)["row"].(map[string]any)["score"])

	// Bad input: 400 naming the entry and column, nothing written.
	status, body = g.do(http.MethodPost, records, map[string]any{"entries": []any{
		map[string]any{"id": "good", "upsert": map[string]any{"id": 120, "name": "x"}},
		map[string]any{"id": "bad", "upsert": map[string]any{"id": 121, "score": 3000000000}},
	}})
	require.Equal(t, http.StatusBadRequest, status, "%v", body)
	msg := body["error"].(map[string]any)["message"].(string)
	assert.Contains(t, msg, "`bad`")
	assert.Contains(t, msg, "`score`")
	assert.Equal(t, false, peerCmd(t, "lookup", db, "users", "--key", `{"id": 120}`)["found"], "nothing of a rejected request is written")
}

// TestGatewayRecordsLogTable appends through the REST API and scans the rows
// back with the independent peer client.
func TestGatewayRecordsLogTable(t *testing.T) {
	g := startGateway(t)
	db := newDatabase(t, g, "gw_log")
	createTable(t, g.base, db, "events", columns("device STRING", "seq INTEGER", "v DOUBLE"),
		map[string]any{"distribution": map[string]any{"bucket_count": 3, "bucket_keys": []any{"device"}}})
	var entries []any
	for i := 0; i < 300; i++ {
		entries = append(entries, map[string]any{"id": fmt.Sprint(i), "append": map[string]any{
			"device": fmt.Sprintf("d%d", i%5), "seq": i, "v": float64(i) / 4,
		}})
	}
	status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/events/records", map[string]any{"entries": entries})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.EqualValues(t, 300, body["success_count"], "%v", body)

	rows := peerScan(t, db, "events")
	require.Len(t, rows, 300)
	seen := map[int]bool{}
	bucketOf := map[string]float64{}
	for _, r := range rows {
		assert.Equal(t, "+A", r["change_type"])
		v := r["row"].(map[string]any)
		seq := int(v["seq"].(float64))
		seen[seq] = true
		assert.Equal(t, fmt.Sprintf("d%d", seq%5), v["device"])
		assert.InDelta(t, float64(seq)/4, v["v"].(float64), 0)
		// Every row of a device lands in one bucket (hash of the bucket key).
		if b, ok := bucketOf[v["device"].(string)]; ok {
			assert.Equal(t, b, r["bucket"])
		}
		bucketOf[v["device"].(string)] = r["bucket"].(float64)
	}
	assert.Len(t, seen, 300)

	// upsert on a log table is a 400.
	status, body = g.do(http.MethodPost, "/databases/"+db+"/tables/events/records", map[string]any{"entries": []any{
		map[string]any{"id": "x", "upsert": map[string]any{"device": "d", "seq": 1, "v": 1}},
	}})
	assert.Equal(t, http.StatusBadRequest, status, "%v", body)
}
