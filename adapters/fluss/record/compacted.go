package record

import (
	"encoding/binary"
	"math"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// CompactedRow layout (row/compacted/CompactedRowWriter.java, CompactedRowReader.java):
//
//	null bitmap: ceil(fieldCount/8) bytes; field i is null when bit (i%8) of
//	             byte i/8 is set
//	then each non-null field, back to back, no padding:
//	  BOOLEAN, TINYINT            1 byte
//	  SMALLINT                    2 bytes LE
//	  INTEGER, DATE, TIME         unsigned varint of the 32-bit two's complement
//	  BIGINT                      unsigned varint of the 64-bit two's complement
//	  FLOAT, DOUBLE               4 / 8 bytes LE IEEE-754
//	  CHAR, STRING, BINARY, BYTES varint length + bytes (no padding, no length check)
//	  DECIMAL p<=18               varint64 of the unscaled value
//	  DECIMAL p>18                varint length + big-endian two's-complement unscaled bytes
//	  TIMESTAMP[_LTZ] p<=3        varint64 epoch millis
//	  TIMESTAMP[_LTZ] p>3         varint64 epoch millis, varint32 nano-of-millisecond
//	  ARRAY, MAP                  varint length + BinaryArray / BinaryMap (see binaryarray.go)
//	  ROW                         varint length + nested CompactedRow
//
// A compacted key (CompactedKeyWriter) is the same field encoding with no
// null bitmap.

// CompactedRowEncoder encodes rows of one schema as CompactedRows. Build it
// once per schema; it is immutable and safe for concurrent use, and AppendRow
// allocates nothing.
type CompactedRowEncoder struct {
	row column
}

// NewCompactedRowEncoder compiles an encoder for rows whose column i has type
// types[i]. It fails with ErrInvalidSchema or ErrUnsupported.
func NewCompactedRowEncoder(types []domain.DataType) (*CompactedRowEncoder, error) {
	row, err := compileRow(types)
	if err != nil {
		return nil, err
	}
	return &CompactedRowEncoder{row: row}, nil
}

// Format returns FormatCompacted.
func (e *CompactedRowEncoder) Format() RowFormat { return FormatCompacted }

// NumFields returns the number of columns of the schema.
func (e *CompactedRowEncoder) NumFields() int { return len(e.row.fields) }

// AppendRow appends the CompactedRow encoding of row (one Datum per column)
// to dst and returns the extended slice. On error (ErrInvalidValue: wrong
// column count, null in a NOT NULL column, value out of range) the returned
// slice may hold a partial row past len(dst); callers should keep using
// their original dst.
func (e *CompactedRowEncoder) AppendRow(dst []byte, row []domain.Datum) ([]byte, error) {
	return appendCompactedFields(dst, &e.row, row, "column")
}

// EncodeCompactedRow is a one-off form of CompactedRowEncoder.AppendRow. It
// compiles the schema on each call; build a CompactedRowEncoder for repeated use.
func EncodeCompactedRow(dst []byte, types []domain.DataType, row []domain.Datum) ([]byte, error) {
	e, err := NewCompactedRowEncoder(types)
	if err != nil {
		return dst, err
	}
	return e.AppendRow(dst, row)
}

// CompactedRowDecoder decodes CompactedRows of one schema into Datums. It is
// immutable and safe for concurrent use.
type CompactedRowDecoder struct {
	row column
}

// NewCompactedRowDecoder compiles a decoder for rows whose column i has type types[i].
func NewCompactedRowDecoder(types []domain.DataType) (*CompactedRowDecoder, error) {
	row, err := compileRow(types)
	if err != nil {
		return nil, err
	}
	return &CompactedRowDecoder{row: row}, nil
}

// DecodeRow decodes the CompactedRow that occupies exactly src into dst,
// reusing dst's capacity, and returns one Datum per column. Byte slices in
// the result alias src. Malformed input yields ErrCorrupt, including trailing
// bytes after the last field. A set null bit always yields a null Datum (the
// Java reader skips the bit for NOT NULL columns, but Java writers never set
// it there).
func (d *CompactedRowDecoder) DecodeRow(dst []domain.Datum, src []byte) ([]domain.Datum, error) {
	dst = resizeDatums(dst, len(d.row.fields))
	if err := decodeCompactedFields(src, &d.row, dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// DecodeCompactedRow is a one-off form of CompactedRowDecoder.DecodeRow.
func DecodeCompactedRow(types []domain.DataType, src []byte) ([]domain.Datum, error) {
	d, err := NewCompactedRowDecoder(types)
	if err != nil {
		return nil, err
	}
	return d.DecodeRow(nil, src)
}

// resizeDatums returns a slice of n Datums backed by dst when it is large enough.
func resizeDatums(dst []domain.Datum, n int) []domain.Datum {
	if cap(dst) >= n {
		return dst[:n]
	}
	return make([]domain.Datum, n)
}

// appendCompactedFields appends a CompactedRow (bitmap and fields) of row type c.
func appendCompactedFields(dst []byte, c *column, row []domain.Datum, label string) ([]byte, error) {
	if len(row) != len(c.fields) {
		return dst, invalidValue("row has %d values, want %d", len(row), len(c.fields))
	}
	start := len(dst)
	dst = appendZeros(dst, c.nullBytes)
	fields := c.fields
	row = row[:len(fields)] // lets the compiler drop the bounds check below
	for i := range fields {
		f, d := &fields[i], &row[i]
		if d.Null {
			if !f.nullable {
				return dst, invalidValue("%s %d: null value for NOT NULL type %s", label, i, f)
			}
			dst[start+i>>3] |= 1 << (i & 7)
			continue
		}
		// The most common kinds inline (appendCompactedValue does the
		// same); values that fail a check go the general way, which
		// reports them.
		switch f.kind {
		case kindBigInt, kindDecimalCompact, kindTimestampCompact:
			dst = AppendUvarint64(dst, uint64(d.I64))
			continue
		case kindChar, kindString, kindBinary, kindBytes:
			dst = AppendUvarint32(dst, uint32(len(d.Bytes)))
			dst = append(dst, d.Bytes...)
			continue
		case kindInt:
			if v := d.I64; v == int64(int32(v)) {
				dst = AppendUvarint32(dst, uint32(v))
				continue
			}
		case kindSmallInt:
			if v := d.I64; v == int64(int16(v)) {
				dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
				continue
			}
		case kindTimestamp:
			if d.Nanos >= 0 && d.Nanos <= 999_999 {
				dst = AppendUvarint64(dst, uint64(d.I64))
				dst = AppendUvarint32(dst, uint32(d.Nanos))
				continue
			}
		}
		var err error
		if dst, err = appendCompactedValue(dst, f, d); err != nil {
			return dst, prefixError(err, "%s %d", label, i)
		}
	}
	return dst, nil
}

// appendCompactedValue appends one non-null field in the compacted encoding.
func appendCompactedValue(dst []byte, f *column, d *domain.Datum) ([]byte, error) {
	switch f.kind {
	case kindBoolean, kindTinyInt:
		v, err := intValue(f, d)
		if err != nil {
			return dst, err
		}
		return append(dst, byte(v)), nil
	case kindSmallInt:
		v, err := intValue(f, d)
		if err != nil {
			return dst, err
		}
		return binary.LittleEndian.AppendUint16(dst, uint16(v)), nil
	case kindInt:
		v, err := intValue(f, d)
		if err != nil {
			return dst, err
		}
		return AppendUvarint32(dst, uint32(v)), nil
	case kindBigInt, kindDecimalCompact, kindTimestampCompact:
		return AppendUvarint64(dst, uint64(d.I64)), nil
	case kindFloat:
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(d.F64))), nil
	case kindDouble:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(d.F64)), nil
	case kindChar, kindString, kindBinary, kindBytes:
		dst = AppendUvarint32(dst, uint32(len(d.Bytes)))
		return append(dst, d.Bytes...), nil
	case kindDecimal:
		b, err := decimalBytes(d)
		if err != nil {
			return dst, err
		}
		dst = AppendUvarint32(dst, uint32(len(b)))
		return append(dst, b...), nil
	case kindTimestamp:
		if err := checkNanos(d); err != nil {
			return dst, err
		}
		dst = AppendUvarint64(dst, uint64(d.I64))
		return AppendUvarint32(dst, uint32(d.Nanos)), nil
	case kindArray, kindMap, kindRow:
		// The varint length precedes the value: reserve its maximum size,
		// encode in place, then close the gap.
		pos := len(dst)
		dst = append(dst, 0, 0, 0, 0, 0)
		var err error
		switch f.kind {
		case kindArray:
			dst, err = appendBinaryArray(dst, f.elem, d.Elems, 0, 1, len(d.Elems), FormatCompacted)
		case kindMap:
			dst, err = appendBinaryMap(dst, f, d, FormatCompacted)
		default:
			dst, err = appendCompactedFields(dst, f, d.Elems, "field")
		}
		if err != nil {
			return dst, err
		}
		return closeLengthPrefix(dst, pos), nil
	default:
		return dst, unsupported("type %s", f)
	}
}

// closeLengthPrefix turns the 5 reserved bytes at dst[pos:pos+5] into the
// varint length of dst[pos+5:], moving the value left over the unused bytes.
func closeLengthPrefix(dst []byte, pos int) []byte {
	body := pos + 5
	n := len(dst) - body
	k := SizeUvarint32(uint32(n))
	copy(dst[pos+k:], dst[body:])
	AppendUvarint32(dst[pos:pos], uint32(n))
	return dst[:pos+k+n]
}

// decodeCompactedFields decodes a CompactedRow of row type c occupying exactly src.
func decodeCompactedFields(src []byte, c *column, out []domain.Datum) error {
	if len(src) < c.nullBytes {
		return corrupt("row of %d bytes is shorter than its %d-byte null bitmap", len(src), c.nullBytes)
	}
	pos, err := decodeCompactedValues(src, c.nullBytes, c, out, src[:c.nullBytes])
	if err != nil {
		return err
	}
	if pos != len(src) {
		return corrupt("%d trailing bytes after the last field", len(src)-pos)
	}
	return nil
}

// decodeCompactedValues decodes the fields of c starting at src[pos]; nulls is
// the null bitmap (empty for keys, where no field is null). It returns the
// position after the last field.
func decodeCompactedValues(src []byte, pos int, c *column, out []domain.Datum, nulls []byte) (int, error) {
	for i := range c.fields {
		if len(nulls) > 0 && nulls[i>>3]&(1<<(i&7)) != 0 {
			out[i] = domain.Datum{Null: true}
			continue
		}
		var err error
		if pos, err = decodeCompactedValue(src, pos, &c.fields[i], &out[i]); err != nil {
			return 0, prefixError(err, "field %d", i)
		}
	}
	return pos, nil
}

// readUvarint32 reads a Fluss varint int32 at src[pos].
func readUvarint32(src []byte, pos int) (uint32, int, error) {
	v, n := Uvarint32(src[pos:])
	if n <= 0 {
		return 0, 0, corrupt("bad varint at byte %d", pos)
	}
	return v, pos + n, nil
}

// readLength reads a varint length and checks that that many bytes follow.
func readLength(src []byte, pos int) (int, int, error) {
	v, pos, err := readUvarint32(src, pos)
	if err != nil {
		return 0, 0, err
	}
	if int32(v) < 0 || int(v) > len(src)-pos {
		return 0, 0, corrupt("length %d at byte %d exceeds the %d remaining bytes", int32(v), pos, len(src)-pos)
	}
	return int(v), pos, nil
}

func need(src []byte, pos, n int) error {
	if n > len(src)-pos {
		return corrupt("value of %d bytes at byte %d exceeds the %d remaining bytes", n, pos, len(src)-pos)
	}
	return nil
}

// decodeCompactedValue decodes one non-null field at src[pos].
func decodeCompactedValue(src []byte, pos int, f *column, d *domain.Datum) (int, error) {
	*d = domain.Datum{}
	switch f.kind {
	case kindBoolean, kindTinyInt:
		if err := need(src, pos, 1); err != nil {
			return 0, err
		}
		if f.kind == kindBoolean {
			if src[pos] != 0 {
				d.I64 = 1
			}
		} else {
			d.I64 = int64(int8(src[pos]))
		}
		return pos + 1, nil
	case kindSmallInt:
		if err := need(src, pos, 2); err != nil {
			return 0, err
		}
		d.I64 = int64(int16(binary.LittleEndian.Uint16(src[pos:])))
		return pos + 2, nil
	case kindInt:
		v, pos, err := readUvarint32(src, pos)
		d.I64 = int64(int32(v))
		return pos, err
	case kindBigInt, kindDecimalCompact, kindTimestampCompact:
		v, n := Uvarint64(src[pos:])
		if n <= 0 {
			return 0, corrupt("bad varint at byte %d", pos)
		}
		d.I64 = int64(v)
		return pos + n, nil
	case kindFloat:
		if err := need(src, pos, 4); err != nil {
			return 0, err
		}
		d.F64 = float64(math.Float32frombits(binary.LittleEndian.Uint32(src[pos:])))
		return pos + 4, nil
	case kindDouble:
		if err := need(src, pos, 8); err != nil {
			return 0, err
		}
		d.F64 = math.Float64frombits(binary.LittleEndian.Uint64(src[pos:]))
		return pos + 8, nil
	case kindChar, kindString, kindBinary, kindBytes, kindDecimal:
		n, pos, err := readLength(src, pos)
		if err != nil {
			return 0, err
		}
		if f.kind == kindDecimal && n == 0 {
			return 0, corrupt("DECIMAL with an empty unscaled value")
		}
		d.Bytes = src[pos : pos+n : pos+n]
		return pos + n, nil
	case kindTimestamp:
		v, n := Uvarint64(src[pos:])
		if n <= 0 {
			return 0, corrupt("bad varint at byte %d", pos)
		}
		nanos, next, err := readUvarint32(src, pos+n)
		if err != nil {
			return 0, err
		}
		d.I64, d.Nanos = int64(v), int32(nanos)
		if err := checkNanos(d); err != nil {
			return 0, corrupt("%v", err)
		}
		return next, nil
	case kindArray, kindMap, kindRow:
		n, pos, err := readLength(src, pos)
		if err != nil {
			return 0, err
		}
		if err := decodeNested(src[pos:pos+n:pos+n], f, FormatCompacted, d); err != nil {
			return 0, err
		}
		return pos + n, nil
	default:
		return 0, unsupported("type %s", f)
	}
}
