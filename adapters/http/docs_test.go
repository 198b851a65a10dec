package http

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func withDocs() gatewayOption {
	return func(o *Options, _ *Deps) { o.Docs = true }
}

func TestDocsPageAndAssets(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withDocs())
	// A browser's Accept header names HTML first; the JSON-only check does
	// not apply to the page.
	page := g.call("GET", "/docs", "", "Accept", "text/html")
	require.Equal(t, 200, page.status, "%s", page.body)
	assert.Equal(t, "text/html; charset=utf-8", page.header.Get("Content-Type"))
	csp := page.header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "script-src 'self'")
	assert.NotContains(t, csp, "unsafe-inline")
	assert.Equal(t, "nosniff", page.header.Get("X-Content-Type-Options"))
	assert.NotContains(t, string(page.body), "<script>", "inline scripts would need a weaker CSP")

	// Every asset the page refers to is served, with its type, and nothing
	// comes from another origin.
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(page.body), -1)
	require.Len(t, refs, 3)
	wantType := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	for _, ref := range refs {
		u := ref[1]
		require.False(t, strings.Contains(u, "//"), "external reference %s", u)
		r := g.call("GET", "/"+u, "", "Accept", "*/*")
		require.Equal(t, 200, r.status, u)
		assert.Equal(t, wantType[u[strings.LastIndex(u, "."):]], r.header.Get("Content-Type"), u)
		assert.NotEmpty(t, r.body, u)
	}
	start := g.call("GET", "/docs/start.js", "")
	assert.Contains(t, string(start.body), `url: "v1/openapi.json"`)

	bundle, err := os.ReadFile("docsassets/swagger-ui-bundle.js")
	require.NoError(t, err)
	assert.Equal(t, bundle, g.call("GET", "/docs/swagger-ui-bundle.js", "").body, "served unmodified")
	assert.Contains(t, string(g.call("GET", "/docs/LICENSE", "").body), "Apache License")
	assert.Contains(t, string(g.call("GET", "/docs/VERSION", "").body), "swagger-ui-dist 5.35.0")

	assert.Equal(t, 404, g.call("GET", "/docs/missing.js", "").status)
	// Other routes keep the JSON-only Accept check.
	assert.Equal(t, 406, g.call("GET", "/v1/clusters", "", "Accept", "text/html").status)
}

func TestDocsSwitchedOff(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	for _, p := range []string{"/docs", "/docs/swagger-ui-bundle.js", "/docs/start.js"} {
		r := g.call("GET", p, "")
		assert.Equal(t, 404, r.status, p)
		assert.Equal(t, "not_found", r.errorCode(t), p)
	}
}
