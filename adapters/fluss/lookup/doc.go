// Package lookup implements domain.Lookup (primary-key and prefix lookups)
// against an Apache Fluss 0.9.1 cluster.
//
// A call encodes every key once, the way the Fluss Java client's
// PrimaryKeyLookuper and PrefixKeyLookuper do (apache/fluss, tag
// v0.9.1-incubating: fluss-client/.../client/lookup): the primary key (or
// prefix) with the table's key encoder, the bucket from the bucket key, and
// the partition from the partition columns, which are part of the key. Keys
// are then grouped by the leader of their bucket, so that one Lookup or
// PrefixLookup request goes to each tablet server for the table, covering
// all its buckets (LookupSender does the same). Requests to different
// servers run concurrently.
//
// Values come back as int16 schema id + row in the table's kv format. Rows
// written under another schema are projected onto the schema the caller
// asked for by column id (columns added later are null), as Fluss's
// FixedSchemaDecoder does; older schemas are fetched once through the
// metadata cache and kept.
//
// Failures are isolated per bucket: a retriable error (the Java
// RetriableException set: NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE,
// UNKNOWN_TABLE_OR_BUCKET, network failures, timeouts, ...) re-routes the
// bucket's keys after refreshing its leaders, with backoff, within the
// caller's deadline and Options.MaxAttempts; any other error becomes the
// *domain.Error of the bucket's keys only. A key in a partition that does
// not exist is simply not found. See Lookuper for the whole-request rules.
package lookup
