// Package domain holds the gateway's entities (table paths, schemas, data types,
// principals, per-entry write outcomes), its error model and its ports: the
// interfaces that the application layer calls and that adapters implement
// (Catalog, RowWriter, Lookup, Identity, Clusters).
//
// The domain imports nothing of this module and only the standard library.
// Data types and schemas use Apache Fluss's own vocabulary (apache/fluss:
// fluss-common/src/main/java/org/apache/fluss/types/DataTypeRoot.java), with
// no second naming. The domain holds no wire format: the Fluss JSON of these
// types is adapters/fluss/serde, their REST JSON adapters/http/datatype.go.
package domain
