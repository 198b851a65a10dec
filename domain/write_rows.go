package domain

// Datum is one value of a row, interpreted through the column's DataType.
// The representation follows Fluss's internal row model
// (apache/fluss: fluss-common/.../row/InternalRow.java) so that encoders
// need no conversion:
//
//	BOOLEAN                     I64: 0 or 1
//	TINYINT, SMALLINT, INTEGER,
//	BIGINT                      I64
//	FLOAT, DOUBLE               F64
//	DECIMAL(p,s)                p <= 18: I64 is the unscaled value;
//	                            p > 18: Bytes is the unscaled value as big-endian
//	                            two's complement (java.math.BigInteger#toByteArray)
//	CHAR, STRING                Bytes: UTF-8
//	BINARY, BYTES               Bytes
//	DATE                        I64: days since 1970-01-01
//	TIME_WITHOUT_TIME_ZONE      I64: milliseconds of the day
//	TIMESTAMP_* (both)          I64: milliseconds since the epoch (UTC for LTZ),
//	                            Nanos: nanoseconds within that millisecond (0..999999)
//	ARRAY                       Elems: the elements
//	MAP                         Elems: key0, value0, key1, value1, ...
//	ROW                         Elems: the fields in order
//
// Byte slices may alias a request-scoped buffer; consumers copy what they keep.
type Datum struct {
	Null  bool
	I64   int64
	Nanos int32
	F64   float64
	Bytes []byte
	Elems []Datum
}

// WriteEntry is one row of a write request. Row has one Datum per table column
// (by column position). For OpDelete only the primary-key columns matter.
type WriteEntry struct {
	Op  WriteOp
	Row []Datum
}

// WriteBatch is a validated write request for one table. Rows were decoded
// against Table's schema with id SchemaID.
type WriteBatch struct {
	Table    TablePath
	TableID  int64
	SchemaID int32
	// PartialUpdateColumns, when not nil, are the column positions an upsert
	// writes (primary-key columns included); other columns keep their values.
	PartialUpdateColumns []int
	Entries              []WriteEntry
	// Columns, when not nil, replaces Entries: appends to a log table given
	// column by column (ColumnarRows); PartialUpdateColumns is then nil.
	Columns *ColumnarRows

	// Urgent asks the writer to send the rows without waiting for more
	// rows to batch with them (no linger): a small write another request
	// waits on, such as an Idempotency-Key claim in the ledger.
	Urgent bool
}

// LookupRequest asks for rows by primary key. Each key holds one Datum per
// primary-key column, in primary-key order.
type LookupRequest struct {
	Table    TablePath
	TableID  int64
	SchemaID int32
	Keys     [][]Datum
}

// LookupResult is the answer for one key: Row is nil when not found; Err is set
// when only this key failed.
type LookupResult struct {
	Row []Datum
	Err *Error
}

// LookupResponse holds one result per key, in input order. Rows are rendered
// in the table's current schema with id SchemaID.
type LookupResponse struct {
	SchemaID int32
	Results  []LookupResult
}

// PrefixLookupRequest asks for all rows whose bucket key equals each prefix.
// PrefixColumns are the column names; each prefix holds one Datum per prefix
// column. MaxRowsPerPrefix bounds each answer.
type PrefixLookupRequest struct {
	Table            TablePath
	TableID          int64
	SchemaID         int32
	PrefixColumns    []string
	Prefixes         [][]Datum
	MaxRowsPerPrefix int
	// Partition, when not "", is the partition (of a partitioned table)
	// every prefix is looked up in; PrefixColumns are then the bucket key
	// alone, without the partition columns. A partition that does not
	// exist finds no rows.
	Partition string
}

// PrefixLookupResult is the answer for one prefix.
type PrefixLookupResult struct {
	Rows      [][]Datum
	Truncated bool
	Err       *Error
}

// PrefixLookupResponse holds one result per prefix, in input order.
type PrefixLookupResponse struct {
	SchemaID int32
	Results  []PrefixLookupResult
}
