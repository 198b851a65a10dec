package domain

import "strings"

// ColumnarRows are the rows of a log-table append given column by column,
// already in the layout of Fluss's ARROW log format (the buffers an Arrow
// Java vector of the column's Fluss type holds; apache/fluss
// fluss-common/.../utils/ArrowUtils.java#toArrowField), so that a writer can
// copy them into Arrow log batches without a per-row Datum. The writer
// checks the buffer lengths against the column types and refuses the whole
// batch when they do not match; the values must already be checked (ranges,
// CHAR lengths, NOT NULL).
//
// Columns has one ColumnValues per table column, in column order; every
// column holds Rows values, row 0 at bit or byte 0 of every buffer.
type ColumnarRows struct {
	Rows    int
	Columns []ColumnValues
	// Packed, when not nil, is the same rows once more, already compressed
	// as one Arrow record batch body (a client's compressed Arrow IPC
	// record batch): a writer whose table uses Packed.Codec may send these
	// buffers as they are instead of compressing Columns again.
	Packed *PackedColumns
}

// PackedColumns is one Arrow IPC record batch body of ColumnarRows in the
// Fluss Arrow layout of the table's columns, compressed with Codec buffer by
// buffer (the Arrow columnar format's BodyCompression, method BUFFER:
// apache/arrow format/Message.fbs; what Fluss's ArrowWriter writes):
//
//	Codec       the Fluss name of the codec (`table.log.arrow.compression.type`): "ZSTD"
//	NullCounts  one per column: its null count (the record batch's FieldNode)
//	Buffers     per column in order, validity then values (fixed-width types and
//	            BOOLEAN) or validity, offsets, data (STRING, CHAR, BYTES); each
//	            empty, or an int64 little-endian uncompressed length (-1: the
//	            raw bytes follow) and the codec's frame. A validity buffer is
//	            empty only when the column has no null.
//	Size        the bytes of Buffers together
//
// The values were checked (through Columns) and every frame decompresses to
// exactly its length.
type PackedColumns struct {
	Codec      string
	NullCounts []int64
	Buffers    [][]byte
	Size       int
}

// ColumnValues is one column of ColumnarRows:
//
//	Validity  bitmap, bit i (LSB first) set: row i is not null; nil: no null
//	          (at least ceil(Rows/8) bytes otherwise)
//	Values    BOOLEAN: a bitmap of Rows bits; fixed-width types: Rows values
//	          of the Arrow width, little-endian (TINYINT 1, SMALLINT 2,
//	          INTEGER/DATE/FLOAT/TIME(0..3) 4, BIGINT/DOUBLE/TIME(4..9)/
//	          TIMESTAMP* 8, DECIMAL 16, BINARY(n) n); empty for STRING,
//	          CHAR, BYTES
//	Offsets   STRING, CHAR, BYTES: Rows+1 int32 little-endian offsets into
//	          Data (non-decreasing; the first need not be 0)
//	Data      STRING, CHAR, BYTES: the value bytes the offsets point into
//
// A null row's value bytes are ignored.
type ColumnValues struct {
	Validity []byte
	Values   []byte
	Offsets  []byte
	Data     []byte
}

// Len returns the number of rows of the batch: its entries, or its columnar
// rows when it has them.
func (b *WriteBatch) Len() int {
	if b.Columns != nil {
		return b.Columns.Rows
	}
	return len(b.Entries)
}

// ColumnarAppendable reports whether appends to a table with this
// definition can be given as ColumnarRows: a log table in the ARROW log
// format (`table.log.format`, the default) without a primary key, partition
// keys, bucket keys or ARRAY, MAP and ROW columns. The writer applies the
// same rule to the table it resolves and refuses columnar rows of any other
// table as a whole.
func ColumnarAppendable(info TableInfo) bool {
	d := info.Descriptor
	if len(d.Schema.PrimaryKey) > 0 || len(d.PartitionKeys) > 0 || len(d.BucketKeys) > 0 {
		return false
	}
	if f := strings.ToUpper(strings.TrimSpace(d.Properties["table.log.format"])); f != "" && f != "ARROW" {
		return false
	}
	for _, c := range d.Schema.Columns {
		switch c.Type.Root {
		case TypeArray, TypeMap, TypeRow:
			return false
		}
	}
	return true
}
