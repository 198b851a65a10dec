//go:build integration

package integration

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayPrefixAcrossPartitions: a prefix lookup that leaves out the
// partition column looks the prefix up in every partition (rows written by
// the peer client into three partitions, one by the gateway), partition
// after partition; the per-prefix cap cuts the merged answer and pages on
// with next_page_token; naming the partition column still looks in one
// partition only.
func TestGatewayPrefixAcrossPartitions(t *testing.T) {
	g := startGateway(t, "FLUSS_GATEWAY__REST__PREFIX_LOOKUP__MAX_ROWS_PER_PREFIX=5")
	db := newDatabase(t, g, "gw_pfx_parts")
	createTable(t, g.base, db, "orders", columns("dt STRING NOT NULL", "cust INTEGER NOT NULL", "n INTEGER NOT NULL", "v STRING"), map[string]any{
		"primary_key":    []any{"dt", "cust", "n"},
		"partitioned_by": []any{"dt"},
		"distribution":   map[string]any{"bucket_count": 2, "bucket_keys": []any{"cust"}},
	})
	days := []string{"d1", "d2", "d3"}
	for _, d := range days {
		status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/orders/partitions", map[string]any{"partition": map[string]any{"dt": d}})
		require.Equal(t, http.StatusCreated, status, "%v", body)
	}
	// Customer 7: 2 orders per day by the peer; customer 8: one, on d2.
	var lines []string
	for _, d := range days {
		for n := 0; n < 2; n++ {
			lines = append(lines, fmt.Sprintf(`{"dt": %q, "cust": 7, "n": %d, "v": "%s/%d"}`, d, n, d, n))
		}
	}
	wrPeer(t, []byte(strings.Join(lines, "\n")), "upsert", db, "orders", "--rows-stdin")
	status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/orders/records", map[string]any{"entries": []any{
		map[string]any{"id": "x", "upsert": map[string]any{"dt": "d2", "cust": 8, "n": 0, "v": "d2/0"}}}})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.EqualValues(t, 1, body["success_count"], "%v", body)

	lookup := func(req map[string]any) []map[string]any {
		t.Helper()
		status, body := g.do(http.MethodPost, "/databases/"+db+"/tables/orders/records/prefix-lookup", req)
		require.Equal(t, http.StatusOK, status, "%v", body)
		var out []map[string]any
		for _, r := range body["results"].([]any) {
			out = append(out, r.(map[string]any))
		}
		return out
	}
	vs := func(r map[string]any) []string {
		var out []string
		for _, row := range r["rows"].([]any) {
			out = append(out, row.(map[string]any)["v"].(string))
		}
		return out
	}

	res := lookup(map[string]any{"prefix_columns": []any{"cust"}, "prefixes": []any{
		map[string]any{"cust": 7}, map[string]any{"cust": 8}, map[string]any{"cust": 9}}})
	require.Len(t, res, 3)
	// Customer 7: 6 rows, the cap of 5 cuts them (partition order d1, d2, d3).
	first := vs(res[0])
	require.Len(t, first, 5)
	assert.Equal(t, true, res[0]["truncated"])
	assert.Equal(t, []string{"d1", "d1", "d2", "d2", "d3"}, prefixes(first))
	token, _ := res[0]["next_page_token"].(string)
	require.NotEmpty(t, token)
	assert.Equal(t, []string{"d2/0"}, vs(res[1]))
	assert.Empty(t, vs(res[2]))

	next := lookup(map[string]any{"prefix_columns": []any{"cust"}, "prefixes": []any{map[string]any{"cust": 7}}, "page_token": token})
	rest := vs(next[0])
	assert.Equal(t, []string{"d3"}, prefixes(rest))
	all := append(first, rest...)
	sort.Strings(all)
	assert.Equal(t, []string{"d1/0", "d1/1", "d2/0", "d2/1", "d3/0", "d3/1"}, all)

	// Naming the partition column: that partition only.
	one := lookup(map[string]any{"prefix_columns": []any{"cust", "dt"}, "prefixes": []any{map[string]any{"cust": 7, "dt": "d3"}}})
	got := vs(one[0])
	sort.Strings(got)
	assert.Equal(t, []string{"d3/0", "d3/1"}, got)
}

// prefixes returns the partition part ("d1" of "d1/0") of each value.
func prefixes(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i], _, _ = strings.Cut(v, "/")
	}
	return out
}
