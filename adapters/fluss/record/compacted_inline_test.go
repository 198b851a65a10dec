package record

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// appendCompactedFieldsGeneral is appendCompactedFields without its inline
// cases: every field through appendCompactedValue. The reference for
// TestCompactedInlineMatchesGeneral.
func appendCompactedFieldsGeneral(dst []byte, c *column, row []domain.Datum, label string) ([]byte, error) {
	if len(row) != len(c.fields) {
		return dst, invalidValue("row has %d values, want %d", len(row), len(c.fields))
	}
	start := len(dst)
	dst = appendZeros(dst, c.nullBytes)
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
		if dst, err = appendCompactedValue(dst, f, d); err != nil {
			return dst, prefixError(err, "%s %d", label, i)
		}
	}
	return dst, nil
}

// TestCompactedInlineMatchesGeneral: the inline cases of
// appendCompactedFields give the bytes and errors of appendCompactedValue,
// for values in and out of range.
func TestCompactedInlineMatchesGeneral(t *testing.T) {
	t.Parallel()
	tys := types(
		typ(domain.TypeBoolean), typ(domain.TypeTinyInt), typ(domain.TypeSmallInt), typ(domain.TypeInteger),
		typ(domain.TypeBigInt), typ(domain.TypeFloat), typ(domain.TypeDouble), decimalT(18, 4), decimalT(38, 10),
		charT(3), typ(domain.TypeString), binaryT(2), typ(domain.TypeBytes), typ(domain.TypeDate), typ(domain.TypeTime),
		tsT(3), tsT(9), ltzT(0), ltzT(6), notNull(typ(domain.TypeBigInt)), arrayT(typ(domain.TypeInteger)),
	)
	enc, err := NewCompactedRowEncoder(tys)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ints := []int64{0, 1, -1, 2, 127, 128, -128, -129, 32767, 32768, -32768, -32769, math.MaxInt32, math.MaxInt32 + 1,
		math.MinInt32, math.MinInt32 - 1, math.MaxInt64, math.MinInt64, 1 << 40}
	nanos := []int32{0, 1, 999_999, 1_000_000, -1, math.MaxInt32, math.MinInt32}
	for range 50_000 {
		r := make([]domain.Datum, len(tys))
		for i := range r {
			d := &r[i]
			switch rng.IntN(6) {
			case 0:
				d.Null = true
			case 1:
				d.I64 = ints[rng.IntN(len(ints))]
			default:
				d.I64 = rng.Int64() >> rng.IntN(64)
			}
			d.Nanos = nanos[rng.IntN(len(nanos))]
			d.F64 = rng.NormFloat64()
			if rng.IntN(2) == 0 {
				d.Bytes = bytes.Repeat([]byte{byte(rng.IntN(256))}, rng.IntN(200))
			}
			if rng.IntN(8) == 0 {
				d.Elems = []domain.Datum{{I64: 1}, {Null: true}}
			}
		}
		prefix := []byte{0xAB}
		got, gerr := enc.AppendRow(prefix, r)
		want, werr := appendCompactedFieldsGeneral(prefix, &enc.row, r, "column")
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || (gerr == nil && !bytes.Equal(got, want)) {
			t.Fatalf("row %+v:\ninline  %x %v\ngeneral %x %v", r, got, gerr, want, werr)
		}
	}
}
