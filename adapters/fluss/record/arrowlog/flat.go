package arrowlog

import (
	"encoding/binary"
	"math"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The flat column writer: for schemas without ARRAY, MAP or ROW columns the
// Builder keeps its own Arrow buffers (validity bitmap, values, int32
// offsets, data per column) instead of arrow-go builders, and rows reach them
// in the encoded row form of RowEncoder: every value already converted to
// its Arrow bytes (little-endian, the column's width; decimals as 128-bit
// two's complement, timestamps in the column's unit), so appending a row is
// copying bytes. The buffers hold exactly what Java's vectors hold after
// writing the same rows (nulls leave zero bytes in fixed-width values and
// repeat the offset), so the serialized message is the one the arrow-go
// path produces (the golden files written by the Java client check both).
//
// Encoded row: a null bitmap of ceil(columns/8) bytes (bit i of byte i/8 set:
// column i is null), then for each non-null column in order: BOOLEAN one byte
// 0/1; STRING, CHAR, BYTES a uint32 LE length and the bytes; any other type
// its Arrow value bytes (width bytes).

// RowEncoder turns rows of one flat schema into the encoded row form that
// Builder.AppendEncoded takes. It is immutable and safe for concurrent use,
// so rows can be encoded on the goroutines that decode requests, and checks
// every value as Builder.Append does.
type RowEncoder struct {
	nodes     []node
	nullBytes int
}

// NewRowEncoder returns the row encoder for the column types, or an
// unsupported error when a column is ARRAY, MAP or ROW (those rows go through
// Builder.Append).
func NewRowEncoder(types []domain.DataType) (*RowEncoder, error) {
	nodes, err := compileColumns(types)
	if err != nil {
		return nil, err
	}
	return newRowEncoder(nodes)
}

func newRowEncoder(nodes []node) (*RowEncoder, error) {
	for i := range nodes {
		switch nodes[i].kind {
		case kList, kMap, kStruct:
			return nil, unsupported("column %d is %s: nested columns have no encoded row form", i, &nodes[i])
		}
	}
	return &RowEncoder{nodes: nodes, nullBytes: (len(nodes) + 7) / 8}, nil
}

// AppendRow checks row (one Datum per column) and appends its encoded form
// to dst. On error dst is returned unextended.
func (e *RowEncoder) AppendRow(dst []byte, row []domain.Datum) ([]byte, error) {
	if len(row) != len(e.nodes) {
		return dst, invalidValue("row has %d values, want %d", len(row), len(e.nodes))
	}
	start := len(dst)
	for range e.nullBytes {
		dst = append(dst, 0)
	}
	for i := range row {
		n, d := &e.nodes[i], &row[i]
		if d.Null {
			if !n.nullable {
				return dst[:start], prefix(invalidValue("null value for NOT NULL type %s", n), "column %d", i)
			}
			dst[start+i>>3] |= 1 << (i & 7)
			continue
		}
		var err error
		if dst, err = appendValue(dst, n, d); err != nil {
			return dst[:start], prefix(err, "column %d", i)
		}
	}
	return dst, nil
}

// appendValue appends the Arrow bytes of a non-null value.
func appendValue(dst []byte, n *node, d *domain.Datum) ([]byte, error) {
	le := binary.LittleEndian
	switch n.kind {
	case kBool:
		if d.I64 != 0 && d.I64 != 1 {
			return dst, invalidValue("BOOLEAN value %d, want 0 or 1", d.I64)
		}
		return append(dst, byte(d.I64)), nil
	case kInt8:
		if d.I64 < math.MinInt8 || d.I64 > math.MaxInt8 {
			return dst, invalidValue("value %d out of range for TINYINT", d.I64)
		}
		return append(dst, byte(d.I64)), nil
	case kInt16:
		if d.I64 < math.MinInt16 || d.I64 > math.MaxInt16 {
			return dst, invalidValue("value %d out of range for SMALLINT", d.I64)
		}
		return le.AppendUint16(dst, uint16(d.I64)), nil
	case kInt32, kDate:
		if d.I64 < math.MinInt32 || d.I64 > math.MaxInt32 {
			return dst, invalidValue("value %d out of range for %s", d.I64, n.root)
		}
		return le.AppendUint32(dst, uint32(d.I64)), nil
	case kInt64:
		return le.AppendUint64(dst, uint64(d.I64)), nil
	case kFloat32:
		return le.AppendUint32(dst, math.Float32bits(float32(d.F64))), nil
	case kFloat64:
		return le.AppendUint64(dst, math.Float64bits(d.F64)), nil
	case kDecimal:
		hi, lo, err := decimalValue(n, d)
		if err != nil {
			return dst, err
		}
		dst = le.AppendUint64(dst, lo)
		return le.AppendUint64(dst, uint64(hi)), nil
	case kUtf8, kBinary:
		if len(d.Bytes) > math.MaxInt32 {
			return dst, invalidValue("%s value of %d bytes", n.root, len(d.Bytes))
		}
		dst = le.AppendUint32(dst, uint32(len(d.Bytes)))
		return append(dst, d.Bytes...), nil
	case kFixedBin:
		if len(d.Bytes) != n.width {
			return dst, invalidValue("BINARY(%d) value has %d bytes", n.width, len(d.Bytes))
		}
		return append(dst, d.Bytes...), nil
	case kTime:
		if d.I64 < math.MinInt32 || d.I64 > math.MaxInt32 {
			return dst, invalidValue("value %d out of range for %s", d.I64, n.root)
		}
		v := timeValue(n.unit, d.I64)
		if n.width == 4 {
			return le.AppendUint32(dst, uint32(v)), nil
		}
		return le.AppendUint64(dst, uint64(v)), nil
	case kTimestamp:
		if d.Nanos < 0 || d.Nanos > 999_999 {
			return dst, invalidValue("timestamp nano-of-millisecond %d outside 0..999999", d.Nanos)
		}
		v, ok := timestampValue(n.unit, d.I64, d.Nanos)
		if !ok {
			return dst, invalidValue("%s value %d ms overflows its Arrow %s", n, d.I64, timeUnits[n.unit])
		}
		return le.AppendUint64(dst, uint64(v)), nil
	}
	return dst, internal("arrowlog: no encoded form for %s", n)
}

// flatCol is the Arrow buffers of one flat column.
type flatCol struct {
	n     *node
	valid []byte // validity bitmap, ceil(rows/8) bytes
	nulls int
	vals  []byte // fixed-width values; BOOLEAN: a bitmap
	offs  []byte // Utf8/Binary: int32 LE offsets, rows+1 of them
	data  []byte // Utf8/Binary: the bytes
}

func (c *flatCol) reset() {
	c.valid, c.vals, c.data, c.nulls = c.valid[:0], c.vals[:0], c.data[:0], 0
	c.offs = append(c.offs[:0], 0, 0, 0, 0)
}

// AppendEncoded adds one row in the encoded form of this builder's
// RowEncoder (values already checked). A malformed row is refused whole.
// It is available only when RowEncoder is not nil.
func (b *Builder) AppendEncoded(row []byte) error {
	if b.flat == nil {
		return internal("arrowlog: AppendEncoded on a builder with nested columns")
	}
	nb := b.enc.nullBytes
	if err := b.checkEncoded(row); err != nil {
		return err
	}
	nulls, p := row[:nb], nb
	r := b.rows
	at, bit := r>>3, byte(1)<<(r&7)
	if bit == 1 {
		for i := range b.flat {
			c := &b.flat[i]
			c.valid = append(c.valid, 0)
			if c.n.kind == kBool {
				c.vals = append(c.vals, 0)
			}
		}
	}
	le := binary.LittleEndian
	body := 0
	for i := range b.flat {
		c := &b.flat[i]
		k := c.n.kind
		if nulls[i>>3]&(1<<(i&7)) != 0 {
			c.nulls++
			switch k {
			case kBool:
			case kUtf8, kBinary:
				c.offs = le.AppendUint32(c.offs, uint32(len(c.data)))
				body += 4
			default:
				c.vals = appendZeroBytes(c.vals, c.n.width)
				body += c.n.width
			}
			continue
		}
		c.valid[at] |= bit
		switch k {
		case kBool:
			if row[p] != 0 {
				c.vals[at] |= bit
			}
			p++
			body++
		case kUtf8, kBinary:
			l := int(le.Uint32(row[p:]))
			c.data = append(c.data, row[p+4:p+4+l]...)
			c.offs = le.AppendUint32(c.offs, uint32(len(c.data)))
			p += 4 + l
			body += 4 + l
		default:
			w := c.n.width
			c.vals = append(c.vals, row[p:p+w]...)
			p += w
			body += w
		}
	}
	b.body += body
	b.rows++
	return nil
}

// zeros backs the value bytes of null fixed-width slots.
var zeros = make([]byte, 256)

func appendZeroBytes(dst []byte, n int) []byte {
	for n > 0 {
		k := min(n, len(zeros))
		dst = append(dst, zeros[:k]...)
		n -= k
	}
	return dst
}

// checkEncoded checks that row is a whole encoded row of this schema.
func (b *Builder) checkEncoded(row []byte) error {
	nb := b.enc.nullBytes
	if len(row) < nb {
		return internal("arrowlog: encoded row of %d bytes", len(row))
	}
	p := nb
	for i := range b.flat {
		n := b.flat[i].n
		if row[i>>3]&(1<<(i&7)) != 0 {
			continue
		}
		switch n.kind {
		case kBool:
			p++
		case kUtf8, kBinary:
			if p+4 > len(row) {
				return internal("arrowlog: encoded row truncated at column %d", i)
			}
			p += 4 + int(binary.LittleEndian.Uint32(row[p:]))
		default:
			p += n.width
		}
		if p > len(row) {
			return internal("arrowlog: encoded row truncated at column %d", i)
		}
	}
	if p != len(row) {
		return internal("arrowlog: encoded row has %d bytes, its values %d", len(row), p)
	}
	return nil
}
