package record

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// KeyEncoder encodes the key columns of a row into the bytes Fluss uses as a
// primary key (PutKv / Lookup keys) or as the input of a bucketing function
// (row/encode/KeyEncoder.java).
type KeyEncoder interface {
	// AppendKey appends the key of row (a full row: one Datum per column of
	// the schema the encoder was built for) to dst. Key columns must not be
	// null (ErrInvalidValue), except nullable columns of a Paimon key.
	AppendKey(dst []byte, row []domain.Datum) ([]byte, error)
}

// LakeFormat is the table option `table.datalake.format`; it selects the key
// encoder and the bucketing function. The zero value means no data lake.
type LakeFormat string

// The data lake formats of Fluss 0.9.1 (metadata/DataLakeFormat.java).
const (
	LakeNone    LakeFormat = ""
	LakePaimon  LakeFormat = "paimon"
	LakeLance   LakeFormat = "lance"
	LakeIceberg LakeFormat = "iceberg"
)

// ParseLakeFormat parses `table.datalake.format` (case-insensitive; empty
// means none). Formats unknown to Fluss 0.9.1, such as hudi (added in 1.0),
// fail with ErrUnsupported.
func ParseLakeFormat(s string) (LakeFormat, error) {
	switch f := LakeFormat(strings.ToLower(strings.TrimSpace(s))); f {
	case LakeNone, LakePaimon, LakeLance, LakeIceberg:
		return f, nil
	default:
		return "", unsupported("data lake format %q", s)
	}
}

// NewBucketKeyEncoder returns the encoder whose bytes feed the bucketing
// function, as KeyEncoder.ofBucketKeyEncoder does: compacted for no lake and
// lance, Paimon BinaryRow for paimon, Iceberg single-field for iceberg.
// keyPositions are the bucket-key column positions in rowTypes.
func NewBucketKeyEncoder(rowTypes []domain.DataType, keyPositions []int, lake LakeFormat) (KeyEncoder, error) {
	switch lake {
	case LakeNone, LakeLance:
		return NewCompactedKeyEncoder(rowTypes, keyPositions)
	case LakePaimon:
		return NewPaimonKeyEncoder(rowTypes, keyPositions)
	case LakeIceberg:
		return NewIcebergKeyEncoder(rowTypes, keyPositions)
	default:
		return nil, unsupported("data lake format %q", lake)
	}
}

// NewPrimaryKeyEncoder returns the encoder of the PutKv/Lookup key as
// KeyEncoder.ofPrimaryKeyEncoder does. pkPositions are the physical primary
// key columns (partition columns removed) in primary-key order.
// kvFormatVersion is `table.kv.format-version`, 0 when absent (meaning 1):
// version 1 uses the lake's encoder; version 2 uses it only when the bucket
// key is the primary key (isDefaultBucketKey) and the compacted encoder
// otherwise, so that prefix lookups work.
func NewPrimaryKeyEncoder(rowTypes []domain.DataType, pkPositions []int, lake LakeFormat, kvFormatVersion int, isDefaultBucketKey bool) (KeyEncoder, error) {
	switch kvFormatVersion {
	case 0, 1:
		return NewBucketKeyEncoder(rowTypes, pkPositions, lake)
	case 2:
		if isDefaultBucketKey {
			return NewBucketKeyEncoder(rowTypes, pkPositions, lake)
		}
		return NewCompactedKeyEncoder(rowTypes, pkPositions)
	default:
		return nil, unsupported("kv format version %d", kvFormatVersion)
	}
}

// keyColumns compiles the types of the key columns.
func keyColumns(rowTypes []domain.DataType, positions []int) ([]int, column, error) {
	if positions == nil {
		positions = make([]int, len(rowTypes))
		for i := range positions {
			positions[i] = i
		}
	}
	types := make([]domain.DataType, len(positions))
	for i, p := range positions {
		if p < 0 || p >= len(rowTypes) {
			return nil, column{}, invalidSchema("key position %d outside the %d columns", p, len(rowTypes))
		}
		types[i] = rowTypes[p]
	}
	row, err := compileRow(types)
	if err != nil {
		return nil, column{}, err
	}
	return append([]int(nil), positions...), row, nil
}

// keyValue returns the Datum of key column i, checking the row width.
func keyDatum(row []domain.Datum, positions []int, i int) (*domain.Datum, error) {
	p := positions[i]
	if p >= len(row) {
		return nil, invalidValue("row has %d values, key column at position %d", len(row), p)
	}
	return &row[p], nil
}

// CompactedKeyEncoder is Fluss's default key encoder: the CompactedRow field
// encoding of the key columns in key order with no null bitmap
// (row/encode/CompactedKeyEncoder.java, row/compacted/CompactedKeyWriter.java).
// Nested ROW values inside keys keep their own null bitmap. It is immutable,
// safe for concurrent use and allocation-free.
type CompactedKeyEncoder struct {
	positions []int
	key       column
}

// NewCompactedKeyEncoder builds the encoder for the columns at keyPositions
// (in key order) of rows typed rowTypes; nil keyPositions means every column
// in order.
func NewCompactedKeyEncoder(rowTypes []domain.DataType, keyPositions []int) (*CompactedKeyEncoder, error) {
	positions, key, err := keyColumns(rowTypes, keyPositions)
	if err != nil {
		return nil, err
	}
	return &CompactedKeyEncoder{positions: positions, key: key}, nil
}

// AppendKey appends the compacted key of row to dst. A null key column fails
// with ErrInvalidValue, as CompactedKeyWriter does.
func (e *CompactedKeyEncoder) AppendKey(dst []byte, row []domain.Datum) ([]byte, error) {
	for i := range e.positions {
		d, err := keyDatum(row, e.positions, i)
		if err != nil {
			return dst, err
		}
		f := &e.key.fields[i]
		if d.Null {
			return dst, invalidValue("null value is not allowed in key position %d with type %s", i, f)
		}
		if dst, err = appendCompactedValue(dst, f, d); err != nil {
			return dst, prefixError(err, "key position %d", i)
		}
	}
	return dst, nil
}

// CompactedKeyDecoder decodes compacted keys back into Datums
// (row/decode/CompactedKeyDecoder.java); the gateway uses it for diagnostics
// and tests. It is immutable and safe for concurrent use.
type CompactedKeyDecoder struct {
	key column
}

// NewCompactedKeyDecoder builds a decoder for keys whose column i has type keyTypes[i].
func NewCompactedKeyDecoder(keyTypes []domain.DataType) (*CompactedKeyDecoder, error) {
	key, err := compileRow(keyTypes)
	if err != nil {
		return nil, err
	}
	return &CompactedKeyDecoder{key: key}, nil
}

// DecodeKey decodes the key that occupies exactly src into dst (reusing its
// capacity). Byte slices alias src; malformed input yields ErrCorrupt.
func (d *CompactedKeyDecoder) DecodeKey(dst []domain.Datum, src []byte) ([]domain.Datum, error) {
	dst = resizeDatums(dst, len(d.key.fields))
	pos, err := decodeCompactedValues(src, 0, &d.key, dst, nil)
	if err != nil {
		return nil, err
	}
	if pos != len(src) {
		return nil, corrupt("%d trailing bytes after the last key field", len(src)-pos)
	}
	return dst, nil
}

// PaimonKeyEncoder encodes keys as Paimon BinaryRows, for tables with
// `table.datalake.format` = paimon (row/encode/paimon/PaimonKeyEncoder.java,
// PaimonBinaryRowWriter.java). Layout:
//
//	header: ((arity+63+8)/64)*8 bytes; byte 0 is the row kind (INSERT = 0),
//	        field i is null when bit (i+8) is set (byte (i+8)/8, bit (i+8)%8)
//	fixed part: one 8-byte LE slot per field; BOOLEAN/TINYINT 1 byte,
//	        SMALLINT 2, INTEGER/DATE/TIME/FLOAT 4, others 8, rest of the slot 0
//	CHAR/STRING/BINARY/BYTES up to 7 bytes inline (slot byte 7 = 0x80|len),
//	        longer: slot = offset<<32|len, bytes in the variable part padded to 8
//	DECIMAL p<=18 slot = unscaled long; p>18: 16 bytes in the variable part
//	TIMESTAMP[_LTZ] p<=3 slot = millis; p>3: millis in the variable part,
//	        slot = offset<<32|nanoOfMilli
//
// ARRAY, MAP and ROW key columns are not supported (ErrUnsupported), as in Fluss.
type PaimonKeyEncoder struct {
	positions []int
	key       column
	header    int
}

// NewPaimonKeyEncoder builds the Paimon key encoder for the columns at
// keyPositions of rows typed rowTypes.
func NewPaimonKeyEncoder(rowTypes []domain.DataType, keyPositions []int) (*PaimonKeyEncoder, error) {
	positions, key, err := keyColumns(rowTypes, keyPositions)
	if err != nil {
		return nil, err
	}
	for i := range key.fields {
		switch key.fields[i].kind {
		case kindArray, kindMap, kindRow:
			return nil, unsupported("type %s in a Paimon key", &key.fields[i])
		}
	}
	n := len(key.fields)
	return &PaimonKeyEncoder{positions: positions, key: key, header: ((n + 63 + 8) / 64) * 8}, nil
}

// AppendKey appends the Paimon BinaryRow of the key columns of row to dst.
func (e *PaimonKeyEncoder) AppendKey(dst []byte, row []domain.Datum) ([]byte, error) {
	le := binary.LittleEndian
	start := len(dst)
	dst = appendZeros(dst, e.header+8*len(e.key.fields))
	for i := range e.positions {
		d, err := keyDatum(row, e.positions, i)
		if err != nil {
			return dst, err
		}
		f := &e.key.fields[i]
		slot := start + e.header + 8*i
		if d.Null {
			if !f.nullable {
				return dst, invalidValue("null value in NOT NULL key position %d with type %s", i, f)
			}
			dst[start+(i+8)>>3] |= 1 << ((i + 8) & 7)
			continue
		}
		switch f.kind {
		case kindFloat:
			// PaimonBinaryRowWriter keeps NaN bits as given, unlike BinaryArrayWriter.
			le.PutUint32(dst[slot:], math.Float32bits(float32(d.F64)))
		case kindDouble:
			le.PutUint64(dst[slot:], math.Float64bits(d.F64))
		default:
			// Every other slot is encoded exactly like a BinaryArray element
			// of width 8: narrow integers fill the low bytes, short strings
			// and bytes go inline, long ones, DECIMAL(p>18) and
			// TIMESTAMP(p>3) go to the variable part.
			dst, err = appendArrayElement(dst, start, slot, f, d, FormatCompacted)
		}
		if err != nil {
			return dst, prefixError(err, "key position %d", i)
		}
	}
	return dst, nil
}

// IcebergKeyEncoder encodes a single-column key the way Iceberg hashes it
// (row/encode/iceberg/IcebergKeyEncoder.java, IcebergBinaryRowWriter.java),
// with no length prefixes:
//
//	INTEGER, DATE       int64 LE (widened)
//	TIME                int64 LE microseconds (millis * 1000)
//	BIGINT              int64 LE
//	FLOAT, DOUBLE       4 / 8 bytes LE IEEE-754
//	TIMESTAMP (NTZ)     int64 LE microseconds (millis*1000 + nanoOfMilli/1000)
//	DECIMAL             big-endian two's-complement unscaled bytes
//	CHAR, STRING        UTF-8 bytes
//	BINARY, BYTES       the bytes
//
// Other types (BOOLEAN, TINYINT, SMALLINT, TIMESTAMP_LTZ, ARRAY, MAP, ROW)
// are rejected with ErrUnsupported, as Fluss 0.9.1 rejects them.
type IcebergKeyEncoder struct {
	position int
	key      column
}

// NewIcebergKeyEncoder builds the Iceberg key encoder; Iceberg keys must have
// exactly one column.
func NewIcebergKeyEncoder(rowTypes []domain.DataType, keyPositions []int) (*IcebergKeyEncoder, error) {
	if len(keyPositions) != 1 {
		return nil, unsupported("iceberg keys must have exactly one column, got %d", len(keyPositions))
	}
	positions, key, err := keyColumns(rowTypes, keyPositions)
	if err != nil {
		return nil, err
	}
	f := &key.fields[0]
	switch f.kind {
	case kindInt, kindBigInt, kindFloat, kindDouble, kindDecimalCompact, kindDecimal,
		kindChar, kindString, kindBinary, kindBytes:
	case kindTimestampCompact, kindTimestamp:
		if f.root != domain.TypeTimestampNTZ {
			return nil, unsupported("type %s in an Iceberg key", f)
		}
	default:
		return nil, unsupported("type %s in an Iceberg key", f)
	}
	return &IcebergKeyEncoder{position: positions[0], key: key}, nil
}

// AppendKey appends the Iceberg encoding of the key column of row to dst.
func (e *IcebergKeyEncoder) AppendKey(dst []byte, row []domain.Datum) ([]byte, error) {
	if e.position >= len(row) {
		return dst, invalidValue("row has %d values, key column at position %d", len(row), e.position)
	}
	d, f := &row[e.position], &e.key.fields[0]
	if d.Null {
		return dst, invalidValue("null value is not allowed in an Iceberg key of type %s", f)
	}
	le := binary.LittleEndian
	switch f.kind {
	case kindInt:
		v, err := intValue(f, d)
		if err != nil {
			return dst, err
		}
		if f.root == domain.TypeTime {
			v *= 1000
		}
		return le.AppendUint64(dst, uint64(v)), nil
	case kindBigInt:
		return le.AppendUint64(dst, uint64(d.I64)), nil
	case kindFloat:
		return le.AppendUint32(dst, math.Float32bits(float32(d.F64))), nil
	case kindDouble:
		return le.AppendUint64(dst, math.Float64bits(d.F64)), nil
	case kindTimestampCompact, kindTimestamp:
		if err := checkNanos(d); err != nil {
			return dst, err
		}
		return le.AppendUint64(dst, uint64(d.I64*1000+int64(d.Nanos)/1000)), nil
	case kindDecimalCompact:
		return appendBigEndianMinimal(dst, d.I64), nil
	case kindDecimal:
		b, err := decimalBytes(d)
		if err != nil {
			return dst, err
		}
		return append(dst, b...), nil
	default: // CHAR, STRING, BINARY, BYTES
		return append(dst, d.Bytes...), nil
	}
}

// appendBigEndianMinimal appends v as BigInteger.valueOf(v).toByteArray()
// does: the shortest big-endian two's-complement form.
func appendBigEndianMinimal(dst []byte, v int64) []byte {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(v))
	b := buf[:]
	for len(b) > 1 && ((b[0] == 0x00 && b[1] < 0x80) || (b[0] == 0xFF && b[1] >= 0x80)) {
		b = b[1:]
	}
	return append(dst, b...)
}
