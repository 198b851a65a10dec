//go:build integration

package integration

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayPrefixPagesAndProjection: a prefix with 2,500 rows (more than
// gateway.rest.prefix-lookup.max-rows-per-prefix, 1000) is read to the end
// with next_page_token / page_token, every row once; `columns` returns only
// the named columns, for prefix lookups and lookups.
func TestGatewayPrefixPagesAndProjection(t *testing.T) {
	g := startGateway(t, "FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE=0s")
	db := newDatabase(t, g, "gw_reads")
	createTable(t, g.base, db, "items", columns("region STRING", "id BIGINT", "blob STRING"), map[string]any{
		"primary_key":  []any{"region", "id"},
		"distribution": map[string]any{"bucket_count": 1, "bucket_keys": []any{"region"}},
	})
	const n = 2500
	for start := 0; start < n; start += 500 {
		var entries []any
		for i := start; i < start+500; i++ {
			entries = append(entries, map[string]any{"id": fmt.Sprint(i), "upsert": map[string]any{"region": "eu", "id": i, "blob": "xxxxxxxxxxxxxxxx"}})
		}
		status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/items/records", map[string]any{"entries": entries})
		require.Equal(t, http.StatusOK, status, "%v", body)
		require.EqualValues(t, 500, body["success_count"], "%v", body)
	}

	seen := map[string]bool{}
	token, pages := "", 0
	for {
		req := map[string]any{"prefix_columns": []any{"region"}, "prefixes": []any{map[string]any{"region": "eu"}}, "columns": []any{"id"}}
		if token != "" {
			req["page_token"] = token
		}
		status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/items/records/prefix-lookup", req)
		require.Equal(t, http.StatusOK, status, "%v", body)
		pages++
		res := body["results"].([]any)[0].(map[string]any)
		for _, r := range res["rows"].([]any) {
			row := r.(map[string]any)
			require.Len(t, row, 1, "only the projected column: %v", row)
			id := row["id"].(string)
			require.False(t, seen[id], "row %v twice", id)
			seen[id] = true
		}
		next, _ := res["next_page_token"].(string)
		assert.Equal(t, res["truncated"] == true, next != "")
		if next == "" {
			break
		}
		require.Less(t, pages, 10)
		token = next
	}
	assert.Len(t, seen, n)
	assert.Equal(t, 3, pages)

	// A large answer is compressed when the client asks (here gzip).
	hreq, err := http.NewRequest(http.MethodPost, g.base+"/databases/"+db+"/tables/items/records/prefix-lookup",
		strings.NewReader(`{"prefix_columns":["region"],"prefixes":[{"region":"eu"}]}`))
	require.NoError(t, err)
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept-Encoding", "gzip")
	hresp, err := http.DefaultClient.Do(hreq)
	require.NoError(t, err)
	defer hresp.Body.Close()
	require.Equal(t, http.StatusOK, hresp.StatusCode)
	require.Equal(t, "gzip", hresp.Header.Get("Content-Encoding"))
	zr, err := gzip.NewReader(hresp.Body)
	require.NoError(t, err)
	var page map[string]any
	require.NoError(t, json.NewDecoder(zr).Decode(&page))
	assert.Len(t, page["results"].([]any)[0].(map[string]any)["rows"], 1000)

	// A token is bound to its prefix.
	status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/items/records/prefix-lookup", map[string]any{
		"prefix_columns": []any{"region"}, "prefixes": []any{map[string]any{"region": "us"}}, "page_token": token + "x"})
	assert.Equal(t, http.StatusBadRequest, status, "%v", body)

	status, body = g.do(http.MethodPost, "/databases/"+db+"/tables/items/records/lookup", map[string]any{
		"keys": []any{map[string]any{"region": "eu", "id": 7}}, "columns": []any{"blob", "id"}})
	require.Equal(t, http.StatusOK, status, "%v", body)
	row := body["results"].([]any)[0].(map[string]any)["row"].(map[string]any)
	assert.Equal(t, map[string]any{"blob": "xxxxxxxxxxxxxxxx", "id": "7"}, row)
}

// TestGatewayReadmePrefixExample: README's prefix-lookup example, on the
// partitioned, auto-partitioned table it describes.
func TestGatewayReadmePrefixExample(t *testing.T) {
	g := startGateway(t, "FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE=0s")
	db := newDatabase(t, g, "gw_readme")
	createTable(t, g.base, db, "orders", columns("customer BIGINT", "id BIGINT", "dt STRING"), map[string]any{
		"primary_key": []any{"customer", "id", "dt"}, "partitioned_by": []any{"dt"},
		"distribution": map[string]any{"bucket_count": 2, "bucket_keys": []any{"customer"}},
		"configs":      map[string]any{"table.auto-partition.enabled": "true", "table.auto-partition.time-unit": "DAY"},
	})
	today := time.Now().UTC().Format("20060102")
	status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/orders/records", map[string]any{"entries": []any{
		map[string]any{"id": "a", "upsert": map[string]any{"customer": 7, "id": 1, "dt": today}},
		map[string]any{"id": "b", "upsert": map[string]any{"customer": 7, "id": 2, "dt": today}},
		map[string]any{"id": "c", "upsert": map[string]any{"customer": 8, "id": 3, "dt": today}},
	}})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.EqualValues(t, 3, body["success_count"], "%v", body)

	// The README's body, with today for its example day.
	raw := strings.ReplaceAll(`{"prefix_columns": ["customer", "dt"], "prefixes": [{"customer": 7, "dt": "20261201"}]}`, "20261201", today)
	var req map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &req))
	status, body = g.do(http.MethodPost, "/databases/"+db+"/tables/orders/records/prefix-lookup", req)
	require.Equal(t, http.StatusOK, status, "%v", body)
	res := body["results"].([]any)[0].(map[string]any)
	assert.EqualValues(t, 2, res["row_count"], "%v", body)
}
