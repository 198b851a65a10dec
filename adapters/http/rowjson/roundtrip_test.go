package rowjson

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// gen produces random types, values and alternative JSON spellings of them.
type gen struct{ r *rand.Rand }

var scalarRoots = []domain.TypeRoot{
	domain.TypeBoolean, domain.TypeTinyInt, domain.TypeSmallInt, domain.TypeInteger, domain.TypeBigInt,
	domain.TypeFloat, domain.TypeDouble, domain.TypeDecimal, domain.TypeChar, domain.TypeString,
	domain.TypeBinary, domain.TypeBytes, domain.TypeDate, domain.TypeTime, domain.TypeTimestampNTZ,
	domain.TypeTimestampLTZ,
}

func (g gen) typ(depth int) domain.DataType {
	t := domain.DataType{Nullable: g.r.IntN(3) > 0}
	i := g.r.IntN(len(scalarRoots))
	if depth < 3 && g.r.IntN(3) == 0 {
		i = len(scalarRoots) + g.r.IntN(3) // nested
	}
	switch {
	case i < len(scalarRoots):
		t.Root = scalarRoots[i]
		switch t.Root {
		case domain.TypeDecimal:
			t.Precision = 1 + g.r.IntN(38)
			t.Scale = g.r.IntN(t.Precision + 1)
		case domain.TypeChar:
			t.Length = 1 + g.r.IntN(6)
		case domain.TypeBinary:
			t.Length = 1 + g.r.IntN(8)
		case domain.TypeTime, domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
			t.Precision = g.r.IntN(10)
		}
	case i == len(scalarRoots):
		t.Root = domain.TypeArray
		e := g.typ(depth + 1)
		t.Element = &e
	case i == len(scalarRoots)+1:
		t.Root = domain.TypeMap
		k := g.typ(3) // scalar key
		k.Nullable = false
		v := g.typ(depth + 1)
		t.Key, t.Value = &k, &v
	default:
		t.Root = domain.TypeRow
		for j := range 1 + g.r.IntN(4) {
			t.Fields = append(t.Fields, fieldT("f"+strconv.Itoa(j), g.typ(depth+1)))
		}
	}
	return t
}

func (g gen) digits(n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(byte('0' + g.r.IntN(10)))
	}
	return b.String()
}

var sampleRunes = []rune{'a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', 0, 0x1f, 0x7f, 'é', '日', '😀', 0x2028, 0xfffd}

func (g gen) str(maxRunes int) string {
	var b strings.Builder
	for range g.r.IntN(maxRunes + 1) {
		b.WriteRune(sampleRunes[g.r.IntN(len(sampleRunes))])
	}
	return b.String()
}

func (g gen) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return b
}

func (g gen) value(t *domain.DataType) domain.Datum {
	if t.Nullable && g.r.IntN(8) == 0 {
		return domain.Datum{Null: true}
	}
	switch t.Root {
	case domain.TypeBoolean:
		return domain.Datum{I64: int64(g.r.IntN(2))}
	case domain.TypeTinyInt:
		return domain.Datum{I64: int64(int8(g.r.Uint64()))}
	case domain.TypeSmallInt:
		return domain.Datum{I64: int64(int16(g.r.Uint64()))}
	case domain.TypeInteger:
		return domain.Datum{I64: int64(int32(g.r.Uint64()))}
	case domain.TypeBigInt:
		return domain.Datum{I64: int64(g.r.Uint64())}
	case domain.TypeFloat:
		return domain.Datum{F64: g.float(32)}
	case domain.TypeDouble:
		return domain.Datum{F64: g.float(64)}
	case domain.TypeDecimal:
		s := g.digits(1 + g.r.IntN(t.Precision))
		if g.r.IntN(2) == 0 {
			s = "-" + s
		}
		v := bigInt(s)
		if t.Precision <= 18 {
			return domain.Datum{I64: v.Int64()}
		}
		return domain.Datum{Bytes: javaBytes(v)}
	case domain.TypeChar:
		return domain.Datum{Bytes: []byte(g.str(t.Length))}
	case domain.TypeString:
		return domain.Datum{Bytes: []byte(g.str(12))}
	case domain.TypeBinary:
		return domain.Datum{Bytes: g.bytes(t.Length)}
	case domain.TypeBytes:
		return domain.Datum{Bytes: g.bytes(g.r.IntN(20))}
	case domain.TypeDate:
		if g.r.IntN(2) == 0 {
			return domain.Datum{I64: int64(int32(g.r.Uint64()))}
		}
		return domain.Datum{I64: int64(g.r.IntN(80000) - 40000)}
	case domain.TypeTime:
		ms := g.r.Int64N(millisPerDay)
		if t.Precision < 3 {
			ms -= ms % pow10[3-t.Precision]
		}
		return domain.Datum{I64: ms}
	case domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		ms := int64(g.r.Uint64())
		if g.r.IntN(2) == 0 {
			ms = g.r.Int64N(4e12) - 2e12
		}
		var nanos int64
		if t.Precision < 3 {
			ms -= ms % pow10[3-t.Precision]
		} else {
			nanos = g.r.Int64N(1_000_000)
			nanos -= nanos % pow10[9-t.Precision]
		}
		return domain.Datum{I64: ms, Nanos: int32(nanos)}
	case domain.TypeArray:
		var e []domain.Datum
		for range g.r.IntN(4) {
			e = append(e, g.value(t.Element))
		}
		return domain.Datum{Elems: e}
	case domain.TypeMap:
		var e []domain.Datum
	next:
		for range g.r.IntN(4) {
			k := g.value(t.Key)
			for i := 0; i < len(e); i += 2 {
				if datumEqual(&e[i], &k) {
					continue next
				}
			}
			e = append(e, k, g.value(t.Value))
		}
		return domain.Datum{Elems: e}
	case domain.TypeRow:
		e := make([]domain.Datum, len(t.Fields))
		for i := range t.Fields {
			e[i] = g.value(&t.Fields[i].Type)
		}
		return domain.Datum{Elems: e}
	}
	panic(t.Root)
}

func (g gen) float(bitSize int) float64 {
	switch g.r.IntN(10) {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1 - 2*g.r.IntN(2))
	case 2:
		return math.Copysign(0, -1)
	case 3:
		return float64(g.r.IntN(2000) - 1000)
	}
	if bitSize == 32 {
		v := math.Float32frombits(uint32(g.r.Uint64()))
		if v != v || math.IsInf(float64(v), 0) {
			v = 1.5
		}
		return float64(v)
	}
	v := math.Float64frombits(g.r.Uint64())
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = -2.25
	}
	return v
}

// variant appends a JSON spelling of d that DecodeWrite must accept as d,
// chosen at random among the accepted forms (numeric strings, exponents,
// trailing zeros, epoch milliseconds, zone offsets, object-form maps,
// omitted null fields, escapes, member order).
func (g gen) variant(dst []byte, t *domain.DataType, d *domain.Datum) []byte {
	if d.Null {
		return append(dst, "null"...)
	}
	pick := g.r.IntN(3)
	switch t.Root {
	case domain.TypeTinyInt, domain.TypeSmallInt, domain.TypeInteger, domain.TypeBigInt:
		if pick == 0 {
			return strconv.AppendQuote(dst, strconv.FormatInt(d.I64, 10))
		}
		return strconv.AppendInt(dst, d.I64, 10)
	case domain.TypeDecimal:
		var v *big.Int
		if t.Precision <= 18 {
			v = big.NewInt(d.I64)
		} else {
			v = fromTwosComplementBig(d.Bytes)
		}
		switch pick {
		case 0: // unscaled with an exponent
			return fmt.Appendf(dst, "%se-%d", v.String(), t.Scale)
		case 1: // trailing zeros, as a string
			s := string(AppendValue(nil, t, d))
			s = strings.Trim(s, `"`)
			if t.Scale == 0 {
				s += ".000"
			} else {
				s += "00"
			}
			return strconv.AppendQuote(dst, s)
		}
		return append(dst, strings.Trim(string(AppendValue(nil, t, d)), `"`)...)
	case domain.TypeFloat, domain.TypeDouble:
		if pick == 0 && !math.IsNaN(d.F64) && !math.IsInf(d.F64, 0) {
			bits := 64
			if t.Root == domain.TypeFloat {
				bits = 32
			}
			return strconv.AppendFloat(dst, d.F64, 'e', -1, bits)
		}
	case domain.TypeChar, domain.TypeString:
		if pick == 0 {
			dst = append(dst, '"')
			for _, r := range string(d.Bytes) {
				if r > 0xffff {
					hi, lo := utf16Surrogates(r)
					dst = fmt.Appendf(dst, `\u%04x\u%04X`, hi, lo)
				} else {
					dst = fmt.Appendf(dst, `\u%04x`, r)
				}
			}
			return append(dst, '"')
		}
	case domain.TypeBinary, domain.TypeBytes:
		if pick == 0 { // escaped slashes are still base64
			s := base64.StdEncoding.EncodeToString(d.Bytes)
			return append(append(append(dst, '"'), strings.ReplaceAll(s, "/", `\/`)...), '"')
		}
	case domain.TypeTime:
		if pick == 0 {
			frac := d.I64 % 1000 * 1_000_000
			dst = append(dst, '"')
			dst = appendTimeOfDay(dst, d.I64, frac, 9)
			return append(dst, '"')
		}
	case domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		if pick == 0 && d.Nanos == 0 {
			return strconv.AppendInt(dst, d.I64, 10)
		}
		if pick == 1 {
			off := int64(0)
			if t.Root == domain.TypeTimestampLTZ {
				off = int64(g.r.IntN(18*60*2+1)-18*60) * 60_000
			}
			ms, ok := addChecked(d.I64, off)
			if !ok {
				break
			}
			days := floorDiv(ms, millisPerDay)
			tod := ms - days*millisPerDay
			dst = append(dst, '"')
			dst = appendDate(dst, days)
			dst = append(dst, 'T')
			dst = appendTimeOfDay(dst, tod, tod%1000*1_000_000+int64(d.Nanos), 9)
			if t.Root == domain.TypeTimestampLTZ {
				sign, o := byte('+'), off/60_000
				if o < 0 {
					sign, o = '-', -o
				}
				dst = append(dst, sign)
				dst = appendUint(dst, uint64(o/60), 2)
				dst = append(dst, ':')
				dst = appendUint(dst, uint64(o%60), 2)
			}
			return append(dst, '"')
		}
	case domain.TypeArray:
		dst = append(dst, '[')
		for i := range d.Elems {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = g.variant(dst, t.Element, &d.Elems[i])
		}
		return append(dst, ']')
	case domain.TypeMap:
		if pick == 0 && (t.Key.Root == domain.TypeString) {
			dst = append(dst, '{')
			for i := 0; i < len(d.Elems); i += 2 {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = AppendValue(dst, t.Key, &d.Elems[i])
				dst = append(dst, ':')
				dst = g.variant(dst, t.Value, &d.Elems[i+1])
			}
			return append(dst, '}')
		}
		dst = append(dst, '[')
		for i := 0; i < len(d.Elems); i += 2 {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"value":`...)
			dst = g.variant(dst, t.Value, &d.Elems[i+1])
			dst = append(dst, `,"key":`...)
			dst = g.variant(dst, t.Key, &d.Elems[i])
			dst = append(dst, '}')
		}
		return append(dst, ']')
	case domain.TypeRow:
		dst = append(dst, '{')
		first := true
		for _, i := range g.r.Perm(len(t.Fields)) {
			if d.Elems[i].Null && pick == 0 {
				continue // omitted nullable field
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = strconv.AppendQuote(dst, t.Fields[i].Name)
			dst = append(dst, ':')
			dst = g.variant(dst, &t.Fields[i].Type, &d.Elems[i])
		}
		return append(dst, '}')
	}
	return AppendValue(dst, t, d)
}

func utf16Surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// TestRoundTripProperty: for random schemas and rows, (1) an alternative
// spelling decodes to the generated row, (2) AppendRow's canonical output
// decodes to the same row, and (3) encoding again gives the same bytes.
func TestRoundTripProperty(t *testing.T) {
	t.Parallel()
	for seed := range uint64(300) {
		g := gen{rand.New(rand.NewPCG(seed, 7))}
		var cols []domain.Column
		for i := range 1 + g.r.IntN(6) {
			cols = append(cols, col("c"+strconv.Itoa(i), g.typ(1)))
		}
		c := mustCodec(t, TableSpec{Columns: cols})
		for range 10 {
			row := make([]domain.Datum, len(cols))
			for i := range cols {
				row[i] = g.value(&cols[i].Type)
			}
			variant := []byte(`{"entries":[{"id":"v","append":{`)
			for j, i := range g.r.Perm(len(cols)) {
				if j > 0 {
					variant = append(variant, ',')
				}
				variant = strconv.AppendQuote(variant, cols[i].Name)
				variant = append(variant, ':')
				variant = g.variant(variant, &cols[i].Type, &row[i])
			}
			variant = append(variant, "}}]}"...)
			canonical := AppendRow(nil, cols, row)

			got := decodeAppend(t, c, variant)
			requireRowsEqual(t, cols, row, got, "variant %s", variant)
			got = decodeAppend(t, c, []byte(`{"entries":[{"id":"c","append":`+string(canonical)+`}]}`))
			requireRowsEqual(t, cols, row, got, "canonical %s", canonical)
			require.Equal(t, string(canonical), string(AppendRow(nil, cols, got)))
		}
	}
}

func decodeAppend(t *testing.T, c *Codec, body []byte) []domain.Datum {
	t.Helper()
	b, _, err := c.DecodeWrite(body, Limits{})
	require.NoError(t, err, "%s", body)
	return b.Entries[0].Row
}

func requireRowsEqual(t *testing.T, cols []domain.Column, want, got []domain.Datum, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if !datumEqual(&want[i], &got[i]) {
			require.Failf(t, "column differs", "column %s (%s): want %+v got %+v; "+msg,
				append([]any{cols[i].Name, describeType(&cols[i].Type), want[i], got[i]}, args...)...)
		}
	}
}

func describeType(t *domain.DataType) string {
	c, err := compileType(t, "x", new([]string))
	if err != nil {
		return err.Error()
	}
	return c.name
}

func TestTwosComplementMatchesJava(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		s := gen{r}.digits(1 + r.IntN(38))
		if r.IntN(2) == 0 {
			s = "-" + s
		}
		v := bigInt(s)
		neg := v.Sign() < 0
		mag := new(big.Int).Abs(v)
		lo := mag.Uint64()
		hi := new(big.Int).Rsh(mag, 64).Uint64()
		got := appendTwosComplement(nil, neg, hi, lo)
		require.Equal(t, javaBytes(v), got, s)
		n2, h2, l2 := fromTwosComplement(got)
		require.Equal(t, neg && mag.Sign() != 0, n2, s)
		require.Equal(t, [2]uint64{hi, lo}, [2]uint64{h2, l2}, s)
		require.Equal(t, mag.String(), string(appendUint128(nil, h2, l2)), s)
	}
}

func TestCivilDaysMatchesTime(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		days := r.Int64N(2*maxEpochDays) - maxEpochDays
		y, m, d := civilFromDays(days)
		require.Equal(t, days, daysFromCivil(y, m, d))
		require.True(t, d >= 1 && d <= daysIn(y, m))
		if y > -1_000_000 && y < 1_000_000 {
			want := time.Date(int(y), time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400
			require.Equal(t, want, days)
		}
	}
	for range 5000 {
		days := r.Int64N(800_000_000) - 400_000_000
		y, m, d := civilFromDays(days)
		want := time.Unix(days*86400, 0).UTC()
		require.Equal(t, [3]int{want.Year(), int(want.Month()), want.Day()}, [3]int{int(y), m, d})
	}
	require.True(t, utf8.ValidString(string(appendDate(nil, -maxEpochDays))))
}

// decodeBase64 accepts exactly what encoding/base64's strict standard
// decoder accepts once line breaks (which it skips) are excluded, with the
// same result.
func TestBase64MatchesStdlib(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ .\n"
	for range 200_000 {
		var src []byte
		if r.IntN(2) == 0 {
			src = []byte(base64.StdEncoding.EncodeToString(gen{r}.bytes(r.IntN(12))))
			if len(src) > 0 && r.IntN(2) == 0 {
				src[r.IntN(len(src))] = alphabet[r.IntN(len(alphabet))]
			}
		} else {
			for range r.IntN(13) {
				src = append(src, alphabet[r.IntN(len(alphabet))])
			}
		}
		dst := make([]byte, len(src)/4*3)
		n, bad := decodeBase64(dst, src)
		want, err := base64.StdEncoding.Strict().DecodeString(string(src))
		if strings.ContainsAny(string(src), "\r\n") {
			err = fmt.Errorf("line break")
		}
		if (bad < 0) != (err == nil) {
			t.Fatalf("%q: bad=%d, stdlib err=%v", src, bad, err)
		}
		if err == nil {
			require.Equal(t, want, dst[:n], "%q", src)
		}
	}
}
