package http

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The columnar form of an Arrow record batch (the fast path of Arrow IPC
// appends): for a table domain.ColumnarAppendable accepts, a record batch
// becomes domain.ColumnarRows, the buffers of the table's Fluss Arrow layout
// (apache/fluss ArrowUtils#toArrowField), instead of one Datum row per row.
// Columns whose Arrow type already has that layout are passed on as they are
// (slices of the stream's buffers: integers, floats, DATE, DECIMAL, BOOLEAN,
// utf8 and binary, fixed_size_binary(n) for BINARY(n), a timestamp in the
// column's unit); the others are converted column by column (large_utf8 and
// large_binary offsets to 32 bits, time32 and timestamps to the column's
// unit, binary to BINARY(n)). Values are checked as the Datum path checks
// them (the type mapping and the messages are those of arrowFill).

// decodeColumns converts the record batch into columnar rows of the table's
// columns cols, matched by conv.
func (d *arrowDecoder) decodeColumns(cols []domain.Column, conv []arrowColumn) (*domain.ColumnarRows, error) {
	n := int(d.rec.NumRows())
	out := &domain.ColumnarRows{Rows: n, Columns: make([]domain.ColumnValues, len(cols))}
	for ci := range cols {
		t := &cols[ci].Type
		if conv[ci].field < 0 {
			out.Columns[ci] = nullColumn(t, n)
			continue
		}
		arr := d.rec.Column(conv[ci].field)
		cv, err := columnOf(arr, t)
		if err != nil {
			return nil, domain.InvalidArgument("record batch %d: column `%s`: %s", d.batch, cols[ci].Name, err)
		}
		out.Columns[ci] = cv
	}
	return out, nil
}

// flussWidth is the Arrow value width in bytes of a fixed-width Fluss type,
// 0 for the variable-length ones and BOOLEAN (a bitmap).
func flussWidth(t *domain.DataType) int {
	switch t.Root {
	case domain.TypeTinyInt:
		return 1
	case domain.TypeSmallInt:
		return 2
	case domain.TypeInteger, domain.TypeFloat, domain.TypeDate:
		return 4
	case domain.TypeBigInt, domain.TypeDouble, domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		return 8
	case domain.TypeTime:
		if t.Precision <= 3 {
			return 4
		}
		return 8
	case domain.TypeDecimal:
		return 16
	case domain.TypeBinary:
		return t.Length
	}
	return 0
}

// flussUnit is the Arrow time unit of a TIME or TIMESTAMP column of
// precision p (ArrowUtils: 0 s, 1..3 ms, 4..6 us, 7..9 ns).
func flussUnit(p int) arrow.TimeUnit {
	switch {
	case p == 0:
		return arrow.Second
	case p <= 3:
		return arrow.Millisecond
	case p <= 6:
		return arrow.Microsecond
	}
	return arrow.Nanosecond
}

// nullColumn is a column of n nulls (a table column the stream lacks).
func nullColumn(t *domain.DataType, n int) domain.ColumnValues {
	cv := domain.ColumnValues{Validity: make([]byte, (n+7)/8)}
	switch t.Root {
	case domain.TypeBoolean:
		cv.Values = make([]byte, (n+7)/8)
	case domain.TypeString, domain.TypeChar, domain.TypeBytes:
		cv.Offsets = make([]byte, 4*(n+1))
	default:
		cv.Values = make([]byte, n*flussWidth(t))
	}
	return cv
}

// bitsOf returns bits [off, off+n) of the bitmap b as a bitmap starting at
// bit 0 (a slice of b when off is a multiple of 8).
func bitsOf(b []byte, off, n int) []byte {
	if off&7 == 0 {
		return b[off>>3 : (off+n+7)>>3]
	}
	out := make([]byte, (n+7)/8)
	for i := range n {
		if p := off + i; b[p>>3]&(1<<(p&7)) != 0 {
			out[i>>3] |= 1 << (i & 7)
		}
	}
	return out
}

// validity returns the column's validity bitmap (nil without nulls), or an
// error naming the first null row of a NOT NULL column.
func validity(arr arrow.Array, t *domain.DataType) ([]byte, error) {
	if arr.NullN() == 0 {
		return nil, nil
	}
	if !t.Nullable {
		for r := range arr.Len() {
			if arr.IsNull(r) {
				return nil, fmt.Errorf("row %d: null value for a NOT NULL column", r)
			}
		}
	}
	data := arr.Data()
	return bitsOf(data.Buffers()[0].Bytes(), data.Offset(), arr.Len()), nil
}

// fixedValues returns the value bytes of a fixed-width array of width w.
func fixedValues(arr arrow.Array, w int) []byte {
	data := arr.Data()
	off, n := data.Offset(), arr.Len()
	return data.Buffers()[1].Bytes()[off*w : (off+n)*w]
}

// columnOf converts one stream column into the Fluss layout of t; the
// types were matched by arrowFill.
func columnOf(arr arrow.Array, t *domain.DataType) (domain.ColumnValues, error) {
	var cv domain.ColumnValues
	var err error
	if cv.Validity, err = validity(arr, t); err != nil {
		return cv, err
	}
	n := arr.Len()
	data := arr.Data()
	le := binary.LittleEndian
	switch t.Root {
	case domain.TypeBoolean:
		cv.Values = bitsOf(data.Buffers()[1].Bytes(), data.Offset(), n)
	case domain.TypeTinyInt, domain.TypeSmallInt, domain.TypeInteger, domain.TypeBigInt,
		domain.TypeFloat, domain.TypeDouble, domain.TypeDate:
		cv.Values = fixedValues(arr, flussWidth(t))
	case domain.TypeDecimal:
		a := arr.(*array.Decimal128)
		for r := range n {
			if a.IsValid(r) && !a.Value(r).FitsInPrecision(int32(t.Precision)) {
				return cv, fmt.Errorf("row %d: value %s does not fit DECIMAL(%d, %d)", r, a.Value(r).ToString(int32(t.Scale)), t.Precision, t.Scale)
			}
		}
		cv.Values = fixedValues(arr, 16)
	case domain.TypeString, domain.TypeChar, domain.TypeBytes:
		switch a := arr.(type) {
		case *array.String, *array.Binary:
			// The offsets as they are, into the whole data buffer
			// (ValueBytes would start at the slice's first offset).
			cv.Offsets, cv.Data = offsets32(data, n), dataBuffer(data)
		case *array.LargeString:
			if cv.Offsets, cv.Data, err = offsets64(a.ValueOffsets(), dataBuffer(data)); err != nil {
				return cv, err
			}
		case *array.LargeBinary:
			if cv.Offsets, cv.Data, err = offsets64(a.ValueOffsets(), dataBuffer(data)); err != nil {
				return cv, err
			}
		case *array.FixedSizeBinary:
			w := a.DataType().(*arrow.FixedSizeBinaryType).ByteWidth
			cv.Offsets = make([]byte, 0, 4*(n+1))
			for r := 0; r <= n; r++ {
				cv.Offsets = le.AppendUint32(cv.Offsets, uint32(r*w))
			}
			cv.Data = fixedValues(arr, w)
		default:
			return cv, errArrowType
		}
		if t.Root == domain.TypeChar {
			for r := range n {
				if arr.IsValid(r) {
					v := cv.Data[le.Uint32(cv.Offsets[4*r:]):le.Uint32(cv.Offsets[4*r+4:])]
					if utf8Len(v) > t.Length {
						return cv, fmt.Errorf("row %d: %d characters exceed CHAR(%d)", r, utf8Len(v), t.Length)
					}
				}
			}
		}
	case domain.TypeBinary:
		if fb, ok := arr.(*array.FixedSizeBinary); ok && fb.DataType().(*arrow.FixedSizeBinaryType).ByteWidth == t.Length {
			cv.Values = fixedValues(arr, t.Length)
			break
		}
		var value func(int) []byte
		switch a := arr.(type) {
		case *array.Binary:
			value = a.Value
		case *array.LargeBinary:
			value = a.Value
		case *array.FixedSizeBinary:
			value = a.Value
		default:
			return cv, errArrowType
		}
		cv.Values = make([]byte, n*t.Length)
		for r := range n {
			if arr.IsValid(r) {
				v := value(r)
				if len(v) != t.Length {
					return cv, fmt.Errorf("row %d: %d bytes, BINARY(%d) takes exactly %d", r, len(v), t.Length, t.Length)
				}
				copy(cv.Values[r*t.Length:], v)
			}
		}
	case domain.TypeTime:
		a, ok := arr.(*array.Time32)
		if !ok {
			return cv, errArrowType
		}
		mul := int64(1)
		if a.DataType().(*arrow.Time32Type).Unit == arrow.Second {
			mul = 1000
		}
		w := flussWidth(t)
		cv.Values = make([]byte, n*w)
		unit := flussUnit(t.Precision)
		for r := range n {
			if !a.IsValid(r) {
				continue
			}
			ms := int64(a.Value(r)) * mul
			if ms < 0 || ms >= 86_400_000 {
				return cv, fmt.Errorf("row %d: time %d ms is not within a day", r, ms)
			}
			v := ms
			switch unit {
			case arrow.Second:
				v = ms / 1000
			case arrow.Microsecond:
				v = ms * 1000
			case arrow.Nanosecond:
				v = ms * 1_000_000
			}
			if w == 4 {
				le.PutUint32(cv.Values[r*4:], uint32(v))
			} else {
				le.PutUint64(cv.Values[r*8:], uint64(v))
			}
		}
	case domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		a, ok := arr.(*array.Timestamp)
		if !ok {
			return cv, errArrowType
		}
		from, to := a.DataType().(*arrow.TimestampType).Unit, flussUnit(t.Precision)
		if from == to {
			cv.Values = fixedValues(arr, 8)
			break
		}
		cv.Values = make([]byte, n*8)
		for r := range n {
			if !a.IsValid(r) {
				continue
			}
			ms, nanos := epochMillis(int64(a.Value(r)), from)
			v, ok := timestampIn(ms, nanos, to)
			if !ok {
				return cv, fmt.Errorf("row %d: timestamp %d ms overflows the column's Arrow %s", r, ms, to)
			}
			le.PutUint64(cv.Values[r*8:], uint64(v))
		}
	default:
		return cv, errArrowType
	}
	return cv, nil
}

// offsets32 returns the int32 offsets of a utf8 or binary array (n+1 of
// them, from the array's offset on).
func offsets32(data arrow.ArrayData, n int) []byte {
	off := data.Offset()
	return data.Buffers()[1].Bytes()[4*off : 4*(off+n+1)]
}

// dataBuffer is the data buffer of a utf8 or binary array (nil when
// absent: every value empty).
func dataBuffer(data arrow.ArrayData) []byte {
	if b := data.Buffers()[2]; b != nil {
		return b.Bytes()
	}
	return nil
}

// offsets64 narrows int64 offsets (into values, the whole data buffer) to
// int32 ones relative to the first, with the values they cover.
func offsets64(offs []int64, values []byte) ([]byte, []byte, error) {
	if len(offs) == 0 {
		return make([]byte, 4), nil, nil
	}
	base, last := offs[0], offs[len(offs)-1]
	if last-base > math.MaxInt32 || base < 0 || last > int64(len(values)) || last < base {
		return nil, nil, fmt.Errorf("%d bytes of values exceed what one column of a batch holds", last-base)
	}
	out := make([]byte, 0, 4*len(offs))
	for _, o := range offs {
		if o < base || o > last {
			return nil, nil, fmt.Errorf("offset %d outside %d..%d", o, base, last)
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(o-base))
	}
	return out, values[base:last], nil
}

// epochMillis splits a timestamp of unit u into epoch milliseconds and the
// nanoseconds within the millisecond (0..999999), as the Datum path does.
func epochMillis(v int64, u arrow.TimeUnit) (int64, int64) {
	switch u {
	case arrow.Second:
		return v * 1000, 0
	case arrow.Millisecond:
		return v, 0
	}
	per := int64(1000) // µs per ms
	if u == arrow.Nanosecond {
		per = 1_000_000
	}
	ms, rem := v/per, v%per
	if rem < 0 {
		ms, rem = ms-1, rem+per
	}
	return ms, rem * (1_000_000 / per)
}

// timestampIn is the value of (ms, nanos) in unit u as Fluss's Arrow
// timestamp writers compute it (seconds truncated toward zero, as Java's
// division); ok is false when it overflows int64.
func timestampIn(ms, nanos int64, u arrow.TimeUnit) (int64, bool) {
	switch u {
	case arrow.Second:
		return ms / 1000, true
	case arrow.Millisecond:
		return ms, true
	}
	mul, add := int64(1000), nanos/1000
	if u == arrow.Nanosecond {
		mul, add = 1_000_000, nanos
	}
	if ms > (math.MaxInt64-add)/mul || ms < math.MinInt64/mul {
		return 0, false
	}
	return ms*mul + add, true
}

// packedOf returns the client's compressed buffers of the record batch as
// domain.PackedColumns, for a writer to send as they are, when the batch
// has exactly the table's Fluss Arrow layout: every table column, in table
// order, each of the Arrow type Fluss's ArrowUtils gives its Fluss type (no
// conversion: utf8 for STRING and CHAR, binary for BYTES,
// fixed_size_binary(n) for BINARY(n), time32 and timestamps in the
// column's unit), offsets starting at 0. Otherwise it returns nil: the
// columns are compressed again. The values were checked by decodeColumns;
// a validity bitmap whose unset bits disagree with the null count is an
// invalid body.
func (d *arrowDecoder) packedOf(cols []domain.Column, conv []arrowColumn, cr *domain.ColumnarRows) (*domain.PackedColumns, error) {
	pk := d.packed
	if pk == nil || len(d.rec.Schema().Fields()) != len(cols) || len(pk.nullCounts) != len(cols) {
		return nil, nil
	}
	n := int(d.rec.NumRows())
	out := &domain.PackedColumns{Codec: "ZSTD", NullCounts: pk.nullCounts, Buffers: make([][]byte, 0, len(pk.buffers)), Size: pk.size}
	next := 0
	for ci := range cols {
		if conv[ci].field != ci {
			return nil, nil
		}
		arr := d.rec.Column(ci)
		t := &cols[ci].Type
		nbuf, ok := flussLayout(arr.DataType(), t)
		if !ok || next+nbuf > len(pk.buffers) || int64(arr.NullN()) != pk.nullCounts[ci] {
			return nil, nil
		}
		if nbuf == 3 && arr.Len() > 0 && binary.LittleEndian.Uint32(cr.Columns[ci].Offsets) != 0 {
			return nil, nil
		}
		valid := pk.buffers[next]
		if nulls := arr.NullN(); nulls == 0 {
			valid = nil // all valid: the writer puts Java's all-ones bitmap
		} else if v := cr.Columns[ci].Validity; len(v) < (n+7)/8 || n-countSet(v, n) != nulls {
			return nil, domain.InvalidArgument("record batch %d: column `%s`: the validity bitmap does not have the %d nulls its field node states", d.batch, cols[ci].Name, nulls)
		}
		out.Buffers = append(append(out.Buffers, valid), pk.buffers[next+1:next+nbuf]...)
		next += nbuf
	}
	if next != len(pk.buffers) {
		return nil, nil
	}
	return out, nil
}

// flussLayout reports whether the stream type at is the Arrow type of t's
// Fluss Arrow layout (apache/fluss ArrowUtils#toArrowType), and how many
// buffers a column of it has.
func flussLayout(at arrow.DataType, t *domain.DataType) (int, bool) {
	switch t.Root {
	case domain.TypeString, domain.TypeChar:
		return 3, at.ID() == arrow.STRING
	case domain.TypeBytes:
		return 3, at.ID() == arrow.BINARY
	case domain.TypeBinary:
		fb, ok := at.(*arrow.FixedSizeBinaryType)
		return 2, ok && fb.ByteWidth == t.Length
	case domain.TypeTime:
		tt, ok := at.(*arrow.Time32Type)
		return 2, ok && t.Precision <= 3 && tt.Unit == flussUnit(t.Precision)
	case domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		ts, ok := at.(*arrow.TimestampType)
		return 2, ok && ts.Unit == flussUnit(t.Precision)
	}
	// The other types arrowFill matched have one Arrow type each: exactly
	// Fluss's (bool, int8..int64, float32/64, decimal128(p, s), date32).
	return 2, true
}

// countSet counts the set bits among the first n of bitmap b.
func countSet(b []byte, n int) int {
	c := 0
	for i := 0; i < n/8; i++ {
		c += bits.OnesCount8(b[i])
	}
	if r := n % 8; r != 0 {
		c += bits.OnesCount8(b[n/8] & (byte(1)<<r - 1))
	}
	return c
}
