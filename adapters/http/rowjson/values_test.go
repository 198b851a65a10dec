package rowjson

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// valueCase decodes the JSON text in as the value of column v of type typ.
// Exactly one of want and err is set: err is a substring of the message,
// which must also start with "entry `e1`: column `<path>`: ".
type valueCase struct {
	typ  domain.DataType
	in   string
	want *domain.Datum
	err  string
	path string // defaults to "v"
}

func i64(v int64) *domain.Datum   { return &domain.Datum{I64: v} }
func f64(v float64) *domain.Datum { return &domain.Datum{F64: v} }
func bs(s string) *domain.Datum   { return &domain.Datum{Bytes: []byte(s)} }
func null() *domain.Datum         { return &domain.Datum{Null: true} }
func elems(e ...domain.Datum) *domain.Datum {
	if e == nil {
		e = []domain.Datum{}
	}
	return &domain.Datum{Elems: e}
}
func ts(ms int64, nanos int32) *domain.Datum { return &domain.Datum{I64: ms, Nanos: nanos} }
func big_(s string) *domain.Datum            { return &domain.Datum{Bytes: javaBytes(bigInt(s))} }

func decodeOne(t *testing.T, typ domain.DataType, in string, lim Limits) (domain.Datum, error) {
	t.Helper()
	c := mustCodec(t, TableSpec{
		Columns:    []domain.Column{col("k", notNull(typ_(domain.TypeInteger))), col("v", typ)},
		PrimaryKey: []string{"k"},
	})
	body := `{"entries":[{"id":"e1","upsert":{"k":1,"v":` + in + `}}]}`
	b, ids, err := c.DecodeWrite([]byte(body), lim)
	if err != nil {
		return domain.Datum{}, err
	}
	require.Equal(t, []string{"e1"}, ids)
	require.Len(t, b.Entries, 1)
	require.Len(t, b.Entries[0].Row, 2)
	return b.Entries[0].Row[1], nil
}

func runValueCases(t *testing.T, cases []valueCase) {
	t.Helper()
	for _, tc := range cases {
		c := compileOrFail(t, tc.typ)
		t.Run(c.name+"/"+tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := decodeOne(t, tc.typ, tc.in, Limits{})
			if tc.want != nil {
				require.NoError(t, err)
				assert.True(t, datumEqual(tc.want, &got), "want %+v\ngot  %+v", *tc.want, got)
				return
			}
			msg := errMessage(t, err, domain.KindInvalidArgument)
			path := tc.path
			if path == "" {
				path = "v"
			}
			assert.True(t, strings.HasPrefix(msg, "entry `e1`: column `"+path+"`: "), msg)
			assert.Contains(t, msg, tc.err)
		})
	}
}

func compileOrFail(t *testing.T, dt domain.DataType) *typ {
	t.Helper()
	c, err := compileType(&dt, "v", new([]string))
	require.NoError(t, err)
	return c
}

func TestIntegerValues(t *testing.T) {
	t.Parallel()
	tiny, small, integer, bigint := typ_(domain.TypeTinyInt), typ_(domain.TypeSmallInt), typ_(domain.TypeInteger), typ_(domain.TypeBigInt)
	runValueCases(t, []valueCase{
		{typ: tiny, in: `127`, want: i64(127)},
		{typ: tiny, in: `-128`, want: i64(-128)},
		{typ: tiny, in: `"-5"`, want: i64(-5)},
		{typ: tiny, in: `-0`, want: i64(0)},
		{typ: tiny, in: `128`, err: "TINYINT value 128 out of range [-128, 127]"},
		{typ: tiny, in: `-129`, err: "out of range"},
		{typ: tiny, in: `1.0`, want: i64(1)},
		{typ: tiny, in: `1.5`, err: "TINYINT value 1.5 is not a whole number"},
		{typ: tiny, in: `1e3`, err: "out of range"},
		{typ: tiny, in: `"1e0"`, want: i64(1)},
		{typ: tiny, in: `"abc"`, err: `TINYINT value "abc" is not an integer`},
		{typ: tiny, in: `""`, err: "is not an integer"},
		{typ: tiny, in: `"007"`, want: i64(7)},
		{typ: tiny, in: `" 1"`, err: "is not an integer"},
		{typ: tiny, in: `"+1"`, want: i64(1)},
		{typ: tiny, in: `true`, err: "expected a JSON number or a numeric string for TINYINT, got a boolean"},
		{typ: tiny, in: `[1]`, err: "got an array"},
		{typ: small, in: `32767`, want: i64(32767)},
		{typ: small, in: `-32769`, err: "out of range"},
		{typ: integer, in: `2147483647`, want: i64(math.MaxInt32)},
		{typ: integer, in: `-2147483648`, want: i64(math.MinInt32)},
		{typ: integer, in: `2147483648`, err: "out of range"},
		{typ: bigint, in: `9223372036854775807`, want: i64(math.MaxInt64)},
		{typ: bigint, in: `"-9223372036854775808"`, want: i64(math.MinInt64)},
		{typ: bigint, in: `9223372036854775808`, err: "out of range"},
		{typ: bigint, in: `-9223372036854775809`, err: "out of range"},
		{typ: bigint, in: `18446744073709551617`, err: "out of range"},
		{typ: bigint, in: `99999999999999999999999999999`, err: "out of range"},
		{typ: bigint, in: `null`, want: null()},
		{typ: notNull(bigint), in: `null`, err: "must not be null (BIGINT NOT NULL)"},
	})
}

func TestDecimalValues(t *testing.T) {
	t.Parallel()
	d52, d380, d3810, d200 := decimalT(5, 2), decimalT(38, 0), decimalT(38, 10), decimalT(20, 0)
	runValueCases(t, []valueCase{
		{typ: d52, in: `"123.45"`, want: i64(12345)},
		{typ: d52, in: `123.45`, want: i64(12345)},
		{typ: d52, in: `-123.45`, want: i64(-12345)},
		{typ: d52, in: `999.99`, want: i64(99999)},
		{typ: d52, in: `"1.5e2"`, want: i64(15000)},
		{typ: d52, in: `1.5E+2`, want: i64(15000)},
		{typ: d52, in: `15e-3`, err: "has more than 2 fraction digits"},
		{typ: d52, in: `1e-2`, want: i64(1)},
		{typ: d52, in: `1.50`, want: i64(150)},
		{typ: d52, in: `"1.2300"`, want: i64(123)},
		{typ: d52, in: `0`, want: i64(0)},
		{typ: d52, in: `"-0.00"`, want: i64(0)},
		{typ: d52, in: `0e999999999999`, want: i64(0)},
		{typ: d52, in: `0.001e3`, want: i64(100)},
		{typ: d52, in: `"1.234"`, err: `DECIMAL(5,2) value "1.234" has more than 2 fraction digits`},
		{typ: d52, in: `1000`, err: "DECIMAL(5,2) value 1000 exceeds precision 5 (at most 3 integer digits)"},
		{typ: d52, in: `1e3`, err: "exceeds precision 5"},
		{typ: d52, in: `1e999999999999`, err: "exceeds precision 5"},
		{typ: d52, in: `1e-999999999999`, err: "fraction digits"},
		{typ: d52, in: `"12,5"`, err: "is not a number"},
		{typ: d52, in: `".5"`, want: i64(50)},
		{typ: d52, in: `"5."`, want: i64(500)},
		{typ: d52, in: `"."`, err: "is not a number"},
		{typ: d52, in: `"+1.5"`, want: i64(150)},
		{typ: d52, in: `"007.5"`, want: i64(750)},
		{typ: d52, in: `"0e9223372036854775807"`, want: i64(0)},
		{typ: d52, in: `"0e9223372036854775808"`, err: "is not a number"},
		{typ: d52, in: `"NaN"`, err: "is not a number"},
		{typ: d52, in: `false`, err: "got a boolean"},
		{typ: decimalT(18, 0), in: `999999999999999999`, want: i64(999999999999999999)},
		{typ: decimalT(18, 0), in: `-999999999999999999`, want: i64(-999999999999999999)},
		{typ: decimalT(18, 18), in: `0.999999999999999999`, want: i64(999999999999999999)},
		{typ: d200, in: `"99999999999999999999"`, want: big_("99999999999999999999")},
		{typ: d200, in: `100000000000000000000`, err: "exceeds precision 20"},
		{typ: d200, in: `-1`, want: &domain.Datum{Bytes: []byte{0xff}}},
		{typ: d200, in: `0`, want: &domain.Datum{Bytes: []byte{0}}},
		{typ: d200, in: `127`, want: &domain.Datum{Bytes: []byte{0x7f}}},
		{typ: d200, in: `128`, want: &domain.Datum{Bytes: []byte{0, 0x80}}},
		{typ: d200, in: `-128`, want: &domain.Datum{Bytes: []byte{0x80}}},
		{typ: d200, in: `-129`, want: &domain.Datum{Bytes: []byte{0xff, 0x7f}}},
		{typ: d380, in: `"99999999999999999999999999999999999999"`, want: big_("99999999999999999999999999999999999999")},
		{typ: d380, in: `"-99999999999999999999999999999999999999"`, want: big_("-99999999999999999999999999999999999999")},
		{typ: d380, in: `"170141183460469231731687303715884105727"`, err: "exceeds precision 38"},
		{typ: d3810, in: `"1234567890123456789012345678.0123456789"`, want: big_("12345678901234567890123456780123456789")},
		{typ: d3810, in: `-1`, want: big_("-10000000000")},
		{typ: d3810, in: `1e-10`, want: big_("1")},
		{typ: d3810, in: `1e-11`, err: "fraction digits"},
	})
}

func TestFloatValues(t *testing.T) {
	t.Parallel()
	fl, db := typ_(domain.TypeFloat), typ_(domain.TypeDouble)
	runValueCases(t, []valueCase{
		{typ: fl, in: `1.5`, want: f64(1.5)},
		{typ: fl, in: `0.1`, want: f64(float64(float32(0.1)))},
		{typ: fl, in: `3.4028234e38`, want: f64(float64(float32(3.4028234e38)))},
		{typ: fl, in: `3.5e38`, err: "FLOAT value 3.5e38 out of the 32-bit float range"},
		{typ: fl, in: `-1e39`, err: "out of the 32-bit float range"},
		{typ: fl, in: `1e-50`, want: f64(0)},
		{typ: fl, in: `"NaN"`, want: f64(math.NaN())},
		{typ: fl, in: `"Infinity"`, want: f64(math.Inf(1))},
		{typ: fl, in: `"-Infinity"`, want: f64(math.Inf(-1))},
		{typ: fl, in: `"1.5"`, want: f64(1.5)},
		{typ: fl, in: `"+.5"`, want: f64(0.5)},
		{typ: fl, in: `"1."`, want: f64(1)},
		{typ: fl, in: `"1e"`, err: `expected a number, a numeric string or "NaN", "Infinity", "-Infinity" for FLOAT, got "1e"`},
		{typ: fl, in: `"0x1p3"`, err: `got "0x1p3"`},
		{typ: fl, in: `"1_0"`, err: `got "1_0"`},
		{typ: fl, in: `" 1"`, err: `got " 1"`},
		{typ: db, in: `"inf"`, err: `got "inf"`},
		{typ: db, in: `"+Infinity"`, err: `got "+Infinity"`},
		{typ: db, in: `"1e400"`, err: "out of range"},
		{typ: fl, in: `"nan"`, err: `got "nan"`},
		{typ: db, in: `"\u004eaN"`, want: f64(math.NaN())},
		{typ: fl, in: `true`, err: "got a boolean"},
		{typ: db, in: `1e308`, want: f64(1e308)},
		{typ: db, in: `1e309`, err: "DOUBLE value 1e309 out of range"},
		{typ: db, in: `-0.0`, want: f64(math.Copysign(0, -1))},
		{typ: db, in: `0.30000000000000004`, want: f64(0.30000000000000004)},
		{typ: db, in: `123456789012345678901234567890`, want: f64(1.2345678901234568e29)},
	})
}

func TestBooleanStringBytesValues(t *testing.T) {
	t.Parallel()
	bo, str, by := typ_(domain.TypeBoolean), typ_(domain.TypeString), typ_(domain.TypeBytes)
	runValueCases(t, []valueCase{
		{typ: bo, in: `true`, want: i64(1)},
		{typ: bo, in: `false`, want: i64(0)},
		{typ: bo, in: `"true"`, err: "expected true or false for BOOLEAN, got a string"},
		{typ: bo, in: `1`, err: "got a number"},
		{typ: str, in: `"héllo"`, want: bs("héllo")},
		{typ: str, in: `"a\u00e9\n\"\/"`, want: bs("aé\n\"/")},
		{typ: str, in: `"\ud83d\ude00"`, want: bs("😀")},
		{typ: str, in: `""`, want: bs("")},
		{typ: str, in: "\"a\xffb\"", err: "invalid JSON at byte offset"},
		{typ: str, in: "\"a\xffb\"", err: "invalid UTF-8"},
		{typ: str, in: `"\ud800"`, err: "invalid JSON"},
		{typ: str, in: `5`, err: "expected a JSON string for STRING, got a number"},
		{typ: charT(3), in: `"abc"`, want: bs("abc")},
		{typ: charT(3), in: `"日本語"`, want: bs("日本語")},
		{typ: charT(3), in: `"ab"`, want: bs("ab")},
		{typ: charT(3), in: `"abcd"`, err: "CHAR(3) value has 4 characters, more than 3"},
		{typ: charT(2), in: `"日本語"`, err: "has 3 characters"},
		{typ: by, in: `"aGVsbG8="`, want: bs("hello")},
		{typ: by, in: `""`, want: bs("")},
		{typ: by, in: `"+/8="`, want: bs("\xfb\xff")},
		{typ: by, in: `"aGVs\/bG8="`, err: "invalid base64"},
		{typ: by, in: `"aGVsbG8"`, err: "invalid base64 for BYTES (standard alphabet, padded, RFC 4648 §4)"},
		{typ: by, in: `"aGVsbG9="`, err: "invalid base64"},
		{typ: by, in: `"aGVs\nbG8="`, err: "invalid base64 for BYTES (standard alphabet, padded, RFC 4648 §4) at character 4"},
		{typ: by, in: `"aGVsbG8=\r\n"`, err: "at character 8"},
		{typ: by, in: `"aGVsbA=="`, want: bs("hell")},
		{typ: by, in: `"aGVsbB=="`, err: "at character 5"},
		{typ: by, in: `"aGVsbA="`, err: "at character 4"},
		{typ: by, in: `"aG=sbA=="`, err: "at character 2"},
		{typ: by, in: `"===="`, err: "at character 0"},
		{typ: by, in: `"aGVs bG8="`, err: "invalid base64"},
		{typ: by, in: `"-_8="`, err: "invalid base64"},
		{typ: by, in: `[1,2]`, err: "expected a base64 JSON string for BYTES, got an array"},
		{typ: binaryT(4), in: `"AQIDBA=="`, want: bs("\x01\x02\x03\x04")},
		{typ: binaryT(4), in: `"AQID"`, err: "BINARY(4) value has 3 bytes, want exactly 4"},
		{typ: binaryT(4), in: `"AQIDBAU="`, err: "has 5 bytes"},
	})
}

func TestTemporalValues(t *testing.T) {
	t.Parallel()
	date := typ_(domain.TypeDate)
	t0, t3, t6 := precT(domain.TypeTime, 0), precT(domain.TypeTime, 3), precT(domain.TypeTime, 6)
	n0, n3, n6, n9 := precT(domain.TypeTimestampNTZ, 0), precT(domain.TypeTimestampNTZ, 3), precT(domain.TypeTimestampNTZ, 6), precT(domain.TypeTimestampNTZ, 9)
	l3 := precT(domain.TypeTimestampLTZ, 3)
	const jan2 = 1704164645678 // 2024-01-02T03:04:05.678Z
	runValueCases(t, []valueCase{
		{typ: date, in: `"1970-01-01"`, want: i64(0)},
		{typ: date, in: `"2024-02-29"`, want: i64(19782)},
		{typ: date, in: `"1969-12-31"`, want: i64(-1)},
		{typ: date, in: `"0001-01-01"`, want: i64(-719162)},
		{typ: date, in: `"0000-03-01"`, want: i64(-719468)},
		{typ: date, in: `"+10000-01-01"`, want: i64(2932897)},
		{typ: date, in: `"-0001-12-31"`, want: i64(-719529)},
		{typ: date, in: `"2023-02-29"`, err: `invalid DATE "2023-02-29": day out of range for the month (want YYYY-MM-DD)`},
		{typ: date, in: `"2024-13-01"`, err: "month out of range"},
		{typ: date, in: `"2024-1-01"`, err: "expected a 2-digit month"},
		{typ: date, in: `"24-01-01"`, err: "the year must have at least 4 digits"},
		{typ: date, in: `"10000-01-01"`, want: i64(2932897)},
		{typ: date, in: `"+2024-01-01"`, want: i64(19723)},
		{typ: date, in: `"02024-01-01"`, want: i64(19723)},
		{typ: date, in: `"2024-01-011"`, err: "expected a 2-digit day"},
		{typ: date, in: `"2024-01-01T00:00:00"`, err: "unexpected text after the date"},
		{typ: date, in: `"+999999999-01-01"`, err: "out of range"},
		{typ: date, in: `19000`, err: `expected a "YYYY-MM-DD" string for DATE, got a number`},
		{typ: t3, in: `"12:34:56.789"`, want: i64(45296789)},
		{typ: t3, in: `"00:00:00"`, want: i64(0)},
		{typ: t3, in: `"23:59:59.999"`, want: i64(86399999)},
		{typ: t3, in: `"12:34:56.7"`, want: i64(45296700)},
		{typ: t3, in: `"24:00:00"`, err: "time of day out of range"},
		{typ: t3, in: `"12:60:00"`, err: "out of range"},
		{typ: t3, in: `"23:59:60"`, err: "out of range"},
		{typ: t3, in: `"12:34"`, want: i64(45240000)},
		{typ: t3, in: `"12:34.5"`, want: i64(45240500)},
		{typ: t3, in: `"12:34:5"`, err: "expected HH:MM:SS"},
		{typ: t3, in: `"12:345"`, err: "expected HH:MM[:SS]"},
		{typ: t3, in: `"12:34:56.7891"`, err: `invalid TIME(3) "12:34:56.7891": more fraction digits than precision 3`},
		{typ: t3, in: `"12:34:56."`, err: "expected digits after '.'"},
		{typ: t3, in: `"12:34:56.1234567890"`, err: "more than 9 fraction digits"},
		{typ: t6, in: `"12:34:56.789000"`, want: i64(45296789)},
		{typ: t6, in: `"12:34:56.789100"`, err: "Fluss stores TIME in milliseconds"},
		{typ: t0, in: `"12:34:56.000"`, want: i64(45296000)},
		{typ: t0, in: `"12:34:56.5"`, err: "precision 0"},
		{typ: t3, in: `45296789`, err: "got a number"},
		{typ: n3, in: `"2024-01-02T03:04:05.678"`, want: ts(jan2, 0)},
		{typ: n3, in: `"2024-01-02 03:04:05.678"`, err: "expected 'T' between date and time"},
		{typ: n3, in: `"2024-01-02T03:04"`, want: ts(jan2-5678, 0)},
		{typ: n3, in: `1.704164645678e12`, want: ts(jan2, 0)},
		{typ: n3, in: `"1704164645678"`, err: "invalid TIMESTAMP(3)"},
		{typ: n3, in: `1704164645678`, want: ts(jan2, 0)},
		{typ: n3, in: `-1`, want: ts(-1, 0)},
		{typ: n3, in: `"2024-01-02T03:04:05.678Z"`, err: "a TIMESTAMP without time zone takes no zone offset"},
		{typ: n3, in: `"2024-01-02T03:04:05+01:00"`, err: "takes no zone offset"},
		{typ: n3, in: `"2024-01-02"`, err: "expected 'T' between date and time"},
		{typ: n3, in: `"2024-01-02X03:04:05"`, err: "expected 'T'"},
		{typ: n3, in: `1.5`, err: "TIMESTAMP(3) epoch milliseconds 1.5 must be an integer"},
		{typ: l3, in: `"2024-01-02T03:04:05.678"`, err: "a zone offset (Z or ±hh:mm) is required"},
		{typ: l3, in: `"2024-01-02T03:04:05+18:01"`, err: "zone offset out of range"},
		{typ: l3, in: `"2024-01-02T03:04:05+0200"`, err: "expected a zone offset"},
		{typ: l3, in: `"2024-01-02T03:04:05z"`, err: "expected a zone offset"},
		{typ: n3, in: `9223372036854775808`, err: "out of range"},
		{typ: n3, in: `true`, err: "expected an ISO-8601 string or epoch milliseconds for TIMESTAMP(3), got a boolean"},
		{typ: n0, in: `1500`, err: "TIMESTAMP(0) epoch milliseconds 1500 has sub-second digits beyond precision 0"},
		{typ: n0, in: `2000`, want: ts(2000, 0)},
		{typ: n0, in: `"2024-01-02T03:04:05.1"`, err: "more fraction digits than precision 0"},
		{typ: n6, in: `"1969-12-31T23:59:59.999999"`, want: ts(-1, 999000)},
		{typ: n6, in: `"1970-01-01T00:00:00.000001"`, want: ts(0, 1000)},
		{typ: n9, in: `"2024-01-02T03:04:05.678123456"`, want: ts(jan2, 123456)},
		{typ: n3, in: `"-292275055-05-16T16:47:04.192"`, want: ts(math.MinInt64, 0)},
		{typ: n3, in: `"-292275055-05-16T16:47:04.191"`, err: "out of range"},
		{typ: n3, in: `"+292278994-08-17T07:12:55.807"`, want: ts(math.MaxInt64, 0)},
		{typ: n3, in: `"+292278994-08-17T07:12:55.808"`, err: "out of range"},
		{typ: l3, in: `"2024-01-02T03:04:05.678Z"`, want: ts(jan2, 0)},
		{typ: l3, in: `"2024-01-02T05:04:05.678+02:00"`, want: ts(jan2, 0)},
		{typ: l3, in: `"2024-01-01T23:34:05.678-03:30"`, want: ts(jan2, 0)},
		{typ: l3, in: `1704164645678`, want: ts(jan2, 0)},
		{typ: l3, in: `"2024-01-02T03:04:05.678"`, err: "a zone offset (Z or ±hh:mm) is required"},
		{typ: l3, in: `"2024-01-02T03:04:05+0200"`, err: "expected a zone offset Z or ±hh:mm"},
		{typ: l3, in: `"2024-01-02T03:04:05+19:00"`, err: "zone offset out of range"},
		{typ: l3, in: `"2024-01-02T03:04:05z"`, err: "expected a zone offset"},
		{typ: l3, in: `"2024-01-02T03:04:05 Europe/Paris"`, err: "expected a zone offset"},
	})
}

func TestNestedValues(t *testing.T) {
	t.Parallel()
	intNN := notNull(typ_(domain.TypeInteger))
	str := typ_(domain.TypeString)
	arr := arrayT(intNN)
	strMap := mapT(notNull(str), typ_(domain.TypeInteger))
	intMap := mapT(intNN, str)
	row := rowT(fieldT("a", intNN), fieldT("b", str))
	deep := arrayT(rowT(fieldT("x", arrayT(intNN))))
	one, two := domain.Datum{I64: 1}, domain.Datum{I64: 2}
	runValueCases(t, []valueCase{
		{typ: arr, in: `[1,2]`, want: elems(one, two)},
		{typ: arr, in: `[]`, want: elems()},
		{typ: arr, in: `null`, want: null()},
		{typ: arr, in: `[1,null]`, err: "must not be null (INTEGER NOT NULL)", path: "v[1]"},
		{typ: arr, in: `[1,"x"]`, err: "is not an integer", path: "v[1]"},
		{typ: arr, in: `{"a":1}`, err: "expected a JSON array for ARRAY<INTEGER>, got an object"},
		{typ: arr, in: `"[1]"`, err: "got a string"},
		{typ: strMap, in: `{"a":1,"b":null}`, want: elems(*bs("a"), one, *bs("b"), *null())},
		{typ: strMap, in: `{}`, want: elems()},
		{typ: strMap, in: `[{"key":"a","value":1}]`, want: elems(*bs("a"), one)},
		{typ: strMap, in: `[{"value":1,"key":"a"}]`, want: elems(*bs("a"), one)},
		{typ: strMap, in: `{"a":1,"a":2}`, err: "duplicate key", path: `v["a"]`},
		{typ: strMap, in: `{"a":1,"b":2,"\u0061":3}`, err: "duplicate key", path: `v["a"]`},
		{typ: strMap, in: `{"a":"x"}`, err: "is not an integer", path: `v["a"]`},
		{typ: strMap, in: `[{"key":"a","value":1},{"key":"a","value":2}]`, err: "duplicate map key (same as element [0])", path: "v[1].key"},
		{typ: strMap, in: `[{"key":null,"value":1}]`, err: "a map key must not be null", path: "v[0].key"},
		{typ: strMap, in: `[{"key":"a"}]`, err: "missing map value", path: "v[0].value"},
		{typ: strMap, in: `[{"key":"a","value":1,"x":2}]`, err: "unknown field", path: "v[0].x"},
		{typ: strMap, in: `[["a",1]]`, err: "a MAP element must be a JSON object, got an array", path: "v[0]"},
		{typ: mapT(notNull(charT(2)), str), in: `{"ab":"x"}`, err: "got an object"},
		{typ: mapT(notNull(charT(2)), str), in: `[{"key":"abc","value":"x"}]`, err: "CHAR(2) value has 3 characters", path: "v[0].key"},
		{typ: intMap, in: `[{"key":1,"value":"x"},{"key":2,"value":null}]`, want: elems(one, *bs("x"), two, *null())},
		{typ: intMap, in: `{"1":"x"}`, err: `expected a JSON array of {"key": …, "value": …} objects for MAP<INTEGER, STRING>, got an object`},
		{typ: row, in: `{"a":1}`, want: elems(one, *null())},
		{typ: row, in: `{"b":"x","a":2}`, want: elems(two, *bs("x"))},
		{typ: row, in: `{"b":"x"}`, err: "missing value for a NOT NULL field", path: "v.a"},
		{typ: row, in: `{"a":1,"c":2}`, err: "no such field in ROW", path: "v.c"},
		{typ: row, in: `{"a":1,"a":2}`, err: "duplicate key", path: "v.a"},
		{typ: row, in: `[1,"x"]`, err: "expected a JSON object for ROW, got an array"},
		{typ: deep, in: `[{"x":[]},{"x":null},{"x":[1,2,3,null]}]`, err: "must not be null", path: "v[2].x[3]"},
		{typ: deep, in: `[{"x":[1]},{"x":null}]`, want: elems(*elems(*elems(one)), *elems(*null()))},
	})
}

func TestDepthLimit(t *testing.T) {
	t.Parallel()
	typ := typ_(domain.TypeInteger)
	for range 4 {
		typ = arrayT(typ)
	}
	_, err := decodeOne(t, typ, `[[[[1]]]]`, Limits{MaxDepth: 4})
	require.NoError(t, err)
	_, err = decodeOne(t, typ, `[[[[1]]]]`, Limits{MaxDepth: 3})
	msg := errMessage(t, err, domain.KindInvalidArgument)
	assert.Equal(t, "entry `e1`: column `v[0][0][0]`: nested deeper than 3 levels", msg)
	// Nulls and empty containers below the limit are fine.
	_, err = decodeOne(t, typ, `[[[null]]]`, Limits{MaxDepth: 3})
	require.NoError(t, err)
}
