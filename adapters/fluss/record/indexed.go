package record

import (
	"encoding/binary"
	"math"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// IndexedRow layout (row/indexed/IndexedRowWriter.java, IndexedRow.java):
//
//	null bitmap: ceil(fieldCount/8) bytes, bit (i%8) of byte i/8 = field i is null
//	length list: one int32 LE slot per variable-length column of the schema
//	             (STRING, BYTES, DECIMAL p>18, ARRAY, MAP, ROW); slots are
//	             used in order by the non-null variable-length fields only,
//	             unused slots stay zero
//	then each non-null field, back to back:
//	  BOOLEAN, TINYINT 1 byte; SMALLINT 2; INTEGER, DATE, TIME 4; BIGINT 8 (LE)
//	  FLOAT 4, DOUBLE 8 (LE IEEE-754)
//	  CHAR(n), BINARY(n)        exactly n bytes, zero-padded (longer values are rejected)
//	  DECIMAL p<=18             8 bytes LE unscaled value
//	  DECIMAL p>18              big-endian two's-complement unscaled bytes (variable)
//	  TIMESTAMP[_LTZ] p<=3      8 bytes LE epoch millis
//	  TIMESTAMP[_LTZ] p>3       8 bytes LE epoch millis + 4 bytes LE nano-of-millisecond
//	  STRING, BYTES             the bytes (variable)
//	  ARRAY, MAP                BinaryArray / BinaryMap whose nested rows are IndexedRows (variable)
//	  ROW                       nested IndexedRow (variable)

// IndexedRowEncoder encodes rows of one schema as IndexedRows (the INDEXED
// log and kv formats). Build it once per schema; it is immutable and safe for
// concurrent use, and AppendRow allocates nothing.
type IndexedRowEncoder struct {
	row column
}

// NewIndexedRowEncoder compiles an encoder for rows whose column i has type
// types[i]. CHAR and BINARY columns need Length >= 1.
func NewIndexedRowEncoder(types []domain.DataType) (*IndexedRowEncoder, error) {
	row, err := compileRow(types)
	if err != nil {
		return nil, err
	}
	if err := row.checkIndexed(); err != nil {
		return nil, err
	}
	return &IndexedRowEncoder{row: row}, nil
}

// Format returns FormatIndexed.
func (e *IndexedRowEncoder) Format() RowFormat { return FormatIndexed }

// NumFields returns the number of columns of the schema.
func (e *IndexedRowEncoder) NumFields() int { return len(e.row.fields) }

// AppendRow appends the IndexedRow encoding of row (one Datum per column) to
// dst. Errors are ErrInvalidValue (including a CHAR(n)/BINARY(n) value longer
// than n bytes, which IndexedRowWriter also rejects); on error the returned
// slice may hold a partial row past len(dst).
func (e *IndexedRowEncoder) AppendRow(dst []byte, row []domain.Datum) ([]byte, error) {
	return appendIndexedFields(dst, &e.row, row, "column")
}

// IndexedRowDecoder decodes IndexedRows of one schema into Datums. It is
// immutable and safe for concurrent use.
type IndexedRowDecoder struct {
	row column
}

// NewIndexedRowDecoder compiles a decoder for rows whose column i has type types[i].
func NewIndexedRowDecoder(types []domain.DataType) (*IndexedRowDecoder, error) {
	row, err := compileRow(types)
	if err != nil {
		return nil, err
	}
	if err := row.checkIndexed(); err != nil {
		return nil, err
	}
	return &IndexedRowDecoder{row: row}, nil
}

// DecodeRow decodes the IndexedRow that occupies exactly src into dst,
// reusing dst's capacity. Byte slices alias src. As IndexedRow.getChar and
// getBinary do, CHAR(n) and BINARY(n) values come back with their trailing
// zero bytes removed. Malformed input yields ErrCorrupt.
func (d *IndexedRowDecoder) DecodeRow(dst []domain.Datum, src []byte) ([]domain.Datum, error) {
	dst = resizeDatums(dst, len(d.row.fields))
	if err := decodeIndexedFields(src, &d.row, dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// appendIndexedFields appends an IndexedRow of row type c.
func appendIndexedFields(dst []byte, c *column, row []domain.Datum, label string) ([]byte, error) {
	if len(row) != len(c.fields) {
		return dst, invalidValue("row has %d values, want %d", len(row), len(c.fields))
	}
	le := binary.LittleEndian
	start := len(dst)
	dst = appendZeros(dst, c.nullBytes+4*c.varFields)
	lengthSlot := start + c.nullBytes
	for i := range c.fields {
		f, d := &c.fields[i], &row[i]
		if d.Null {
			if !f.nullable {
				return dst, invalidValue("%s %d: null value for NOT NULL type %s", label, i, f)
			}
			dst[start+i>>3] |= 1 << (i & 7)
			continue
		}
		var err error
		switch f.kind {
		case kindBoolean, kindTinyInt, kindSmallInt, kindInt:
			var v int64
			if v, err = intValue(f, d); err != nil {
				break
			}
			switch f.kind {
			case kindSmallInt:
				dst = le.AppendUint16(dst, uint16(v))
			case kindInt:
				dst = le.AppendUint32(dst, uint32(v))
			default:
				dst = append(dst, byte(v))
			}
		case kindBigInt, kindDecimalCompact, kindTimestampCompact:
			dst = le.AppendUint64(dst, uint64(d.I64))
		case kindFloat:
			dst = le.AppendUint32(dst, math.Float32bits(float32(d.F64)))
		case kindDouble:
			dst = le.AppendUint64(dst, math.Float64bits(d.F64))
		case kindTimestamp:
			if err = checkNanos(d); err == nil {
				dst = le.AppendUint64(dst, uint64(d.I64))
				dst = le.AppendUint32(dst, uint32(d.Nanos))
			}
		case kindChar, kindBinary:
			if len(d.Bytes) > f.length {
				err = invalidValue("%d bytes do not fit %s(%d)", len(d.Bytes), f.root, f.length)
				break
			}
			dst = append(dst, d.Bytes...)
			dst = appendZeros(dst, f.length-len(d.Bytes))
		case kindString, kindBytes, kindDecimal, kindArray, kindMap, kindRow:
			body := len(dst)
			switch f.kind {
			case kindString, kindBytes:
				dst = append(dst, d.Bytes...)
			case kindDecimal:
				var b []byte
				if b, err = decimalBytes(d); err == nil {
					dst = append(dst, b...)
				}
			case kindArray:
				dst, err = appendBinaryArray(dst, f.elem, d.Elems, 0, 1, len(d.Elems), FormatIndexed)
			case kindMap:
				dst, err = appendBinaryMap(dst, f, d, FormatIndexed)
			default:
				dst, err = appendIndexedFields(dst, f, d.Elems, "field")
			}
			if err == nil {
				le.PutUint32(dst[lengthSlot:], uint32(len(dst)-body))
				lengthSlot += 4
			}
		default:
			err = unsupported("type %s", f)
		}
		if err != nil {
			return dst, prefixError(err, "%s %d", label, i)
		}
	}
	return dst, nil
}

// decodeIndexedFields decodes an IndexedRow of row type c occupying exactly src.
func decodeIndexedFields(src []byte, c *column, out []domain.Datum) error {
	le := binary.LittleEndian
	header := c.nullBytes + 4*c.varFields
	if len(src) < header {
		return corrupt("row of %d bytes is shorter than its %d-byte header", len(src), header)
	}
	pos, lengthSlot := header, c.nullBytes
	for i := range c.fields {
		f, d := &c.fields[i], &out[i]
		if src[i>>3]&(1<<(i&7)) != 0 {
			*d = domain.Datum{Null: true}
			continue
		}
		*d = domain.Datum{}
		var size int
		if f.indexedFixed() {
			size = indexedWidth(f)
		} else {
			if lengthSlot+4 > header {
				return corrupt("field %d: length list exhausted", i)
			}
			n := int32(le.Uint32(src[lengthSlot:]))
			lengthSlot += 4
			if n < 0 {
				return corrupt("field %d: negative length %d", i, n)
			}
			size = int(n)
		}
		if err := need(src, pos, size); err != nil {
			return prefixError(err, "field %d", i)
		}
		b := src[pos : pos+size : pos+size]
		pos += size
		switch f.kind {
		case kindBoolean:
			if b[0] != 0 {
				d.I64 = 1
			}
		case kindTinyInt:
			d.I64 = int64(int8(b[0]))
		case kindSmallInt:
			d.I64 = int64(int16(le.Uint16(b)))
		case kindInt:
			d.I64 = int64(int32(le.Uint32(b)))
		case kindBigInt, kindDecimalCompact, kindTimestampCompact:
			d.I64 = int64(le.Uint64(b))
		case kindFloat:
			d.F64 = float64(math.Float32frombits(le.Uint32(b)))
		case kindDouble:
			d.F64 = math.Float64frombits(le.Uint64(b))
		case kindTimestamp:
			d.I64, d.Nanos = int64(le.Uint64(b)), int32(le.Uint32(b[8:]))
			if err := checkNanos(d); err != nil {
				return corrupt("field %d: %v", i, err)
			}
		case kindChar, kindBinary:
			for len(b) > 0 && b[len(b)-1] == 0 {
				b = b[:len(b)-1]
			}
			d.Bytes = b
		case kindString, kindBytes:
			d.Bytes = b
		case kindDecimal:
			if len(b) == 0 {
				return corrupt("field %d: DECIMAL with an empty unscaled value", i)
			}
			d.Bytes = b
		case kindArray, kindMap, kindRow:
			if err := decodeNested(b, f, FormatIndexed, d); err != nil {
				return prefixError(err, "field %d", i)
			}
		default:
			return unsupported("type %s", f)
		}
	}
	if pos != len(src) {
		return corrupt("%d trailing bytes after the last field", len(src)-pos)
	}
	return nil
}

// indexedWidth is the width of a fixed-length field in an IndexedRow
// (IndexedRow.getLength).
func indexedWidth(f *column) int {
	switch f.kind {
	case kindBoolean, kindTinyInt:
		return 1
	case kindSmallInt:
		return 2
	case kindInt, kindFloat:
		return 4
	case kindTimestamp:
		return 12
	case kindChar, kindBinary:
		return f.length
	default:
		return 8
	}
}
