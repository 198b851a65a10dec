package http

import (
	"context"
	"encoding/json"
	"io"
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/memory"
	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestHealthReadyAcrossTheLifecycle(t *testing.T) {
	t.Parallel()
	rd := NewReadiness()
	g := newGateway(t, withReadiness(rd))

	steps := []struct {
		name       string
		advance    func()
		ready      int
		readyCode  string
		catalog    int
		catalogMsg string
	}{
		{name: "starting", advance: func() {}, ready: 503, readyCode: "unavailable", catalog: 503, catalogMsg: "starting"},
		{name: "serving", advance: rd.SetServing, ready: 200, catalog: 200},
		{name: "readiness grace", advance: rd.BeginShutdown, ready: 503, readyCode: "unavailable", catalog: 200},
		{name: "draining", advance: rd.BeginDraining, ready: 503, readyCode: "unavailable", catalog: 503, catalogMsg: "shutting down"},
		{name: "stopped", advance: rd.SetStopped, ready: 503, readyCode: "unavailable", catalog: 503, catalogMsg: "shutting down"},
		{name: "never backwards", advance: rd.SetServing, ready: 503, readyCode: "unavailable", catalog: 503, catalogMsg: "shutting down"},
	}
	for _, s := range steps {
		s.advance()
		h := g.call("GET", "/health", "")
		require.Equal(t, 200, h.status, s.name)
		hj := h.json(t)
		assert.Equal(t, "ok", hj["status"])
		assert.GreaterOrEqual(t, hj["uptime_ms"], float64(0))
		assert.Len(t, hj, 2, "health has exactly {status, uptime_ms}")

		r := g.call("GET", "/ready", "")
		require.Equal(t, s.ready, r.status, s.name)
		assert.Equal(t, s.ready == 200, rd.Ready(), s.name)
		assert.Equal(t, s.catalog == 200, rd.Accepting(), s.name)
		if s.readyCode != "" {
			assert.Equal(t, s.readyCode, r.errorCode(t), s.name)
			want := "shutting down"
			if s.name == "starting" {
				want = "starting"
			}
			assert.Contains(t, r.message(t), want, s.name)
			assert.Equal(t, "1", r.header.Get("Retry-After"))
		} else {
			assert.Equal(t, map[string]any{"status": "ready"}, r.json(t))
		}

		c := g.call("GET", "/v1/clusters", "")
		require.Equal(t, s.catalog, c.status, s.name)
		if s.catalogMsg != "" {
			assert.Equal(t, "unavailable", c.errorCode(t))
			assert.Contains(t, c.message(t), s.catalogMsg)
		}
	}
}

func TestOpenAPIIsServedAsJSON(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	r := g.call("GET", "/v1/openapi.json", "")
	require.Equal(t, 200, r.status)
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	doc := r.json(t)
	assert.Equal(t, "3.1.0", doc["openapi"])
	assert.Contains(t, doc["paths"], "/v1/clusters/{cluster}/databases")
}

func TestListClusters(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	r := g.call("GET", "/v1/clusters", "")
	require.Equal(t, 200, r.status)
	assert.JSONEq(t, `{"clusters":["default","other"]}`, string(r.body))
}

func TestRequestIDs(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	cases := []struct {
		name    string
		inbound string
		keep    bool
	}{
		{name: "generated", inbound: "", keep: false},
		{name: "UUID kept", inbound: "8f6c7f4a-f9b8-4c71-91ec-6e5578d7a913", keep: true},
		{name: "not a UUID replaced", inbound: "trace-42.a:b_c", keep: false},
		{name: "UUID in braces replaced", inbound: "{8f6c7f4a-f9b8-4c71-91ec-6e5578d7a913}", keep: false},
		{name: "urn UUID replaced", inbound: "urn:uuid:8f6c7f4a-f9b8-4c71-91ec-6e5578d7a913", keep: false},
		{name: "bad characters replaced", inbound: "a b\"c", keep: false},
		{name: "too long replaced", inbound: strings.Repeat("x", 129), keep: false},
	}
	for _, tc := range cases {
		var headers []string
		if tc.inbound != "" {
			headers = []string{"X-Request-Id", tc.inbound}
		}
		r := g.call("GET", "/v1/clusters/default/databases/nope", "", headers...)
		require.Equal(t, 404, r.status, tc.name)
		id := r.header.Get("X-Request-Id")
		if tc.keep {
			assert.Equal(t, tc.inbound, id, tc.name)
		} else {
			_, err := uuid.Parse(id)
			assert.NoError(t, err, "%s: %q is not a UUID", tc.name, id)
		}
		assert.Equal(t, "database_not_found", r.errorCode(t), tc.name)
	}
	assert.Contains(t, g.logs.String(), `"request_id":"8f6c7f4a-f9b8-4c71-91ec-6e5578d7a913"`, "the access log carries the request id")
	assert.NotContains(t, g.logs.String(), "trace-42", "an id that is not a UUID is not kept")
	assert.Contains(t, g.logs.String(), `"route":"/v1/clusters/{cluster}/databases/{database}"`)
}

func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	cases := []struct {
		name, method, path string
		status             int
		code               string
		allow              string
	}{
		{name: "unknown route", method: "GET", path: "/nope", status: 404, code: "not_found"},
		{name: "unknown version", method: "GET", path: "/v2/clusters", status: 404, code: "not_found"},
		{name: "case sensitive", method: "GET", path: "/V1/clusters", status: 404, code: "not_found"},
		{name: "trailing slash", method: "GET", path: "/v1/clusters/", status: 404, code: "not_found"},
		{name: "wrong method on health", method: "POST", path: "/health", status: 405, code: "method_not_allowed", allow: "GET"},
		{name: "wrong method on database", method: "PUT", path: db + "/x", status: 405, code: "method_not_allowed", allow: "GET, HEAD, DELETE"},
		{name: "wrong method on partitions", method: "DELETE", path: db + "/d/tables/t/partitions", status: 405, code: "method_not_allowed", allow: "GET, POST"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.call(tc.method, tc.path, "")
			require.Equal(t, tc.status, r.status, string(r.body))
			assert.Equal(t, tc.code, r.errorCode(t))
			assert.Equal(t, tc.allow, r.header.Get("Allow"))
		})
	}
	assert.Contains(t, g.call("GET", "/nope", "").message(t), "/nope", "the message names the route")
}

func TestDatabaseLifecycle(t *testing.T) {
	t.Parallel()
	g := newGateway(t)

	r := g.call("POST", db, `{"database":"sales","comment":"revenue","custom_properties":{"owner":"bi"}}`)
	require.Equal(t, 201, r.status, string(r.body))
	assert.Equal(t, db+"/sales", r.header.Get("Location"))
	assert.Equal(t, map[string]any{"database": "sales"}, r.json(t), "the official DatabaseResponse")

	r = g.call("GET", db+"/sales", "")
	require.Equal(t, 200, r.status)
	described := r.json(t)
	assert.Equal(t, "sales", described["database"])
	assert.Equal(t, "revenue", described["comment"])
	assert.Equal(t, map[string]any{"owner": "bi"}, described["custom_properties"])
	_, err := time.Parse(time.RFC3339, described["created_time"].(string))
	require.NoError(t, err)

	steps := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"duplicate", "POST", db, `{"database":"sales"}`, 409, "database_already_exists"},
		{"ignore existing", "POST", db, `{"database":"sales","ignore_if_exists":true}`, 200, ""},
		{"exists", "HEAD", db + "/sales", "", 200, ""},
		{"absent", "HEAD", db + "/nope", "", 404, ""},
		{"describe absent", "GET", db + "/nope", "", 404, "database_not_found"},
		{"drop absent", "DELETE", db + "/nope", "", 404, "database_not_found"},
		{"drop absent ignored", "DELETE", db + "/nope?ignore_if_not_exists=true", "", 204, ""},
		{"drop", "DELETE", db + "/sales", "", 204, ""},
		{"gone", "HEAD", db + "/sales", "", 404, ""},
	}
	for _, s := range steps {
		r := g.call(s.method, s.path, s.body)
		require.Equal(t, s.status, r.status, "%s: %s", s.name, r.body)
		if s.code != "" {
			assert.Equal(t, s.code, r.errorCode(t), s.name)
		}
		if s.method == "HEAD" || s.status == 204 {
			assert.Empty(t, r.body, s.name)
		}
	}
}

func TestDropNonEmptyDatabase(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.mustCreateDatabase("d")
	g.mustCreateTable("d", `{"table_name":"t","columns":[{"name":"a","data_type":{"type":"INTEGER"}}]}`)

	r := g.call("DELETE", db+"/d", "")
	require.Equal(t, 409, r.status)
	assert.Equal(t, "database_not_empty", r.errorCode(t))

	r = g.call("DELETE", db+"/d?cascade=yes", "")
	require.Equal(t, 400, r.status)
	assert.Contains(t, r.message(t), "cascade")

	r = g.call("DELETE", db+"/d?cascade=true", "")
	require.Equal(t, 204, r.status, string(r.body))
	assert.Equal(t, 404, g.call("HEAD", db+"/d", "").status)
}

func TestClusterNotFound(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/v1/clusters/nope/databases", ""},
		{"POST", "/v1/clusters/nope/databases", `{"database":"x"}`},
		{"GET", "/v1/clusters/nope/databases/x/tables/y", ""},
		{"DELETE", "/v1/clusters/nope/databases/x/tables/y/partitions/z", ""},
	} {
		r := g.call(tc.method, tc.path, tc.body)
		require.Equal(t, 404, r.status, tc.path)
		assert.Equal(t, "cluster_not_found", r.errorCode(t), tc.path)
	}
	// Clusters are independent.
	g.mustCreateDatabase("only_default")
	assert.Equal(t, 404, g.call("HEAD", "/v1/clusters/other/databases/only_default", "").status)
}

func TestMalformedRequests(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.mustCreateDatabase("d")
	tables := db + "/d/tables"
	cases := []struct {
		name        string
		method      string
		path        string
		body        string
		contentType string
		status      int
		code        string
		message     string
	}{
		{name: "malformed JSON", method: "POST", path: db, body: `{"database":`, status: 400, code: "invalid_argument", message: "malformed JSON"},
		{name: "trailing data", method: "POST", path: db, body: `{"database":"x"} {}`, status: 400, code: "invalid_argument", message: "after the top-level value"},
		{name: "not an object", method: "POST", path: db, body: `["x"]`, status: 400, code: "invalid_argument", message: "request body: expected an object"},
		{name: "empty body", method: "POST", path: db, body: ` `, status: 400, code: "invalid_argument", message: "empty"},
		{name: "unknown field", method: "POST", path: db, body: `{"database":"x","colour":"red"}`, status: 400, code: "invalid_argument", message: "colour: unknown field"},
		{name: "nested unknown field", method: "POST", path: tables, body: `{"table_name":"t","columns":[{"name":"a","data_type":{"type":"INTEGER"}},{"name":"b","data_type":{"type":"INTEGER"},"nulable":true}]}`, status: 400, code: "invalid_argument", message: "columns[1].nulable: unknown field"},
		{name: "unknown data type member", method: "POST", path: tables, body: `{"table_name":"t","columns":[{"name":"a","data_type":{"type":"DECIMAL","precison":4}}]}`, status: 400, code: "invalid_argument", message: "columns[0].data_type.precison: unknown field"},
		{name: "duplicate key", method: "POST", path: db, body: `{"database":"x","database":"y"}`, status: 400, code: "invalid_argument", message: "database: duplicate key"},
		{name: "nested duplicate key", method: "POST", path: tables, body: `{"table_name":"t","columns":[{"name":"a","data_type":{"type":"INTEGER","type":"BIGINT"}}]}`, status: 400, code: "invalid_argument", message: "columns[0].data_type.type: duplicate key"},
		{name: "wrong type", method: "POST", path: db, body: `{"database":7}`, status: 400, code: "invalid_argument", message: "database: expected a string, got a number"},
		{name: "wrong map value type", method: "POST", path: db, body: `{"database":"x","custom_properties":{"k":1}}`, status: 400, code: "invalid_argument", message: `custom_properties."k": expected a string`},
		{name: "fractional integer", method: "POST", path: tables, body: `{"table_name":"t","columns":[{"name":"a","data_type":{"type":"INTEGER"}}],"distribution":{"bucket_count":1.5}}`, status: 400, code: "invalid_argument", message: "distribution.bucket_count"},
		{name: "no content type", method: "POST", path: db, body: `{"database":"x"}`, contentType: "-", status: 415, code: "unsupported_media_type"},
		{name: "text content type", method: "POST", path: db, body: `{"database":"x"}`, contentType: "text/plain", status: 415, code: "unsupported_media_type"},
		{name: "vendor json accepted", method: "POST", path: db, body: `{"database":"vendor"}`, contentType: "application/vnd.fluss+json; charset=utf-8", status: 201},
		{name: "unknown query parameter", method: "GET", path: db + "?limit=3", status: 400, code: "invalid_argument", message: `unknown query parameter "limit"`},
		{name: "repeated query parameter", method: "GET", path: db + "?max_results=1&max_results=2", status: 400, code: "invalid_argument", message: "more than once"},
		{name: "not acceptable", method: "GET", path: db, contentType: "", status: 406, code: "not_acceptable"},
		{name: "bad percent encoding", method: "GET", path: db + "/a%zz", status: 400, code: "invalid_argument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			switch tc.contentType {
			case "":
			case "-":
				headers = []string{"Content-Type", ""}
			default:
				headers = []string{"Content-Type", tc.contentType}
			}
			if tc.name == "not acceptable" {
				headers = []string{"Accept", "text/html"}
			}
			r := g.call(tc.method, tc.path, tc.body, headers...)
			require.Equal(t, tc.status, r.status, string(r.body))
			if tc.code != "" {
				assert.Equal(t, tc.code, r.errorCode(t))
			}
			if tc.message != "" {
				assert.Contains(t, r.message(t), tc.message)
			}
		})
	}
}

func TestInvalidNames(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.mustCreateDatabase("d")
	cases := []struct {
		name, method, path, body, message string
	}{
		{"database with space", "POST", db, `{"database":"a b"}`, "database"},
		{"empty database", "POST", db, `{"database":""}`, "database: must not be empty"},
		{"missing database name", "POST", db, `{}`, "database: must not be empty"},
		{"reserved prefix", "POST", db, `{"database":"__sys"}`, "reserved"},
		{"database path", "GET", db + "/a%20b", "", "database"},
		{"too long", "GET", db + "/" + strings.Repeat("a", 201), "", "longer than 200"},
		{"table name", "POST", db + "/d/tables", `{"table_name":"t.x","columns":[{"name":"a","data_type":{"type":"INTEGER"}}]}`, "table_name"},
		{"table path", "GET", db + "/d/tables/t$x", "", "table_name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.call(tc.method, tc.path, tc.body)
			require.Equal(t, 400, r.status, string(r.body))
			assert.Equal(t, "invalid_argument", r.errorCode(t))
			assert.Contains(t, r.message(t), tc.message)
		})
	}
}

func TestPaginationAcrossPages(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	names := []string{"e", "a", "d", "b", "c"}
	for _, n := range names {
		g.mustCreateDatabase(n)
	}
	var got []string
	token := ""
	pages := 0
	for {
		path := db + "?max_results=2"
		if token != "" {
			path += "&page_token=" + token
		}
		r := g.call("GET", path, "")
		require.Equal(t, 200, r.status, string(r.body))
		var page struct {
			Databases     []string `json:"databases"`
			NextPageToken *string  `json:"next_page_token"`
		}
		require.NoError(t, json.Unmarshal(r.body, &page))
		pages++
		got = append(got, page.Databases...)
		if page.NextPageToken == nil {
			break
		}
		token = *page.NextPageToken
		require.NotEmpty(t, token)
		// A database created behind the cursor does not disturb the walk.
		if pages == 1 {
			g.mustCreateDatabase("0first")
		}
	}
	assert.Equal(t, 3, pages)
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, got)

	r := g.call("GET", db, "")
	require.Equal(t, 200, r.status)
	assert.NotContains(t, r.json(t), "next_page_token", "one page holds everything at the default size")

	for _, bad := range []string{"max_results=0", "max_results=1001", "max_results=abc", "page_token=%25%25", "page_token="} {
		r := g.call("GET", db+"?"+bad, "")
		require.Equal(t, 400, r.status, bad)
		assert.Equal(t, "invalid_argument", r.errorCode(t), bad)
	}
}

func TestTableLifecycle(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.mustCreateDatabase("shop")
	tables := db + "/shop/tables"
	create := `{
	  "table_name": "orders",
	  "columns": [
	    {"name": "id", "data_type": {"type": "BIGINT"}, "comment": "order id"},
	    {"name": "amount", "data_type": {"type": "DECIMAL", "precision": 10, "scale": 2}, "nullable": false},
	    {"name": "tags", "data_type": {"type": "ARRAY", "element_type": {"type": "STRING"}}},
	    {"name": "note", "data_type": {"type": "STRING"}, "nullable": false}
	  ],
	  "primary_key": ["id"],
	  "distribution": {"bucket_count": 4},
	  "configs": {"table.log.ttl": "7d"},
	  "custom_properties": {"team": "shop"},
	  "comment": "all orders"
	}`

	r := g.call("POST", tables, strings.Replace(create, `"table_name"`, `"validate_only": true, "table_name"`, 1))
	require.Equal(t, 200, r.status, string(r.body))
	assert.JSONEq(t, `{"validate_only":true,"database":"shop","table":"orders","column_count":4,"primary_key":["id"]}`, string(r.body),
		"validate_only creates nothing and answers the official ValidateOnlyResponse")
	assert.Equal(t, 404, g.call("HEAD", tables+"/orders", "").status)

	r = g.call("POST", tables, create)
	require.Equal(t, 201, r.status, string(r.body))
	assert.Equal(t, tables+"/orders", r.header.Get("Location"))
	assert.Empty(t, r.body, "the official create answers 201 with an empty body")

	described := g.call("GET", tables+"/orders", "")
	require.Equal(t, 200, described.status)
	assert.JSONEq(t, `{
	  "database": "shop",
	  "table": "orders",
	  "table_id": 1,
	  "schema_id": 1,
	  "columns": [
	    {"name": "id", "data_type": {"type": "BIGINT"}, "nullable": false, "comment": "order id"},
	    {"name": "amount", "data_type": {"type": "DECIMAL", "precision": 10, "scale": 2}, "nullable": false},
	    {"name": "tags", "data_type": {"type": "ARRAY", "element_type": {"type": "STRING"}}, "nullable": true},
	    {"name": "note", "data_type": {"type": "STRING"}, "nullable": false}
	  ],
	  "primary_key": ["id"],
	  "distribution": {"bucket_count": 4, "bucket_keys": ["id"]},
	  "configs": {"table.log.ttl": "7d"},
	  "custom_properties": {"team": "shop"},
	  "comment": "all orders",
	  "created_time": "`+described.json(t)["created_time"].(string)+`",
	  "modified_time": "`+described.json(t)["modified_time"].(string)+`"
	}`, string(described.body))

	// A described table posts back as a create: the same columns, keys,
	// distribution and properties, under a new name.
	var again map[string]any
	require.NoError(t, json.Unmarshal(described.body, &again))
	for _, k := range []string{"database", "table", "table_id", "schema_id", "created_time", "modified_time"} {
		delete(again, k)
	}
	again["table_name"] = "orders_copy"
	body, err := json.Marshal(again)
	require.NoError(t, err)
	require.Equal(t, 201, g.call("POST", tables, string(body)).status)
	copied := g.call("GET", tables+"/orders_copy", "").json(t)
	orig := described.json(t)
	for _, k := range []string{"columns", "primary_key", "distribution", "configs", "custom_properties", "comment"} {
		assert.Equal(t, orig[k], copied[k], k)
	}
	require.Equal(t, 204, g.call("DELETE", tables+"/orders_copy", "").status)

	steps := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"duplicate", "POST", tables, create, 409, "table_already_exists"},
		{"ignore existing", "POST", tables, strings.Replace(create, `"comment": "all orders"`, `"comment": "x", "ignore_if_exists": true`, 1), 204, ""},
		{"validate existing (local, as the official)", "POST", tables, strings.Replace(create, `"table_name"`, `"validate_only": true, "table_name"`, 1), 200, ""},
		{"exists", "HEAD", tables + "/orders", "", 200, ""},
		{"in missing database", "POST", db + "/nope/tables", create, 404, "database_not_found"},
		{"describe absent", "GET", tables + "/nope", "", 404, "table_not_found"},
		{"list in missing database", "GET", db + "/nope/tables", "", 404, "database_not_found"},
		{"drop absent", "DELETE", tables + "/nope", "", 404, "table_not_found"},
		{"drop absent ignored", "DELETE", tables + "/nope?ignore_if_not_exists=true", "", 204, ""},
	}
	for _, s := range steps {
		r := g.call(s.method, s.path, s.body)
		require.Equal(t, s.status, r.status, "%s: %s", s.name, r.body)
		if s.code != "" {
			assert.Equal(t, s.code, r.errorCode(t), s.name)
		}
	}

	list := g.call("GET", tables, "")
	require.Equal(t, 200, list.status)
	assert.JSONEq(t, `{"tables":["orders"]}`, string(list.body))

	require.Equal(t, 204, g.call("DELETE", tables+"/orders", "").status)
	assert.Equal(t, 404, g.call("HEAD", tables+"/orders", "").status)
}

func TestCreateTableValidation(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.mustCreateDatabase("d")
	tables := db + "/d/tables"
	col := func(name, dataType string, extra ...string) string {
		return `{"name":"` + name + `","data_type":` + dataType + strings.Join(extra, "") + `}`
	}
	table := func(cols string, extra ...string) string {
		return `{"table_name":"t","columns":[` + cols + `]` + strings.Join(extra, "") + `}`
	}
	cases := []struct {
		name, body, message string
	}{
		{"decimal precision", table(col("a", `{"type":"INTEGER"}`) + "," + col("b", `{"type":"DECIMAL","precision":40,"scale":0}`)), "columns[1].data_type.precision"},
		{"unknown type", table(col("a", `{"type":"INT"}`)), `columns[0].data_type.type: unknown data type "INT"; the Fluss types are BOOLEAN, TINYINT, SMALLINT, INTEGER`},
		{"nested unknown type", table(col("a", `{"type":"ARRAY","element_type":{"type":"VARCHAR"}}`)), "columns[0].data_type.element_type.type"},
		{"missing data type", table(`{"name":"a"}`), "columns[0].data_type: required"},
		{"data type not object", table(col("a", `"INTEGER"`)), "columns[0].data_type: expected a data type object"},
		{"no columns", table(""), "columns"},
		{"duplicate column", table(col("a", `{"type":"INTEGER"}`) + "," + col("a", `{"type":"INTEGER"}`)), "columns[1].name"},
		{"unknown primary key", table(col("a", `{"type":"INTEGER"}`), `,"primary_key":["b"]`), "primary_key[0]"},
		{"nullable primary key", table(col("a", `{"type":"INTEGER"}`, `,"nullable":true`), `,"primary_key":["a"]`), "columns[0].nullable: primary-key column `a` cannot be nullable"},
		{"nullability inside data_type", table(col("a", `{"type":"INTEGER","nullable":false}`, `,"nullable":true`)), "columns[0].data_type.nullable: a column's nullability is the column's own"},
		{"missing parameter", table(col("a", `{"type":"DECIMAL","precision":10}`)), "columns[0].data_type.scale: required for DECIMAL"},
		{"field id", table(col("a", `{"type":"ROW","fields":[{"name":"x","field_type":{"type":"INTEGER"},"field_id":3}]}`)), "columns[0].data_type.fields[0].field_id: unknown field of a ROW field"},
		{"unknown partition key", table(col("a", `{"type":"INTEGER"}`), `,"partitioned_by":["x"]`), "partitioned_by[0]"},
		{"zero buckets", table(col("a", `{"type":"INTEGER"}`), `,"distribution":{"bucket_count":0}`), "distribution.bucket_count"},
		{"bad bucket key", table(col("a", `{"type":"INTEGER"}`), `,"distribution":{"bucket_keys":["zz"]}`), "distribution.bucket_keys[0]"},
		{"config without prefix", table(col("a", `{"type":"INTEGER"}`), `,"configs":{"ttl":"1d"}`), `configs."ttl"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.call("POST", tables, tc.body)
			require.Equal(t, 400, r.status, string(r.body))
			assert.Equal(t, "invalid_argument", r.errorCode(t))
			assert.Contains(t, r.message(t), tc.message)
		})
	}
	assert.Equal(t, 404, g.call("HEAD", tables+"/t", "").status, "nothing was created")
}

func TestAlterTable(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.mustCreateDatabase("d")
	g.mustCreateTable("d", `{"table_name":"t","columns":[{"name":"a","data_type":{"type":"INTEGER"}}],"configs":{"table.log.ttl":"1d"}}`)
	path := db + "/d/tables/t"

	r := g.call("PATCH", path, `{"changes":[
	  {"kind":"add_column","name":"b","data_type":{"type":"STRING"},"comment":"new"}
	]}`)
	require.Equal(t, 204, r.status, string(r.body))
	assert.Empty(t, r.body)
	r = g.call("PATCH", path, `{"changes":[
	  {"kind":"set_config","key":"table.datalake.enabled","value":"true"},
	  {"kind":"reset_config","key":"table.log.ttl"},
	  {"kind":"set_config","key":"app.owner","value":"bi"}
	]}`)
	require.Equal(t, 204, r.status, string(r.body))
	out := g.call("GET", path, "").json(t)
	assert.Equal(t, float64(2), out["schema_id"])
	assert.Equal(t, map[string]any{"table.datalake.enabled": "true"}, out["configs"])
	assert.Equal(t, map[string]any{"app.owner": "bi"}, out["custom_properties"], "keys outside table. are custom properties")
	cols := out["columns"].([]any)
	require.Len(t, cols, 2)
	assert.Equal(t, "b", cols[1].(map[string]any)["name"])

	cases := []struct {
		name, path, body string
		status           int
		code, message    string
	}{
		{"no changes", path, `{"changes":[]}`, 400, "invalid_argument", "changes: at least one"},
		{"missing changes", path, `{}`, 400, "invalid_argument", "changes: required"},
		{"members of two kinds in one change", path, `{"changes":[{"kind":"set_config","key":"table.x","value":"1","name":"b"}]}`, 400, "invalid_argument", "changes[0].name: not a member of a set_config change"},
		{"empty change", path, `{"changes":[{}]}`, 400, "invalid_argument", "changes[0].kind: expected add_column, set_config or reset_config"},
		{"unknown change", path, `{"changes":[{"kind":"drop_column","name":"a"}]}`, 400, "invalid_argument", `changes[0].kind: expected add_column, set_config or reset_config, got "drop_column"`},
		{"old wrapped dialect", path, `{"changes":[{"add_column":{"name":"a"}}]}`, 400, "invalid_argument", "changes[0].add_column: unknown field"},
		{"not null column", path, `{"changes":[{"kind":"add_column","name":"c","data_type":{"type":"INTEGER"},"nullable":false}]}`, 400, "invalid_argument", "changes[0].nullable: unknown field"},
		{"existing column", path, `{"changes":[{"kind":"add_column","name":"a","data_type":{"type":"INTEGER"}}]}`, 400, "invalid_argument", "already exists"},
		{"empty option key", path, `{"changes":[{"kind":"set_config","key":"","value":"1"}]}`, 400, "invalid_argument", "changes[0].key"},
		{"missing value", path, `{"changes":[{"kind":"set_config","key":"table.x"}]}`, 400, "invalid_argument", "changes[0].value: required for a set_config change"},
		{"schema and config mixed", path, `{"changes":[{"kind":"add_column","name":"c","data_type":{"type":"INTEGER"}},{"kind":"reset_config","key":"table.x"}]}`, 400, "invalid_argument", "cannot be mixed"},
		{"bad added type", path, `{"changes":[{"kind":"add_column","name":"c","data_type":{"type":"CHAR","length":0}}]}`, 400, "invalid_argument", "changes[0].data_type.length"},
		{"absent table", db + "/d/tables/nope", `{"changes":[{"kind":"reset_config","key":"table.x"}]}`, 404, "table_not_found", ""},
		{"absent table ignored", db + "/d/tables/nope", `{"changes":[{"kind":"reset_config","key":"table.x"}],"ignore_if_not_exists":true}`, 204, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.call("PATCH", tc.path, tc.body)
			require.Equal(t, tc.status, r.status, string(r.body))
			if tc.code != "" {
				assert.Equal(t, tc.code, r.errorCode(t))
			}
			if tc.message != "" {
				assert.Contains(t, r.message(t), tc.message)
			}
		})
	}
}

func TestPartitions(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.mustCreateDatabase("d")
	g.mustCreateTable("d", partitionedTable)
	g.mustCreateTable("d", `{"table_name":"flat","columns":[{"name":"a","data_type":{"type":"INTEGER"}}]}`)
	parts := db + "/d/tables/events/partitions"

	r := g.call("POST", parts, `{"partition":{"region":"eu","dt":"2026-01-01"}}`)
	require.Equal(t, 201, r.status, string(r.body))
	assert.Equal(t, parts+"/2026-01-01$eu", r.header.Get("Location"))
	assert.Equal(t, `{"database":"d","table":"events","partition":{"dt":"2026-01-01","region":"eu"},"name":"2026-01-01$eu","partition_id":1}`, string(r.body),
		"the spec follows the partition-key order")

	for _, spec := range []string{`{"dt":"2026-01-02","region":"eu"}`, `{"dt":"2026-01-01","region":"us"}`} {
		require.Equal(t, 201, g.call("POST", parts, `{"partition":`+spec+`}`).status)
	}

	cases := []struct {
		name, method, path, body string
		status                   int
		code, message            string
	}{
		{"duplicate", "POST", parts, `{"partition":{"dt":"2026-01-01","region":"eu"}}`, 409, "partition_already_exists", ""},
		{"ignore existing", "POST", parts, `{"partition":{"dt":"2026-01-01","region":"eu"},"ignore_if_exists":true}`, 200, "", ""},
		{"missing key", "POST", parts, `{"partition":{"dt":"2026-01-03"}}`, 400, "invalid_argument", `partition."region": missing`},
		{"extra key", "POST", parts, `{"partition":{"dt":"x","region":"eu","id":"1"}}`, 400, "invalid_argument", `partition."id": not a partition key`},
		{"bad value", "POST", parts, `{"partition":{"dt":"2026/01/01","region":"eu"}}`, 400, "invalid_argument", `partition."dt"`},
		{"missing spec", "POST", parts, `{}`, 400, "invalid_argument", "partition: required"},
		{"not partitioned", "POST", db + "/d/tables/flat/partitions", `{"partition":{"a":"1"}}`, 400, "invalid_argument", "not partitioned"},
		{"list not partitioned", "GET", db + "/d/tables/flat/partitions", "", 400, "invalid_argument", "not partitioned"},
		{"table absent", "GET", db + "/d/tables/nope/partitions", "", 404, "table_not_found", ""},
		{"drop absent", "DELETE", parts + "/2027-01-01$eu", "", 404, "partition_not_found", ""},
		{"drop absent ignored", "DELETE", parts + "/2027-01-01$eu?ignore_if_not_exists=true", "", 204, "", ""},
		{"drop wrong arity", "DELETE", parts + "/2026-01-01", "", 400, "invalid_argument", "has 1 value(s) but the table has 2 partition key(s)"},
		{"drop encoded dollar", "DELETE", parts + "/2026-01-02%24eu", "", 204, "", ""},
		{"drop raw dollar", "DELETE", parts + "/2026-01-01$us", "", 204, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.call(tc.method, tc.path, tc.body)
			require.Equal(t, tc.status, r.status, string(r.body))
			if tc.code != "" {
				assert.Equal(t, tc.code, r.errorCode(t))
			}
			if tc.message != "" {
				assert.Contains(t, r.message(t), tc.message)
			}
		})
	}

	list := g.call("GET", parts, "")
	require.Equal(t, 200, list.status)
	assert.JSONEq(t, `{"partitions":[{"name":"2026-01-01$eu","partition_id":1,"partition":{"dt":"2026-01-01","region":"eu"}}]}`, string(list.body))
}

func TestPartitionPagination(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.mustCreateDatabase("d")
	g.mustCreateTable("d", partitionedTable)
	parts := db + "/d/tables/events/partitions"
	for _, dt := range []string{"3", "1", "2"} {
		require.Equal(t, 201, g.call("POST", parts, `{"partition":{"dt":"`+dt+`","region":"eu"}}`).status)
	}
	first := g.call("GET", parts+"?max_results=2", "").json(t)
	require.Len(t, first["partitions"], 2)
	assert.Equal(t, "1$eu", first["partitions"].([]any)[0].(map[string]any)["name"])
	second := g.call("GET", parts+"?max_results=2&page_token="+first["next_page_token"].(string), "").json(t)
	require.Len(t, second["partitions"], 1)
	assert.Equal(t, "3$eu", second["partitions"].([]any)[0].(map[string]any)["name"])
	assert.NotContains(t, second, "next_page_token")
}

func TestDeadlineExceededAnswers504(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withTimeout(50*time.Millisecond))
	g.clusters.Cluster("default").Catalog().SetHook(func(ctx context.Context, op string) error {
		if op != "ListDatabases" {
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	})
	started := time.Now()
	r := g.call("GET", db, "")
	require.Equal(t, 504, r.status, string(r.body))
	assert.Equal(t, "timeout", r.errorCode(t))
	assert.Less(t, time.Since(started), 5*time.Second)

	// A backend slower than the deadline is cut off the same way.
	g.clusters.Cluster("default").Catalog().SetHook(func(ctx context.Context, op string) error {
		time.Sleep(80 * time.Millisecond)
		return nil
	})
	r = g.call("HEAD", db+"/x", "")
	assert.Equal(t, 504, r.status)
}

func TestBackendFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		hook       memory.Hook
		status     int
		code       string
		message    string
		retryAfter string
	}{
		{
			name:   "panic",
			hook:   func(context.Context, string) error { panic("secret handler bug") },
			status: 500, code: "internal", message: "internal error",
		},
		{
			name:   "plain error",
			hook:   func(context.Context, string) error { return assert.AnError },
			status: 500, code: "internal", message: "internal error",
		},
		{
			name: "internal kind",
			hook: func(context.Context, string) error {
				return &domain.Error{Kind: domain.KindInternal, Message: "secret detail"}
			},
			status: 500, code: "internal", message: "internal error",
		},
		{
			name:   "backend",
			hook:   func(context.Context, string) error { return domain.Errorf(domain.KindBackend, "coordinator said no") },
			status: 500, code: "backend", message: "coordinator said no",
		},
		{
			name: "unavailable",
			hook: func(context.Context, string) error {
				return &domain.Error{Kind: domain.KindUnavailable, Message: "no leader", RetryAfterMillis: 2500}
			},
			status: 503, code: "unavailable", message: "no leader", retryAfter: "3",
		},
		{
			name:   "exhausted",
			hook:   func(context.Context, string) error { return domain.Errorf(domain.KindResourceExhausted, "pool full") },
			status: 429, code: "resource_exhausted", message: "pool full", retryAfter: "1",
		},
		{
			name:   "forbidden",
			hook:   func(context.Context, string) error { return domain.Errorf(domain.KindUnauthorized, "no ACL") },
			status: 403, code: "unauthorized", message: "no ACL",
		},
		{
			name:   "unsupported",
			hook:   func(context.Context, string) error { return domain.Errorf(domain.KindUnsupported, "nope") },
			status: 501, code: "unsupported", message: "nope",
		},
		{
			name:   "cancelled",
			hook:   func(context.Context, string) error { return context.Canceled },
			status: 499, code: "cancelled", message: "request cancelled",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t)
			g.clusters.Cluster("default").Catalog().SetHook(tc.hook)
			r := g.call("GET", db, "")
			require.Equal(t, tc.status, r.status, string(r.body))
			assert.Equal(t, tc.code, r.errorCode(t))
			assert.Equal(t, tc.message, r.message(t))
			assert.NotContains(t, string(r.body), "secret")
			assert.Equal(t, tc.retryAfter, r.header.Get("Retry-After"))
		})
	}
}

type denyAll struct{}

func (denyAll) Authenticate(context.Context, domain.Credentials) (domain.Principal, error) {
	return domain.Principal{}, domain.Errorf(domain.KindUnauthenticated, "missing credentials")
}

type headerIdentity struct{}

func (headerIdentity) Authenticate(_ context.Context, c domain.Credentials) (domain.Principal, error) {
	if c.Header("X-User") == "" || c.RemoteAddr == "" {
		return domain.Principal{}, domain.Errorf(domain.KindUnauthenticated, "who are you")
	}
	return domain.Principal{Name: c.Header("X-User"), Method: "trusted-header"}, nil
}

func TestIdentity(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withIdentity(denyAll{}))
	for _, path := range []string{"/v1/clusters", db} {
		r := g.call("GET", path, "")
		require.Equal(t, 401, r.status, path)
		assert.Equal(t, "unauthenticated", r.errorCode(t))
	}
	assert.Equal(t, 200, g.call("GET", "/health", "").status, "probes need no credentials")
	assert.Equal(t, 200, g.call("GET", "/v1/openapi.json", "").status)

	h := newGateway(t, withIdentity(headerIdentity{}))
	assert.Equal(t, 401, h.call("GET", db, "").status)
	assert.Equal(t, 200, h.call("GET", db, "", "X-User", "alice").status)
}

func TestNewRejectsIncompleteWiring(t *testing.T) {
	t.Parallel()
	_, err := New(Options{RequestTimeout: time.Second, MaxRequestBytes: 1}, Deps{})
	require.Error(t, err)
	_, err = New(Options{}, Deps{Catalog: application.NewCatalogService(memory.NewClusters(), nil), Readiness: NewReadiness()})
	require.Error(t, err)
}

// TestBodyTooLarge runs over a real listener: fasthttp refuses an oversized
// body while reading it, before any handler runs, and fiber's in-memory Test
// helper cannot observe that response.
func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	base := serveOnListener(t, g)
	url := base + db
	big := `{"database":"` + strings.Repeat("x", testMaxBody) + `"}`

	cases := []struct {
		name string
		body io.Reader
	}{
		{name: "declared length", body: strings.NewReader(big)},
		{name: "chunked", body: io.MultiReader(strings.NewReader(big))}, // unknown length: sent chunked
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := nethttp.Post(url, "application/json", tc.body)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, 413, resp.StatusCode, string(body))
			r := response{status: resp.StatusCode, header: resp.Header, body: body}
			assert.Equal(t, "limit_exceeded", r.errorCode(t))
			assert.Contains(t, r.message(t), "16384 bytes")
		})
	}
	assert.Contains(t, g.logs.String(), `"status":413`, "the rejection is in the access log")

	resp, err := nethttp.Post(url, "application/json", strings.NewReader(`{"database":"fits"}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 201, resp.StatusCode, "the listener still serves")
}

// slowCatalog answers successfully, but only after the request deadline,
// ignoring its context as a careless backend would.
type slowCatalog struct {
	*application.CatalogService
	delay time.Duration
}

func (s slowCatalog) Clusters() []string {
	time.Sleep(s.delay)
	return s.CatalogService.Clusters()
}

func TestLateSuccessStillTimesOut(t *testing.T) {
	t.Parallel()
	rd := NewReadiness()
	rd.SetServing()
	app, err := New(Options{RequestTimeout: 20 * time.Millisecond, MaxRequestBytes: 1024}, Deps{
		Catalog:   slowCatalog{CatalogService: application.NewCatalogService(memory.NewClusters("default"), nil), delay: 60 * time.Millisecond},
		Readiness: rd,
	})
	require.NoError(t, err)
	g := &gateway{t: t, app: app}
	r := g.call("GET", "/v1/clusters", "")
	require.Equal(t, 504, r.status, string(r.body))
	assert.Equal(t, "timeout", r.errorCode(t))
}
