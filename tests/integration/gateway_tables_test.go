//go:build integration

package integration

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gwName(prefix string) string {
	return fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano()%1e9)
}

// newDatabase creates a database named after prefix through the REST API
// (createDatabase) and returns its name.
func newDatabase(t *testing.T, g *gateway, prefix string) string {
	t.Helper()
	db := gwName(prefix)
	createDatabase(t, g, db)
	return db
}

func createDatabase(t *testing.T, g *gateway, db string) {
	t.Helper()
	status, body := g.do(http.MethodPost, "/databases", map[string]any{"database": db})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	t.Cleanup(func() { g.do(http.MethodDelete, "/databases/"+db+"?cascade=true", nil) })
}

func typ(m map[string]any) map[string]any { return m }

// allTypeColumns has one column of every Fluss data type, nested ones
// included, in Fluss's own JSON vocabulary.
func allTypeColumns() []any {
	return []any{
		map[string]any{"name": "id", "data_type": typ(map[string]any{"type": "BIGINT"}), "nullable": false},
		map[string]any{"name": "c_bool", "data_type": map[string]any{"type": "BOOLEAN"}},
		map[string]any{"name": "c_tiny", "data_type": map[string]any{"type": "TINYINT"}},
		map[string]any{"name": "c_small", "data_type": map[string]any{"type": "SMALLINT"}},
		map[string]any{"name": "c_int", "data_type": map[string]any{"type": "INTEGER"}, "comment": "an int"},
		map[string]any{"name": "c_float", "data_type": map[string]any{"type": "FLOAT"}},
		map[string]any{"name": "c_double", "data_type": map[string]any{"type": "DOUBLE"}},
		map[string]any{"name": "c_char", "data_type": map[string]any{"type": "CHAR", "length": 5}},
		map[string]any{"name": "c_string", "data_type": map[string]any{"type": "STRING"}},
		map[string]any{"name": "c_dec", "data_type": map[string]any{"type": "DECIMAL", "precision": 12, "scale": 2}},
		map[string]any{"name": "c_bigdec", "data_type": map[string]any{"type": "DECIMAL", "precision": 38, "scale": 10}},
		map[string]any{"name": "c_date", "data_type": map[string]any{"type": "DATE"}},
		map[string]any{"name": "c_time", "data_type": map[string]any{"type": "TIME_WITHOUT_TIME_ZONE", "precision": 3}},
		map[string]any{"name": "c_ts", "data_type": map[string]any{"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 6}},
		map[string]any{"name": "c_ltz", "data_type": map[string]any{"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 3}},
		map[string]any{"name": "c_bytes", "data_type": map[string]any{"type": "BYTES"}},
		map[string]any{"name": "c_bin", "data_type": map[string]any{"type": "BINARY", "length": 4}},
		map[string]any{"name": "c_arr", "data_type": map[string]any{"type": "ARRAY", "element_type": map[string]any{"type": "INTEGER"}}},
		map[string]any{"name": "c_map", "data_type": map[string]any{"type": "MAP",
			"key_type": map[string]any{"type": "STRING", "nullable": false}, "value_type": map[string]any{"type": "DOUBLE"}}},
		map[string]any{"name": "c_row", "data_type": map[string]any{"type": "ROW", "fields": []any{
			map[string]any{"name": "city", "field_type": map[string]any{"type": "STRING"}},
			map[string]any{"name": "zip", "field_type": map[string]any{"type": "CHAR", "length": 5}, "description": "postal code"},
		}}},
	}
}

// TestGatewayTableEveryType creates a primary-key table with a column of every
// type over HTTP, describes it back identically, and checks the schema with
// the independent peer client.
func TestGatewayTableEveryType(t *testing.T) {
	g := startGateway(t)
	db := newDatabase(t, g, "gw_tables")

	cols := allTypeColumns()
	req := map[string]any{
		"table_name":        "all_types",
		"columns":           cols,
		"primary_key":       []any{"id"},
		"distribution":      map[string]any{"bucket_count": 3},
		"comment":           "every type",
		"custom_properties": map[string]any{"owner": "gw"},
	}
	status, created := g.do(http.MethodPost, "/databases/"+db+"/tables", req)
	require.Equal(t, http.StatusCreated, status, "%v", created)

	status, got := g.do(http.MethodGet, "/databases/"+db+"/tables/all_types", nil)
	require.Equal(t, http.StatusOK, status)
	gotCols := got["columns"].([]any)
	require.Len(t, gotCols, len(cols))
	for i, c := range cols {
		want := c.(map[string]any)
		have := gotCols[i].(map[string]any)
		assert.Equal(t, want["name"], have["name"])
		wt := want["data_type"].(map[string]any)
		ht := have["data_type"].(map[string]any)
		assert.Equal(t, wt["type"], ht["type"], "column %s", want["name"])
		for _, k := range []string{"precision", "scale", "length"} {
			if v, ok := wt[k]; ok {
				assert.EqualValues(t, v, ht[k], "column %s %s", want["name"], k)
			}
		}
		if wt["type"] == "ROW" {
			fs := ht["fields"].([]any)
			require.Len(t, fs, 2)
			assert.Equal(t, "postal code", fs[1].(map[string]any)["description"])
		}
		if wt["type"] == "MAP" {
			assert.Equal(t, "STRING", ht["key_type"].(map[string]any)["type"])
		}
	}
	assert.Equal(t, false, gotCols[0].(map[string]any)["nullable"], "primary-key column is NOT NULL")
	assert.Equal(t, []any{"id"}, got["primary_key"])
	assert.EqualValues(t, 3, got["distribution"].(map[string]any)["bucket_count"])
	assert.Equal(t, "every type", got["comment"])
	assert.Equal(t, map[string]any{"owner": "gw"}, got["custom_properties"])

	// The independent client sees the same schema.
	peer := peerCmd(t, "get-table", db, "all_types")
	pcols := peer["columns"].([]any)
	require.Len(t, pcols, len(cols))
	wantPeer := map[string]string{
		"id": "bigint NOT NULL", "c_int": "int", "c_dec": "decimal(12,2)", "c_bigdec": "decimal(38,10)",
		"c_char": "char(5)", "c_bin": "binary(4)", "c_ltz": "timestamp_ltz(3)", "c_string": "string",
	}
	for _, pc := range pcols {
		m := pc.(map[string]any)
		if w, ok := wantPeer[m["name"].(string)]; ok {
			assert.Equal(t, w, m["type"], "peer type of %s", m["name"])
		}
	}
	assert.Equal(t, []any{"id"}, peer["primary_keys"])
	assert.EqualValues(t, 3, peer["num_buckets"])
}

// TestGatewayTableKinds: a log table with bucket keys and a partitioned
// primary-key table round-trip; PATCH add_column and set_config take effect;
// partitions are created, listed across pages and dropped.
func TestGatewayTableKinds(t *testing.T) {
	g := startGateway(t)
	db := newDatabase(t, g, "gw_kinds")
	tables := "/databases/" + db + "/tables"

	// Log table with a bucket key.
	status, body := g.do(http.MethodPost, tables, map[string]any{
		"table_name": "events",
		"columns": []any{
			map[string]any{"name": "device", "data_type": map[string]any{"type": "STRING"}},
			map[string]any{"name": "v", "data_type": map[string]any{"type": "DOUBLE"}},
		},
		"distribution": map[string]any{"bucket_count": 4, "bucket_keys": []any{"device"}},
		"configs":      map[string]any{"table.log.arrow.compression.type": "LZ4_FRAME"},
	})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	status, body = g.do(http.MethodGet, tables+"/events", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Empty(t, body["primary_key"])
	assert.Equal(t, []any{"device"}, body["distribution"].(map[string]any)["bucket_keys"])
	assert.Equal(t, "LZ4_FRAME", body["configs"].(map[string]any)["table.log.arrow.compression.type"])
	peer := peerCmd(t, "get-table", db, "events")
	assert.Equal(t, []any{"device"}, peer["bucket_keys"])
	assert.EqualValues(t, 4, peer["num_buckets"])

	// PATCH: add a column, then set a config. Fluss alters either the schema or
	// the properties in one call; a mixed PATCH is a 400 that changes nothing.
	addNote := map[string]any{"kind": "add_column", "name": "note", "data_type": map[string]any{"type": "STRING"}, "comment": "added"}
	setTTL := map[string]any{"kind": "set_config", "key": "table.log.tiered.local-segments", "value": "3"}
	status, body = g.do(http.MethodPatch, tables+"/events", map[string]any{"changes": []any{addNote, setTTL}})
	require.Equal(t, http.StatusBadRequest, status, "%v", body)
	status, body = g.do(http.MethodPatch, tables+"/events", map[string]any{"changes": []any{addNote}})
	require.Equal(t, http.StatusNoContent, status, "%v", body)
	status, body = g.do(http.MethodPatch, tables+"/events", map[string]any{"changes": []any{setTTL}})
	require.Equal(t, http.StatusNoContent, status, "%v", body)
	status, body = g.do(http.MethodGet, tables+"/events", nil)
	require.Equal(t, http.StatusOK, status)
	cols := body["columns"].([]any)
	require.Len(t, cols, 3)
	assert.Equal(t, "note", cols[2].(map[string]any)["name"])
	assert.Equal(t, "3", body["configs"].(map[string]any)["table.log.tiered.local-segments"])
	assert.Len(t, peerCmd(t, "get-table", db, "events")["columns"], 3)

	// Partitioned primary-key table.
	status, body = g.do(http.MethodPost, tables, map[string]any{
		"table_name": "orders",
		"columns": []any{
			map[string]any{"name": "id", "data_type": map[string]any{"type": "BIGINT"}},
			map[string]any{"name": "region", "data_type": map[string]any{"type": "STRING"}},
			map[string]any{"name": "amount", "data_type": map[string]any{"type": "DECIMAL", "precision": 10, "scale": 2}},
		},
		"primary_key":    []any{"id", "region"},
		"partitioned_by": []any{"region"},
		"distribution":   map[string]any{"bucket_count": 2},
	})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	parts := tables + "/orders/partitions"
	regions := []string{"eu", "us", "apac", "latam", "mea"}
	for _, r := range regions {
		status, body = g.do(http.MethodPost, parts, map[string]any{"partition": map[string]any{"region": r}})
		require.Equal(t, http.StatusCreated, status, "%v", body)
	}
	status, body = g.do(http.MethodPost, parts, map[string]any{"partition": map[string]any{"region": "eu"}})
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "partition_already_exists", body["error"].(map[string]any)["code"])

	var listed []string
	token := ""
	for pages := 0; ; pages++ {
		path := parts + "?max_results=2"
		if token != "" {
			path += "&page_token=" + url.QueryEscape(token)
		}
		status, body = g.do(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, status, "%v", body)
		for _, p := range body["partitions"].([]any) {
			listed = append(listed, p.(map[string]any)["name"].(string))
		}
		next, _ := body["next_page_token"].(string)
		if next == "" {
			assert.Equal(t, 2, pages, "5 partitions in pages of 2")
			break
		}
		token = next
	}
	assert.ElementsMatch(t, regions, listed)

	status, _ = g.do(http.MethodDelete, parts+"/apac", nil)
	assert.Equal(t, http.StatusNoContent, status)
	status, body = g.do(http.MethodDelete, parts+"/apac", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "partition_not_found", body["error"].(map[string]any)["code"])
	status, body = g.do(http.MethodGet, parts, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Len(t, body["partitions"], 4)
}

// TestGatewayInvalidTables: validate_only creates nothing, and invalid
// definitions are 400 naming the field, with nothing created.
func TestGatewayInvalidTables(t *testing.T) {
	g := startGateway(t)
	db := newDatabase(t, g, "gw_invalid")
	tables := "/databases/" + db + "/tables"
	col := func(name string, dt map[string]any) map[string]any {
		return map[string]any{"name": name, "data_type": dt}
	}

	status, body := g.do(http.MethodPost, tables, map[string]any{
		"table_name": "dry", "columns": []any{col("id", map[string]any{"type": "INTEGER"})}, "validate_only": true,
	})
	require.Equal(t, http.StatusOK, status, "%v", body)
	status, _ = g.do(http.MethodGet, tables+"/dry", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, false, peerCmd(t, "table-exists", db, "dry")["exists"])

	cases := []struct {
		name  string
		req   map[string]any
		field string
	}{
		{"unknown type", map[string]any{"table_name": "bad1", "columns": []any{col("id", map[string]any{"type": "INT"})}}, "columns[0].data_type"},
		{"precision out of range", map[string]any{"table_name": "bad2", "columns": []any{
			col("id", map[string]any{"type": "INTEGER"}), col("d", map[string]any{"type": "DECIMAL", "precision": 40, "scale": 2})}}, "columns[1].data_type.precision"},
		{"nullable primary key", map[string]any{"table_name": "bad3", "columns": []any{
			map[string]any{"name": "id", "data_type": map[string]any{"type": "INTEGER"}, "nullable": true}}, "primary_key": []any{"id"}}, "columns[0]"},
		{"bucket key not a column", map[string]any{"table_name": "bad4", "columns": []any{col("id", map[string]any{"type": "INTEGER"})},
			"distribution": map[string]any{"bucket_count": 2, "bucket_keys": []any{"nope"}}}, "distribution.bucket_keys[0]"},
		{"table. custom property", map[string]any{"table_name": "bad5", "columns": []any{col("id", map[string]any{"type": "INTEGER"})},
			"custom_properties": map[string]any{"table.x": "1"}}, "custom_properties"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := g.do(http.MethodPost, tables, tc.req)
			require.Equal(t, http.StatusBadRequest, status, "%v", body)
			e := body["error"].(map[string]any)
			assert.Equal(t, "invalid_argument", e["code"])
			assert.True(t, strings.Contains(e["message"].(string), tc.field), "message %q names %q", e["message"], tc.field)
			name := tc.req["table_name"].(string)
			assert.Equal(t, false, peerCmd(t, "table-exists", db, name)["exists"])
		})
	}
}

// TestGatewayDescribedTablePostsBack: a table description's columns, keys,
// distribution and properties (Fluss's stored configs included) form a
// create body as they are: post them back under a new name and the new
// table describes the same.
func TestGatewayDescribedTablePostsBack(t *testing.T) {
	g := startGateway(t)
	db := newDatabase(t, g, "gw_postback")
	tables := "/databases/" + db + "/tables"
	status, body := g.do(http.MethodPost, tables, map[string]any{
		"table_name":        "src",
		"columns":           allTypeColumns(),
		"primary_key":       []any{"id"},
		"distribution":      map[string]any{"bucket_count": 3, "bucket_keys": []any{"id"}},
		"configs":           map[string]any{"table.log.tiered.local-segments": "2"},
		"custom_properties": map[string]any{"owner": "gw"},
		"comment":           "source",
	})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	require.Nil(t, body, "the official create answers an empty body")

	status, src := g.do(http.MethodGet, tables+"/src", nil)
	require.Equal(t, http.StatusOK, status, "%v", src)
	create := map[string]any{"table_name": "copy"}
	for _, k := range []string{"columns", "primary_key", "partitioned_by", "distribution", "configs", "custom_properties", "comment"} {
		if v, ok := src[k]; ok {
			create[k] = v
		}
	}
	status, body = g.do(http.MethodPost, tables, create)
	require.Equal(t, http.StatusCreated, status, "the description posts back as a create: %v", body)
	status, copied := g.do(http.MethodGet, tables+"/copy", nil)
	require.Equal(t, http.StatusOK, status, "%v", copied)
	for _, k := range []string{"columns", "primary_key", "distribution", "configs", "custom_properties", "comment"} {
		assert.Equal(t, src[k], copied[k], k)
	}
	assert.Equal(t, "copy", copied["table"])
	assert.Equal(t, db, copied["database"])
}
