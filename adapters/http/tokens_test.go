package http

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestPageTokenNotReplayedOnAnotherListing: a page token of one database's
// table listing is refused on another database's listing, on another
// cluster and for another principal, and an altered token is refused, each
// with 400 invalid_argument (issue 27, finding 5).
func TestPageTokenNotReplayedOnAnotherListing(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withIdentity(bearerIdentity{}))
	alice := bearer("alice")
	for _, d := range []string{db + "/db1", db + "/db2", "/v1/clusters/other/databases/db1"} {
		base, name, _ := strings.Cut(strings.TrimPrefix(d, "/"), "/databases/")
		require.Equal(t, 201, g.call("POST", "/"+base+"/databases", fmt.Sprintf(`{"database":%q}`, name), alice...).status)
		for _, tbl := range []string{"a", "b", "c"} {
			r := g.call("POST", d+"/tables", fmt.Sprintf(`{"table_name":%q,"columns":[{"name":"x","data_type":{"type":"INTEGER"}}]}`, tbl), alice...)
			require.Equal(t, 201, r.status, string(r.body))
		}
	}
	r := g.call("GET", db+"/db1/tables?max_results=1", "", alice...)
	require.Equal(t, 200, r.status, string(r.body))
	tok := r.json(t)["next_page_token"].(string)
	r = g.call("GET", db+"/db1/tables?max_results=1&page_token="+tok, "", alice...)
	require.Equal(t, 200, r.status, "the token continues its own listing: %s", r.body)
	assert.Equal(t, []any{"b"}, r.json(t)["tables"])

	altered := []byte(tok)
	altered[len(altered)/2] ^= 1
	for name, path := range map[string]string{
		"another database": db + "/db2/tables?max_results=1&page_token=" + tok,
		"another listing":  db + "?max_results=1&page_token=" + tok,
		"another cluster":  "/v1/clusters/other/databases/db1/tables?max_results=1&page_token=" + tok,
		"altered":          db + "/db1/tables?max_results=1&page_token=" + string(altered),
	} {
		r := g.call("GET", path, "", alice...)
		require.Equal(t, 400, r.status, "%s: %s", name, r.body)
		assert.Equal(t, "invalid_argument", r.errorCode(t), name)
		assert.Contains(t, r.message(t), "page_token", name)
	}
	r = g.call("GET", db+"/db1/tables?max_results=1&page_token="+tok, "", bearer("bob")...)
	require.Equal(t, 400, r.status, "another principal: %s", r.body)
	assert.Equal(t, "invalid_argument", r.errorCode(t))
}

// TestPrefixContinuationNotForged: the continuation of a truncated prefix
// answer continues that answer; offsets set by hand (2999, 1e9, one that
// overflows) and a continuation for another prefix are 400 invalid_argument
// (issue 27, finding 5).
func TestPrefixContinuationNotForged(t *testing.T) {
	t.Parallel()
	g := newDataGateway(t, application.RecordOptions{Limits: application.RecordLimits{PrefixLookupMaxRowsPerPrefix: 2}}).withTables()
	row := func(id int64) []domain.Datum {
		return []domain.Datum{{Bytes: []byte("eu")}, {I64: id}, {Null: true}, {Null: true}, {Null: true}, {Null: true}}
	}
	g.lookup.setPrefix(func(_ context.Context, req *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
		rows := [][]domain.Datum{row(1), row(2), row(3), row(4), row(5)}
		return &domain.PrefixLookupResponse{SchemaID: req.SchemaID, Results: []domain.PrefixLookupResult{{Rows: rows[:min(len(rows), req.MaxRowsPerPrefix)], Truncated: req.MaxRowsPerPrefix < len(rows)}}}, nil
	})
	eu := `{"prefix_columns":["region"],"prefixes":[{"region":"eu"}]`
	r := g.call("POST", usersPrefix, eu+`}`)
	require.Equal(t, 200, r.status, string(r.body))
	tok := r.json(t)["results"].([]any)[0].(map[string]any)["next_page_token"].(string)
	r = g.call("POST", usersPrefix, eu+`,"page_token":"`+tok+`"}`)
	require.Equal(t, 200, r.status, string(r.body))
	res := r.json(t)["results"].([]any)[0].(map[string]any)
	assert.Equal(t, "3", res["rows"].([]any)[0].(map[string]any)["id"], "the continuation skips the rows returned")
	assert.Equal(t, 2, g.lookup.lastPrefix().MaxRowsPerPrefix-2, "asks for the rows returned plus one page")

	// forge sets the offset by hand, keeping what follows it (the
	// fingerprint of the plain-text tokens this gateway used to issue).
	forge := func(offset string) string {
		_, rest, found := strings.Cut(tok, ".")
		if !found {
			rest = tok
		}
		return eu + `,"page_token":"` + offset + "." + rest + `"}`
	}
	for name, body := range map[string]string{
		"offset by hand":     forge("2999"),
		"offset 1e9":         forge("1000000000"),
		"overflowing offset": forge("9223372036854775000"),
		"another prefix":     `{"prefix_columns":["region"],"prefixes":[{"region":"us"}],"page_token":"` + tok + `"}`,
		"not base64":         eu + `,"page_token":"%%%"}`,
	} {
		r := g.call("POST", usersPrefix, body)
		require.Equal(t, 400, r.status, "%s: %s", name, r.body)
		assert.Equal(t, "invalid_argument", r.errorCode(t), name)
		assert.Contains(t, r.message(t), "page_token", name)
	}
}
