package http

import (
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// routeSpec is one REST operation. path uses the OpenAPI template syntax
// (`{cluster}`); query lists the query parameters the operation accepts,
// any other one being rejected.
type routeSpec struct {
	method      string
	path        string
	operationID string
	query       []string
	handler     func(*api, *fiber.Ctx) error
	// admission is the concurrency budget the operation draws from.
	admission admissionClass
	// open routes bypass the acceptance guard: probes must answer while the
	// gateway starts and drains. They need no credentials.
	open bool
	// public routes need no credentials (the OpenAPI document).
	public bool
	// audit writes the audit log line of the request (writes).
	audit bool
}

// Path templates of the REST API.
const (
	pathHealth     = "/health"
	pathReady      = "/ready"
	pathOpenAPI    = "/v1/openapi.json"
	pathClusters   = "/v1/clusters"
	pathDatabases  = "/v1/clusters/{cluster}/databases"
	pathDatabase   = pathDatabases + "/{database}"
	pathTables     = pathDatabase + "/tables"
	pathTable      = pathTables + "/{table}"
	pathPartitions = pathTable + "/partitions"
	pathPartition  = pathPartitions + "/{partition}"
	pathRecords    = pathTable + "/records"
	pathLookup     = pathRecords + "/lookup"
	pathPrefix     = pathRecords + "/prefix-lookup"
	// Extensions (issue 23): log scans and offsets.
	pathScan    = pathRecords + "/scan"
	pathOffsets = pathTable + "/offsets"
)

var (
	pageQuery = []string{"max_results", "page_token"}
	dropQuery = []string{"ignore_if_not_exists"}
)

// routeTable lists every operation; registration, the 405 Allow header and
// the OpenAPI drift test all read it.
type routeTable []routeSpec

func allRoutes() routeTable {
	return routeTable{
		{method: fiber.MethodGet, path: pathHealth, operationID: "getHealth", handler: (*api).health, open: true},
		{method: fiber.MethodGet, path: pathReady, operationID: "getReady", handler: (*api).ready, open: true},
		{method: fiber.MethodGet, path: pathOpenAPI, operationID: "getOpenApi", handler: (*api).openAPI, public: true},
		{method: fiber.MethodGet, path: pathClusters, operationID: "listClusters", handler: (*api).listClusters},

		{method: fiber.MethodGet, path: pathDatabases, operationID: "listDatabases", query: pageQuery, admission: admitMetadata, handler: (*api).listDatabases},
		{method: fiber.MethodPost, path: pathDatabases, operationID: "createDatabase", admission: admitMetadata, handler: (*api).createDatabase},
		{method: fiber.MethodGet, path: pathDatabase, operationID: "getDatabase", admission: admitMetadata, handler: (*api).getDatabase},
		{method: fiber.MethodHead, path: pathDatabase, operationID: "databaseExists", admission: admitMetadata, handler: (*api).databaseExists},
		{method: fiber.MethodDelete, path: pathDatabase, operationID: "dropDatabase", query: []string{"ignore_if_not_exists", "cascade"}, admission: admitMetadata, handler: (*api).dropDatabase},

		{method: fiber.MethodGet, path: pathTables, operationID: "listTables", query: pageQuery, admission: admitMetadata, handler: (*api).listTables},
		{method: fiber.MethodPost, path: pathTables, operationID: "createTable", admission: admitMetadata, handler: (*api).createTable},
		{method: fiber.MethodGet, path: pathTable, operationID: "describeTable", admission: admitMetadata, handler: (*api).getTable},
		{method: fiber.MethodHead, path: pathTable, operationID: "tableExists", admission: admitMetadata, handler: (*api).tableExists},
		{method: fiber.MethodPatch, path: pathTable, operationID: "alterTable", admission: admitMetadata, handler: (*api).alterTable},
		{method: fiber.MethodDelete, path: pathTable, operationID: "dropTable", query: dropQuery, admission: admitMetadata, handler: (*api).dropTable},

		{method: fiber.MethodGet, path: pathPartitions, operationID: "listPartitions", query: pageQuery, admission: admitMetadata, handler: (*api).listPartitions},
		{method: fiber.MethodPost, path: pathPartitions, operationID: "createPartition", admission: admitMetadata, handler: (*api).createPartition},
		{method: fiber.MethodDelete, path: pathPartition, operationID: "dropPartition", query: dropQuery, admission: admitMetadata, handler: (*api).dropPartition},

		{method: fiber.MethodPost, path: pathRecords, operationID: "writeRecords", admission: admitWrite, audit: true, handler: (*api).writeRecords},
		{method: fiber.MethodPost, path: pathLookup, operationID: "lookupRecords", admission: admitLookup, handler: (*api).lookupRecords},
		{method: fiber.MethodPost, path: pathPrefix, operationID: "prefixLookupRecords", admission: admitPrefixLookup, handler: (*api).prefixLookupRecords},

		{method: fiber.MethodPost, path: pathScan, operationID: "scanRecords", admission: admitScan, handler: (*api).scanRecords},
		{method: fiber.MethodGet, path: pathOffsets, operationID: "listOffsets", query: []string{"position", "timestamp"}, admission: admitScan, handler: (*api).listOffsets},
	}
}

// fiberPath turns `{name}` segments into fiber's `:name`.
func fiberPath(template string) string {
	segs := strings.Split(template, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(segs, "/")
}

// matches reports whether a request path fits a template.
func matches(template, path string) bool {
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i := range ts {
		if strings.HasPrefix(ts[i], "{") {
			if ps[i] == "" {
				return false
			}
		} else if ts[i] != ps[i] {
			return false
		}
	}
	return true
}

// allowed lists the methods of the templates a path fits, for the Allow
// header of a 405.
func (t routeTable) allowed(path string) string {
	var methods []string
	for _, r := range t {
		if matches(r.path, path) && !slices.Contains(methods, r.method) {
			methods = append(methods, r.method)
		}
	}
	return strings.Join(methods, ", ")
}

// isOpen reports whether path is served outside the acceptance guard.
func (t routeTable) isOpen(path string) bool {
	for _, r := range t {
		if r.open && r.path == path {
			return true
		}
	}
	return false
}

// isOpenPath is isOpen of a path given as bytes, without a copy.
func (t routeTable) isOpenPath(path []byte) bool {
	for _, r := range t {
		if r.open && r.path == string(path) {
			return true
		}
	}
	return false
}

// template returns the route template a request's method and path fit, or
// "" when none does.
func (t routeTable) template(method, path string) string {
	for _, r := range t {
		if r.method == method && matches(r.path, path) {
			return r.path
		}
	}
	return ""
}

// tableOfPath returns the database and table a path names under template
// (its `{database}` and `{table}` segments, percent-decoded); zero members
// when the template has none.
func tableOfPath(template, path string) domain.TablePath {
	var tp domain.TablePath
	if template == "" || strings.Count(template, "/") != strings.Count(path, "/") {
		return tp
	}
	// Segment by segment, without splitting either string (issue 22: it
	// runs for every request's metrics).
	for rest, prest := template, path; ; {
		seg, tmore, _ := strings.Cut(rest, "/")
		p, pmore, last := strings.Cut(prest, "/")
		if seg == "{database}" || seg == "{table}" {
			v, err := url.PathUnescape(p)
			if err != nil {
				v = p
			}
			if seg == "{database}" {
				tp.Database = v
			} else {
				tp.Table = v
			}
		}
		if !last {
			return tp
		}
		rest, prest = tmore, pmore
	}
}

// match returns the operation serving method and path.
func (t routeTable) match(method, path string) (routeSpec, bool) {
	for _, r := range t {
		if r.method == method && matches(r.path, path) {
			return r, true
		}
	}
	return routeSpec{}, false
}
