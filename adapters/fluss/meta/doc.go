// Package meta is the table metadata cache of one Fluss cluster connection:
// table path → table id, schema id and descriptor (domain.TableInfo), the
// table's partitions (name ↔ id), the leader node of every physical bucket,
// and the addresses of the cluster's nodes.
//
// Entries are loaded lazily with GetTableInfo and GetMetadata, at most one
// load per table (and per partition) at a time; concurrent callers share its
// result. They are refreshed when the Catalog adapter reports DDL
// (Invalidate), when a write or lookup fails with a leadership error
// (InvalidateLeaders: NETWORK_EXCEPTION, NOT_LEADER_OR_FOLLOWER,
// UNKNOWN_TABLE_OR_BUCKET, LEADER_NOT_AVAILABLE) or with an unknown table or
// schema, and when they are older than Options.MaxAge. The number of cached
// tables and of partitions per table is bounded (least recently used first
// out). A Cache is safe for concurrent use.
//
// The cache talks to the cluster through the small Caller interface so that
// it does not depend on how connections are pooled; RPCCaller is the Caller
// over an rpc.Client.
package meta
