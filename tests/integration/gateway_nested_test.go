//go:build integration

package integration

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayNestedTypesRoundTrip writes rows with ARRAY, MAP and ROW columns
// (and every scalar type) into a primary-key table and a log table through
// the REST API, and reads the primary-key rows back through the lookup route:
// the JSON that comes back is the JSON that went in. The independent peer
// client checks the primary-key row's scalar columns, and the log table's
// rows, nested columns included.
func TestGatewayNestedTypesRoundTrip(t *testing.T) {
	g := startGateway(t)
	db := newDatabase(t, g, "gw_nested")
	cols := allTypeColumns()
	createTable(t, g.base, db, "pk", cols, map[string]any{"primary_key": []any{"id"}, "distribution": map[string]any{"bucket_count": 2}})
	logCols := append([]any{}, cols...)
	createTable(t, g.base, db, "log", logCols, map[string]any{"distribution": map[string]any{"bucket_count": 2}})

	full := map[string]any{
		"id": "1", "c_bool": true, "c_tiny": float64(-8), "c_small": float64(300), "c_int": float64(-70000),
		"c_float": 1.5, "c_double": -2.25e-3, "c_char": "abc", "c_string": "héllo ✓",
		"c_dec": "-1234.50", "c_bigdec": "1234567890123456789012345678.0123456789",
		"c_date": "2026-11-30", "c_time": "23:59:58.123", "c_ts": "2026-11-30T10:11:12.123456",
		"c_ltz": "2026-11-30T10:11:12.123Z", "c_bytes": "AAEC/w==", "c_bin": "3q2+7w==",
		"c_arr": []any{float64(1), nil, float64(3)},
		"c_map": []any{map[string]any{"key": "a", "value": 1.5}, map[string]any{"key": "b", "value": nil}},
		"c_row": map[string]any{"city": "Paris", "zip": "75001"},
	}
	sparse := map[string]any{"id": "2"}
	for k := range full {
		if k != "id" {
			sparse[k] = nil
		}
	}
	nonFinite := map[string]any{"id": "3", "c_float": "NaN", "c_double": "-Infinity", "c_arr": []any{}, "c_map": []any{},
		"c_row": map[string]any{"city": nil, "zip": nil}}
	entries := []any{
		map[string]any{"id": "full", "upsert": full},
		map[string]any{"id": "sparse", "upsert": sparse},
		map[string]any{"id": "nonfinite", "upsert": nonFinite},
	}
	status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/pk/records", map[string]any{"entries": entries})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.EqualValues(t, 3, body["success_count"], "%v", body)

	status, body = g.do(http.MethodPost, "/databases/"+db+"/tables/pk/records/lookup", map[string]any{
		"keys": []any{map[string]any{"id": 1}, map[string]any{"id": 2}, map[string]any{"id": 3}},
	})
	require.Equal(t, http.StatusOK, status, "%v", body)
	res := body["results"].([]any)
	require.Len(t, res, 3)
	assert.Equal(t, full, res[0].(map[string]any)["row"])
	assert.Equal(t, sparse, res[1].(map[string]any)["row"])
	got3 := res[2].(map[string]any)["row"].(map[string]any)
	assert.Equal(t, "NaN", got3["c_float"])
	assert.Equal(t, "-Infinity", got3["c_double"])
	assert.Equal(t, []any{}, got3["c_arr"])
	assert.Equal(t, map[string]any{"city": nil, "zip": nil}, got3["c_row"])

	// The independent client reads the same row's scalar columns.
	p := peerCmd(t, "lookup", db, "pk", "--key", `{"id": 1}`)
	require.Equal(t, true, p["found"], "%v", p)
	row := p["row"].(map[string]any)
	assert.Equal(t, "héllo ✓", row["c_string"])
	assert.Equal(t, "-1234.50", row["c_dec"])
	assert.Equal(t, "AAEC/w==", row["c_bytes"])
	assert.EqualValues(t, -70000, row["c_int"])

	// Appends of the same rows into a log table are accepted and scanned back.
	for _, e := range entries {
		m := e.(map[string]any)
		m["append"] = m["upsert"]
		delete(m, "upsert")
	}
	status, body = g.do(http.MethodPost, "/databases/"+db+"/tables/log/records", map[string]any{"entries": entries})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.EqualValues(t, 3, body["success_count"], "%v", body)
	rows := peerScan(t, db, "log")
	require.Len(t, rows, 3)
	byID := map[float64]map[string]any{}
	for _, r := range rows {
		v := r["row"].(map[string]any)
		byID[v["id"].(float64)] = v
	}
	assert.Equal(t, "héllo ✓", byID[1]["c_string"])
	assert.Equal(t, "1234567890123456789012345678.0123456789", byID[1]["c_bigdec"])
	// The peer renders ARRAY as a list, MAP as [key, value] pairs, ROW as an object.
	assert.Equal(t, []any{float64(1), nil, float64(3)}, byID[1]["c_arr"])
	assert.Equal(t, []any{[]any{"a", 1.5}, []any{"b", nil}}, byID[1]["c_map"])
	assert.Equal(t, map[string]any{"city": "Paris", "zip": "75001"}, byID[1]["c_row"])
	assert.Equal(t, []any{}, byID[3]["c_arr"])
}
