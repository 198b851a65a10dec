package record

import (
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// RowFormat is a binary row format of Fluss (BinaryRow.BinaryRowFormat): the
// value of the table options `table.kv.format` (COMPACTED by default) and, for
// row-based logs, `table.log.format`.
type RowFormat uint8

// The row formats this package encodes and decodes.
const (
	FormatCompacted RowFormat = iota + 1 // CompactedRow (row/compacted/CompactedRow.java)
	FormatIndexed                        // IndexedRow (row/indexed/IndexedRow.java)
)

// String returns the Fluss spelling: COMPACTED or INDEXED.
func (f RowFormat) String() string {
	switch f {
	case FormatCompacted:
		return "COMPACTED"
	case FormatIndexed:
		return "INDEXED"
	default:
		return "UNKNOWN"
	}
}

// ParseKvFormat parses the `table.kv.format` option (case-insensitive). An
// empty value is the Fluss default, COMPACTED (ConfigOptions.TABLE_KV_FORMAT).
func ParseKvFormat(s string) (RowFormat, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", "COMPACTED":
		return FormatCompacted, nil
	case "INDEXED":
		return FormatIndexed, nil
	default:
		return 0, unsupported("kv format %q", s)
	}
}

// RowEncoder appends the binary form of a row; implemented by
// CompactedRowEncoder and IndexedRowEncoder.
type RowEncoder interface {
	// AppendRow appends the encoding of row (one Datum per column) to dst.
	AppendRow(dst []byte, row []domain.Datum) ([]byte, error)
	// Format is the row format produced.
	Format() RowFormat
	// NumFields is the number of columns of the schema.
	NumFields() int
}

// RowDecoder decodes the binary form of a row; implemented by
// CompactedRowDecoder and IndexedRowDecoder.
type RowDecoder interface {
	// DecodeRow decodes the row occupying exactly src into dst (reusing its
	// capacity). Byte slices in the result alias src.
	DecodeRow(dst []domain.Datum, src []byte) ([]domain.Datum, error)
}

// NewRowEncoder returns the encoder of the given format for types.
func NewRowEncoder(format RowFormat, types []domain.DataType) (RowEncoder, error) {
	switch format {
	case FormatCompacted:
		return NewCompactedRowEncoder(types)
	case FormatIndexed:
		return NewIndexedRowEncoder(types)
	default:
		return nil, unsupported("row format %d", format)
	}
}

// NewRowDecoder returns the decoder of the given format for types.
func NewRowDecoder(format RowFormat, types []domain.DataType) (RowDecoder, error) {
	switch format {
	case FormatCompacted:
		return NewCompactedRowDecoder(types)
	case FormatIndexed:
		return NewIndexedRowDecoder(types)
	default:
		return nil, unsupported("row format %d", format)
	}
}
