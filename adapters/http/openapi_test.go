package http

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

type openAPIDoc struct {
	Paths      map[string]map[string]yaml.Node `yaml:"paths"`
	Components struct {
		Parameters map[string]openAPIParameter `yaml:"parameters"`
		Schemas    map[string]struct {
			Enum []string `yaml:"enum"`
		} `yaml:"schemas"`
	} `yaml:"components"`
}

type openAPIParameter struct {
	Ref  string `yaml:"$ref"`
	Name string `yaml:"name"`
	In   string `yaml:"in"`
}

type openAPIOperation struct {
	OperationID string             `yaml:"operationId"`
	Parameters  []openAPIParameter `yaml:"parameters"`
	Responses   map[string]any     `yaml:"responses"`
}

func loadOpenAPI(t *testing.T) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	require.NoError(t, yaml.Unmarshal(openAPIYAML, &doc))
	return doc
}

func (d openAPIDoc) resolve(t *testing.T, p openAPIParameter) openAPIParameter {
	t.Helper()
	if p.Ref == "" {
		return p
	}
	name := strings.TrimPrefix(p.Ref, "#/components/parameters/")
	resolved, ok := d.Components.Parameters[name]
	require.True(t, ok, "unresolved parameter %s", p.Ref)
	return resolved
}

// operations returns every documented operation keyed "METHOD path", with
// path-level parameters merged into each.
func (d openAPIDoc) operations(t *testing.T) map[string]openAPIOperation {
	t.Helper()
	out := map[string]openAPIOperation{}
	for path, item := range d.Paths {
		var shared []openAPIParameter
		if n, ok := item["parameters"]; ok {
			require.NoError(t, n.Decode(&shared))
		}
		for method, n := range item {
			if method == "parameters" {
				continue
			}
			var op openAPIOperation
			require.NoError(t, n.Decode(&op))
			op.Parameters = append(slices.Clone(shared), op.Parameters...)
			out[strings.ToUpper(method)+" "+path] = op
		}
	}
	return out
}

// TestOpenAPIMatchesTheRegisteredRoutes fails when a route is added, removed
// or changed in fiber without the document following, or the reverse.
func TestOpenAPIMatchesTheRegisteredRoutes(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	doc := loadOpenAPI(t)
	documented := doc.operations(t)

	var registered []string
	for _, r := range g.app.GetRoutes(true) {
		registered = append(registered, r.Method+" "+openAPIPath(r.Path))
	}
	sort.Strings(registered)
	var want []string
	for k := range documented {
		want = append(want, k)
	}
	sort.Strings(want)
	assert.Equal(t, want, registered, "fiber routes and openapi.yaml paths/methods differ")

	for _, r := range allRoutes() {
		key := r.method + " " + r.path
		op, ok := documented[key]
		if !assert.True(t, ok, "%s is not documented", key) {
			continue
		}
		assert.Equal(t, r.operationID, op.OperationID, key)
		assert.NotEmpty(t, op.Responses, key)

		var query, pathParams []string
		for _, p := range op.Parameters {
			p = doc.resolve(t, p)
			switch p.In {
			case "query":
				query = append(query, p.Name)
			case "path":
				pathParams = append(pathParams, p.Name)
			}
		}
		assert.ElementsMatch(t, r.query, query, "%s: documented query parameters differ from the accepted ones", key)
		assert.ElementsMatch(t, templateParams(r.path), pathParams, "%s: path parameters", key)
	}
}

func TestOpenAPIDeclaresEveryErrorCode(t *testing.T) {
	t.Parallel()
	enum := loadOpenAPI(t).Components.Schemas["ErrorCode"].Enum
	require.NotEmpty(t, enum)
	codes := []string{codeMethodNotAllowed, codeNotAcceptable, codeUnsupportedMediaType}
	resources := []domain.Resource{domain.ResourceNone, domain.ResourceCluster, domain.ResourceDatabase, domain.ResourceTable, domain.ResourcePartition}
	for k := domain.KindInternal; k <= domain.KindTimeout; k++ {
		for _, r := range resources {
			codes = append(codes, (&domain.Error{Kind: k, Resource: r}).Code())
		}
	}
	for _, c := range codes {
		assert.Contains(t, enum, c)
		assert.True(t, domain.IsErrorCode(c), c)
	}
	assert.Equal(t, domain.ErrorCodes, enum, "the served enum is the official one, no more")
	assert.True(t, sort.StringsAreSorted(enum), "keep the enum sorted")
}

func TestOpenAPIReferencesResolve(t *testing.T) {
	t.Parallel()
	var root yaml.Node
	require.NoError(t, yaml.Unmarshal(openAPIYAML, &root))
	var doc map[string]any
	require.NoError(t, root.Decode(&doc))
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 && c.Value == "$ref" {
				ref := n.Content[i+1].Value
				require.True(t, strings.HasPrefix(ref, "#/"), ref)
				cur := any(doc)
				for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
					m, ok := cur.(map[string]any)
					require.True(t, ok, "unresolved %s", ref)
					cur, ok = m[seg]
					require.True(t, ok, "unresolved %s", ref)
				}
			}
			walk(c)
		}
	}
	walk(&root)
}

func openAPIPath(fiberPath string) string {
	segs := strings.Split(fiberPath, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			segs[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(segs, "/")
}

func templateParams(template string) []string {
	var out []string
	for _, s := range strings.Split(template, "/") {
		if strings.HasPrefix(s, "{") {
			out = append(out, strings.Trim(s, "{}"))
		}
	}
	return out
}

// TestOpenAPIDocumentsAuthentication keeps the security section in step
// with the authenticate middleware: public routes declare `security: []`,
// every other route documents 401, 403 and 429.
func TestOpenAPIDocumentsAuthentication(t *testing.T) {
	t.Parallel()
	var doc struct {
		Security   []map[string]any `yaml:"security"`
		Components struct {
			SecuritySchemes map[string]any `yaml:"securitySchemes"`
		} `yaml:"components"`
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(openAPIYAML, &doc))
	for _, scheme := range []string{"basicAuth", "bearerAuth", "trustedHeader", "mutualTLS"} {
		assert.Contains(t, doc.Components.SecuritySchemes, scheme)
		assert.Contains(t, doc.Security, map[string]any{scheme: []any{}})
	}
	for _, r := range allRoutes() {
		var op struct {
			Security  *[]any         `yaml:"security"`
			Responses map[string]any `yaml:"responses"`
		}
		n := doc.Paths[r.path][strings.ToLower(r.method)]
		require.NoError(t, n.Decode(&op), r.path)
		key := r.method + " " + r.path
		if r.open || r.public {
			if assert.NotNil(t, op.Security, "%s needs no credentials: security: []", key) {
				assert.Empty(t, *op.Security, key)
			}
			continue
		}
		assert.Nil(t, op.Security, "%s uses the document's security", key)
		for _, code := range []string{"401", "403", "429"} {
			assert.Contains(t, op.Responses, code, "%s documents %s", key, code)
		}
	}
}

// officialOperations are the operation ids of the official Fluss gateway's
// document (apache/fluss: fluss-gateway/openapi.yaml).
var officialOperations = []string{
	"getHealth", "getReady", "getOpenApi", "listClusters", "listDatabases", "createDatabase", "dropDatabase",
	"listTables", "createTable", "describeTable", "alterTable", "dropTable", "listPartitions", "createPartition",
	"dropPartition", "writeRecords",
}

// TestOpenAPIMarksExtensions keeps the served document honest: every
// official operation is served, and every other operation is marked as an
// extension of ours.
func TestOpenAPIMarksExtensions(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(openAPIYAML, &doc))
	seen := map[string]bool{}
	for path, item := range doc.Paths {
		for method, n := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				OperationID string `yaml:"operationId"`
				Extension   bool   `yaml:"x-fluss-gateway-extension"`
			}
			require.NoError(t, n.Decode(&op))
			seen[op.OperationID] = true
			official := slices.Contains(officialOperations, op.OperationID)
			assert.Equal(t, !official, op.Extension, "%s %s (%s): x-fluss-gateway-extension must be set exactly on extensions", method, path, op.OperationID)
		}
	}
	for _, id := range officialOperations {
		assert.True(t, seen[id], "official operation %s is served", id)
	}
}

// TestServedOpenAPIStatusesAndCaps: the served document declares the
// statuses the official document declares on the health, readiness and
// document routes (400) and on the records routes (500), a UUID request_id,
// and the lookup and prefix-lookup caps this gateway enforces as maxItems
// (the configured values, else the defaults).
func TestServedOpenAPIStatusesAndCaps(t *testing.T) {
	t.Parallel()
	served := func(g *gateway) map[string]any {
		r := g.call("GET", "/v1/openapi.json", "")
		require.Equal(t, 200, r.status)
		return r.json(t)
	}
	dig := func(m map[string]any, keys ...string) any {
		var v any = m
		for _, k := range keys {
			mm, ok := v.(map[string]any)
			require.True(t, ok, "%v at %s", keys, k)
			v = mm[k]
		}
		return v
	}
	caps := func(doc map[string]any) (any, any) {
		return dig(doc, "components", "schemas", "LookupRequest", "properties", "keys", "maxItems"),
			dig(doc, "components", "schemas", "PrefixLookupRequest", "properties", "prefixes", "maxItems")
	}
	doc := served(newGateway(t))
	keys, prefixes := caps(doc)
	assert.EqualValues(t, 128, keys)
	assert.EqualValues(t, 16, prefixes)
	for _, p := range []string{"/health", "/ready", "/v1/openapi.json"} {
		assert.NotNil(t, dig(doc, "paths", p, "get", "responses").(map[string]any)["400"], p)
	}
	for _, p := range []string{"/records", "/records/lookup", "/records/prefix-lookup"} {
		path := "/v1/clusters/{cluster}/databases/{database}/tables/{table}" + p
		assert.NotNil(t, dig(doc, "paths", path, "post", "responses").(map[string]any)["500"], p)
	}
	assert.Equal(t, "uuid", dig(doc, "components", "schemas", "ErrorBody", "properties", "request_id", "format"))

	g := newDataGateway(t, application.RecordOptions{Limits: application.RecordLimits{LookupMaxKeys: 7, PrefixLookupMaxPrefixes: 3}}).withTables()
	keys, prefixes = caps(served(g))
	assert.EqualValues(t, 7, keys)
	assert.EqualValues(t, 3, prefixes)
	k := `{"region":"eu","id":1}`
	r := g.call("POST", usersLookup, `{"keys":[`+strings.Repeat(k+",", 7)+k+`]}`)
	assert.Equal(t, 413, r.status, "8 keys exceed the documented cap of 7: %s", r.body)
	assert.Equal(t, "limit_exceeded", r.errorCode(t))
}
