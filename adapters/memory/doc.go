// Package memory holds in-memory implementations of the domain ports: a
// Catalog with Fluss's DDL semantics (resource-specific not-found and
// already-exists errors, non-empty database protection, schema evolution by
// appended nullable columns, partitions keyed by their `$`-joined values), a
// Cluster that hands out sessions over it, and a Clusters registry.
//
// It backs component tests of the HTTP adapter and the `memory` cluster
// backend, a development aid selected with
// `gateway.cluster.<id>.backend: memory`. Nothing is persisted. A Hook lets a
// test inject latency or failures before any operation, in the spirit of
// franz-go's kfake control functions.
package memory
