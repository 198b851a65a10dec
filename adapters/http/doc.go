// Package http is the gateway's inbound REST adapter, built on fiber v2.
//
// It serves the health, readiness and OpenAPI routes, the catalog REST API
// under /v1/clusters/{cluster}/... and the data-plane routes under
// .../tables/{table}/records (writes with a verdict per entry, primary-key
// and prefix lookups, bodies decoded and rows rendered by the rowjson
// codec), all described by the embedded OpenAPI 3.1
// document (openapi.yaml, served as /v1/openapi.json). Every response carries
// an x-request-id header; every failure is the envelope
// {"error":{"code","message","request_id"}} with the status and stable code
// of the official Fluss gateway (apache/fluss: fluss-gateway/src/error.rs).
//
// The catalog and write routes take and answer exactly the official shapes
// (apache/fluss: fluss-gateway/openapi.yaml, FIP-49; dto.go), with data types
// in their REST JSON form (datatype.go) and only the official ErrorCode enum
// in `error.code` and per-entry `error_code` (codes.go). What the gateway
// adds is additive and marked `x-fluss-gateway-extension` in openapi.yaml;
// tests/conformance checks a running gateway against the served document.
//
// Request bodies are parsed strictly: the media type must be JSON, duplicate
// keys and unknown fields are rejected, and messages name the offending field
// (for example `columns[2].data_type.precision`).
//
// One JSON stack reads every request body: the JSON v2 module
// (github.com/go-json-experiment/json, the candidate for encoding/json/v2).
// Write, lookup and prefix-lookup bodies, NDJSON lines included, are decoded
// by rowjson from jsontext tokens straight into rows (its fast path scans
// the common write shape by hand, with the same results). Catalog and scan
// bodies are checked token by token with a jsontext.Decoder against the Go
// type they decode into (json.go, shapeChecker: unknown members, JSON types,
// integer ranges, duplicate keys named by their path, keys of at most 1 KiB,
// nesting of at most 256 levels, the deadline every 1024 values), then bound
// with json.Unmarshal; data type documents are parsed from jsontext tokens
// (datatype_tree.go). Everything is linear in the body's size. Responses
// are written by rowjson (rows) and by encoding/json (catalog answers and
// error envelopes): clients see its spelling byte for byte, which JSON v2
// does not reproduce even with its v1 options (invalid UTF-8 becomes a raw
// U+FFFD instead of \ufffd; TestAppendWriteResponseMatchesEncodingJSON).
//
// Each request runs under a
// deadline passed to the use cases through the context
// (gateway.rest.write.request-timeout, shortened by the caller's
// X-Fluss-Request-Timeout header); running past it answers 504 timeout,
// except for a write whose entries already have their verdicts. Until the
// gateway is serving, and again once it drains, everything but /health and
// /ready answers 503 unavailable.
//
// Admission: catalog, write, lookup and prefix-lookup routes draw from
// separate concurrency budgets (see Admission), each with a bounded wait
// before 429 resource_exhausted and a computed Retry-After; writes may also
// be rate-limited.
package http
