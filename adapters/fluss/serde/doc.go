// Package serde holds the Fluss wire JSON of table metadata: the DataType,
// Schema, TableDescriptor and DatabaseDescriptor documents carried in the
// `data_type_json`, `schema_json`, `table_json` and `database_json` fields of
// Fluss RPCs (apache/fluss: fluss-common/src/main/java/org/apache/fluss/utils/
// json/*JsonSerde.java), written byte for byte as the Fluss 0.9.1 Java client
// writes them (Jackson's string escaping and key order, java.util.HashMap
// iteration order of property maps) and read as the Java readers read them.
//
// It is used by the Fluss adapter only (admin, meta). The domain keeps the
// types and their rules (field ids, default bucket keys, schema
// normalisation); the REST JSON of data types is the HTTP adapter's.
package serde
