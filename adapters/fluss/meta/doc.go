// Package meta is the table metadata cache of one Fluss cluster connection,
// and the one source of table definitions of everything on it: the
// application resolves the definitions it decodes requests against through
// it (domain.TableDefinitions, see adapters/fluss session.Tables), and the
// writer and the lookup client encode with the same snapshots. It holds:
// table path → table id, schema id and descriptor (domain.TableInfo), the
// table's partitions (name ↔ id), the leader node of every physical bucket,
// and the addresses of the cluster's nodes.
//
// Entries are loaded lazily with GetTableInfo and GetMetadata, at most one
// load per table (and per partition) at a time; concurrent callers share its
// result. They are refreshed when the Catalog adapter reports DDL
// (Invalidate; after a create or alter, Expect, so that a server whose
// metadata lags behind is not believed; after a create, AwaitLeaders, which
// asks the coordinator only), when a write or lookup fails with a leadership error
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
