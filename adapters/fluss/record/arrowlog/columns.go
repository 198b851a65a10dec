package arrowlog

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Columnar appends: rows that arrive column by column, already in the Arrow
// layout of their Fluss types (domain.ColumnarRows, e.g. an Arrow IPC record
// batch a client sent), are copied into a flat Builder's column buffers a
// column at a time: fixed-width values and string bytes by one copy per
// column, validity and BOOLEAN bitmaps shifted into place, offsets rebased.
// No row is looked at on its own, and the message serialised afterwards is
// the one the same rows appended with AppendEncoded give (validity bitmaps
// aside when a column has no null: both are all ones).

// CheckColumns checks that cols has the buffers of this encoder's schema for
// cols.Rows rows: a column per schema column, and every buffer long enough
// (offsets non-decreasing and within Data). The values themselves are not
// checked (see domain.ColumnarRows). It is linear in the rows of the
// variable-length columns only.
func (e *RowEncoder) CheckColumns(cols *domain.ColumnarRows) error {
	n := cols.Rows
	if n < 0 || len(cols.Columns) != len(e.nodes) {
		return invalidValue("columnar rows: %d columns, want %d", len(cols.Columns), len(e.nodes))
	}
	bitmap := (n + 7) / 8
	for i := range e.nodes {
		nd, c := &e.nodes[i], &cols.Columns[i]
		if c.Validity != nil && len(c.Validity) < bitmap {
			return invalidValue("column %d: validity bitmap of %d bytes for %d rows", i, len(c.Validity), n)
		}
		switch nd.kind {
		case kBool:
			if len(c.Values) < bitmap {
				return invalidValue("column %d: BOOLEAN bitmap of %d bytes for %d rows", i, len(c.Values), n)
			}
		case kUtf8, kBinary:
			if len(c.Offsets) < 4*(n+1) {
				return invalidValue("column %d: %d offset bytes for %d rows", i, len(c.Offsets), n)
			}
			prev := int64(binary.LittleEndian.Uint32(c.Offsets))
			if prev > math.MaxInt32 {
				return invalidValue("column %d: negative offset", i)
			}
			for r := 1; r <= n; r++ {
				o := int64(binary.LittleEndian.Uint32(c.Offsets[4*r:]))
				if o < prev || o > int64(len(c.Data)) {
					return invalidValue("column %d: row %d: offset %d outside %d..%d", i, r-1, o, prev, len(c.Data))
				}
				prev = o
			}
		default:
			if len(c.Values) < n*nd.width {
				return invalidValue("column %d: %d value bytes for %d rows of width %d", i, len(c.Values), n, nd.width)
			}
		}
	}
	return nil
}

// ColumnsSize returns the uncompressed Arrow body bytes of rows [from, to)
// of cols (checked by CheckColumns): what the rows add to a batch.
func (e *RowEncoder) ColumnsSize(cols *domain.ColumnarRows, from, to int) int {
	n := to - from
	size := 0
	for i := range e.nodes {
		nd, c := &e.nodes[i], &cols.Columns[i]
		size += (n + 7) / 8
		switch nd.kind {
		case kBool:
			size += (n + 7) / 8
		case kUtf8, kBinary:
			size += 4*n + int(binary.LittleEndian.Uint32(c.Offsets[4*to:])-binary.LittleEndian.Uint32(c.Offsets[4*from:]))
		default:
			size += n * nd.width
		}
	}
	return size
}

// AppendColumns adds rows [from, to) of cols, which CheckColumns accepted
// for this builder's RowEncoder. It is available only when RowEncoder is not
// nil; rows added by AppendEncoded and AppendColumns mix freely.
func (b *Builder) AppendColumns(cols *domain.ColumnarRows, from, to int) error {
	if b.flat == nil {
		return internal("arrowlog: AppendColumns on a builder with nested columns")
	}
	if len(cols.Columns) != len(b.flat) || from < 0 || to > cols.Rows || from > to {
		return internal("arrowlog: AppendColumns of rows %d..%d of %d in %d columns", from, to, cols.Rows, len(cols.Columns))
	}
	n := to - from
	if n == 0 {
		return nil
	}
	le := binary.LittleEndian
	body := 0
	for i := range b.flat {
		c, src := &b.flat[i], &cols.Columns[i]
		if src.Validity == nil {
			c.valid = appendOnes(c.valid, b.rows, n)
		} else {
			c.valid = appendBits(c.valid, b.rows, src.Validity, from, n)
			c.nulls += n - countOnes(c.valid, b.rows, n)
		}
		switch c.n.kind {
		case kBool:
			c.vals = appendBits(c.vals, b.rows, src.Values, from, n)
			body += (n + 7) / 8
		case kUtf8, kBinary:
			lo := le.Uint32(src.Offsets[4*from:])
			hi := le.Uint32(src.Offsets[4*to:])
			base := uint32(len(c.data))
			c.data = append(c.data, src.Data[lo:hi]...)
			for r := from + 1; r <= to; r++ {
				c.offs = le.AppendUint32(c.offs, le.Uint32(src.Offsets[4*r:])-lo+base)
			}
			body += 4*n + int(hi-lo)
		default:
			w := c.n.width
			c.vals = append(c.vals, src.Values[from*w:to*w]...)
			body += n * w
		}
	}
	b.body += body
	b.rows += n
	return nil
}

// appendBits appends bits [from, from+n) of src (LSB first) to the bitmap
// dst holding have bits, and returns it with exactly ceil((have+n)/8) bytes,
// the bits beyond have+n unset.
func appendBits(dst []byte, have int, src []byte, from, n int) []byte {
	dst = dst[:(have+7)/8]
	total := have + n
	shift := uint(have & 7)
	if from&7 == 0 && shift == 0 {
		dst = append(dst, src[from>>3:(from+n+7)>>3]...)
	} else {
		for k := 0; k < n; {
			// Up to 8 source bits starting at bit from+k.
			p := from + k
			v := uint16(src[p>>3]) >> uint(p&7)
			if p&7 != 0 && p>>3+1 < len(src) {
				v |= uint16(src[p>>3+1]) << (8 - uint(p&7))
			}
			m := min(8, n-k)
			v &= 1<<uint(m) - 1
			at := have + k
			if at&7 == 0 {
				dst = append(dst, 0)
			}
			s := uint(at & 7)
			dst[at>>3] |= byte(v << s)
			if s != 0 && int(s)+m > 8 {
				dst = append(dst, byte(v>>(8-s)))
			}
			k += m
		}
	}
	dst = dst[:(total+7)/8]
	if r := total & 7; r != 0 {
		dst[len(dst)-1] &= byte(1<<uint(r) - 1)
	}
	return dst
}

// appendOnes appends n set bits to the bitmap dst holding have bits.
func appendOnes(dst []byte, have, n int) []byte {
	dst = dst[:(have+7)/8]
	total := have + n
	if s := have & 7; s != 0 {
		dst[len(dst)-1] |= 0xFF << uint(s)
	}
	for len(dst) < (total+7)/8 {
		dst = append(dst, 0xFF)
	}
	if r := total & 7; r != 0 {
		dst[len(dst)-1] &= byte(1<<uint(r) - 1)
	}
	return dst
}

// countOnes counts the set bits [from, from+n) of the bitmap b.
func countOnes(b []byte, from, n int) int {
	c := 0
	for k := from; k < from+n; {
		if k&7 == 0 && k+8 <= from+n {
			c += bits.OnesCount8(b[k>>3])
			k += 8
			continue
		}
		c += int(b[k>>3] >> uint(k&7) & 1)
		k++
	}
	return c
}
