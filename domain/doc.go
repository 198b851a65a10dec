// Package domain holds the gateway's entities (table paths, schemas, data types,
// principals, per-entry write outcomes), its error model and its ports: the
// interfaces that the application layer calls and that adapters implement
// (Catalog, RowWriter, Lookup, Identity, Clusters).
//
// The domain imports nothing of this module and only the standard library.
// Data types and schemas use Apache Fluss's own vocabulary and JSON form
// (apache/fluss: fluss-common/src/main/java/org/apache/fluss/utils/json/
// DataTypeJsonSerde.java, SchemaJsonSerde.java), so a schema sent over REST is
// the schema Fluss persists, with no second naming.
package domain
