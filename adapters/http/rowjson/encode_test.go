package rowjson

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestAppendRowExact(t *testing.T) {
	t.Parallel()
	intT, str := typ_(domain.TypeInteger), typ_(domain.TypeString)
	cols := []domain.Column{
		col("b", typ_(domain.TypeBoolean)),
		col("t", typ_(domain.TypeTinyInt)),
		col("i", intT),
		col("l", typ_(domain.TypeBigInt)),
		col("f", typ_(domain.TypeFloat)),
		col("d", typ_(domain.TypeDouble)),
		col("dec", decimalT(5, 2)),
		col("big", decimalT(38, 10)),
		col("c", charT(3)),
		col("s", str),
		col("bin", binaryT(2)),
		col("date", typ_(domain.TypeDate)),
		col("time", precT(domain.TypeTime, 3)),
		col("ts", precT(domain.TypeTimestampNTZ, 6)),
		col("ltz", precT(domain.TypeTimestampLTZ, 3)),
		col("arr", arrayT(intT)),
		col("m", mapT(str, intT)),
		col("r", rowT(fieldT("a", intT), fieldT("b\"", str))),
		col("n", str),
	}
	row := []domain.Datum{
		{I64: 1},
		{I64: -128},
		{I64: 42},
		{I64: math.MinInt64},
		{F64: float64(float32(0.1))},
		{F64: 1e21},
		{I64: -1},
		*big_("-12345678901234567890123"),
		{Bytes: []byte("日本")},
		{Bytes: []byte("a\"\\\n\x01<>&\u2028")},
		{Bytes: []byte{0xfb, 0xff}},
		{I64: 19782},
		{I64: 45296789},
		{I64: -1, Nanos: 999000},
		{I64: 1704164645678},
		{Elems: []domain.Datum{{I64: 1}, {Null: true}}},
		{Elems: []domain.Datum{{Bytes: []byte("k")}, {I64: 7}}},
		{Elems: []domain.Datum{{I64: 3}, {Null: true}}},
		{Null: true},
	}
	want := `{"b":true,"t":-128,"i":42,"l":"-9223372036854775808","f":0.1,"d":1e+21,` +
		`"dec":"-0.01","big":"-1234567890123.4567890123","c":"日本","s":"a\"\\\n\u0001<>&` + "\u2028" + `",` +
		`"bin":"+/8=","date":"2024-02-29","time":"12:34:56.789","ts":"1969-12-31T23:59:59.999999",` +
		`"ltz":"2024-01-02T03:04:05.678Z","arr":[1,null],"m":[{"key":"k","value":7}],"r":{"a":3,"b\"":null},"n":null}`
	assert.Equal(t, want, string(AppendRow(nil, cols, row)))
	// A short row renders the missing columns as null.
	assert.Equal(t, `{"b":false,"t":null}`, string(AppendRow(nil, cols[:2], []domain.Datum{{}})))
}

func TestAppendValueExact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ  domain.DataType
		d    domain.Datum
		want string
	}{
		{decimalT(5, 2), domain.Datum{I64: 5}, `"0.05"`},
		{decimalT(5, 2), domain.Datum{I64: 0}, `"0.00"`},
		{decimalT(5, 2), domain.Datum{I64: 12345}, `"123.45"`},
		{decimalT(5, 0), domain.Datum{I64: -12}, `"-12"`},
		{decimalT(18, 18), domain.Datum{I64: -999999999999999999}, `"-0.999999999999999999"`},
		{decimalT(38, 0), *big_("99999999999999999999999999999999999999"), `"99999999999999999999999999999999999999"`},
		{decimalT(38, 38), *big_("-1"), `"-0.00000000000000000000000000000000000001"`},
		{decimalT(20, 2), domain.Datum{Bytes: []byte{0}}, `"0.00"`},
		{decimalT(38, 0), domain.Datum{Bytes: javaBytes(bigInt("-170141183460469231731687303715884105728"))}, `"-170141183460469231731687303715884105728"`},
		{decimalT(38, 0), domain.Datum{Bytes: javaBytes(bigInt("1000000000000000000000000000000000000000000"))}, `"1000000000000000000000000000000000000000000"`},
		{typ_(domain.TypeFloat), domain.Datum{F64: math.NaN()}, `"NaN"`},
		{typ_(domain.TypeDouble), domain.Datum{F64: math.Inf(1)}, `"Infinity"`},
		{typ_(domain.TypeDouble), domain.Datum{F64: math.Inf(-1)}, `"-Infinity"`},
		{typ_(domain.TypeDouble), domain.Datum{F64: math.Copysign(0, -1)}, `-0`},
		{typ_(domain.TypeDouble), domain.Datum{F64: 5e-324}, `5e-324`},
		{typ_(domain.TypeFloat), domain.Datum{F64: float64(math.MaxFloat32)}, `3.4028235e+38`},
		{typ_(domain.TypeDate), domain.Datum{I64: 2932897}, `"+10000-01-01"`},
		{typ_(domain.TypeDate), domain.Datum{I64: -719529}, `"-0001-12-31"`},
		{typ_(domain.TypeDate), domain.Datum{I64: -719528}, `"0000-01-01"`},
		{typ_(domain.TypeDate), domain.Datum{I64: 1 << 40}, `1099511627776`},
		{precT(domain.TypeTime, 0), domain.Datum{I64: 45296000}, `"12:34:56"`},
		{precT(domain.TypeTime, 0), domain.Datum{I64: 45296500}, `"12:34:56.5"`},
		{precT(domain.TypeTime, 9), domain.Datum{I64: 1}, `"00:00:00.001000000"`},
		{precT(domain.TypeTime, 3), domain.Datum{I64: -1}, `-1`},
		{precT(domain.TypeTimestampNTZ, 0), domain.Datum{I64: 0}, `"1970-01-01T00:00:00"`},
		{precT(domain.TypeTimestampNTZ, 9), domain.Datum{I64: 1, Nanos: 2}, `"1970-01-01T00:00:00.001000002"`},
		{precT(domain.TypeTimestampNTZ, 3), domain.Datum{I64: math.MaxInt64}, `"+292278994-08-17T07:12:55.807"`},
		{precT(domain.TypeTimestampLTZ, 3), domain.Datum{I64: math.MinInt64}, `"-292275055-05-16T16:47:04.192Z"`},
		{typ_(domain.TypeBytes), domain.Datum{Bytes: []byte{}}, `""`},
		{mapT(typ_(domain.TypeInteger), arrayT(typ_(domain.TypeBoolean))), domain.Datum{Elems: []domain.Datum{{I64: 1}, {Elems: []domain.Datum{{I64: 0}}}}}, `[{"key":1,"value":[false]}]`},
	} {
		assert.Equal(t, tc.want, string(AppendValue(nil, &tc.typ, &tc.d)), "%+v", tc.d)
	}
}

// TestRowKeysAppendRow: RowKeys.AppendRow renders exactly what AppendRow
// does, for names that need escaping, nulls and a short row.
func TestRowKeysAppendRow(t *testing.T) {
	cols := []domain.Column{
		{Name: "id", Type: domain.DataType{Root: domain.TypeBigInt}},
		{Name: `we"ird\u`, Type: domain.DataType{Root: domain.TypeString, Nullable: true}},
		{Name: "é<>&", Type: domain.DataType{Root: domain.TypeDouble, Nullable: true}},
		{Name: "ts", Type: domain.DataType{Root: domain.TypeTimestampLTZ, Precision: 3, Nullable: true}},
	}
	rows := [][]domain.Datum{
		{{I64: -7}, {Bytes: []byte("a\"b\n")}, {F64: 0.25}, {I64: 1_700_000_000_123}},
		{{I64: 1}, {Null: true}, {Null: true}, {Null: true}},
		{{I64: 2}},
		nil,
	}
	keys := NewRowKeys(cols)
	for i, row := range rows {
		assert.Equal(t, string(AppendRow(nil, cols, row)), string(keys.AppendRow(nil, row)), "row %d", i)
	}
}
