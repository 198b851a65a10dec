package http

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	nethttp "net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// usersTable is a primary-key table bucketed by region, so prefix lookups
// on region are allowed.
const usersTable = `{
  "table_name": "users",
  "columns": [
    {"name": "region", "data_type": {"type": "STRING"}},
    {"name": "id", "data_type": {"type": "BIGINT"}},
    {"name": "name", "data_type": {"type": "STRING"}},
    {"name": "score", "data_type": {"type": "INTEGER"}},
    {"name": "avatar", "data_type": {"type": "BYTES"}},
    {"name": "profile", "data_type": {"type": "ROW", "fields": [{"name": "age", "field_type": {"type": "INTEGER"}}]}}
  ],
  "primary_key": ["region", "id"],
  "distribution": {"bucket_keys": ["region"]}
}`

// eventsTable is a log table.
const eventsTable = `{
  "table_name": "events",
  "columns": [
    {"name": "ts", "data_type": {"type": "BIGINT"}},
    {"name": "msg", "data_type": {"type": "STRING"}}
  ]
}`

const (
	usersPath   = db + "/d/tables/users"
	usersWrite  = usersPath + "/records"
	usersLookup = usersPath + "/records/lookup"
	usersPrefix = usersPath + "/records/prefix-lookup"
	eventsWrite = db + "/d/tables/events/records"
)

// withTables creates database d with the users and events tables.
func (g *gateway) withTables() *gateway {
	g.t.Helper()
	g.mustCreateDatabase("d")
	g.mustCreateTable("d", usersTable)
	g.mustCreateTable("d", eventsTable)
	return g
}

func withAdmission(adm Admission) gatewayOption {
	return func(o *Options, _ *Deps) { o.Admission = adm }
}

func upsert(id string, region string, userID int) string {
	return fmt.Sprintf(`{"id":%q,"upsert":{"region":%q,"id":%d,"name":"n%d"}}`, id, region, userID, userID)
}

func entries(items ...string) string {
	return `{"entries":[` + strings.Join(items, ",") + `]}`
}

func TestWriteRecordsSuccess(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	r := g.call("POST", usersWrite, entries(
		upsert("e1", "eu", 1),
		`{"id":"e2","delete":{"region":"eu","id":2}}`,
		`{"upsert":{"region":"us","id":3,"score":7,"avatar":"AAE=","profile":{"age":30}},"id":"e3"}`,
	))
	require.Equal(t, 200, r.status, string(r.body))
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	assert.JSONEq(t, `{"row_count":3,"success_count":3,"error_count":0,
		"successes":[{"id":"e1"},{"id":"e2"},{"id":"e3"}],"failures":[]}`, string(r.body))

	require.Equal(t, 1, g.writer.calls())
	b, _ := g.writer.last()
	assert.Equal(t, domain.TablePath{Database: "d", Table: "users"}, b.Table)
	assert.NotZero(t, b.TableID)
	assert.Equal(t, int32(1), b.SchemaID)
	require.Len(t, b.Entries, 3)
	assert.Equal(t, domain.OpUpsert, b.Entries[0].Op)
	assert.Equal(t, domain.OpDelete, b.Entries[1].Op)
	row := b.Entries[2].Row
	require.Len(t, row, 6)
	assert.Equal(t, "us", string(row[0].Bytes))
	assert.Equal(t, int64(3), row[1].I64)
	assert.True(t, row[2].Null, "omitted nullable column is null")
	assert.Equal(t, int64(7), row[3].I64)
	assert.Equal(t, []byte{0, 1}, row[4].Bytes)
	assert.Equal(t, int64(30), row[5].Elems[0].I64)

	assert.Contains(t, g.logs.String(), `"rows":3`)
	assert.Contains(t, g.logs.String(), `"route":"/v1/clusters/{cluster}/databases/{database}/tables/{table}/records"`)
}

func TestWriteRecordsMixedVerdictsInInputOrder(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		return []domain.EntryResult{
			{},
			{Code: "timeout", Message: "batch in flight at the deadline", Retryable: true, Applied: domain.AppliedUnknown},
			{},
			{Code: "invalid_record", Kind: "invalid_argument", Message: "rejected by the server", Applied: domain.AppliedNo},
			{Code: "not_enough_replicas", Kind: "unavailable", Message: "weird", Retryable: true}, // no Applied: reported as unknown
		}, nil
	})
	r := g.call("POST", usersWrite, entries(upsert("a", "eu", 1), upsert("b", "eu", 2), upsert("c", "eu", 3), upsert("d", "eu", 4), upsert("e", "eu", 5)))
	require.Equal(t, 200, r.status, string(r.body))
	assert.JSONEq(t, `{"row_count":5,"success_count":2,"error_count":3,
		"successes":[{"id":"a"},{"id":"c"}],
		"failures":[
		  {"id":"b","error_code":"timeout","message":"batch in flight at the deadline","retryable":true,"applied":"unknown"},
		  {"id":"d","error_code":"invalid_argument","message":"invalid_record: rejected by the server","retryable":false,"applied":"no"},
		  {"id":"e","error_code":"unavailable","message":"not_enough_replicas: weird","retryable":true,"applied":"unknown"}]}`, string(r.body))
	logs := g.logs.String()
	assert.Contains(t, logs, `"rows_failed":3`)
	assert.Contains(t, logs, `"failed_by_code":"invalid_record=1,not_enough_replicas=1,timeout=1"`)
}

func TestWriteRecordsPreflight(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	ok := upsert("ok", "eu", 1)
	cases := []struct {
		name, path, body string
		want             []string
	}{
		{"wrong type", usersWrite, entries(ok, `{"id":"a","upsert":{"region":"eu","id":1,"score":"x"}}`), []string{"entry `a`", "column `score`"}},
		{"integer overflow", usersWrite, entries(ok, `{"id":"a","upsert":{"region":"eu","id":1,"score":2147483648}}`), []string{"entry `a`", "column `score`"}},
		{"bigint overflow", usersWrite, entries(`{"id":"a","upsert":{"region":"eu","id":9223372036854775808}}`), []string{"entry `a`", "column `id`"}},
		{"bad base64", usersWrite, entries(ok, `{"id":"a","upsert":{"region":"eu","id":1,"avatar":"!!!"}}`), []string{"entry `a`", "column `avatar`"}},
		{"nested path", usersWrite, entries(`{"id":"a","upsert":{"region":"eu","id":1,"profile":{"age":"old"}}}`), []string{"entry `a`", "column `profile.age`"}},
		{"missing primary key", usersWrite, entries(ok, `{"id":"a","upsert":{"id":1}}`), []string{"entry `a`", "column `region`", "missing primary-key column"}},
		{"null primary key", usersWrite, entries(`{"id":"a","upsert":{"region":null,"id":1}}`), []string{"entry `a`", "column `region`"}},
		{"unknown column", usersWrite, entries(`{"id":"a","upsert":{"region":"eu","id":1,"nope":1}}`), []string{"entry `a`", "column `nope`", "no such column"}},
		{"duplicate id", usersWrite, entries(upsert("a", "eu", 1), upsert("a", "eu", 2)), []string{"entry `a`", "duplicate id"}},
		{"duplicate JSON key", usersWrite, entries(`{"id":"a","upsert":{"region":"eu","region":"us","id":1}}`), []string{"entry `a`", "column `region`", "duplicate key"}},
		{"two operations", usersWrite, entries(`{"id":"a","upsert":{"region":"eu","id":1},"delete":{"region":"eu","id":1}}`), []string{"entry `a`", "more than one operation"}},
		{"append on primary-key table", usersWrite, entries(`{"id":"a","append":{"region":"eu","id":1}}`), []string{"entry `a`", "`append` is not allowed on a primary-key table"}},
		{"upsert on log table", eventsWrite, entries(`{"id":"a","upsert":{"ts":1}}`), []string{"entry `a`", "log table"}},
		{"delete with a value column of the wrong type", usersWrite, entries(`{"id":"a","delete":{"region":"eu","id":1,"name":5}}`), []string{"entry `a`", "column `name`"}},
		{"missing id", usersWrite, entries(ok, `{"upsert":{"region":"eu","id":1}}`), []string{"entries[1]", "missing `id`"}},
		{"no entries", usersWrite, `{"entries":[]}`, []string{"entries"}},
		{"missing entries", usersWrite, `{}`, []string{"entries"}},
		{"unknown top-level field", usersWrite, `{"entries":[` + ok + `],"extra":1}`, []string{"extra"}},
		{"malformed JSON", usersWrite, `{"entries":[` + ok, []string{}},
		{"partial update without a key column", usersWrite, `{"partial_update_columns":["id","name"],"entries":[` + ok + `]}`, []string{"partial_update_columns", "region"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.call("POST", tc.path, tc.body)
			require.Equal(t, 400, r.status, string(r.body))
			assert.Equal(t, "invalid_argument", r.errorCode(t))
			for _, w := range tc.want {
				assert.Contains(t, r.message(t), w)
			}
		})
	}
	assert.Zero(t, g.writer.calls(), "no entry of an invalid request reaches the writer")
}

func TestWriteRecordsMediaAndEncoding(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	body := entries(upsert("a", "eu", 1))

	r := g.call("POST", usersWrite, body, "Content-Type", "text/plain")
	assert.Equal(t, 415, r.status)
	assert.Equal(t, "unsupported_media_type", r.errorCode(t))

	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write([]byte(body))
	require.NoError(t, zw.Close())
	r = g.call("POST", usersWrite, zipped.String(), "Content-Encoding", "gzip")
	require.Equal(t, 200, r.status, string(r.body))
	assert.Equal(t, float64(1), r.json(t)["success_count"])

	r = g.call("POST", usersWrite, body, "Content-Encoding", "br")
	assert.Equal(t, 415, r.status)
	assert.Contains(t, r.message(t), "Content-Encoding")

	// A small compressed body that expands beyond the body limit.
	var bomb bytes.Buffer
	zw = gzip.NewWriter(&bomb)
	_, _ = zw.Write([]byte(`{"entries":[` + strings.Repeat(" ", 4*testMaxBody) + `]}`))
	require.NoError(t, zw.Close())
	require.Less(t, bomb.Len(), testMaxBody)
	r = g.call("POST", usersWrite, bomb.String(), "Content-Encoding", "gzip")
	assert.Equal(t, 413, r.status)
	assert.Equal(t, "limit_exceeded", r.errorCode(t))
}

func TestDataPlaneLimits(t *testing.T) {
	t.Parallel()
	g := newDataGateway(t, application.RecordOptions{Limits: application.RecordLimits{
		WriteMaxRows: 2, LookupMaxKeys: 2, LookupMaxKeyBytes: 200, PrefixLookupMaxPrefixes: 1,
	}}).withTables()

	cases := []struct {
		name, path, body string
		want             string
	}{
		{"rows above max-rows", usersWrite, entries(upsert("a", "eu", 1), upsert("b", "eu", 2), upsert("c", "eu", 3)), "more than 2"},
		{"keys above max-keys", usersLookup, `{"keys":[{"region":"eu","id":1},{"region":"eu","id":2},{"region":"eu","id":3}]}`, "more than 2"},
		{"keys above max-key-bytes", usersLookup, `{"keys":[{"region":"` + strings.Repeat("x", 300) + `","id":1}]}`, "above the limit of 200 bytes"},
		{"prefixes above max-prefixes", usersPrefix, `{"prefix_columns":["region"],"prefixes":[{"region":"eu"},{"region":"us"}]}`, "more than 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.call("POST", tc.path, tc.body)
			require.Equal(t, 413, r.status, string(r.body))
			assert.Equal(t, "limit_exceeded", r.errorCode(t))
			assert.Contains(t, r.message(t), tc.want)
		})
	}
	assert.Zero(t, g.writer.calls())

	// gateway.rest.write.max-request-bytes is enforced while reading the
	// body, before any handler: only a real listener observes the answer.
	base := serveOnListener(t, g)
	body := entries(upsert("a", "eu", 1)) + strings.Repeat(" ", testMaxBody)
	resp, err := nethttp.Post(base+usersWrite, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	r := response{status: resp.StatusCode, header: resp.Header, body: raw}
	require.Equal(t, 413, r.status, string(raw))
	assert.Equal(t, "limit_exceeded", r.errorCode(t))
	assert.Contains(t, r.message(t), "exceeds the limit of 16384 bytes")
	assert.Zero(t, g.writer.calls())
}

func TestDataPlaneWithoutPorts(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	g.data.writer, g.data.lookup = nil, nil
	for _, p := range []struct{ path, body string }{
		{usersWrite, entries(upsert("a", "eu", 1))},
		{usersLookup, `{"keys":[{"region":"eu","id":1}]}`},
		{usersPrefix, `{"prefix_columns":["region"],"prefixes":[{"region":"eu"}]}`},
	} {
		r := g.call("POST", p.path, p.body)
		require.Equal(t, 501, r.status, string(r.body))
		assert.Equal(t, "unsupported", r.errorCode(t))
	}

	// The memory backend's own ports refuse too.
	s, err := g.clusters.Session(context.Background(), "default", domain.Principal{})
	require.NoError(t, err)
	g.data.writer = s.Writer()
	r := g.call("POST", usersWrite, entries(upsert("a", "eu", 1)))
	require.Equal(t, 501, r.status, string(r.body))
	assert.Contains(t, r.message(t), "memory")

	r = g.call("POST", db+"/d/tables/nope/records", entries(upsert("a", "eu", 1)))
	assert.Equal(t, 404, r.status)
	assert.Equal(t, "table_not_found", r.errorCode(t))
	r = g.call("GET", usersWrite, "")
	assert.Equal(t, 405, r.status)
	assert.Equal(t, "POST", r.header.Get("Allow"))
}

func TestWriteRecordsWholeRequestErrors(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	cases := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"unavailable", &domain.Error{Kind: domain.KindUnavailable, Retryable: true, RetryAfterMillis: 2500, Message: "the writer is closed"}, 503, "unavailable"},
		{"unauthorized", &domain.Error{Kind: domain.KindUnauthorized, Message: "no WRITE permission"}, 403, "unauthorized"},
		{"internal", fmt.Errorf("boom"), 500, "internal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g.writer.set(func(context.Context, *domain.WriteBatch) ([]domain.EntryResult, error) { return nil, tc.err })
			r := g.call("POST", usersWrite, entries(upsert("a", "eu", 1)))
			require.Equal(t, tc.status, r.status, string(r.body))
			assert.Equal(t, tc.code, r.errorCode(t))
			if tc.code == "unavailable" {
				assert.Equal(t, "3", r.header.Get("Retry-After"))
			}
		})
	}
}

func TestWriteRecordsRecreatedTableIsRetriedOnce(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	stale := domain.NewStaleDefinition(&domain.StaleDefinitionError{Table: domain.TablePath{Database: "d", Table: "users"}, UsedTableID: 1, TableID: 2})
	g.writer.set(func(context.Context, *domain.WriteBatch) ([]domain.EntryResult, error) { return nil, stale })
	r := g.call("POST", usersWrite, entries(upsert("a", "eu", 1)))
	// The official status for "the table or schema changed before submission".
	require.Equal(t, 503, r.status, string(r.body))
	assert.Equal(t, "unavailable", r.errorCode(t))
	assert.Equal(t, 1, g.writer.calls(), "the definition did not change, so no second attempt")

	old, _ := g.writer.last()

	// Re-create the table through the gateway: the next write is decoded
	// against the new definition at once (the writer refuses the old id).
	require.Equal(t, 204, g.call("DELETE", usersPath, "").status)
	g.mustCreateTable("d", usersTable)
	calls := 0
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		calls++
		if b.TableID == old.TableID {
			return nil, stale
		}
		return make([]domain.EntryResult, len(b.Entries)), nil
	})
	r = g.call("POST", usersWrite, entries(upsert("a", "eu", 1)))
	require.Equal(t, 200, r.status, string(r.body))
	assert.Equal(t, 1, calls, "no attempt against the dropped table")
	b, _ := g.writer.last()
	assert.NotEqual(t, old.TableID, b.TableID)
}

func TestWriteRecordsPicksUpANewColumn(t *testing.T) {
	t.Parallel()
	g := newDataGateway(t, application.RecordOptions{SchemaRefetchInterval: time.Nanosecond}).withTables()
	require.Equal(t, 200, g.call("POST", usersWrite, entries(upsert("a", "eu", 1))).status)
	r := g.call("PATCH", usersPath, `{"changes":[{"kind":"add_column","name":"note","data_type":{"type":"STRING"}}]}`)
	require.Equal(t, 204, r.status, string(r.body))
	// The cached definition lacks `note`; the gateway refetches instead of
	// refusing the entry.
	r = g.call("POST", usersWrite, entries(`{"id":"b","upsert":{"region":"eu","id":2,"note":"hi"}}`))
	require.Equal(t, 200, r.status, string(r.body))
	b, _ := g.writer.last()
	assert.Equal(t, int32(2), b.SchemaID)
	assert.Len(t, b.Entries[0].Row, 7)
}

func TestRequestTimeoutHeader(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withTimeout(5*time.Second)).withTables()
	cases := []struct {
		header string
		budget time.Duration // the request deadline the header yields
	}{
		{"", 5 * time.Second},
		{"1s", time.Second},
		{"1500ms", 1500 * time.Millisecond},
		{"2000", 2 * time.Second},
		{"10m", 5 * time.Second},    // clamped
		{"999999", 5 * time.Second}, // clamped
	}
	for _, tc := range cases {
		t.Run("header "+tc.header, func(t *testing.T) {
			var headers []string
			if tc.header != "" {
				headers = []string{HeaderRequestTimeout, tc.header}
			}
			before := time.Now()
			r := g.call("POST", usersWrite, entries(upsert("a", "eu", 1)), headers...)
			require.Equal(t, 200, r.status, string(r.body))
			_, dl := g.writer.last()
			require.False(t, dl.IsZero())
			// Delivery ends AnswerMargin before the request deadline.
			want := before.Add(tc.budget - application.AnswerMargin(tc.budget))
			assert.WithinDuration(t, want, dl, 150*time.Millisecond)
			assert.False(t, dl.After(before.Add(tc.budget)))
		})
	}
	for _, bad := range []string{"abc", "0", "0s", "-5s", "5 s"} {
		r := g.call("POST", usersWrite, entries(upsert("a", "eu", 1)), HeaderRequestTimeout, bad)
		require.Equal(t, 400, r.status, bad)
		assert.Contains(t, r.message(t), HeaderRequestTimeout)
	}
	// Catalog routes honour the header as well.
	r := g.call("GET", usersPath, "", HeaderRequestTimeout, "nope")
	assert.Equal(t, 400, r.status)
}

func TestMaxDeliveryTime(t *testing.T) {
	t.Parallel()
	g := newDataGateway(t, application.RecordOptions{MaxDeliveryTime: 300 * time.Millisecond}, withTimeout(5*time.Second)).withTables()
	before := time.Now()
	require.Equal(t, 200, g.call("POST", usersWrite, entries(upsert("a", "eu", 1))).status)
	_, dl := g.writer.last()
	assert.WithinDuration(t, before.Add(300*time.Millisecond), dl, 100*time.Millisecond)
}

func TestWriteTimeouts(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()

	// Delivery runs out with entries in flight: the verdicts are the answer.
	g.writer.set(func(ctx context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		<-ctx.Done()
		res := make([]domain.EntryResult, len(b.Entries))
		for i := range res {
			res[i] = domain.EntryResult{Code: "timeout", Message: "deadline", Retryable: true, Applied: domain.AppliedUnknown}
		}
		return res, nil
	})
	start := time.Now()
	r := g.call("POST", usersWrite, entries(upsert("a", "eu", 1), upsert("b", "eu", 2)), HeaderRequestTimeout, "200ms")
	require.Equal(t, 200, r.status, string(r.body))
	assert.Less(t, time.Since(start), 200*time.Millisecond, "delivery ends before the request deadline")
	assert.Equal(t, float64(2), r.json(t)["error_count"])

	// The writer gives up as a whole at the deadline: nothing per entry.
	g.writer.set(func(ctx context.Context, _ *domain.WriteBatch) ([]domain.EntryResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	r = g.call("POST", usersWrite, entries(upsert("a", "eu", 1)), HeaderRequestTimeout, "100ms")
	require.Equal(t, 504, r.status, string(r.body))
	assert.Equal(t, "timeout", r.errorCode(t))

	// The delivery deadline passes before anything is submitted (a slow
	// catalog).
	gs := newDataGateway(t, application.RecordOptions{MaxDeliveryTime: 50 * time.Millisecond}).withTables()
	gs.clusters.Cluster("default").Catalog().SetHook(func(_ context.Context, op string) error {
		if op == "GetTable" {
			time.Sleep(100 * time.Millisecond)
		}
		return nil
	})
	r = gs.call("POST", eventsWrite, entries(`{"id":"x","append":{"ts":1}}`))
	require.Equal(t, 504, r.status, string(r.body))
	assert.Equal(t, "timeout", r.errorCode(t))
	assert.Contains(t, r.message(t), "before any entry was submitted")
	assert.Zero(t, gs.writer.calls(), "the writer was not called")
}

func TestLookupRecords(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	g.lookup.setLookup(func(_ context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
		row := []domain.Datum{
			{Bytes: []byte("eu")}, {I64: 1}, {Bytes: []byte("ann")}, {I64: 7}, {Bytes: []byte{0, 1}},
			{Elems: []domain.Datum{{I64: 30}}},
		}
		return &domain.LookupResponse{SchemaID: req.SchemaID, Results: []domain.LookupResult{
			{Row: row},
			{},
			{Err: &domain.Error{Kind: domain.KindUnavailable, Retryable: true, Message: "leader moved"}},
		}}, nil
	})
	r := g.call("POST", usersLookup, `{"keys":[{"id":1,"region":"eu"},{"region":"eu","id":"2"},{"region":"us","id":3}]}`)
	require.Equal(t, 200, r.status, string(r.body))
	assert.JSONEq(t, `{"schema_id":1,"results":[
		{"input_index":0,"found":true,"row":{"region":"eu","id":"1","name":"ann","score":7,"avatar":"AAE=","profile":{"age":30}}},
		{"input_index":1,"found":false,"row":null},
		{"input_index":2,"found":false,"row":null,"error":{"code":"unavailable","message":"leader moved","retryable":true}}]}`, string(r.body))

	req := g.lookup.lastLookup()
	assert.Equal(t, domain.TablePath{Database: "d", Table: "users"}, req.Table)
	require.Len(t, req.Keys, 3)
	assert.Equal(t, "eu", string(req.Keys[1][0].Bytes), "keys are in primary-key order")
	assert.Equal(t, int64(2), req.Keys[1][1].I64)

	bad := []struct{ body, want string }{
		{`{"keys":[{"region":"eu","id":1},{"region":"eu"}]}`, "keys[1]: column `id`"},
		{`{"keys":[{"region":"eu","id":1,"name":"x"}]}`, "keys[0]: column `name`"},
		{`{"keys":[{"region":"eu","id":"one"}]}`, "keys[0]: column `id`"},
		{`{"keys":[]}`, "keys"},
		{`{"ids":[]}`, "ids"},
	}
	for _, b := range bad {
		r := g.call("POST", usersLookup, b.body)
		require.Equal(t, 400, r.status, b.body)
		assert.Equal(t, "invalid_argument", r.errorCode(t))
		assert.Contains(t, r.message(t), b.want)
	}
	r = g.call("POST", db+"/d/tables/events/records/lookup", `{"keys":[{"ts":1}]}`)
	require.Equal(t, 400, r.status)
	assert.Contains(t, r.message(t), "primary key")
}

func TestPrefixLookupRecords(t *testing.T) {
	t.Parallel()
	g := newDataGateway(t, application.RecordOptions{Limits: application.RecordLimits{PrefixLookupMaxRowsPerPrefix: 2}}).withTables()
	row := func(id int64) []domain.Datum {
		return []domain.Datum{{Bytes: []byte("eu")}, {I64: id}, {Null: true}, {Null: true}, {Null: true}, {Null: true}}
	}
	g.lookup.setPrefix(func(_ context.Context, req *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
		return &domain.PrefixLookupResponse{SchemaID: req.SchemaID, Results: []domain.PrefixLookupResult{
			{Rows: [][]domain.Datum{row(1), row(2)}, Truncated: true},
			{},
			{Rows: [][]domain.Datum{row(1), row(2), row(3)}}, // more than asked: cut
		}}, nil
	})
	r := g.call("POST", usersPrefix, `{"prefix_columns":["region"],"prefixes":[{"region":"eu"},{"region":"us"},{"region":"ap"}]}`)
	require.Equal(t, 200, r.status, string(r.body))
	eu1 := `{"region":"eu","id":"1","name":null,"score":null,"avatar":null,"profile":null}`
	eu2 := `{"region":"eu","id":"2","name":null,"score":null,"avatar":null,"profile":null}`
	body := r.json(t)
	for i, res := range body["results"].([]any) {
		m := res.(map[string]any)
		if m["truncated"] == true {
			assert.NotEmpty(t, m["next_page_token"], "result %d", i) // extension: continues the answer
		}
		delete(m, "next_page_token")
	}
	got, err := json.Marshal(body)
	require.NoError(t, err)
	assert.JSONEq(t, `{"schema_id":1,"results":[
		{"input_index":0,"row_count":2,"truncated":true,"rows":[`+eu1+`,`+eu2+`]},
		{"input_index":1,"row_count":0,"truncated":false,"rows":[]},
		{"input_index":2,"row_count":2,"truncated":true,"rows":[`+eu1+`,`+eu2+`]}]}`, string(got))
	req := g.lookup.lastPrefix()
	assert.Equal(t, []string{"region"}, req.PrefixColumns)
	assert.Equal(t, 2, req.MaxRowsPerPrefix)
	require.Len(t, req.Prefixes, 3)
	assert.Equal(t, "us", string(req.Prefixes[1][0].Bytes))

	bad := []struct{ body, want string }{
		{`{"prefix_columns":["id"],"prefixes":[{"id":1}]}`, "bucket key"},
		{`{"prefix_columns":["region","id"],"prefixes":[{"region":"eu","id":1}]}`, "bucket key"},
		{`{"prefix_columns":["nope"],"prefixes":[{"nope":1}]}`, "nope"},
		{`{"prefix_columns":["region"],"prefixes":[{"region":"eu"},{"region":5}]}`, "prefixes[1]: column `region`"},
		{`{"prefix_columns":["region"],"prefixes":[{"region":"eu","id":1}]}`, "prefixes[0]: column `id`"},
	}
	for _, b := range bad {
		r := g.call("POST", usersPrefix, b.body)
		require.Equal(t, 400, r.status, "%s: %s", b.body, r.body)
		assert.Equal(t, "invalid_argument", r.errorCode(t))
		assert.Contains(t, r.message(t), b.want)
	}
}

// TestWriteBudgetExhaustedWhileLookupsPass fills the write budget with a
// write that blocks in the writer: the next write waits the bounded
// admission wait and is refused with 429 and a computed Retry-After, while
// lookups, on their own budget, still answer at once.
func TestWriteBudgetExhaustedWhileLookupsPass(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withAdmission(Admission{WriteConcurrency: 1, LookupConcurrency: 1, MaxWait: 100 * time.Millisecond})).withTables()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		once.Do(func() { close(entered) })
		<-release
		return make([]domain.EntryResult, len(b.Entries)), nil
	})
	g.lookup.setLookup(func(_ context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
		return &domain.LookupResponse{SchemaID: req.SchemaID, Results: make([]domain.LookupResult, len(req.Keys))}, nil
	})

	first := make(chan response, 1)
	go func() { first <- g.call("POST", usersWrite, entries(upsert("a", "eu", 1))) }()
	<-entered
	time.Sleep(1100 * time.Millisecond) // the holder's age feeds the estimate

	start := time.Now()
	r := g.call("POST", usersWrite, entries(upsert("b", "eu", 2)))
	waited := time.Since(start)
	require.Equal(t, 429, r.status, string(r.body))
	assert.Equal(t, "resource_exhausted", r.errorCode(t))
	assert.Contains(t, r.message(t), "write")
	retry, err := strconv.Atoi(r.header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q", r.header.Get("Retry-After"))
	assert.Equal(t, 2, retry, "one slot, position 1, the holder running ~1.2s so far: ceil(1.2s) = 2")
	assert.GreaterOrEqual(t, waited, 90*time.Millisecond, "the wait is bounded, not zero")
	assert.Less(t, waited, time.Second)

	start = time.Now()
	for i := 0; i < 3; i++ {
		l := g.call("POST", usersLookup, `{"keys":[{"region":"eu","id":1}]}`)
		require.Equal(t, 200, l.status, string(l.body))
	}
	assert.Less(t, time.Since(start), 90*time.Millisecond, "lookups do not queue behind writes")

	close(release)
	require.Equal(t, 200, (<-first).status)
	r = g.call("POST", usersWrite, entries(upsert("c", "eu", 3)))
	assert.Equal(t, 200, r.status, "the slot is free again")
}

func TestWriteRateLimit(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withAdmission(Admission{WriteRequestsPerSecond: 1, MaxWait: 20 * time.Millisecond})).withTables()
	require.Equal(t, 200, g.call("POST", usersWrite, entries(upsert("a", "eu", 1))).status)
	r := g.call("POST", usersWrite, entries(upsert("b", "eu", 2)))
	require.Equal(t, 429, r.status, string(r.body))
	assert.Equal(t, "resource_exhausted", r.errorCode(t))
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	assert.Contains(t, r.message(t), "rate limit")
	// Lookups are not rate-limited.
	g.lookup.setLookup(func(_ context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
		return &domain.LookupResponse{SchemaID: req.SchemaID, Results: make([]domain.LookupResult, len(req.Keys))}, nil
	})
	assert.Equal(t, 200, g.call("POST", usersLookup, `{"keys":[{"region":"eu","id":1}]}`).status)
	assert.Equal(t, 1, g.writer.calls())

	// Bytes per second: once the burst (one second, at least one body) is
	// spent, a body waits for its exact delay, here longer than the wait.
	gb := newGateway(t, withAdmission(Admission{WriteBytesPerSecond: 2000, MaxWait: 20 * time.Millisecond})).withTables()
	var items []string
	for i := 0; i < 120; i++ {
		items = append(items, upsert(fmt.Sprintf("e%d", i), "eu", i))
	}
	big := entries(items...)
	require.Less(t, len(big), testMaxBody)
	require.Greater(t, len(big), testMaxBody/3)
	statuses := []int{}
	for i := 0; i < 4 && (len(statuses) == 0 || statuses[len(statuses)-1] == 200); i++ {
		r = gb.call("POST", usersWrite, big)
		statuses = append(statuses, r.status)
	}
	require.Equal(t, 429, r.status, "statuses %v", statuses)
	retry, err := strconv.Atoi(r.header.Get("Retry-After"))
	require.NoError(t, err)
	// The missing tokens at 2000 bytes/s: at most one body's worth.
	assert.GreaterOrEqual(t, retry, 1)
	assert.LessOrEqual(t, retry, (len(big)+1999)/2000)
}

func TestMetadataBudget(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withAdmission(Admission{MetadataConcurrency: 1, MaxWait: 50 * time.Millisecond})).withTables()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	g.clusters.Cluster("default").Catalog().SetHook(func(_ context.Context, op string) error {
		if op == "ListDatabases" {
			once.Do(func() { close(entered) })
			<-release
		}
		return nil
	})
	first := make(chan response, 1)
	go func() { first <- g.call("GET", db, "") }()
	<-entered
	r := g.call("GET", db+"/d", "")
	require.Equal(t, 429, r.status, string(r.body))
	assert.Equal(t, "resource_exhausted", r.errorCode(t))
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	// Writes read the schema through the catalog but on their own budget.
	assert.Equal(t, 200, g.call("POST", usersWrite, entries(upsert("a", "eu", 1))).status)
	// Probes and the cluster list are never queued.
	assert.Equal(t, 200, g.call("GET", "/v1/clusters", "").status)
	close(release)
	assert.Equal(t, 200, (<-first).status)
}

// TestWriteRecordsInvalidPartitionValueWritesNothing: one entry of an append
// to a partitioned log table with a null, empty or unnameable partition value
// fails the whole request with a 400 naming the entry and the column, and no
// entry reaches the writer (the official one-invalid-entry rule).
func TestWriteRecordsInvalidPartitionValueWritesNothing(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.mustCreateDatabase("d")
	g.mustCreateTable("d", `{"table_name":"plog","columns":[
		{"name":"region","data_type":{"type":"STRING"}},
		{"name":"dt","data_type":{"type":"STRING"}},
		{"name":"v","data_type":{"type":"INTEGER"}}],
		"partitioned_by":["region","dt"]}`)
	path := db + "/d/tables/plog/records"
	ok := `{"id":"ok","append":{"region":"eu","dt":"2026-12-01","v":1}}`
	cases := []struct{ name, bad, column string }{
		{"null region", `{"id":"bad","append":{"region":null,"dt":"2026-12-01","v":2}}`, "region"},
		{"omitted region", `{"id":"bad","append":{"dt":"2026-12-01","v":2}}`, "region"},
		{"null dt", `{"id":"bad","append":{"region":"eu","dt":null,"v":2}}`, "dt"},
		{"empty region", `{"id":"bad","append":{"region":"","dt":"2026-12-01","v":2}}`, "region"},
		{"invalid region", `{"id":"bad","append":{"region":"a/b","dt":"2026-12-01","v":2}}`, "region"},
		{"dot-dot dt", `{"id":"bad","append":{"region":"eu","dt":"..","v":2}}`, "dt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.call("POST", path, entries(ok, tc.bad))
			require.Equal(t, 400, r.status, string(r.body))
			assert.Equal(t, "invalid_argument", r.errorCode(t))
			assert.Contains(t, r.message(t), "entry `bad`")
			assert.Contains(t, r.message(t), "column `"+tc.column+"`")
		})
	}
	assert.Zero(t, g.writer.calls(), "no entry of an invalid request reaches the writer")
}

// recreateElsewhere drops and (when recreate) re-creates d.users straight
// in the memory cluster, as another gateway instance would: this gateway's
// own DDL path (and so its invalidation) is not involved.
func (g *gateway) recreateElsewhere(recreate bool) {
	g.t.Helper()
	ctx := context.Background()
	s, err := g.clusters.Session(ctx, "default", domain.Principal{})
	require.NoError(g.t, err)
	path := domain.TablePath{Database: "d", Table: "users"}
	info, err := s.Catalog().GetTable(ctx, path)
	require.NoError(g.t, err)
	require.NoError(g.t, s.Catalog().DropTable(ctx, path, false))
	if recreate {
		require.NoError(g.t, s.Catalog().CreateTable(ctx, path, info.Descriptor, false))
	}
}

// goneVerdicts is what the Fluss writer answers for a batch built for a
// table id the cluster no longer has: every entry table_not_found, nothing
// applied.
func goneVerdicts(b *domain.WriteBatch) []domain.EntryResult {
	res := make([]domain.EntryResult, len(b.Entries))
	for i := range res {
		res[i] = domain.EntryResult{Code: "table_not_found", Applied: domain.AppliedNo,
			Message: fmt.Sprintf("table `%s` with id %d no longer exists", b.Table, b.TableID)}
	}
	return res
}

// TestWriteRecordsTableRecreatedElsewhereIsResent: when another gateway
// dropped and re-created the table between this gateway's definition and its
// send, the writer's all-table_not_found verdicts are a stale definition:
// the gateway refreshes and resends once to the new table id, and answers
// 200 with every entry written.
func TestWriteRecordsTableRecreatedElsewhereIsResent(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	var ids []int64
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		ids = append(ids, b.TableID)
		if len(ids) == 1 {
			g.recreateElsewhere(true)
			return goneVerdicts(b), nil
		}
		return make([]domain.EntryResult, len(b.Entries)), nil
	})
	r := g.call("POST", usersWrite, entries(upsert("a", "eu", 1), upsert("b", "eu", 2)))
	require.Equal(t, 200, r.status, string(r.body))
	assert.JSONEq(t, `{"row_count":2,"success_count":2,"error_count":0,"successes":[{"id":"a"},{"id":"b"}],"failures":[]}`, string(r.body))
	require.Len(t, ids, 2, "one resend")
	assert.NotEqual(t, ids[0], ids[1], "the resend is built for the new table id")

	// Some buckets still accepted the old table id (Fluss deletes a dropped
	// table's replicas bucket by bucket): once the table id is known to be
	// re-created, every entry is resent, since what the dropped table
	// accepted went with it.
	ids = nil
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		ids = append(ids, b.TableID)
		if len(ids) == 1 {
			g.recreateElsewhere(true)
			res := goneVerdicts(b)
			res[0] = domain.EntryResult{}
			return res, nil
		}
		return make([]domain.EntryResult, len(b.Entries)), nil
	})
	r = g.call("POST", usersWrite, entries(upsert("a", "eu", 1), upsert("b", "eu", 2)))
	require.Equal(t, 200, r.status, string(r.body))
	assert.Equal(t, float64(2), r.json(t)["success_count"], "%s", r.body)
	require.Len(t, ids, 2, "every entry resent once")
	assert.NotEqual(t, ids[0], ids[1])

	// When the refresh shows the same table id, the verdicts are the
	// entries' own: no resend.
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		res := goneVerdicts(b)
		res[0] = domain.EntryResult{}
		return res, nil
	})
	calls := g.writer.calls()
	r = g.call("POST", usersWrite, entries(upsert("a", "eu", 1), upsert("b", "eu", 2)))
	require.Equal(t, 200, r.status, string(r.body))
	assert.Equal(t, float64(1), r.json(t)["error_count"])
	assert.Equal(t, "b", r.json(t)["failures"].([]any)[0].(map[string]any)["id"])
	assert.Equal(t, calls+1, g.writer.calls(), "no resend")
}

// TestWriteRecordsTableDroppedElsewhereIs404: when another gateway dropped
// the table, the first write through this one answers 404 table_not_found
// for the request, not 200 with per-entry verdicts.
func TestWriteRecordsTableDroppedElsewhereIs404(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		if g.writer.calls() == 1 {
			g.recreateElsewhere(false)
		}
		return goneVerdicts(b), nil
	})
	r := g.call("POST", usersWrite, entries(upsert("a", "eu", 1)))
	require.Equal(t, 404, r.status, string(r.body))
	assert.Equal(t, "table_not_found", r.errorCode(t))
	assert.Equal(t, 1, g.writer.calls(), "nothing is resent to a table that is gone")
}

// TestLookupTableRecreatedOrDroppedElsewhere: a lookup that the lookup
// client refuses with table_not_found (its table id is gone) is retried once
// against the re-created table, and is a 404 when the table is gone.
func TestLookupTableRecreatedOrDroppedElsewhere(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	var ids []int64
	g.lookup.setLookup(func(_ context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
		ids = append(ids, req.TableID)
		if len(ids) == 1 {
			g.recreateElsewhere(true)
			return nil, &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable,
				Message: fmt.Sprintf("table `%s` with id %d no longer exists", req.Table, req.TableID)}
		}
		return &domain.LookupResponse{SchemaID: req.SchemaID, Results: make([]domain.LookupResult, len(req.Keys))}, nil
	})
	r := g.call("POST", usersLookup, `{"keys":[{"region":"eu","id":1}]}`)
	require.Equal(t, 200, r.status, string(r.body))
	require.Len(t, ids, 2)
	assert.NotEqual(t, ids[0], ids[1])

	g.lookup.setLookup(func(_ context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
		g.recreateElsewhere(false)
		return nil, &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable, Message: "gone"}
	})
	r = g.call("POST", usersLookup, `{"keys":[{"region":"eu","id":1}]}`)
	require.Equal(t, 404, r.status, string(r.body))
	assert.Equal(t, "table_not_found", r.errorCode(t))
}
