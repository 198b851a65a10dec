// Package conformance checks a running gateway against the official Fluss
// gateway's REST contract (apache/fluss: fluss-gateway/openapi.yaml, FIP-49):
// every official operation is sent exactly in the official request shapes,
// and the status, headers and body of every answer are validated against the
// OpenAPI document the gateway itself serves at /v1/openapi.json, with
// kin-openapi's openapi3filter (request and response validation).
//
// The request bodies are written as Go test data after the official
// document's schemas and the bodies of its end-to-end test
// (apache/fluss@27811ba4 fluss-gateway/tests/e2e_cluster.rs, a file not on
// main at 545c553: the journey database, the `orders`
// table definition, the PATCH changes, the partition `{"dt": ...}`); the
// official document carries no request examples of its own.
//
// Run drives one scenario against any gateway: the in-process one over the
// memory backend (adapters/http tests) and the real binary over a Fluss
// 0.9.1 cluster (tests/integration, build tag integration).
package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Target is the gateway under test.
type Target struct {
	// Base is the scheme and authority requests are sent to, for example
	// http://127.0.0.1:8080.
	Base string
	// Do sends one request.
	Do func(*http.Request) (*http.Response, error)
	// Cluster is a configured cluster id; Database a name free for the test.
	Cluster, Database string
	// Records is false when the target cannot write rows; the write cases
	// are then skipped.
	Records bool
	// Fluss is true for a real Fluss cluster behind the gateway (the
	// Backend cases run only then).
	Fluss bool
	// LogTTLAlterable is true when the Fluss cluster lets table.log.ttl be
	// altered (1.0; 0.9.1 refuses it): the official end-to-end test's alter
	// then succeeds, and the described table shows the new value.
	LogTTLAlterable bool
	// After, when set, runs after the named case passed (for checks through
	// an independent client).
	After func(t *testing.T, caseName string)
}

// Case is one request of the scenario and what the official contract says
// of its answer.
type Case struct {
	Name   string
	Method string
	// Path is relative to /v1/clusters/{cluster}; "{db}" stands for the
	// database of the run. A Path starting with "/v1/" or "/health" or
	// "/ready" is absolute.
	Path string
	// Body is the literal JSON request body ("" for none).
	Body   string
	Status int
	// Location is the expected Location header (relative to the cluster
	// prefix as Path), "" when none is checked.
	Location string
	// Empty asserts an empty response body (the official 201 of a table
	// create, every 204).
	Empty bool
	// Code is the expected error.code of an error envelope.
	Code string
	// JSON, when set, is the exact expected response body.
	JSON string
	// Has maps JSON pointers (RFC 6901) into the response body to the JSON
	// they must hold, for bodies with server-assigned parts.
	Has map[string]string
	// Records marks a write case.
	Records bool
	// Invalid marks a request that deliberately breaks the document (to
	// check the error answer); its request is not validated.
	Invalid bool
	// Backend marks a case whose answer comes from the Fluss server's own
	// checks; it is skipped on targets without a real cluster.
	Backend bool
	// Absent lists JSON pointers that must not resolve in the response
	// body (members the official contract leaves out when empty).
	Absent []string
	// Header holds request headers to send.
	Header map[string]string
	// Unrouted marks a request no operation of the document serves (wrong
	// method, unknown path): only the envelope is checked.
	Unrouted bool
}

// orders is the official end-to-end journey table: a partitioned
// primary-key table with configs, custom properties and a comment.
const orders = `{
  "table_name": "orders",
  "columns": [
    {"name": "id", "data_type": {"type": "BIGINT"}, "nullable": false},
    {"name": "dt", "data_type": {"type": "STRING"}, "nullable": false},
    {"name": "amount", "data_type": {"type": "DECIMAL", "precision": 18, "scale": 2}}
  ],
  "primary_key": ["id", "dt"],
  "partitioned_by": ["dt"],
  "distribution": {"bucket_count": 2, "bucket_keys": ["id"]},
  "configs": {"table.log.ttl": "7d"},
  "custom_properties": {"app.owner": "sales", "app.stage": "draft"},
  "comment": "the journey table"
}`

// applog is a log table with every nested type shape of the official
// ColumnDataType (ARRAY, MAP, ROW with nested nullability) and each
// parameterised type.
const applog = `{
  "table_name": "applog",
  "columns": [
    {"name": "ts", "data_type": {"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 3}},
    {"name": "level", "data_type": {"type": "CHAR", "length": 5}},
    {"name": "msg", "data_type": {"type": "STRING"}, "nullable": null, "comment": null},
    {"name": "at", "data_type": {"type": "TIME_WITHOUT_TIME_ZONE", "precision": 0}},
    {"name": "local", "data_type": {"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 6}},
    {"name": "raw", "data_type": {"type": "BINARY", "length": 4}},
    {"name": "tags", "data_type": {"type": "ARRAY", "element_type": {"type": "STRING", "nullable": false}}},
    {"name": "attrs", "data_type": {"type": "MAP", "key_type": {"type": "STRING", "nullable": false}, "value_type": {"type": "DOUBLE"}}},
    {"name": "origin", "data_type": {"type": "ROW", "fields": [
      {"name": "host", "field_type": {"type": "STRING"}, "description": "host name"},
      {"name": "port", "field_type": {"type": "INTEGER", "nullable": false}}
    ]}}
  ],
  "primary_key": null,
  "distribution": null,
  "comment": null
}`

// Cases returns the scenario in order: every official operation, its
// success shapes and the documented error statuses the official contract
// names for it.
func Cases() []Case {
	dry := strings.Replace(orders, `"table_name"`, `"validate_only": true, "table_name"`, 1)
	badConfig := strings.Replace(orders, `"table.log.ttl": "7d"`, `"table.log.ttl": "7d", "nope.key": "1"`, 1)
	unknownConfig := strings.Replace(orders, `"table.log.ttl": "7d"`, `"table.log.ttl": "7d", "table.nope": "1"`, 1)
	tbl := "/databases/{db}/tables/orders"
	return []Case{
		{Name: "health", Method: "GET", Path: "/health", Status: 200},
		{Name: "ready", Method: "GET", Path: "/ready", Status: 200},
		{Name: "openapi", Method: "GET", Path: "/v1/openapi.json", Status: 200},
		{Name: "list clusters", Method: "GET", Path: "/v1/clusters", Status: 200},
		{Name: "wrong method", Unrouted: true, Method: "PUT", Path: "/v1/clusters", Status: 405, Code: "method_not_allowed"},
		{Name: "unknown route", Unrouted: true, Method: "GET", Path: "/v1/nope", Status: 404, Code: "not_found"},
		{Name: "query string on a route without one", Invalid: true, Method: "GET", Path: "/v1/clusters?x=1", Status: 400, Code: "invalid_argument"},

		{Name: "create database", Method: "POST", Path: "/databases", Body: `{"database": "{db}"}`, Status: 201,
			Location: "/databases/{db}", JSON: `{"database": "{db}"}`},
		{Name: "create database again", Method: "POST", Path: "/databases", Body: `{"database": "{db}"}`, Status: 409, Code: "database_already_exists"},
		{Name: "create database, unknown field", Invalid: true, Method: "POST", Path: "/databases", Body: `{"database_name": "{db}"}`, Status: 400, Code: "invalid_argument"},
		{Name: "create database, not JSON", Invalid: true, Method: "POST", Path: "/databases", Body: "-", Status: 415, Code: "unsupported_media_type"},
		{Name: "list databases", Method: "GET", Path: "/databases", Status: 200},
		{Name: "list databases, one per page", Method: "GET", Path: "/databases?max_results=1", Status: 200},
		{Name: "list databases, bad page size", Invalid: true, Method: "GET", Path: "/databases?max_results=0", Status: 400, Code: "invalid_argument"},
		{Name: "list databases, unknown cluster", Method: "GET", Path: "/v1/clusters/no_such_cluster/databases", Status: 404, Code: "cluster_not_found"},

		{Name: "validate only", Method: "POST", Path: "/databases/{db}/tables", Body: dry, Status: 200,
			JSON: `{"validate_only": true, "database": "{db}", "table": "orders", "column_count": 3, "primary_key": ["id", "dt"]}`},
		{Name: "validate only created nothing", Method: "GET", Path: tbl, Status: 404, Code: "table_not_found"},
		{Name: "create table, config without table. prefix", Method: "POST", Path: "/databases/{db}/tables", Body: badConfig, Status: 400, Code: "invalid_argument"},
		{Name: "create table, unknown Fluss property", Method: "POST", Path: "/databases/{db}/tables", Body: unknownConfig, Status: 400, Code: "invalid_argument", Backend: true},
		{Name: "create table", Method: "POST", Path: "/databases/{db}/tables", Body: orders, Status: 201, Location: tbl, Empty: true},
		{Name: "create table again", Method: "POST", Path: "/databases/{db}/tables", Body: orders, Status: 409, Code: "table_already_exists"},
		{Name: "create log table", Method: "POST", Path: "/databases/{db}/tables", Body: applog, Status: 201, Location: "/databases/{db}/tables/applog", Empty: true},
		{Name: "create table in a missing database", Method: "POST", Path: "/databases/{db}_absent/tables", Body: orders, Status: 404, Code: "database_not_found"},
		{Name: "list tables", Method: "GET", Path: "/databases/{db}/tables", Status: 200, JSON: `{"tables": ["applog", "orders"]}`},
		{Name: "describe table", Method: "GET", Path: tbl, Status: 200, Has: map[string]string{
			"/database": `"{db}"`, "/table": `"orders"`,
			"/columns": `[{"name": "id", "data_type": {"type": "BIGINT"}, "nullable": false},
			  {"name": "dt", "data_type": {"type": "STRING"}, "nullable": false},
			  {"name": "amount", "data_type": {"type": "DECIMAL", "precision": 18, "scale": 2}, "nullable": true}]`,
			"/primary_key": `["id", "dt"]`, "/partitioned_by": `["dt"]`,
			"/distribution":          `{"bucket_count": 2, "bucket_keys": ["id"]}`,
			"/configs/table.log.ttl": `"7d"`,
			"/custom_properties":     `{"app.owner": "sales", "app.stage": "draft"}`,
			"/comment":               `"the journey table"`,
		}},
		{Name: "describe log table", Method: "GET", Path: "/databases/{db}/tables/applog", Status: 200, Has: map[string]string{
			"/columns/6/data_type": `{"type": "ARRAY", "element_type": {"type": "STRING", "nullable": false}}`,
			"/columns/7/data_type": `{"type": "MAP", "key_type": {"type": "STRING", "nullable": false}, "value_type": {"type": "DOUBLE"}}`,
			"/columns/8/data_type": `{"type": "ROW", "fields": [{"name": "host", "field_type": {"type": "STRING"}, "description": "host name"},
			  {"name": "port", "field_type": {"type": "INTEGER", "nullable": false}}]}`,
			"/columns/0/data_type": `{"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 3}`,
		}},
		{Name: "describe missing table", Method: "GET", Path: "/databases/{db}/tables/absent", Status: 404, Code: "table_not_found"},

		{Name: "alter: schema and config mixed", Method: "PATCH", Path: tbl, Status: 400, Code: "invalid_argument",
			Body: `{"changes": [{"kind": "add_column", "name": "note", "data_type": {"type": "STRING"}}, {"kind": "reset_config", "key": "app.stage"}]}`},
		{Name: "alter: add column", Method: "PATCH", Path: tbl, Status: 204, Empty: true,
			Body: `{"changes": [{"kind": "add_column", "name": "note", "data_type": {"type": "STRING"}, "comment": "free text"}]}`},
		{Name: "alter: custom properties", Method: "PATCH", Path: tbl, Status: 204, Empty: true,
			Body: `{"changes": [{"kind": "set_config", "key": "app.owner", "value": "finance"}, {"kind": "reset_config", "key": "app.stage"}]}`},
		// The official end-to-end test alters table.log.ttl; Fluss 0.9.1
		// refuses to alter that option, so an alterable one is used.
		{Name: "alter: Fluss property", Method: "PATCH", Path: tbl, Status: 204, Empty: true,
			Body: `{"changes": [{"kind": "set_config", "key": "table.log.tiered.local-segments", "value": "3"}]}`},
		{Name: "alter: Fluss property Fluss cannot alter", Method: "PATCH", Path: tbl, Status: 400, Code: "invalid_argument", Backend: true,
			Body: `{"changes": [{"kind": "set_config", "key": "table.log.ttl", "value": "30d"}]}`},
		{Name: "alter: unknown Fluss property", Method: "PATCH", Path: tbl, Status: 400, Code: "invalid_argument", Backend: true,
			Body: `{"changes": [{"kind": "set_config", "key": "table.nope", "value": "1"}]}`},
		{Name: "alter: missing table", Method: "PATCH", Path: "/databases/{db}/tables/absent", Status: 404, Code: "table_not_found",
			Body: `{"changes": [{"kind": "reset_config", "key": "app.stage"}]}`},
		{Name: "describe altered table", Method: "GET", Path: tbl, Status: 200, Has: map[string]string{
			"/columns/3":                               `{"name": "note", "data_type": {"type": "STRING"}, "nullable": true, "comment": "free text"}`,
			"/custom_properties":                       `{"app.owner": "finance"}`,
			"/configs/table.log.ttl":                   `"7d"`,
			"/configs/table.log.tiered.local-segments": `"3"`,
		}},

		{Name: "alter: reset the last custom property", Method: "PATCH", Path: tbl, Status: 204, Empty: true,
			Body: `{"changes": [{"kind": "reset_config", "key": "app.owner"}]}`},
		{Name: "describe without custom properties", Method: "GET", Path: tbl, Status: 200, Absent: []string{"/custom_properties"}},
		{Name: "create partition", Method: "POST", Path: tbl + "/partitions", Body: `{"partition": {"dt": "2026-08-25"}}`, Status: 201,
			Location: tbl + "/partitions/2026-08-25"},
		{Name: "create partition again", Method: "POST", Path: tbl + "/partitions", Body: `{"partition": {"dt": "2026-08-25"}}`, Status: 409, Code: "partition_already_exists"},
		{Name: "create partition, wrong key", Method: "POST", Path: tbl + "/partitions", Body: `{"partition": {"region": "eu"}}`, Status: 400, Code: "invalid_argument"},
		{Name: "list partitions", Method: "GET", Path: tbl + "/partitions", Status: 200, Has: map[string]string{
			"/partitions/0/name": `"2026-08-25"`, "/partitions/0/partition": `{"dt": "2026-08-25"}`,
		}},
		{Name: "list partitions of a log table", Method: "GET", Path: "/databases/{db}/tables/applog/partitions", Status: 400, Code: "invalid_argument"},

		{Name: "write: upsert", Method: "POST", Path: tbl + "/records", Status: 200, Records: true,
			Body: `{"entries": [{"id": "e1", "upsert": {"id": 1, "dt": "2026-08-25", "amount": "10.50", "note": "first"}},
			  {"id": "e2", "upsert": {"id": "2", "dt": "2026-08-25", "amount": 3, "note": "second"}}]}`,
			JSON: `{"row_count": 2, "success_count": 2, "error_count": 0, "successes": [{"id": "e1"}, {"id": "e2"}], "failures": []}`},
		{Name: "write: partial update and delete", Method: "POST", Path: tbl + "/records", Status: 200, Records: true,
			Body: `{"partial_update_columns": ["id", "dt", "note"], "entries": [{"id": "p1", "upsert": {"id": 1, "dt": "2026-08-25", "note": "updated"}},
			  {"id": "d2", "delete": {"id": 2, "dt": "2026-08-25"}}]}`,
			JSON: `{"row_count": 2, "success_count": 2, "error_count": 0, "successes": [{"id": "p1"}, {"id": "d2"}], "failures": []}`},
		{Name: "write: append", Method: "POST", Path: "/databases/{db}/tables/applog/records", Status: 200, Records: true,
			Body: `{"entries": [{"id": "a1", "append": {"ts": "2026-08-25T12:00:00.000Z", "level": "INFO", "msg": "hello", "tags": ["a"],
			  "attrs": {"k": 1.5}, "origin": {"host": "h", "port": 80}}}]}`,
			JSON: `{"row_count": 1, "success_count": 1, "error_count": 0, "successes": [{"id": "a1"}], "failures": []}`},
		{Name: "write: a response that is not JSON is not acceptable", Method: "POST", Path: tbl + "/records", Status: 406, Code: "not_acceptable", Records: true,
			Header: map[string]string{"Accept": "text/html"}, Body: `{"entries": [{"id": "x", "upsert": {"id": 1, "dt": "2026-08-25"}}]}`},
		{Name: "write: no entries", Invalid: true, Method: "POST", Path: tbl + "/records", Status: 400, Code: "invalid_argument", Records: true,
			Body: `{"entries": []}`},
		{Name: "write: append to a primary-key table", Method: "POST", Path: tbl + "/records", Status: 400, Code: "invalid_argument", Records: true,
			Body: `{"entries": [{"id": "x", "append": {"id": 1, "dt": "2026-08-25"}}]}`},
		{Name: "write: unknown table", Method: "POST", Path: "/databases/{db}/tables/absent/records", Status: 404, Code: "table_not_found", Records: true,
			Body: `{"entries": [{"id": "x", "upsert": {"id": 1}}]}`},

		{Name: "drop non-empty database", Method: "DELETE", Path: "/databases/{db}", Status: 409, Code: "database_not_empty"},
		{Name: "drop partition", Method: "DELETE", Path: tbl + "/partitions/2026-08-25", Status: 204, Empty: true},
		{Name: "drop missing partition", Method: "DELETE", Path: tbl + "/partitions/2026-08-25", Status: 404, Code: "partition_not_found"},
		{Name: "drop table", Method: "DELETE", Path: tbl, Status: 204, Empty: true},
		{Name: "drop log table", Method: "DELETE", Path: "/databases/{db}/tables/applog", Status: 204, Empty: true},
		{Name: "drop missing table", Method: "DELETE", Path: tbl, Status: 404, Code: "table_not_found"},
		{Name: "drop database", Method: "DELETE", Path: "/databases/{db}", Status: 204, Empty: true},
		{Name: "drop missing database", Method: "DELETE", Path: "/databases/{db}", Status: 404, Code: "database_not_found"},
	}
}

// Result counts what a run covered.
type Result struct {
	Cases, Passed, Skipped int
	Operations             map[string]int // operationId -> cases
}

// Run sends every case in order and validates each exchange against the
// OpenAPI document the target serves. Cases after a failed one still run,
// so one regression does not hide the others.
// logTTLAlterable turns the cases that expect Fluss to refuse altering
// table.log.ttl into the official end-to-end test's expectation: 204, and
// the described table shows 30d.
func logTTLAlterable(c Case) Case {
	switch c.Name {
	case "alter: Fluss property Fluss cannot alter":
		c.Name, c.Status, c.Code, c.Empty = "alter: table.log.ttl (alterable on this Fluss)", 204, "", true
	case "describe altered table":
		has := make(map[string]string, len(c.Has))
		for k, v := range c.Has {
			has[k] = v
		}
		has["/configs/table.log.ttl"] = `"30d"`
		c.Has = has
	}
	return c
}

func Run(t *testing.T, tg Target) Result {
	t.Helper()
	router := servedDocument(t, tg)
	res := Result{Operations: map[string]int{}}
	prefix := "/v1/clusters/" + tg.Cluster
	for _, c := range Cases() {
		if tg.LogTTLAlterable {
			c = logTTLAlterable(c)
		}
		if c.Records && !tg.Records || c.Backend && !tg.Fluss {
			res.Skipped++
			continue
		}
		res.Cases++
		ok := t.Run(c.Name, func(t *testing.T) {
			op := exchange(t, tg, router, prefix, c)
			if !c.Unrouted {
				res.Operations[op]++
			}
		})
		if ok {
			res.Passed++
			if tg.After != nil {
				tg.After(t, c.Name)
			}
		}
	}
	return res
}

func fill(s, db string) string { return strings.ReplaceAll(s, "{db}", db) }

func absolute(prefix, p string) string {
	if strings.HasPrefix(p, "/v1/") || p == "/health" || p == "/ready" {
		return p
	}
	return prefix + p
}

// exchange sends one case and validates it; it returns the operation id.
func exchange(t *testing.T, tg Target, router routers.Router, prefix string, c Case) string {
	ctx := context.Background()
	body := fill(c.Body, tg.Database)
	var reqBody io.Reader
	contentType := "application/json"
	if body == "-" {
		body, contentType = "x", "text/plain"
	}
	if body != "" {
		reqBody = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, tg.Base+absolute(prefix, fill(c.Path, tg.Database)), reqBody)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range c.Header {
		req.Header.Set(k, v)
	}
	if c.Unrouted {
		_, _, err := router.FindRoute(req)
		require.Error(t, err, "%s %s is no operation of the served document", c.Method, req.URL.Path)
		resp, err := tg.Do(req)
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, c.Status, resp.StatusCode, "status; body %s", raw)
		checkEnvelope(t, resp, raw, c.Code)
		return c.Method + " (unrouted)"
	}
	route, params, err := router.FindRoute(req)
	require.NoError(t, err, "%s %s is an operation of the served document", c.Method, req.URL.Path)
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, SkipSettingDefaults: true}}
	if !c.Invalid {
		// The official request shapes are valid requests of our document.
		require.NoError(t, openapi3filter.ValidateRequest(ctx, in), "request %s", body)
		if body != "" {
			req.Body = io.NopCloser(strings.NewReader(body))
			req.ContentLength = int64(len(body))
		}
	}

	resp, err := tg.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)

	assert.Equal(t, c.Status, resp.StatusCode, "status; body %s", raw)
	assert.NotEmpty(t, resp.Header.Get("x-request-id"), "every answer carries x-request-id")
	if c.Location != "" {
		assert.Equal(t, absolute(prefix, fill(c.Location, tg.Database)), resp.Header.Get("Location"))
	}
	if c.Empty {
		assert.Empty(t, raw, "the official answer has no body")
	}
	if c.JSON != "" {
		assert.JSONEq(t, fill(c.JSON, tg.Database), string(raw))
	}
	for ptr, want := range c.Has {
		var doc any
		require.NoError(t, json.Unmarshal(raw, &doc), "%s", raw)
		got, ok := pointer(doc, ptr)
		if assert.True(t, ok, "%s in %s", ptr, raw) {
			b, err := json.Marshal(got)
			require.NoError(t, err)
			assert.JSONEq(t, fill(want, tg.Database), string(b), ptr)
		}
	}
	for _, ptr := range c.Absent {
		var doc any
		require.NoError(t, json.Unmarshal(raw, &doc), "%s", raw)
		_, ok := pointer(doc, ptr)
		assert.False(t, ok, "%s is left out of %s", ptr, raw)
	}
	if c.Code != "" {
		checkEnvelope(t, resp, raw, c.Code)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(raw)), Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	if c.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/openapi.json") {
		out.Options.ExcludeResponseBody = true
	}
	assert.NoError(t, openapi3filter.ValidateResponse(ctx, out), "response %d %s", resp.StatusCode, raw)
	return route.Operation.OperationID
}

// checkEnvelope checks the official error envelope: exactly code, message
// and request_id, the latter equal to the x-request-id header.
func checkEnvelope(t *testing.T, resp *http.Response, raw []byte, code string) {
	t.Helper()
	var m map[string]map[string]any
	require.NoError(t, json.Unmarshal(raw, &m), "%s", raw)
	assert.Equal(t, code, m["error"]["code"], "%s", raw)
	assert.Len(t, m["error"], 3, "the envelope has exactly code, message and request_id")
	assert.Equal(t, resp.Header.Get("x-request-id"), m["error"]["request_id"])
}

// pointer resolves an RFC 6901 JSON pointer in a decoded document.
func pointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			var i int
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// servedDocument loads the target's /v1/openapi.json and routes it at the
// target's base URL.
func servedDocument(t *testing.T, tg Target) routers.Router {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, tg.Base+"/v1/openapi.json", nil)
	require.NoError(t, err)
	resp, err := tg.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(loader.Context), "the served document is valid OpenAPI, its examples included")
	doc.Servers = openapi3.Servers{{URL: tg.Base}}
	router, err := gorillamux.NewRouter(doc)
	require.NoError(t, err, "routing the served document")
	return router
}
