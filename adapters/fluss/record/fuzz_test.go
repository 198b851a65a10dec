package record

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Fuzz targets for every decoder. Run one with, for example:
//
//	go test ./adapters/fluss/record -run '^$' -fuzz '^FuzzCompactedRowDecode$' -fuzztime 20s
//
// Beyond "never panics", the row targets check that encoding is a fixpoint:
// whatever decodes re-encodes, and that encoding decodes and re-encodes to
// the same bytes.

func fuzzRowFormat(f *testing.F, format RowFormat) {
	tys, in, _ := allTypesRow()
	enc, err := NewRowEncoder(format, tys)
	if err != nil {
		f.Fatal(err)
	}
	seed, err := enc.AppendRow(nil, in)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	nulls := make([]domain.Datum, len(in))
	for i := range nulls {
		nulls[i] = null()
	}
	nulls[0] = i64(0)
	if seed, err = enc.AppendRow(nil, nulls); err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	dec, err := NewRowDecoder(format, tys)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d1, err := dec.DecodeRow(nil, b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error without ErrCorrupt: %v", err)
			}
			return
		}
		b1, err := enc.AppendRow(nil, d1)
		if err != nil {
			// Decoders accept what encoders refuse in a few places: a null
			// bit on a NOT NULL column, a DECIMAL wider than 16 bytes.
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("re-encode: %v", err)
			}
			return
		}
		d2, err := dec.DecodeRow(nil, b1)
		if err != nil {
			t.Fatalf("decode of re-encoded row: %v", err)
		}
		b2, err := enc.AppendRow(nil, d2)
		if err != nil {
			t.Fatalf("second re-encode: %v", err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("encoding is not a fixpoint:\n%x\n%x", b1, b2)
		}
	})
}

func FuzzCompactedRowDecode(f *testing.F) { fuzzRowFormat(f, FormatCompacted) }

func FuzzIndexedRowDecode(f *testing.F) { fuzzRowFormat(f, FormatIndexed) }

func FuzzCompactedKeyDecode(f *testing.F) {
	tys, vals := allTypesKey()
	enc, err := NewCompactedKeyEncoder(tys, nil)
	if err != nil {
		f.Fatal(err)
	}
	seed, err := enc.AppendKey(nil, vals)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	dec, err := NewCompactedKeyDecoder(tys)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		key, err := dec.DecodeKey(nil, b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error without ErrCorrupt: %v", err)
			}
			return
		}
		if _, err := enc.AppendKey(nil, key); err != nil && !errors.Is(err, ErrInvalidValue) {
			t.Fatalf("re-encode: %v", err)
		}
	})
}

func FuzzReadKvBatch(f *testing.F) {
	tys := kvVectorTypes()
	keyEnc, _ := NewCompactedKeyEncoder(tys, []int{0})
	valEnc, _ := NewCompactedRowEncoder(tys)
	b, _ := NewKvBatchBuilder(1, nil)
	for i := int64(0); i < 3; i++ {
		r := row(i64(i), str("v"))
		key, _ := keyEnc.AppendKey(nil, r)
		_ = b.Upsert(key, valEnc, r)
	}
	_ = b.Delete([]byte{9})
	f.Add(append([]byte(nil), b.Build(7, 1)...))
	f.Add([]byte{})
	dec, _ := NewCompactedRowDecoder(tys)
	f.Fuzz(func(t *testing.T, data []byte) {
		// The records area on its own: random bytes rarely pass the CRC.
		direct := KvBatch{RecordCount: int32(len(data) % 7), Records: data}
		_, _ = direct.ReadRecords()

		kb, rest, err := ReadKvBatch(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error without ErrCorrupt: %v", err)
			}
			return
		}
		if len(rest) > len(data) {
			t.Fatal("rest longer than input")
		}
		recs, err := kb.ReadRecords()
		if err != nil {
			return
		}
		for _, r := range recs {
			if r.Value != nil {
				_, _ = dec.DecodeRow(nil, r.Value)
			}
		}
	})
}

func FuzzReadLogBatch(f *testing.F) {
	tys := types(typ(domain.TypeInteger), typ(domain.TypeString))
	enc, _ := NewIndexedRowEncoder(tys)
	b, _ := NewRowLogBatchBuilder(enc, 1, true, nil)
	_ = b.Append(ChangeAppendOnly, row(i64(1), str("a")))
	_ = b.Append(ChangeAppendOnly, row(null(), str("bb")))
	f.Add(append([]byte(nil), b.Build(3, 0)...))
	v1 := make([]byte, 52)
	v1[12] = LogMagicV1
	PutInt32LE(v1[8:], 40)
	PutInt32LE(v1[25:], int32(CRC32C(v1[29:])))
	f.Add(v1)
	dec, _ := NewIndexedRowDecoder(tys)
	f.Fuzz(func(t *testing.T, data []byte) {
		direct := LogBatch{RecordCount: int32(len(data) % 7), Records: data}
		if recs, err := direct.RowRecords(); err == nil {
			for _, r := range recs {
				_, _ = dec.DecodeRow(nil, r.Row)
			}
		}

		if _, _, err := ReadLogBatchNoCRC(data); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error without ErrCorrupt (no CRC check): %v", err)
		}
		lb, _, err := ReadLogBatch(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error without ErrCorrupt: %v", err)
			}
			return
		}
		recs, err := lb.RowRecords()
		if err != nil {
			return
		}
		for _, r := range recs {
			_, _ = dec.DecodeRow(nil, r.Row)
		}
	})
}

func FuzzValueDecode(f *testing.F) {
	tys, in, _ := allTypesRow()
	for _, format := range []RowFormat{FormatCompacted, FormatIndexed} {
		enc, _ := NewRowEncoder(format, tys)
		r, _ := enc.AppendRow(nil, in)
		f.Add(byte(format), AppendValue(nil, 1, r))
	}
	decoders := map[RowFormat]*ValueDecoder{}
	for _, format := range []RowFormat{FormatCompacted, FormatIndexed} {
		decoders[format] = NewValueDecoder(format, func(int32) ([]domain.DataType, error) { return tys, nil })
	}
	f.Fuzz(func(t *testing.T, format byte, value []byte) {
		dec := decoders[RowFormat(1+format%2)]
		_, _, err := dec.Decode(nil, value)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error without ErrCorrupt: %v", err)
		}
	})
}

// FuzzJavaFloatString checks that partition names of FLOAT and DOUBLE values
// parse back to the same value (Java's toString is exact for round trips).
func FuzzJavaFloatString(f *testing.F) {
	for _, v := range []float64{5.73, 0, 1e7, 1e-4, 0.001, math.MaxFloat64, math.SmallestNonzeroFloat64, -123.456, 4.35} {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		for _, size := range []int{32, 64} {
			want := v
			if size == 32 {
				want = float64(float32(v))
				if math.IsInf(want, 0) {
					continue
				}
			}
			s := string(appendJavaFloat(nil, v, size))
			back, err := strconv.ParseFloat(strings.Replace(s, "_", ".", 1), size)
			if err != nil {
				t.Fatalf("%v (%d bits) rendered as %q: %v", v, size, s, err)
			}
			if back != want && !(back == 0 && want == 0) {
				t.Fatalf("%v (%d bits) rendered as %q parses to %v", v, size, s, back)
			}
		}
	})
}
