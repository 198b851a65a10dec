package arrowlog

import (
	"bytes"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Type constructors: nullable unless wrapped in notNull, as Fluss's DataTypes.

func typ(root domain.TypeRoot) domain.DataType { return domain.DataType{Root: root, Nullable: true} }

func notNull(t domain.DataType) domain.DataType { t.Nullable = false; return t }

func decimalT(p, s int) domain.DataType {
	return domain.DataType{Root: domain.TypeDecimal, Nullable: true, Precision: p, Scale: s}
}

func precT(root domain.TypeRoot, p int) domain.DataType {
	return domain.DataType{Root: root, Nullable: true, Precision: p}
}

func charT(n int) domain.DataType {
	return domain.DataType{Root: domain.TypeChar, Nullable: true, Length: n}
}

func binaryT(n int) domain.DataType {
	return domain.DataType{Root: domain.TypeBinary, Nullable: true, Length: n}
}

func arrayT(e domain.DataType) domain.DataType {
	return domain.DataType{Root: domain.TypeArray, Nullable: true, Element: &e}
}

func mapT(k, v domain.DataType) domain.DataType {
	return domain.DataType{Root: domain.TypeMap, Nullable: true, Key: &k, Value: &v}
}

func rowT(fields ...domain.DataType) domain.DataType {
	t := domain.DataType{Root: domain.TypeRow, Nullable: true}
	for i, f := range fields {
		t.Fields = append(t.Fields, domain.DataField{Name: "f" + strconv.Itoa(i), Type: f, FieldID: -1})
	}
	return t
}

func cols(ts ...domain.DataType) []domain.Column {
	out := make([]domain.Column, len(ts))
	for i, t := range ts {
		out[i] = domain.Column{Name: "c" + strconv.Itoa(i), Type: t, ID: int32(i)}
	}
	return out
}

// Datum constructors.

func i64(v int64) domain.Datum             { return domain.Datum{I64: v} }
func f64(v float64) domain.Datum           { return domain.Datum{F64: v} }
func str(s string) domain.Datum            { return domain.Datum{Bytes: []byte(s)} }
func raw(b ...byte) domain.Datum           { return domain.Datum{Bytes: b} }
func null() domain.Datum                   { return domain.Datum{Null: true} }
func ts(ms int64, ns int32) domain.Datum   { return domain.Datum{I64: ms, Nanos: ns} }
func elems(e ...domain.Datum) domain.Datum { return domain.Datum{Elems: e} }
func row(d ...domain.Datum) []domain.Datum { return d }

// unhex parses hex bytes, ignoring spaces, '|' and newlines.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s)
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

var codecs = []Compression{CompressionNone, CompressionLZ4Frame, CompressionZstd}

// allTypes is one column of every Fluss type, nested ones included.
func allTypes() []domain.DataType {
	return []domain.DataType{
		typ(domain.TypeBoolean),                              // 0
		typ(domain.TypeTinyInt),                              // 1
		typ(domain.TypeSmallInt),                             // 2
		typ(domain.TypeInteger),                              // 3
		typ(domain.TypeBigInt),                               // 4
		typ(domain.TypeFloat),                                // 5
		typ(domain.TypeDouble),                               // 6
		decimalT(10, 2),                                      // 7
		decimalT(38, 10),                                     // 8
		charT(3),                                             // 9
		typ(domain.TypeString),                               // 10
		binaryT(4),                                           // 11
		typ(domain.TypeBytes),                                // 12
		typ(domain.TypeDate),                                 // 13
		precT(domain.TypeTime, 0),                            // 14
		precT(domain.TypeTime, 3),                            // 15
		precT(domain.TypeTime, 6),                            // 16
		precT(domain.TypeTime, 9),                            // 17
		precT(domain.TypeTimestampNTZ, 0),                    // 18
		precT(domain.TypeTimestampNTZ, 3),                    // 19
		precT(domain.TypeTimestampNTZ, 6),                    // 20
		precT(domain.TypeTimestampNTZ, 9),                    // 21
		precT(domain.TypeTimestampLTZ, 0),                    // 22
		precT(domain.TypeTimestampLTZ, 3),                    // 23
		precT(domain.TypeTimestampLTZ, 6),                    // 24
		precT(domain.TypeTimestampLTZ, 9),                    // 25
		arrayT(typ(domain.TypeInteger)),                      // 26
		arrayT(arrayT(typ(domain.TypeString))),               // 27
		mapT(typ(domain.TypeString), typ(domain.TypeBigInt)), // 28
		rowT(typ(domain.TypeInteger), notNull(typ(domain.TypeString)), arrayT(typ(domain.TypeDouble))), // 29
		notNull(typ(domain.TypeInteger)), // 30
		mapT(typ(domain.TypeInteger), rowT(typ(domain.TypeBoolean), mapT(typ(domain.TypeString), typ(domain.TypeBytes)))), // 31
	}
}

// bigDec returns the big-endian two's complement bytes of v (BigInteger.toByteArray form).
func bigDec(v int64) domain.Datum {
	var out []byte
	out = appendDecimalBytes(out, v>>63, uint64(v))
	return domain.Datum{Bytes: out}
}

// allTypesRows returns rows for allTypes: values, nulls, edge values, empty
// nested values. testdata/java/ArrowGold.java holds the same rows; keep them
// in sync. (No pre-1970 timestamp with sub-millisecond digits at precision
// > 3: Fluss 0.9.1's Java reader cannot read those back, see
// TestPreEpochSubMillisecondTimestamps.)
func allTypesRows() [][]domain.Datum {
	max38 := []byte{0x4B, 0x3B, 0x4C, 0xA8, 0x5A, 0x86, 0xC4, 0x7A, 0x09, 0x8A, 0x22, 0x3F, 0xFF, 0xFF, 0xFF, 0xFF} // 10^38-1
	min38 := appendDecimalBytes(nil, ^0x4B3B4CA85A86C47A, ^uint64(0x098A223FFFFFFFFF)+1)                            // -(10^38-1)
	r1 := row(
		i64(1), i64(-128), i64(32767), i64(math.MinInt32), i64(math.MaxInt64),
		f64(1.5), f64(-2.25),
		i64(12345), bigDec(-98765432109876),
		str("ab"), str("héllo, wörld"), raw(1, 2, 3, 4), raw(0xFF, 0x00),
		i64(19655),
		i64(34_200_000), i64(34_200_123), i64(86_399_999), i64(1),
		ts(1698235273000, 0), ts(1698235273182, 0), ts(1698235273182, 123000), ts(1698235273182, 123456),
		ts(-1000, 0), ts(-1, 0), ts(1, 999000), ts(-1, 0),
		elems(i64(1), null(), i64(-3)),
		elems(elems(str("a"), null(), str("c")), null(), elems()),
		elems(str("k1"), i64(1), str("k2"), null()),
		elems(i64(7), str("x"), elems(f64(0.5), null())),
		i64(42),
		elems(i64(1), elems(i64(1), elems(str("a"), raw(9))), i64(2), null()),
	)
	r2 := row(
		null(), null(), null(), null(), null(), null(), null(), null(), null(), null(), null(), null(), null(),
		null(), null(), null(), null(), null(), null(), null(), null(), null(), null(), null(), null(), null(),
		null(), null(), null(), null(),
		i64(-1),
		null(),
	)
	r3 := row(
		i64(0), i64(127), i64(-32768), i64(math.MaxInt32), i64(math.MinInt64),
		f64(math.Inf(-1)), f64(math.MaxFloat64),
		i64(-9999999999), domain.Datum{Bytes: max38},
		str(""), str(""), raw(0, 0, 0, 0), raw(),
		i64(-719162),
		i64(0), i64(0), i64(0), i64(0),
		ts(0, 0), ts(0, 0), ts(0, 0), ts(0, 0),
		ts(253402300799000, 0), ts(-62135596800000, 0), ts(-62135596800000, 0), ts(9_000_000_000_000, 999_999),
		elems(), elems(), elems(), elems(null(), str(""), elems()),
		i64(0),
		elems(),
	)
	r4 := row(
		i64(1), i64(5), i64(5), i64(5), i64(5), f64(0), f64(math.SmallestNonzeroFloat64),
		i64(0), domain.Datum{Bytes: min38},
		str("xyz"), str(strings.Repeat("long string ", 20)), raw(9, 9, 9, 9), raw(make([]byte, 300)...),
		i64(1), i64(1000), i64(1), i64(1), i64(1),
		ts(1, 0), ts(1, 0), ts(1, 1000), ts(1, 1),
		ts(1, 0), ts(1, 0), ts(1, 1000), ts(1, 1),
		elems(null()), elems(null(), elems(null())), elems(str(""), i64(0)), null(),
		i64(math.MinInt32),
		elems(i64(0), null(), i64(-1), elems(null(), null())),
	)
	return [][]domain.Datum{r1, r2, r3, r4}
}

// normalize returns what a round trip through Arrow must give back for d of
// type t: FLOAT rounded to float32, DECIMAL(p>18) in minimal bytes, TIME and
// TIMESTAMP truncated to the Arrow unit, fields of a null ROW dropped.
func normalize(t *domain.DataType, d domain.Datum) domain.Datum {
	if d.Null {
		return domain.Datum{Null: true}
	}
	switch t.Root {
	case domain.TypeFloat:
		return domain.Datum{F64: float64(float32(d.F64))}
	case domain.TypeDecimal:
		if t.Precision > 18 {
			n := node{kind: kDecimal, precision: t.Precision}
			hi, lo, err := decimalValue(&n, &d)
			if err != nil {
				panic(err)
			}
			return domain.Datum{Bytes: appendDecimalBytes(nil, hi, lo)}
		}
		return domain.Datum{I64: d.I64}
	case domain.TypeChar, domain.TypeString, domain.TypeBinary, domain.TypeBytes:
		return domain.Datum{Bytes: append([]byte{}, d.Bytes...)}
	case domain.TypeTime:
		if t.Precision == 0 {
			return domain.Datum{I64: d.I64 / 1000 * 1000}
		}
		return domain.Datum{I64: d.I64}
	case domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		switch {
		case t.Precision == 0:
			return domain.Datum{I64: d.I64 / 1000 * 1000}
		case t.Precision <= 3:
			return domain.Datum{I64: d.I64}
		case t.Precision <= 6:
			return domain.Datum{I64: d.I64, Nanos: d.Nanos / 1000 * 1000}
		default:
			return domain.Datum{I64: d.I64, Nanos: d.Nanos}
		}
	case domain.TypeArray:
		out := make([]domain.Datum, len(d.Elems))
		for i := range d.Elems {
			out[i] = normalize(t.Element, d.Elems[i])
		}
		return domain.Datum{Elems: out}
	case domain.TypeMap:
		out := make([]domain.Datum, len(d.Elems))
		for i := range d.Elems {
			if i%2 == 0 {
				out[i] = normalize(t.Key, d.Elems[i])
			} else {
				out[i] = normalize(t.Value, d.Elems[i])
			}
		}
		return domain.Datum{Elems: out}
	case domain.TypeRow:
		out := make([]domain.Datum, len(d.Elems))
		for i := range d.Elems {
			out[i] = normalize(&t.Fields[i].Type, d.Elems[i])
		}
		return domain.Datum{Elems: out}
	default:
		return domain.Datum{I64: d.I64, F64: d.F64}
	}
}

func normalizeRows(types []domain.DataType, rows [][]domain.Datum) [][]domain.Datum {
	out := make([][]domain.Datum, len(rows))
	for r := range rows {
		out[r] = make([]domain.Datum, len(rows[r]))
		for c := range rows[r] {
			out[r][c] = normalize(&types[c], rows[r][c])
		}
	}
	return out
}

// canon makes nil and empty slices compare equal.
func canon(rows [][]domain.Datum) [][]domain.Datum {
	var fix func(d domain.Datum) domain.Datum
	fix = func(d domain.Datum) domain.Datum {
		if len(d.Bytes) == 0 && !d.Null && d.Bytes != nil {
			d.Bytes = []byte{}
		}
		if d.Bytes == nil && !d.Null {
			d.Bytes = []byte{}
		}
		if d.Null {
			return domain.Datum{Null: true}
		}
		if d.Elems != nil || d.Elems == nil {
			el := make([]domain.Datum, len(d.Elems))
			for i := range d.Elems {
				el[i] = fix(d.Elems[i])
			}
			d.Elems = el
		}
		return d
	}
	out := make([][]domain.Datum, len(rows))
	for r := range rows {
		out[r] = make([]domain.Datum, len(rows[r]))
		for c := range rows[r] {
			out[r][c] = fix(rows[r][c])
		}
	}
	return out
}

// withSchema prepends a Schema message for schema to one RecordBatch message
// and appends the end-of-stream marker, making a stream any Arrow reader
// accepts.
func withSchema(t testing.TB, schema *arrow.Schema, msg []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	p := ipc.GetSchemaPayload(schema, memory.DefaultAllocator)
	defer p.Release()
	_, err := p.WritePayload(&buf)
	require.NoError(t, err)
	buf.Write(msg)
	buf.Write([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0})
	return buf.Bytes()
}
