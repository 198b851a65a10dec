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
//
// Writers produce the bytes the Fluss 0.9.1 Java client produces for the same
// definition (apache/fluss: fluss-common/src/main/java/org/apache/fluss/utils/
// json/{DataTypeJsonSerde,ColumnJsonSerde,SchemaJsonSerde,
// TableDescriptorJsonSerde,DatabaseDescriptorJsonSerde}.java): the same key
// order, the same optional keys, Jackson's string escaping, and the same
// normalisation that the Java builders apply before serialising (column ids,
// NOT NULL primary-key columns and map keys, default bucket keys).
//
// Readers accept what the Java readers accept, with these deliberate
// differences: value types are checked strictly (Jackson would coerce a number
// where a string is expected, or the text "3" where an int is); missing type
// parameters take the defaults of the Java type constructors (Java fails with
// a NullPointerException); a JSON null comment or description counts as absent
// (Java reads the text "null"); data after the document is an error. Readers
// check structure only; the semantic checks that the Java constructors run on
// read (primary-key columns exist, bucket keys fit, ...) are left to
// ValidateTableDescriptor.
//
// One file per document: datatype.go, schema.go, table.go, database.go;
// read.go and jackson.go hold the shared reading and writing helpers. The
// documents' rules, each with its upstream source: docs/fluss-json.md.
package serde
