package record

import (
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Partition names (utils/PartitionUtils.java convertValueOfType,
// utils/PartitionNameConverters.java, metadata/ResolvedPartitionSpec.java).

// PartitionSeparator joins partition values into a partition name
// (ResolvedPartitionSpec.PARTITION_SPEC_SEPARATOR).
const PartitionSeparator = '$'

// PartitionName returns the partition name of a row: the string form of each
// partition column's value (see AppendPartitionValue) joined with '$', in
// partition-key order. types and values are the partition columns only.
func PartitionName(types []domain.DataType, values []domain.Datum) (string, error) {
	var buf [64]byte
	b, err := AppendPartitionName(buf[:0], types, values)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// AppendPartitionName is PartitionName appending to dst; it allocates nothing
// when dst has room.
func AppendPartitionName(dst []byte, types []domain.DataType, values []domain.Datum) ([]byte, error) {
	if len(types) != len(values) {
		return dst, invalidValue("%d partition values for %d partition columns", len(values), len(types))
	}
	for i := range types {
		if i > 0 {
			dst = append(dst, PartitionSeparator)
		}
		var err error
		if dst, err = AppendPartitionValue(dst, &types[i], &values[i]); err != nil {
			return dst, prefixError(err, "partition column %d", i)
		}
	}
	return dst, nil
}

// AppendPartitionValue appends the string form Fluss gives a partition value
// of type t (PartitionUtils.convertValueOfType):
//
//	CHAR, STRING          the string itself
//	BOOLEAN               true / false
//	BINARY, BYTES         lowercase hex, two digits per byte
//	TINYINT..BIGINT       decimal, e.g. -32760
//	DATE                  yyyy-MM-dd (proleptic Gregorian, UTC)
//	TIME                  HH-mm-ss_SSS
//	FLOAT, DOUBLE         Java Float/Double.toString with '.' replaced by '_'
//	                      (5_73, 1_0E10); NaN, Inf, -Inf
//	TIMESTAMP[_LTZ]       UTC yyyy-MM-dd-HH-mm-ss_ followed by the fraction of
//	                      second without trailing zeros (nothing when zero)
//
// A null value fails with ErrInvalidValue; other types with ErrUnsupported.
func AppendPartitionValue(dst []byte, t *domain.DataType, v *domain.Datum) ([]byte, error) {
	if v.Null {
		return dst, invalidValue("partition value must not be null")
	}
	switch t.Root {
	case domain.TypeChar, domain.TypeString:
		return append(dst, v.Bytes...), nil
	case domain.TypeBoolean:
		switch v.I64 {
		case 0:
			return append(dst, "false"...), nil
		case 1:
			return append(dst, "true"...), nil
		}
		return dst, invalidValue("BOOLEAN value %d, want 0 or 1", v.I64)
	case domain.TypeBinary, domain.TypeBytes:
		const hexDigits = "0123456789abcdef"
		for _, c := range v.Bytes {
			dst = append(dst, hexDigits[c>>4], hexDigits[c&0x0F])
		}
		return dst, nil
	case domain.TypeTinyInt, domain.TypeSmallInt, domain.TypeInteger, domain.TypeBigInt:
		c := column{root: t.Root}
		switch t.Root {
		case domain.TypeTinyInt:
			c.kind = kindTinyInt
		case domain.TypeSmallInt:
			c.kind = kindSmallInt
		case domain.TypeInteger:
			c.kind = kindInt
		default:
			c.kind = kindBigInt
		}
		n, err := intValue(&c, v)
		if err != nil {
			return dst, err
		}
		return strconv.AppendInt(dst, n, 10), nil
	case domain.TypeDate:
		if v.I64 < math.MinInt32 || v.I64 > math.MaxInt32 {
			return dst, invalidValue("value %d out of range for DATE", v.I64)
		}
		day := time.Unix(v.I64*86400, 0).UTC()
		dst = appendPadded(dst, int64(day.Year()), 4)
		dst = append(dst, '-')
		dst = appendPadded(dst, int64(day.Month()), 2)
		dst = append(dst, '-')
		return appendPadded(dst, int64(day.Day()), 2), nil
	case domain.TypeTime:
		if v.I64 < math.MinInt32 || v.I64 > math.MaxInt32 {
			return dst, invalidValue("value %d out of range for TIME", v.I64)
		}
		return appendTimeOfDay(dst, v.I64), nil
	case domain.TypeFloat:
		return appendJavaFloat(dst, v.F64, 32), nil
	case domain.TypeDouble:
		return appendJavaFloat(dst, v.F64, 64), nil
	case domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		if err := checkNanos(v); err != nil {
			return dst, err
		}
		return appendPartitionTimestamp(dst, v.I64, v.Nanos), nil
	default:
		return dst, unsupported("partition column of type %s", t.Root)
	}
}

// appendPadded appends v in decimal, zero-padded to width characters
// including the sign, as Java's String.format("%0<width>d") does.
func appendPadded(dst []byte, v int64, width int) []byte {
	var buf [24]byte
	digits := strconv.AppendInt(buf[:0], v, 10)
	if v < 0 {
		dst = append(dst, '-')
		digits = digits[1:]
		width--
	}
	for i := len(digits); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, digits...)
}

// floorDivMod returns Math.floorDiv(a, b) and Math.floorMod(a, b).
func floorDivMod(a, b int64) (int64, int64) {
	q, r := a/b, a%b
	if r != 0 && (r < 0) != (b < 0) {
		q--
		r += b
	}
	return q, r
}

// appendTimeOfDay formats millis of day as HH-mm-ss_SSS with Java's floor
// arithmetic (PartitionNameConverters.milliToString).
func appendTimeOfDay(dst []byte, milli int64) []byte {
	hour, rem := floorDivMod(milli, 3_600_000)
	minute, rem := floorDivMod(rem, 60_000)
	second, _ := floorDivMod(rem, 1000)
	_, ms := floorDivMod(milli, 1000)
	dst = appendPadded(dst, hour, 2)
	dst = append(dst, '-')
	dst = appendPadded(dst, minute, 2)
	dst = append(dst, '-')
	dst = appendPadded(dst, second, 2)
	dst = append(dst, '_')
	return appendPadded(dst, ms, 3)
}

// appendPartitionTimestamp formats epoch millis plus nano-of-millisecond as
// Fluss's TimestampFormatter "yyyy-MM-dd-HH-mm-ss_" + fraction (0..9 digits,
// trailing zeros dropped). yyyy is the year of era: years before 1 AD are
// printed as 1-year, and years above 9999 get a leading '+' (SignStyle.EXCEEDS_PAD).
func appendPartitionTimestamp(dst []byte, millis int64, nanos int32) []byte {
	t := time.UnixMilli(millis).Add(time.Duration(nanos)).UTC()
	year := int64(t.Year())
	if year <= 0 {
		year = 1 - year
	}
	if year > 9999 {
		dst = append(dst, '+')
	}
	dst = appendPadded(dst, year, 4)
	for _, part := range [...]struct {
		sep byte
		v   int
	}{{'-', int(t.Month())}, {'-', t.Day()}, {'-', t.Hour()}, {'-', t.Minute()}, {'-', t.Second()}} {
		dst = append(dst, part.sep)
		dst = appendPadded(dst, int64(part.v), 2)
	}
	dst = append(dst, '_')
	if ns := t.Nanosecond(); ns != 0 {
		var buf [9]byte
		for i := 8; i >= 0; i-- {
			buf[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 9
		for buf[n-1] == '0' {
			n--
		}
		dst = append(dst, buf[:n]...)
	}
	return dst
}

// appendJavaFloat appends Java's Float.toString (bitSize 32) or
// Double.toString (bitSize 64) of v with '.' replaced by '_', and NaN, Inf,
// -Inf for the special values (PartitionNameConverters.reformatFloat/Double).
//
// The digits are the shortest that round-trip, as in JDK 19 and later; when
// that is a single digit, the closest of the one- and two-digit candidates
// wins (so Float.MIN_VALUE is 1_4E-45). Decimal notation is used for
// 1e-3 <= |v| < 1e7, computerized scientific notation ("1_0E10") otherwise.
// JDK 8 to 18 print more digits than needed for a few values; names created
// by such a JVM can differ in the last digits.
func appendJavaFloat(dst []byte, v float64, bitSize int) []byte {
	if bitSize == 32 {
		v = float64(float32(v))
	}
	switch {
	case math.IsNaN(v):
		return append(dst, "NaN"...)
	case math.IsInf(v, 1):
		return append(dst, "Inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-Inf"...)
	case v == 0:
		if math.Signbit(v) {
			return append(dst, "-0_0"...)
		}
		return append(dst, "0_0"...)
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], v, 'e', -1, bitSize)
	if s[1] == 'e' || (s[0] == '-' && s[2] == 'e') {
		// One significant digit: Java also considers two-digit decimals and
		// keeps the one closest to v.
		var buf2 [32]byte
		s2 := strconv.AppendFloat(buf2[:0], v, 'e', 1, bitSize)
		if twoDigitsCloser(s, s2, v, bitSize) {
			s = append(buf[:0], s2...)
		}
	}
	// s is [-]d[.ddd]e±xx: split sign, digits and exponent.
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	e := 0
	for i, c := range s {
		if c == 'e' {
			exp, _ := strconv.Atoi(string(s[i+1:]))
			e = exp
			s = s[:i]
			break
		}
	}
	var digitBuf [24]byte
	digits := digitBuf[:0]
	for _, c := range s {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if neg {
		dst = append(dst, '-')
	}
	if e >= -3 && e < 7 {
		if e < 0 {
			dst = append(dst, '0', '_')
			for i := -1; i > e; i-- {
				dst = append(dst, '0')
			}
			return append(dst, digits...)
		}
		for i := 0; i <= e; i++ {
			if i < len(digits) {
				dst = append(dst, digits[i])
			} else {
				dst = append(dst, '0')
			}
		}
		dst = append(dst, '_')
		if e+1 < len(digits) {
			return append(dst, digits[e+1:]...)
		}
		return append(dst, '0')
	}
	dst = append(dst, digits[0], '_')
	if len(digits) > 1 {
		dst = append(dst, digits[1:]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(e), 10)
}

// twoDigitsCloser reports whether the two-digit rendering s2 of v rounds back
// to v and is strictly closer to v than the one-digit rendering s1 (the tie
// case of JDK's Double.toString, which then picks the closer of the two).
func twoDigitsCloser(s1, s2 []byte, v float64, bitSize int) bool {
	mantissa := s2
	if mantissa[0] == '-' {
		mantissa = mantissa[1:]
	}
	if mantissa[2] == '0' { // d.0: the same decimal as s1
		return false
	}
	if back, err := strconv.ParseFloat(string(s2), bitSize); err != nil || back != v {
		return false
	}
	var x, d1, d2 big.Rat
	x.SetFloat64(v)
	if _, ok := d1.SetString(string(s1)); !ok {
		return false
	}
	if _, ok := d2.SetString(string(s2)); !ok {
		return false
	}
	d1.Sub(&d1, &x).Abs(&d1)
	d2.Sub(&d2, &x).Abs(&d2)
	return d2.Cmp(&d1) < 0
}
