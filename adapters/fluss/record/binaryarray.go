package record

import (
	"encoding/binary"
	"math"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// BinaryArray and BinaryMap: the layout Fluss uses for ARRAY and MAP values
// nested in CompactedRow, IndexedRow and compacted keys (row/BinaryArray.java,
// row/BinaryArrayWriter.java, row/AbstractBinaryWriter.java, row/BinaryMap.java).
//
// BinaryArray, all integers little-endian, offsets relative to the array start:
//
//	int32 numElements
//	null bits: ceil(numElements/32)*4 bytes; element i is null when bit (i%8)
//	           of byte 4+i/8 is set
//	fixed slots: numElements * width, width 1 (BOOLEAN, TINYINT),
//	           2 (SMALLINT), 4 (INTEGER, DATE, TIME, FLOAT) or 8 (everything
//	           else); the fixed part is zero-padded to a multiple of 8
//	variable part, each piece zero-padded to a multiple of 8:
//	  CHAR/STRING/BINARY/BYTES: up to 7 bytes inline in the slot with slot
//	    byte 7 = 0x80|len; longer: slot = offset<<32 | len
//	  DECIMAL(p>18): 16 bytes holding the big-endian unscaled value; slot =
//	    offset<<32 | len
//	  TIMESTAMP(p>3): 8 bytes of epoch millis; slot = offset<<32 | nanoOfMilli
//	  ARRAY, MAP, ROW: the nested binary value; slot = offset<<32 | size.
//	    A nested ROW is a CompactedRow or an IndexedRow, following the
//	    format of the enclosing row (BinaryWriter.createValueWriter).
//
// Null elements leave a zero slot. FLOAT and DOUBLE NaN are canonicalised
// (BinaryArrayWriter.writeFloat/writeDouble).
//
// BinaryMap: int32 size in bytes of the key array, the key BinaryArray, then
// the value BinaryArray.

// appendBinaryArray appends a BinaryArray of n elements of type elem taken
// from elems[first], elems[first+stride], ... to dst.
func appendBinaryArray(dst []byte, elem *column, elems []domain.Datum, first, stride, n int, nested RowFormat) ([]byte, error) {
	start := len(dst)
	width := elem.arrayWidth()
	header := 4 + ((n+31)/32)*4
	dst = appendZeros(dst, roundUp8(header+width*n))
	binary.LittleEndian.PutUint32(dst[start:], uint32(n))
	for i := 0; i < n; i++ {
		d := &elems[first+i*stride]
		if d.Null {
			dst[start+4+i>>3] |= 1 << (i & 7)
			continue
		}
		var err error
		if dst, err = appendArrayElement(dst, start, start+header+i*width, elem, d, nested); err != nil {
			return dst, prefixError(err, "element %d", i)
		}
	}
	return dst, nil
}

// appendArrayElement writes one non-null element: into its slot at dst[slot:]
// for fixed-width values, or into a new piece of the variable part (appended
// to dst) with the slot pointing at it. start is the array's first byte.
func appendArrayElement(dst []byte, start, slot int, elem *column, d *domain.Datum, nested RowFormat) ([]byte, error) {
	le := binary.LittleEndian
	switch elem.kind {
	case kindBoolean, kindTinyInt:
		v, err := intValue(elem, d)
		if err != nil {
			return dst, err
		}
		dst[slot] = byte(v)
	case kindSmallInt:
		v, err := intValue(elem, d)
		if err != nil {
			return dst, err
		}
		le.PutUint16(dst[slot:], uint16(v))
	case kindInt:
		v, err := intValue(elem, d)
		if err != nil {
			return dst, err
		}
		le.PutUint32(dst[slot:], uint32(v))
	case kindBigInt, kindDecimalCompact, kindTimestampCompact:
		le.PutUint64(dst[slot:], uint64(d.I64))
	case kindFloat:
		f := float32(d.F64)
		bits := math.Float32bits(f)
		if f != f {
			bits = 0x7FC00000 // Float.NaN
		}
		le.PutUint32(dst[slot:], bits)
	case kindDouble:
		bits := math.Float64bits(d.F64)
		if d.F64 != d.F64 {
			bits = 0x7FF8000000000000 // Double.NaN
		}
		le.PutUint64(dst[slot:], bits)
	case kindDecimal:
		b, err := decimalBytes(d)
		if err != nil {
			return dst, err
		}
		off := len(dst) - start
		dst = appendZeros(dst, 16)
		copy(dst[start+off:], b)
		le.PutUint64(dst[slot:], uint64(off)<<32|uint64(len(b)))
	case kindChar, kindString, kindBinary, kindBytes:
		b := d.Bytes
		if len(b) <= 7 {
			copy(dst[slot:slot+7], b)
			dst[slot+7] = 0x80 | byte(len(b))
			return dst, nil
		}
		off := len(dst) - start
		dst = append(dst, b...)
		dst = appendZeros(dst, roundUp8(len(b))-len(b))
		le.PutUint64(dst[slot:], uint64(off)<<32|uint64(uint32(len(b))))
	case kindTimestamp:
		if err := checkNanos(d); err != nil {
			return dst, err
		}
		off := len(dst) - start
		dst = AppendInt64LE(dst, d.I64)
		le.PutUint64(dst[slot:], uint64(off)<<32|uint64(d.Nanos))
	case kindArray, kindMap, kindRow:
		off := len(dst) - start
		var err error
		switch elem.kind {
		case kindArray:
			dst, err = appendBinaryArray(dst, elem.elem, d.Elems, 0, 1, len(d.Elems), nested)
		case kindMap:
			dst, err = appendBinaryMap(dst, elem, d, nested)
		default:
			dst, err = appendNestedRow(dst, elem, d, nested)
		}
		if err != nil {
			return dst, err
		}
		size := len(dst) - start - off
		dst = appendZeros(dst, roundUp8(size)-size)
		le.PutUint64(dst[slot:], uint64(off)<<32|uint64(uint32(size)))
	default:
		return dst, unsupported("type %s in an array", elem)
	}
	return dst, nil
}

// appendBinaryMap appends the BinaryMap of a MAP Datum (Elems = k0, v0, k1, v1, ...).
func appendBinaryMap(dst []byte, c *column, d *domain.Datum, nested RowFormat) ([]byte, error) {
	if len(d.Elems)%2 != 0 {
		return dst, invalidValue("MAP value has %d elements, want key/value pairs", len(d.Elems))
	}
	n := len(d.Elems) / 2
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := appendBinaryArray(dst, c.elem, d.Elems, 0, 2, n, nested)
	if err != nil {
		return dst, prefixError(err, "keys")
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	if dst, err = appendBinaryArray(dst, c.value, d.Elems, 1, 2, n, nested); err != nil {
		return dst, prefixError(err, "values")
	}
	return dst, nil
}

// appendNestedRow appends a nested ROW value in the given row format, with
// its own null bitmap.
func appendNestedRow(dst []byte, c *column, d *domain.Datum, format RowFormat) ([]byte, error) {
	if format == FormatIndexed {
		return appendIndexedFields(dst, c, d.Elems, "field")
	}
	return appendCompactedFields(dst, c, d.Elems, "field")
}

// decodeBinaryArray decodes a BinaryArray that occupies exactly src.
func decodeBinaryArray(src []byte, elem *column, nested RowFormat) ([]domain.Datum, error) {
	n, header, err := arrayHeader(src, elem)
	if err != nil {
		return nil, err
	}
	out := make([]domain.Datum, n)
	if err := decodeArrayElements(src, elem, nested, n, header, out, 0, 1); err != nil {
		return nil, err
	}
	return out, nil
}

// arrayHeader validates the element count of a BinaryArray against the
// bytes available and returns it with the header size.
func arrayHeader(src []byte, elem *column) (n, header int, err error) {
	if len(src) < 4 {
		return 0, 0, corrupt("array of %d bytes is shorter than its 4-byte size", len(src))
	}
	count := int32(binary.LittleEndian.Uint32(src))
	if count < 0 {
		return 0, 0, corrupt("array size %d is negative", count)
	}
	n = int(count)
	header = 4 + ((n+31)/32)*4
	if int64(header)+int64(n)*int64(elem.arrayWidth()) > int64(len(src)) {
		return 0, 0, corrupt("array of %d elements does not fit in %d bytes", n, len(src))
	}
	return n, header, nil
}

// decodeArrayElements decodes n elements into out[first], out[first+stride], ...
func decodeArrayElements(src []byte, elem *column, nested RowFormat, n, header int, out []domain.Datum, first, stride int) error {
	width := elem.arrayWidth()
	for i := 0; i < n; i++ {
		d := &out[first+i*stride]
		if src[4+i>>3]&(1<<(i&7)) != 0 {
			*d = domain.Datum{Null: true}
			continue
		}
		if err := decodeArrayElement(src, header+i*width, elem, nested, d); err != nil {
			return prefixError(err, "element %d", i)
		}
	}
	return nil
}

// varPiece resolves an offset<<32|len slot to its bytes inside the array.
func varPiece(src []byte, slotValue uint64) ([]byte, error) {
	off, size := slotValue>>32, uint64(uint32(slotValue))
	if off+size > uint64(len(src)) {
		return nil, corrupt("variable-length part [%d, %d) outside the %d-byte array", off, off+size, len(src))
	}
	return src[off : off+size : off+size], nil
}

func decodeArrayElement(src []byte, slot int, elem *column, nested RowFormat, d *domain.Datum) error {
	le := binary.LittleEndian
	*d = domain.Datum{}
	switch elem.kind {
	case kindBoolean:
		if src[slot] != 0 {
			d.I64 = 1
		}
	case kindTinyInt:
		d.I64 = int64(int8(src[slot]))
	case kindSmallInt:
		d.I64 = int64(int16(le.Uint16(src[slot:])))
	case kindInt:
		d.I64 = int64(int32(le.Uint32(src[slot:])))
	case kindBigInt, kindDecimalCompact, kindTimestampCompact:
		d.I64 = int64(le.Uint64(src[slot:]))
	case kindFloat:
		d.F64 = float64(math.Float32frombits(le.Uint32(src[slot:])))
	case kindDouble:
		d.F64 = math.Float64frombits(le.Uint64(src[slot:]))
	case kindDecimal:
		b, err := varPiece(src, le.Uint64(src[slot:]))
		if err != nil {
			return err
		}
		if len(b) == 0 {
			return corrupt("DECIMAL with an empty unscaled value")
		}
		d.Bytes = b
	case kindChar, kindString, kindBinary, kindBytes:
		v := le.Uint64(src[slot:])
		if v>>63 != 0 {
			size := int(v>>56) & 0x7F
			if size > 7 {
				return corrupt("inline value of %d bytes exceeds 7", size)
			}
			d.Bytes = src[slot : slot+size : slot+size]
			return nil
		}
		b, err := varPiece(src, v)
		if err != nil {
			return err
		}
		d.Bytes = b
	case kindTimestamp:
		v := le.Uint64(src[slot:])
		off, nanos := v>>32, int32(uint32(v))
		if off+8 > uint64(len(src)) {
			return corrupt("timestamp millis at %d outside the %d-byte array", off, len(src))
		}
		d.I64, d.Nanos = int64(le.Uint64(src[off:])), nanos
		if err := checkNanos(d); err != nil {
			return corrupt("%v", err)
		}
	case kindArray, kindMap, kindRow:
		b, err := varPiece(src, le.Uint64(src[slot:]))
		if err != nil {
			return err
		}
		return decodeNested(b, elem, nested, d)
	default:
		return unsupported("type %s in an array", elem)
	}
	return nil
}

// decodeNested decodes the bytes of an ARRAY, MAP or ROW value that occupies
// exactly b. format is the row format of nested ROW values.
func decodeNested(b []byte, c *column, format RowFormat, d *domain.Datum) error {
	var err error
	switch c.kind {
	case kindArray:
		d.Elems, err = decodeBinaryArray(b, c.elem, format)
	case kindMap:
		d.Elems, err = decodeBinaryMap(b, c, format)
	default:
		d.Elems = make([]domain.Datum, len(c.fields))
		if format == FormatIndexed {
			err = decodeIndexedFields(b, c, d.Elems)
		} else {
			err = decodeCompactedFields(b, c, d.Elems)
		}
	}
	return err
}

// decodeBinaryMap decodes a BinaryMap that occupies exactly src into
// interleaved key/value Datums.
func decodeBinaryMap(src []byte, c *column, nested RowFormat) ([]domain.Datum, error) {
	if len(src) < 4 {
		return nil, corrupt("map of %d bytes is shorter than its 4-byte key size", len(src))
	}
	keySize := int32(binary.LittleEndian.Uint32(src))
	if keySize < 0 || int64(keySize) > int64(len(src)-4) {
		return nil, corrupt("map key array size %d outside the %d-byte map", keySize, len(src))
	}
	keys, values := src[4:4+int(keySize)], src[4+int(keySize):]
	n, kh, err := arrayHeader(keys, c.elem)
	if err != nil {
		return nil, prefixError(err, "keys")
	}
	nv, vh, err := arrayHeader(values, c.value)
	if err != nil {
		return nil, prefixError(err, "values")
	}
	if n != nv {
		return nil, corrupt("map has %d keys and %d values", n, nv)
	}
	out := make([]domain.Datum, 2*n)
	if err := decodeArrayElements(keys, c.elem, nested, n, kh, out, 0, 2); err != nil {
		return nil, prefixError(err, "keys")
	}
	if err := decodeArrayElements(values, c.value, nested, n, vh, out, 1, 2); err != nil {
		return nil, prefixError(err, "values")
	}
	return out, nil
}
