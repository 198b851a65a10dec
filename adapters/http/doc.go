// Package http is the gateway's inbound REST adapter, built on fiber v2.
//
// It serves the health, readiness and OpenAPI routes and the catalog REST API
// under /v1/clusters/{cluster}/..., all described by the embedded OpenAPI 3.1
// document (openapi.yaml, served as /v1/openapi.json). Every response carries
// an x-request-id header; every failure is the envelope
// {"error":{"code","message","request_id"}} with the status and stable code
// of the official Fluss gateway (apache/fluss: fluss-gateway/src/error.rs).
//
// Request bodies are parsed strictly: the media type must be JSON, duplicate
// keys and unknown fields are rejected, and messages name the offending field
// (for example `columns[2].data_type.precision`). Each request runs under a
// deadline passed to the use cases through the context; running past it
// answers 504 timeout. Until the gateway is serving, and again once it drains,
// everything but /health and /ready answers 503 unavailable.
package http
