package record

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// allTypesRow covers every Fluss type, nested types within nested types, and
// nulls at every level. want is what a decoder returns: values normalised the
// way the format stores them.
func allTypesRow() (tys []domain.DataType, in, want []domain.Datum) {
	tys = types(
		notNull(typ(domain.TypeBoolean)), // 0
		typ(domain.TypeTinyInt),
		typ(domain.TypeSmallInt),
		typ(domain.TypeInteger),
		typ(domain.TypeBigInt),
		typ(domain.TypeFloat), // 5
		typ(domain.TypeDouble),
		decimalT(18, 4),
		decimalT(38, 10),
		charT(8),
		typ(domain.TypeString), // 10
		binaryT(4),
		typ(domain.TypeBytes),
		typ(domain.TypeDate),
		typ(domain.TypeTime),
		tsT(3), // 15
		tsT(9),
		ltzT(0),
		ltzT(6),
		arrayT(typ(domain.TypeString)),
		mapT(notNull(typ(domain.TypeInteger)), arrayT(decimalT(30, 2))), // 20
		rowT(typ(domain.TypeInteger), rowT(typ(domain.TypeString), tsT(6)), arrayT(typ(domain.TypeBoolean))),
		arrayT(rowT(typ(domain.TypeBigInt), typ(domain.TypeString))),
		arrayT(mapT(typ(domain.TypeString), typ(domain.TypeDouble))),
		typ(domain.TypeString),           // null
		arrayT(typ(domain.TypeSmallInt)), // 25
		arrayT(tsT(9)),
		arrayT(typ(domain.TypeTinyInt)),
		arrayT(typ(domain.TypeBytes)),
	)
	big := []byte{0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0, 0x11, 0x22, 0x33, 0x44, 0x55}
	in = row(
		i64(1),
		i64(-128),
		i64(32767),
		i64(math.MinInt32),
		i64(math.MinInt64),
		f64(float64(float32(3.25))),
		f64(-1e300),
		i64(-99999999999999),
		domain.Datum{Bytes: append([]byte{0x00}, big...)}, // non-minimal: the leading 0x00 is dropped
		str("héllo"),
		str("a string longer than seven bytes"),
		raw(1, 2, 3, 4),
		raw(),
		i64(-719162),
		i64(86399999),
		ts(-1, 0),
		ts(1698235273182, 999999),
		ts(0, 0),
		ts(-62135596800000, 123000),
		elems(str("short"), null(), str("exactly8"), str("")),
		elems(i64(1), elems(raw(0x01), null()), i64(-2), null()),
		elems(i64(42), elems(null(), ts(5, 6)), elems(i64(1), i64(0), null())),
		elems(elems(i64(7), str("seven")), null(), elems(null(), null())),
		elems(elems(str("k"), f64(0.5), str("nan"), f64(math.Inf(-1))), elems()),
		null(),
		elems(i64(-1), i64(2), null()),
		elems(ts(-5, 1), null(), ts(math.MaxInt64, 999999)),
		elems(i64(-1), null(), i64(127)),
		elems(raw(), raw(0, 0, 0, 0, 0, 0, 0), raw(0, 0, 0, 0, 0, 0, 0, 0), raw(0xFF)),
	)
	want = append([]domain.Datum(nil), in...)
	want[8] = domain.Datum{Bytes: big}
	return tys, in, want
}

func TestRowRoundTripAllTypes(t *testing.T) {
	t.Parallel()
	for _, format := range []RowFormat{FormatCompacted, FormatIndexed} {
		t.Run(format.String(), func(t *testing.T) {
			t.Parallel()
			tys, in, want := allTypesRow()
			enc, err := NewRowEncoder(format, tys)
			require.NoError(t, err)
			dec, err := NewRowDecoder(format, tys)
			require.NoError(t, err)
			prefix := []byte("prefix")
			b, err := enc.AppendRow(append([]byte(nil), prefix...), in)
			require.NoError(t, err)
			require.Equal(t, prefix, b[:len(prefix)], "AppendRow keeps dst")
			got, err := dec.DecodeRow(nil, b[len(prefix):])
			require.NoError(t, err)
			require.Len(t, got, len(want))
			for i := range want {
				assert.Equal(t, normalize(want[i]), normalize(got[i]), "column %d (%s)", i, tys[i].Root)
			}
			// Decoding into a reused slice gives the same result.
			again, err := dec.DecodeRow(got[:0], b[len(prefix):])
			require.NoError(t, err)
			assert.Equal(t, got, again)
		})
	}
}

// normalize maps empty byte slices and element lists to nil.
func normalize(d domain.Datum) domain.Datum {
	if len(d.Bytes) == 0 {
		d.Bytes = nil
	}
	if len(d.Elems) == 0 {
		d.Elems = nil
	} else {
		e := make([]domain.Datum, len(d.Elems))
		for i := range d.Elems {
			e[i] = normalize(d.Elems[i])
		}
		d.Elems = e
	}
	return d
}

// Compacted rows checked byte for byte. Sources: docs/fluss-records.md, Test
// vectors tier 3 (the value row), Compacted row and Binary array; derived by
// hand from CompactedRowWriter and BinaryArrayWriter.
func TestCompactedRowVectors(t *testing.T) {
	t.Parallel()
	long := make([]domain.Datum, 20)
	for i := range long {
		long[i] = i64(int64(i))
	}
	tests := []struct {
		name  string
		types []domain.DataType
		row   []domain.Datum
		want  string
	}{
		{"derived value row (INT NOT NULL, STRING)", types(notNull(typ(domain.TypeInteger)), typ(domain.TypeString)), row(i64(1), str("a")), "00 01 01 61"},
		{"nulls at 0 and 8 use two bitmap bytes", types(typ(domain.TypeInteger), typ(domain.TypeInteger), typ(domain.TypeInteger), typ(domain.TypeInteger), typ(domain.TypeInteger), typ(domain.TypeInteger), typ(domain.TypeInteger), typ(domain.TypeInteger), typ(domain.TypeInteger)),
			row(null(), i64(1), i64(2), i64(3), i64(4), i64(5), i64(6), i64(7), null()), "01 01 01 02 03 04 05 06 07"},
		{"SMALLINT is 2 bytes LE", types(typ(domain.TypeSmallInt)), row(i64(-2)), "00 FE FF"},
		{"INT -1 is 5 bytes", types(typ(domain.TypeInteger)), row(i64(-1)), "00 FF FF FF FF 0F"},
		{"TIMESTAMP(6) adds nanos varint", types(tsT(6)), row(ts(1698235273182, 5)), "00 DE 9F D7 B5 B6 31 05"},
		{"TIMESTAMP(3) drops nanos", types(tsT(3)), row(ts(1, 5)), "00 01"},
		{"DECIMAL(20,2) -1", types(decimalT(20, 2)), row(raw(0xFF, 0xFF)), "00 01 FF"},
		{"DECIMAL(20,2) empty means zero", types(decimalT(20, 2)), row(raw()), "00 01 00"},
		{"DECIMAL(10,2) compact", types(decimalT(10, 2)), row(i64(-1)), "00 FF FF FF FF FF FF FF FF FF 01"},
		{"MAP<INT,STRING> {1: a}", types(mapT(typ(domain.TypeInteger), typ(domain.TypeString))), row(elems(i64(1), str("a"))),
			"00 24 | 10 00 00 00 | 01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 | 01 00 00 00 00 00 00 00 61 00 00 00 00 00 00 81"},
		{"ROW<INT,STRING> (7, null)", types(rowT(typ(domain.TypeInteger), typ(domain.TypeString))), row(elems(i64(7), null())), "00 02 02 07"},
		{"ARRAY<ROW<INT>> [(5)]", types(arrayT(rowT(typ(domain.TypeInteger)))), row(elems(elems(i64(5)))),
			"00 18 | 01 00 00 00 00 00 00 00 | 02 00 00 00 10 00 00 00 | 00 05 00 00 00 00 00 00"},
		{"ARRAY<TIMESTAMP(6)> [(1, 5)]", types(arrayT(tsT(6))), row(elems(ts(1, 5))),
			"00 18 | 01 00 00 00 00 00 00 00 | 05 00 00 00 10 00 00 00 | 01 00 00 00 00 00 00 00"},
		{"ARRAY<DECIMAL(20,0)> [10]", types(arrayT(decimalT(20, 0))), row(elems(raw(0x0A))),
			"00 20 | 01 00 00 00 00 00 00 00 | 01 00 00 00 10 00 00 00 | 0A 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"},
		{"ARRAY<DOUBLE> NaN is canonical", types(arrayT(typ(domain.TypeDouble))), row(elems(f64(math.Float64frombits(0x7FF8000000000001)))),
			"00 10 | 01 00 00 00 00 00 00 00 | 00 00 00 00 00 00 F8 7F"},
		{"empty ARRAY", types(arrayT(typ(domain.TypeInteger))), row(elems()), "00 08 00 00 00 00 00 00 00 00"},
		{"ARRAY<BIGINT> of 168 bytes has a 2-byte length", types(arrayT(typ(domain.TypeBigInt))), row(elems(long...)),
			"00 A8 01 14 00 00 00 00 00 00 00" + repeatLongs(20)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			enc, err := NewCompactedRowEncoder(tc.types)
			require.NoError(t, err)
			got, err := enc.AppendRow(nil, tc.row)
			require.NoError(t, err)
			assert.Equal(t, unhex(t, tc.want), got)
			back, err := DecodeCompactedRow(tc.types, got)
			require.NoError(t, err)
			again, err := EncodeCompactedRow(nil, tc.types, back)
			require.NoError(t, err)
			assert.Equal(t, got, again, "decode then encode is stable")
		})
	}
}

// repeatLongs renders 0..n-1 as int64 LE hex.
func repeatLongs(n int) string {
	s := ""
	for i := 0; i < n; i++ {
		s += " " + hexByte(byte(i)) + " 00 00 00 00 00 00 00"
	}
	return s
}

func hexByte(b byte) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[b>>4], digits[b&0x0F]})
}

// IndexedRows checked byte for byte. Sources: docs/fluss-records.md, Test
// vectors tier 3 (IndexedRow of (INT 1, STRING "a")) and Indexed row, derived
// by hand from IndexedRowWriter.
func TestIndexedRowVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		types []domain.DataType
		row   []domain.Datum
		want  string
	}{
		{"derived (INT 1, STRING a)", types(typ(domain.TypeInteger), typ(domain.TypeString)), row(i64(1), str("a")), "00 | 01 00 00 00 | 01 00 00 00 | 61"},
		{"null variable field leaves its slot unused", types(typ(domain.TypeString), typ(domain.TypeString), typ(domain.TypeInteger)), row(null(), str("b"), i64(3)),
			"01 | 01 00 00 00 | 00 00 00 00 | 62 | 03 00 00 00"},
		{"CHAR(3) and BINARY(2) are padded", types(charT(3), binaryT(2)), row(str("ab"), raw(0x01)), "00 | 61 62 00 | 01 00"},
		{"TIMESTAMP(6) is 12 bytes", types(tsT(6)), row(ts(-1, 7)), "00 | FF FF FF FF FF FF FF FF 07 00 00 00"},
		{"TIMESTAMP_LTZ(3) is 8 bytes", types(ltzT(3)), row(ts(2, 7)), "00 | 02 00 00 00 00 00 00 00"},
		{"DECIMAL(10,2) is 8 bytes, DECIMAL(20,2) variable", types(decimalT(10, 2), decimalT(20, 2)), row(i64(5), raw(0x01, 0x00)),
			"00 | 02 00 00 00 | 05 00 00 00 00 00 00 00 | 01 00"},
		{"nested ROW is an IndexedRow", types(rowT(typ(domain.TypeSmallInt), typ(domain.TypeString))), row(elems(i64(1), str("xy"))),
			"00 | 09 00 00 00 | 00 02 00 00 00 01 00 78 79"},
		{"ARRAY<ROW<STRING>> holds IndexedRows", types(arrayT(rowT(typ(domain.TypeString)))), row(elems(elems(str("z")))),
			"00 | 18 00 00 00 | 01 00 00 00 00 00 00 00 | 06 00 00 00 10 00 00 00 | 00 01 00 00 00 7A 00 00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			enc, err := NewIndexedRowEncoder(tc.types)
			require.NoError(t, err)
			got, err := enc.AppendRow(nil, tc.row)
			require.NoError(t, err)
			assert.Equal(t, unhex(t, tc.want), got)
			dec, err := NewIndexedRowDecoder(tc.types)
			require.NoError(t, err)
			back, err := dec.DecodeRow(nil, got)
			require.NoError(t, err)
			again, err := enc.AppendRow(nil, back)
			require.NoError(t, err)
			assert.Equal(t, got, again, "decode then encode is stable")
		})
	}
}

// IndexedRow.getChar/getBinary drop trailing zero bytes; BYTES keep them.
func TestIndexedRowTrimsFixedWidthPadding(t *testing.T) {
	t.Parallel()
	tys := types(charT(4), binaryT(4), typ(domain.TypeBytes))
	enc, err := NewIndexedRowEncoder(tys)
	require.NoError(t, err)
	b, err := enc.AppendRow(nil, row(str("ab"), raw(1, 0), raw(1, 0)))
	require.NoError(t, err)
	dec, err := NewIndexedRowDecoder(tys)
	require.NoError(t, err)
	got, err := dec.DecodeRow(nil, b)
	require.NoError(t, err)
	assert.Equal(t, []byte("ab"), got[0].Bytes)
	assert.Equal(t, []byte{1}, got[1].Bytes)
	assert.Equal(t, []byte{1, 0}, got[2].Bytes)
}

func TestRowEncoderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		types   []domain.DataType
		row     []domain.Datum
		format  RowFormat
		wantErr error
		msg     string
	}{
		{"wrong column count", types(typ(domain.TypeInteger)), row(), FormatCompacted, ErrInvalidValue, "row has 0 values, want 1"},
		{"null in NOT NULL column", types(notNull(typ(domain.TypeInteger))), row(null()), FormatCompacted, ErrInvalidValue, "column 0: null value for NOT NULL type INTEGER"},
		{"null in NOT NULL nested field", types(rowT(notNull(typ(domain.TypeInteger)))), row(elems(null())), FormatIndexed, ErrInvalidValue, "field 0: null value"},
		{"TINYINT out of range", types(typ(domain.TypeTinyInt)), row(i64(128)), FormatCompacted, ErrInvalidValue, "column 0: value 128 out of range for TINYINT"},
		{"SMALLINT out of range", types(typ(domain.TypeSmallInt)), row(i64(-32769)), FormatIndexed, ErrInvalidValue, "out of range"},
		{"DATE out of range", types(typ(domain.TypeDate)), row(i64(1 << 31)), FormatCompacted, ErrInvalidValue, "out of range for DATE"},
		{"BOOLEAN not 0/1", types(typ(domain.TypeBoolean)), row(i64(2)), FormatCompacted, ErrInvalidValue, "BOOLEAN value 2"},
		{"nanos out of range", types(tsT(6)), row(ts(0, 1_000_000)), FormatCompacted, ErrInvalidValue, "nano-of-millisecond"},
		{"decimal too wide", types(decimalT(38, 0)), row(raw(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)), FormatCompacted, ErrInvalidValue, "exceeds 16"},
		{"CHAR longer than n in IndexedRow", types(charT(2)), row(str("abc")), FormatIndexed, ErrInvalidValue, "3 bytes do not fit CHAR(2)"},
		{"odd MAP", types(mapT(typ(domain.TypeInteger), typ(domain.TypeInteger))), row(elems(i64(1))), FormatCompacted, ErrInvalidValue, "key/value pairs"},
		{"bad array element", types(arrayT(typ(domain.TypeInteger))), row(elems(i64(1), i64(1<<40))), FormatCompacted, ErrInvalidValue, "column 0: element 1: value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			enc, err := NewRowEncoder(tc.format, tc.types)
			require.NoError(t, err)
			_, err = enc.AppendRow(nil, tc.row)
			require.ErrorIs(t, err, tc.wantErr)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
		})
	}
}

func TestSchemaErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		typ     domain.DataType
		format  RowFormat
		wantErr error
	}{
		{"DECIMAL precision 0", decimalT(0, 0), FormatCompacted, ErrInvalidSchema},
		{"DECIMAL precision 39", decimalT(39, 0), FormatCompacted, ErrInvalidSchema},
		{"DECIMAL scale above precision", decimalT(5, 6), FormatCompacted, ErrInvalidSchema},
		{"TIMESTAMP precision 10", tsT(10), FormatCompacted, ErrInvalidSchema},
		{"ARRAY without element", domain.DataType{Root: domain.TypeArray}, FormatCompacted, ErrInvalidSchema},
		{"MAP without value", domain.DataType{Root: domain.TypeMap, Key: &domain.DataType{Root: domain.TypeInteger}}, FormatCompacted, ErrInvalidSchema},
		{"unknown root", domain.DataType{Root: "VARIANT"}, FormatCompacted, ErrUnsupported},
		{"CHAR without length in IndexedRow", charT(0), FormatIndexed, ErrInvalidSchema},
		{"nested BINARY without length in IndexedRow", arrayT(binaryT(0)), FormatIndexed, ErrInvalidSchema},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewRowEncoder(tc.format, types(tc.typ))
			assert.ErrorIs(t, err, tc.wantErr)
			_, err = NewRowDecoder(tc.format, types(tc.typ))
			assert.ErrorIs(t, err, tc.wantErr)
		})
	}
	// A cyclic type tree is refused instead of recursing forever.
	cyc := domain.DataType{Root: domain.TypeArray}
	cyc.Element = &cyc
	_, err := NewCompactedRowEncoder(types(cyc))
	assert.ErrorIs(t, err, ErrInvalidSchema)

	_, err = NewRowEncoder(0, nil)
	assert.ErrorIs(t, err, ErrUnsupported)
	f, err := ParseKvFormat("")
	require.NoError(t, err)
	assert.Equal(t, FormatCompacted, f)
	f, err = ParseKvFormat("indexed")
	require.NoError(t, err)
	assert.Equal(t, FormatIndexed, f)
	_, err = ParseKvFormat("ARROW")
	assert.ErrorIs(t, err, ErrUnsupported)
}

// TestDecodeRejectsCorruptRows covers the decoder checks beyond fuzzing.
func TestDecodeRejectsCorruptRows(t *testing.T) {
	t.Parallel()
	tys := types(typ(domain.TypeInteger), typ(domain.TypeString))
	tests := []struct {
		name   string
		format RowFormat
		src    string
	}{
		{"empty", FormatCompacted, ""},
		{"truncated varint", FormatCompacted, "00 80"},
		{"string longer than row", FormatCompacted, "00 01 05 61"},
		{"trailing bytes", FormatCompacted, "00 01 01 61 00"},
		{"indexed length beyond row", FormatIndexed, "00 09 00 00 00 01 00 00 00 61"},
		{"indexed negative length", FormatIndexed, "00 FF FF FF FF 01 00 00 00"},
		{"indexed trailing bytes", FormatIndexed, "00 01 00 00 00 01 00 00 00 61 62"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dec, err := NewRowDecoder(tc.format, tys)
			require.NoError(t, err)
			_, err = dec.DecodeRow(nil, unhex(t, tc.src))
			require.ErrorIs(t, err, ErrCorrupt)
			assert.Equal(t, domain.KindBackend, domain.KindOf(err))
		})
	}
	arr := types(arrayT(typ(domain.TypeString)))
	for name, src := range map[string]string{
		"negative array size":      "00 08 FF FF FF FF 00 00 00 00",
		"array count beyond bytes": "00 08 09 00 00 00 00 00 00 00",
		"inline length above 7":    "00 10 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 88",
		"offset beyond array":      "00 10 01 00 00 00 00 00 00 00 08 00 00 00 20 00 00 00",
	} {
		_, err := DecodeCompactedRow(arr, unhex(t, src))
		assert.ErrorIs(t, err, ErrCorrupt, name)
	}
}

func TestEncodersDoNotAllocate(t *testing.T) {
	// Not parallel: testing.AllocsPerRun refuses parallel tests.
	tys, in, _ := allTypesRow()
	for _, format := range []RowFormat{FormatCompacted, FormatIndexed} {
		enc, err := NewRowEncoder(format, tys)
		require.NoError(t, err)
		buf := make([]byte, 0, 4096)
		allocs := testing.AllocsPerRun(200, func() {
			_, err = enc.AppendRow(buf[:0], in)
		})
		require.NoError(t, err)
		assert.Zero(t, allocs, format.String())
	}
	keyTys, keyVals := allTypesKey()
	kenc, err := NewCompactedKeyEncoder(keyTys, nil)
	require.NoError(t, err)
	buf := make([]byte, 0, 1024)
	allocs := testing.AllocsPerRun(200, func() { _, _ = kenc.AppendKey(buf[:0], keyVals) })
	assert.Zero(t, allocs, "key encoder")
}
