package http

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// tableOfPathReference is tableOfPath as it was before issue 22: both
// strings split on "/", every path segment unescaped.
func tableOfPathReference(template, path string) domain.TablePath {
	var tp domain.TablePath
	if template == "" {
		return tp
	}
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return tp
	}
	for i, seg := range ts {
		v, err := url.PathUnescape(ps[i])
		if err != nil {
			v = ps[i]
		}
		switch seg {
		case "{database}":
			tp.Database = v
		case "{table}":
			tp.Table = v
		}
	}
	return tp
}

func TestTableOfPath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		template, path string
		want           domain.TablePath
	}{
		{pathLookup, "/v1/clusters/c/databases/d/tables/t/records/lookup", domain.TablePath{Database: "d", Table: "t"}},
		{pathPrefix, "/v1/clusters/c/databases/d%20b/tables/t%2Fx/records/prefix-lookup", domain.TablePath{Database: "d b", Table: "t/x"}},
		{pathDatabase, "/v1/clusters/c/databases/shop", domain.TablePath{Database: "shop"}},
		{pathTable, "/v1/clusters/c/databases/d/tables/bad%zz", domain.TablePath{Database: "d", Table: "bad%zz"}},
		{pathTable, "/v1/clusters/c/databases/d/tables/t/extra", domain.TablePath{}},
		{pathTable, "/v1/clusters/c/databases/d", domain.TablePath{}},
		{pathTable, "/v1/clusters/c/databases//tables/", domain.TablePath{}},
		{pathClusters, "/v1/clusters", domain.TablePath{}},
		{"", "/v1/clusters/c/databases/d", domain.TablePath{}},
		{pathHealth, "/health", domain.TablePath{}},
	}
	for _, tc := range cases {
		got := tableOfPath(tc.template, tc.path)
		assert.Equal(t, tc.want, got, "%s %s", tc.template, tc.path)
		assert.Equal(t, tableOfPathReference(tc.template, tc.path), got, "%s %s", tc.template, tc.path)
	}
}

func FuzzTableOfPath(f *testing.F) {
	f.Add(pathLookup, "/v1/clusters/c/databases/d/tables/t/records/lookup")
	f.Add(pathTable, "/v1/clusters/c/databases/%41/tables/%zz")
	f.Add(pathDatabase, "//")
	f.Fuzz(func(t *testing.T, template, path string) {
		if got, want := tableOfPath(template, path), tableOfPathReference(template, path); got != want {
			t.Fatalf("tableOfPath(%q, %q) = %v, the reference says %v", template, path, got, want)
		}
	})
}

func TestIsOpenPath(t *testing.T) {
	t.Parallel()
	routes := allRoutes()
	for _, p := range []string{"/health", "/ready", "/v1/clusters", "/healthz", "", "/v1/openapi.json", pathLookup} {
		assert.Equal(t, routes.isOpen(p), routes.isOpenPath([]byte(p)), p)
	}
	assert.True(t, routes.isOpenPath([]byte("/health")))
	assert.False(t, routes.isOpenPath([]byte("/v1/clusters")))
}

// TestAcceptHeader: the Accept values read without a parse (issue 22) are
// answered as the parse answers them, and the others still parsed.
func TestAcceptHeader(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	cases := []struct {
		accept string
		status int
	}{
		{"", 200},
		{"application/json", 200},
		{"*/*", 200},
		{"APPLICATION/JSON", 200},
		{"application/*", 200},
		{"text/html, application/json;q=0.5", 200},
		{"text/html", 406},
		{"application/json;q=0", 406},
		{"application/jsonx", 406},
	}
	for _, tc := range cases {
		var headers []string
		if tc.accept != "" {
			headers = []string{"Accept", tc.accept}
		}
		assert.Equal(t, tc.status, g.call("GET", "/v1/clusters", "", headers...).status, "Accept: %q", tc.accept)
		if tc.accept != "" {
			assert.Equal(t, tc.status == 200, acceptsJSON(tc.accept), "acceptsJSON(%q)", tc.accept)
		}
	}
}

// TestQueryParameters: a request without a query skips the check's map;
// the others are still checked.
func TestQueryParameters(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	cases := []struct {
		query  string
		status int
	}{
		{"", 200},
		{"?max_results=1", 200},
		{"?nope=1", 400},
		{"?max_results=1&max_results=2", 400},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.status, g.call("GET", db+tc.query, "").status, "query %q", tc.query)
	}
}
