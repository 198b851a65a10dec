package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestAppendLogArgsReadsArgumentsAsSlogDoes: the access line's extra
// key/value pairs, turned into attributes once (issue 22), print exactly as
// slog.Logger.Log prints the same arguments.
func TestAppendLogArgsReadsArgumentsAsSlogDoes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		kv   []any
	}{
		{name: "none"},
		{name: "strings and numbers", kv: []any{"table", "d.users", "rows", 500, "rows_failed", int64(3), "quota_delay_ms", 1.25}},
		{name: "booleans, maps and durations", kv: []any{"caught_up", true, "failed_by_code", map[string]int{"timeout": 2}, "took", 3 * time.Millisecond}},
		{name: "an slog.Attr among pairs", kv: []any{"a", 1, slog.String("b", "two"), "c", []byte("x")}},
		{name: "a key without a value", kv: []any{"a", 1, "dangling"}},
		{name: "a value without a key", kv: []any{42, "a", "b"}},
		{name: "an error value", kv: []any{"error", errors.New("boom")}},
		{name: "a group", kv: []any{slog.Group("g", "x", 1), "y", nil}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var want, got bytes.Buffer
			strip := func(a []string, at slog.Attr) slog.Attr {
				if at.Key == slog.TimeKey && len(a) == 0 {
					return slog.Attr{}
				}
				return at
			}
			slog.New(slog.NewJSONHandler(&want, &slog.HandlerOptions{ReplaceAttr: strip})).Log(context.Background(), slog.LevelInfo, "request", tc.kv...)
			slog.New(slog.NewJSONHandler(&got, &slog.HandlerOptions{ReplaceAttr: strip})).
				LogAttrs(context.Background(), slog.LevelInfo, "request", appendLogArgs(nil, tc.kv)...)
			require.NotEmpty(t, want.String())
			assert.Equal(t, want.String(), got.String())
		})
	}
}

// accessLine returns the keys, in order, and the values of the last access
// line logged for route.
func accessLine(t *testing.T, logs, route string) ([]string, map[string]any) {
	t.Helper()
	var line string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, `"msg":"request"`) && strings.Contains(l, `"route":"`+route+`"`) {
			line = l
		}
	}
	require.NotEmpty(t, line, "no access line for %s in %s", route, logs)
	dec := json.NewDecoder(strings.NewReader(line))
	_, err := dec.Token()
	require.NoError(t, err)
	var keys []string
	values := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		k := tok.(string)
		var v any
		require.NoError(t, dec.Decode(&v))
		keys = append(keys, k)
		values[k] = v
	}
	return keys, values
}

// TestAccessLineContent: the access line of the data-plane requests keeps
// its keys, their order and their JSON types (issue 22 builds it from
// slog.Attr values instead of key/value arguments).
func TestAccessLineContent(t *testing.T) {
	t.Parallel()
	fixed := []string{"time", "level", "msg", "request_id", "method", "route", "path", "status", "duration_ms", "bytes_in", "bytes_out", "remote",
		"principal", "auth_method"}
	cases := []struct {
		name    string
		path    string
		route   string
		body    string
		status  int
		extra   []string
		numbers []string
		strs    map[string]string
	}{
		{name: "lookup", path: usersLookup, route: pathLookup, body: `{"keys":[{"id":1,"region":"eu"},{"region":"eu","id":2}]}`, status: 200,
			extra: []string{"table", "keys", "found"}, numbers: []string{"keys", "found"}, strs: map[string]string{"table": "d.users"}},
		{name: "prefix lookup", path: usersPrefix, route: pathPrefix, body: `{"prefix_columns":["region"],"prefixes":[{"region":"eu"}]}`, status: 200,
			extra: []string{"table", "prefixes", "rows_returned"}, numbers: []string{"prefixes", "rows_returned"}, strs: map[string]string{"table": "d.users"}},
		{name: "write", path: usersWrite, route: pathRecords, body: entries(upsert("e1", "eu", 1)), status: 200,
			extra:   []string{"content_type", "table", "rows", "rows_failed", "rows_applied_unknown", "delivery_ms"},
			numbers: []string{"rows", "rows_failed", "rows_applied_unknown", "delivery_ms"}, strs: map[string]string{"table": "d.users", "content_type": "application/json"}},
		{name: "a refused lookup", path: usersLookup, route: pathLookup, body: `{"keys":[{"region":"eu"}]}`, status: 400,
			extra: []string{"error_code", "error"}, strs: map[string]string{"error_code": "invalid_argument"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t).withTables()
			g.lookup.setLookup(func(_ context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
				return &domain.LookupResponse{SchemaID: req.SchemaID, Results: make([]domain.LookupResult, len(req.Keys))}, nil
			})
			g.lookup.setPrefix(func(_ context.Context, req *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
				return &domain.PrefixLookupResponse{SchemaID: req.SchemaID, Results: make([]domain.PrefixLookupResult, len(req.Prefixes))}, nil
			})
			r := g.call("POST", tc.path, tc.body)
			require.Equal(t, tc.status, r.status, string(r.body))
			keys, values := accessLine(t, g.logs.String(), tc.route)
			want := append(append([]string{}, fixed...), tc.extra...)
			assert.Equal(t, want, keys)
			assert.Equal(t, r.header.Get(HeaderRequestID), values["request_id"])
			assert.Equal(t, "POST", values["method"])
			assert.Equal(t, tc.path, values["path"])
			assert.Equal(t, float64(tc.status), values["status"])
			for _, k := range append([]string{"duration_ms", "bytes_in", "bytes_out"}, tc.numbers...) {
				assert.IsType(t, float64(0), values[k], k)
			}
			assert.Equal(t, float64(len(tc.body)), values["bytes_in"])
			assert.Equal(t, float64(len(r.body)), values["bytes_out"])
			assert.IsType(t, "", values["remote"])
			for k, v := range tc.strs {
				assert.Equal(t, v, values[k], k)
			}
		})
	}
}
