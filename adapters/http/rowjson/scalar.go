package rowjson

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// base64Alphabet is the standard base64 alphabet (RFC 4648 §4).
const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// strictBase64 is the standard padded base64 decoder that also refuses
// non-zero bits in the padding, so every byte string has one accepted
// spelling.
var strictBase64 = base64.StdEncoding.Strict()

// decodeBase64 decodes standard base64 strictly: padding required, no
// non-zero bits in the padding (strictBase64), and no line breaks, which
// encoding/base64 skips even when strict. dst needs len(src)/4*3 bytes. It
// returns the decoded length, or the offset of the first bad input byte
// (base64ErrorOffset).
//
// The line-break check costs no extra pass: a string the decoder accepts
// has no line break exactly when its length is a multiple of four and it
// decodes to len(src)/4*3 bytes less one per trailing '='. (Skipped breaks
// would have to number a multiple of four, costing the output at least
// one group of three bytes, more than the at most two '=' account for.)
func decodeBase64(dst, src []byte) (n, bad int) {
	if len(src)%4 == 0 {
		n, err := strictBase64.Decode(dst, src)
		if err == nil && n == len(src)/4*3-base64Padding(src) {
			return n, -1
		}
	}
	return 0, base64ErrorOffset(src)
}

// base64Padding counts the '=' (at most two) src ends with.
func base64Padding(src []byte) int {
	p := 0
	for i := len(src) - 1; i >= 0 && i >= len(src)-2 && src[i] == '='; i-- {
		p++
	}
	return p
}

// base64ErrorOffset names the character a refused base64 string fails at,
// reading it in groups of four from the left: in a string whose length is
// not a multiple of four, the first character outside the alphabet and
// '=', else the start of the incomplete last group; otherwise the first
// character outside the alphabet in a group before the last; in the last
// group, the first of its two leading characters outside the alphabet, the
// second character when "xx==" leaves non-zero bits, the third when "xxx="
// does or its third character is bad, else the bad one of the last two.
func base64ErrorOffset(src []byte) int {
	if len(src)%4 != 0 {
		for i, c := range src {
			if c != '=' && strings.IndexByte(base64Alphabet, c) < 0 {
				return i
			}
		}
		return len(src) / 4 * 4
	}
	last := len(src) - 4
	for i := 0; i < last; i += 4 {
		if j := outsideBase64(src[i : i+4]); j >= 0 {
			return i + j
		}
	}
	q := src[last:]
	switch j := outsideBase64(q[:2]); {
	case j >= 0:
		return last + j
	case q[2] == '=' && q[3] == '=':
		return last + 1
	case q[3] == '=':
		return last + 2
	}
	return last + 2 + max(outsideBase64(q[2:]), 0)
}

// outsideBase64 returns the index of q's first byte outside the alphabet,
// or -1.
func outsideBase64(q []byte) int {
	for i, c := range q {
		if strings.IndexByte(base64Alphabet, c) < 0 {
			return i
		}
	}
	return -1
}

// scalar decodes the non-null raw JSON value raw into d according to t.
func (st *state) scalar(d *domain.Datum, t *typ, raw []byte) error {
	switch t.kind {
	case kBool:
		switch raw[0] {
		case 't':
			d.I64 = 1
			return nil
		case 'f':
			d.I64 = 0
			return nil
		}
		return st.mismatch(t, raw, "true or false")

	case kTinyInt, kSmallInt, kInt, kBigInt:
		lex, err := st.numberLexeme(t, raw, "a JSON number or a numeric string")
		if err != nil {
			return err
		}
		v, code := parseIntLex(lex, t.intMin, t.intMax)
		if code != intOK {
			return st.intErr(t, raw, code)
		}
		d.I64 = v
		return nil

	case kDecimal:
		lex, err := st.numberLexeme(t, raw, "a JSON number or a numeric string")
		if err != nil {
			return err
		}
		return st.decimal(d, t, raw, lex)

	case kFloat, kDouble:
		return st.float(d, t, raw)

	case kChar, kString:
		if raw[0] != '"' {
			return st.mismatch(t, raw, "a JSON string")
		}
		s := raw[1 : len(raw)-1]
		var b []byte
		if bytes.IndexByte(s, '\\') < 0 {
			b = st.arena.copy(s)
		} else {
			// Unescaping never lengthens a string; AppendUnquote wants
			// len(raw) of capacity up front.
			r, err := jsontext.AppendUnquote(st.arena.reserve(len(raw)), raw)
			if err != nil {
				return st.syntaxErr(err)
			}
			b = st.arena.commit(r)
		}
		if t.kind == kChar && len(b) > t.length {
			if err := st.charLength(t, b); err != nil {
				return err
			}
		}
		d.Bytes = b
		return nil

	case kBinary, kBytes:
		if raw[0] != '"' {
			return st.mismatch(t, raw, "a base64 JSON string")
		}
		s, err := st.unquote(raw)
		if err != nil {
			return st.syntaxErr(err)
		}
		r := st.arena.reserve(len(s) / 4 * 3)
		n, bad := decodeBase64(r[:cap(r)], s)
		if bad >= 0 {
			return st.fail("invalid base64 for %s (standard alphabet, padded, RFC 4648 §4) at character %d", t.name, bad)
		}
		if t.kind == kBinary && n != t.length {
			return st.fail("%s value has %d bytes, want exactly %d", t.name, n, t.length)
		}
		d.Bytes = st.arena.commit(r[:n])
		return nil

	case kDate:
		s, err := st.stringContent(t, raw, `a "YYYY-MM-DD" string`)
		if err != nil {
			return err
		}
		days, n, msg := parseDate(s)
		if msg == "" && n != len(s) {
			msg = "unexpected text after the date"
		}
		if msg == "" && (days < math.MinInt32 || days > math.MaxInt32) {
			msg = "out of range"
		}
		if msg != "" {
			return st.fail("invalid DATE %s: %s (want YYYY-MM-DD)", showRaw(raw), msg)
		}
		d.I64 = days
		return nil

	case kTime:
		s, err := st.stringContent(t, raw, `an "HH:MM:SS[.fff]" string`)
		if err != nil {
			return err
		}
		tm, n, msg := parseTime(s)
		if msg == "" && n != len(s) {
			msg = "unexpected text after the time"
		}
		if msg == "" {
			msg = fractionFits(tm, t.precision)
		}
		if msg == "" && tm.subMilli != 0 {
			msg = "Fluss stores TIME in milliseconds, so digits after the third fraction digit must be 0"
		}
		if msg != "" {
			return st.fail("invalid %s %s: %s", t.name, showRaw(raw), msg)
		}
		d.I64 = tm.millis
		return nil

	case kTsNTZ, kTsLTZ:
		return st.timestamp(d, t, raw)
	}
	return st.fail("unsupported type %s", t.name)
}

// mismatch reports a JSON value of the wrong kind.
func (st *state) mismatch(t *typ, raw []byte, want string) error {
	return st.fail("expected %s for %s, got %s", want, t.name, kindName(jsontext.Value(raw).Kind()))
}

// stringContent returns the unquoted content of a JSON string value.
func (st *state) stringContent(t *typ, raw []byte, want string) ([]byte, error) {
	if raw[0] != '"' {
		return nil, st.mismatch(t, raw, want)
	}
	s, err := st.unquote(raw)
	if err != nil {
		return nil, st.syntaxErr(err)
	}
	return s, nil
}

// numberLexeme returns the number text of a JSON number or numeric string.
func (st *state) numberLexeme(t *typ, raw []byte, want string) ([]byte, error) {
	switch raw[0] {
	case '"':
		s, err := st.unquote(raw)
		if err != nil {
			return nil, st.syntaxErr(err)
		}
		return s, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return raw, nil
	}
	return nil, st.mismatch(t, raw, want)
}

// Results of parseIntLex.
const (
	intOK = iota
	intSyntax
	intFraction
	intRange
)

// parseIntLex parses an integer lexeme and range-checks it, exactly as the
// official gateway's decoder (apache/fluss fluss-gateway
// src/protocol/rest/codec/decoder.rs, integer_lexeme) does: an optional sign
// ('+' only inside strings, since the JSON grammar has none), one or more
// digits (leading zeros allowed), an optional fraction of one or more digits
// and an optional exponent [eE][+-]?digits that fits in int64. The value
// must be a whole number: 1.0, 1e2 and 1.5e1 are 1, 100 and 15; 1.5, 1e-1
// are intFraction. It never goes through float64 and never wraps.
func parseIntLex(b []byte, lo, hi int64) (int64, int) {
	// Fast path: a plain -?[1-9][0-9]* (or 0) of at most 18 characters
	// cannot overflow int64.
	if n := len(b); n > 0 && n <= 18 {
		i := 0
		if b[0] == '-' {
			i = 1
		}
		if i < n && (b[i] != '0' || n-i == 1) {
			var v int64
			for ; i < n; i++ {
				c := b[i] - '0'
				if c > 9 {
					return parseIntSlow(b, lo, hi)
				}
				v = v*10 + int64(c)
			}
			if b[0] == '-' {
				v = -v
			}
			if v < lo || v > hi {
				return 0, intRange
			}
			return v, intOK
		}
	}
	return parseIntSlow(b, lo, hi)
}

// parseIntSlow is parseIntLex without the fast path.
func parseIntSlow(b []byte, lo, hi int64) (int64, int) {
	n, ok := scanLexeme(b, false)
	if !ok {
		return 0, intSyntax
	}
	// value = digits × 10^(exp − len(frac)), digits = intg‖frac.
	all := len(n.intg) + len(n.frac)
	digit := func(i int) byte {
		if i < len(n.intg) {
			return n.intg[i] - '0'
		}
		return n.frac[i-len(n.intg)] - '0'
	}
	first := 0
	for first < all && digit(first) == 0 {
		first++
	}
	if first == all {
		return 0, intOK
	}
	// Decimal places below the units digit that the digits still carry.
	places := int64(len(n.frac)) - n.exp
	last := all // one past the last units digit
	if places > 0 {
		if places >= int64(all-first) {
			return 0, intFraction
		}
		last = all - int(places)
		for i := last; i < all; i++ {
			if digit(i) != 0 {
				return 0, intFraction
			}
		}
	}
	zeros := int64(0)
	if places < 0 {
		zeros = -places
	}
	if int64(last-first)+zeros > 19 {
		return 0, intRange
	}
	var u uint64
	for i := first; i < last; i++ {
		u = u*10 + uint64(digit(i))
	}
	for ; zeros > 0; zeros-- {
		h, l := bits.Mul64(u, 10)
		if h != 0 {
			return 0, intRange
		}
		u = l
	}
	if n.neg {
		if u > uint64(-(lo+1))+1 {
			return 0, intRange
		}
		return -int64(u), intOK
	}
	if u > uint64(hi) {
		return 0, intRange
	}
	return int64(u), intOK
}

func (st *state) intErr(t *typ, raw []byte, code int) error {
	switch code {
	case intFraction:
		return st.fail("%s value %s is not a whole number", t.name, showRaw(raw))
	case intRange:
		return st.fail("%s value %s out of range [%d, %d]", t.name, showRaw(raw), t.intMin, t.intMax)
	}
	return st.fail("%s value %s is not an integer", t.name, showRaw(raw))
}

// numLex is a number lexeme split into its parts.
type numLex struct {
	neg  bool
	intg []byte // integer digits
	frac []byte // fraction digits
	exp  int64  // exponent, saturated to ±expLimit
}

// expLimit saturates exponents that fit in int64: any non-zero value with a
// larger exponent is out of range for every type anyway (a body cannot carry
// 2^40 digits).
const expLimit = 1 << 40

// scanLexeme splits a number lexeme of the official decoder's grammar
// (decoder.rs integer_lexeme and decimal_to_unscaled):
//
//	[+-]? digits* ('.' digits*)? ([eE] [+-]? digits+)?
//
// where the exponent must fit in int64. Integers (dec false) need at least
// one integer digit and, when there is a '.', at least one fraction digit;
// decimals (dec true) need at least one digit on either side of the '.'
// ("5." and ".5" are fine). Leading zeros are allowed.
func scanLexeme(b []byte, dec bool) (n numLex, ok bool) {
	i := 0
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		n.neg = b[i] == '-'
		i++
	}
	s := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	n.intg = b[s:i]
	dot := false
	if i < len(b) && b[i] == '.' {
		dot = true
		i++
		s := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		n.frac = b[s:i]
	}
	if dec {
		if len(n.intg) == 0 && len(n.frac) == 0 {
			return n, false
		}
	} else if len(n.intg) == 0 || (dot && len(n.frac) == 0) {
		return n, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		neg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			neg = b[i] == '-'
			i++
		}
		s := i
		var e uint64
		big := false
		for i < len(b) && isDigit(b[i]) {
			if e > (math.MaxUint64-9)/10 {
				big = true
			} else {
				e = e*10 + uint64(b[i]-'0')
			}
			i++
		}
		// int64 holds −2^63 but not +2^63.
		if i == s || big || e > math.MaxInt64+1 || (!neg && e > math.MaxInt64) {
			return n, false
		}
		n.exp = int64(min(e, expLimit))
		if neg {
			n.exp = -n.exp
		}
	}
	return n, i == len(b)
}

func isDigit(c byte) bool { return c-'0' <= 9 }

// decimal decodes a DECIMAL(p,s) lexeme exactly. The value may be written
// with a fraction and an exponent (1.5e2); it is accepted when it equals an
// unscaled integer of at most p digits times 10^-s: extra trailing zeros are
// fine, any rounding is refused.
func (st *state) decimal(d *domain.Datum, t *typ, raw, lex []byte) error {
	if t.precision <= 18 {
		if v, ok := decimalPlain(lex, t.scale, t.precision); ok {
			d.I64 = v
			return nil
		}
	}
	return st.decimalExact(d, t, raw, lex)
}

// decimalExact is decimal without the fast path.
func (st *state) decimalExact(d *domain.Datum, t *typ, raw, lex []byte) error {
	n, ok := scanLexeme(lex, true)
	if !ok {
		return st.fail("%s value %s is not a number", t.name, showRaw(raw))
	}
	// The digits are intg‖frac; value = digits × 10^(exp − len(frac)).
	all := len(n.intg) + len(n.frac)
	digit := func(i int) byte {
		if i < len(n.intg) {
			return n.intg[i] - '0'
		}
		return n.frac[i-len(n.intg)] - '0'
	}
	first, last := 0, all-1
	for first < all && digit(first) == 0 {
		first++
	}
	if first == all { // zero
		if t.precision > 18 {
			d.Bytes = st.arena.copy([]byte{0})
		}
		return nil
	}
	for digit(last) == 0 {
		last--
	}
	sig := last - first + 1
	// After dropping trailing zeros: value = sig digits × 10^e10.
	e10 := n.exp - int64(len(n.frac)) + int64(all-1-last)
	k := e10 + int64(t.scale) // zeros to append to reach the unscaled value
	if k < 0 {
		return st.fail("%s value %s has more than %d fraction digits", t.name, showRaw(raw), t.scale)
	}
	if int64(sig)+k > int64(t.precision) {
		return st.fail("%s value %s exceeds precision %d (at most %d integer digits)",
			t.name, showRaw(raw), t.precision, t.precision-t.scale)
	}
	if t.precision <= 18 {
		var u uint64
		for i := first; i <= last; i++ {
			u = u*10 + uint64(digit(i))
		}
		for ; k > 0; k-- {
			u *= 10
		}
		v := int64(u)
		if n.neg {
			v = -v
		}
		d.I64 = v
		return nil
	}
	// Up to 38 digits: 10^38 < 2^127, so a 128-bit accumulator is exact.
	var hi, lo uint64
	for i := first; i <= last; i++ {
		hi, lo = mulAdd128(hi, lo, 10, uint64(digit(i)))
	}
	for ; k > 0; k-- {
		hi, lo = mulAdd128(hi, lo, 10, 0)
	}
	var buf [17]byte
	b := appendTwosComplement(buf[:0], n.neg, hi, lo)
	d.Bytes = st.arena.copy(b)
	return nil
}

// decimalPlain is the fast path of decimal for p <= 18: a lexeme
// -?(0|[1-9][0-9]*)(\.[0-9]+)? (no exponent) whose unscaled value needs no
// more than 18 digits before the precision check. It reports false when it
// cannot decide; then the general code decides (and it accepts exactly what
// decimalPlain accepts, with the same value).
func decimalPlain(lex []byte, scale, precision int) (int64, bool) {
	i, neg := 0, false
	if len(lex) > 0 && lex[0] == '-' {
		i, neg = 1, true
	}
	start := i
	switch {
	case i < len(lex) && lex[i] == '0':
		i++
	case i < len(lex) && lex[i]-'1' < 9:
		for i < len(lex) && isDigit(lex[i]) {
			i++
		}
	default:
		return 0, false
	}
	if i-start+scale > 18 {
		return 0, false
	}
	var u uint64
	for _, c := range lex[start:i] {
		u = u*10 + uint64(c-'0')
	}
	k := scale // digits still to append
	if i < len(lex) {
		if lex[i] != '.' {
			return 0, false
		}
		i++
		frac := lex[i:]
		if len(frac) == 0 {
			return 0, false
		}
		for j, c := range frac {
			if !isDigit(c) {
				return 0, false
			}
			if j < scale {
				u = u*10 + uint64(c-'0')
				k--
			} else if c != '0' {
				return 0, false // a non-zero digit beyond the scale
			}
		}
	}
	u *= pow10u[k]
	if u >= pow10u[precision] {
		return 0, false
	}
	v := int64(u)
	if neg {
		v = -v
	}
	return v, true
}

// pow10u holds 10^0 … 10^18.
var pow10u = func() (t [19]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// mulAdd128 returns (hi,lo)×m + a.
func mulAdd128(hi, lo, m, a uint64) (uint64, uint64) {
	h, l := bits.Mul64(lo, m)
	l, c := bits.Add64(l, a, 0)
	return hi*m + h + c, l
}

// appendTwosComplement appends ±(hi,lo) as the shortest big-endian two's
// complement (java.math.BigInteger#toByteArray). The magnitude must be < 2^127.
func appendTwosComplement(dst []byte, neg bool, hi, lo uint64) []byte {
	if neg && (hi|lo) != 0 {
		var c uint64
		lo, c = bits.Add64(^lo, 1, 0)
		hi = ^hi + c
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	i := 0
	for i < 15 && ((b[i] == 0 && b[i+1]&0x80 == 0) || (b[i] == 0xff && b[i+1]&0x80 != 0)) {
		i++
	}
	return append(dst, b[i:]...)
}

// float decodes FLOAT and DOUBLE as the official decoder does (decoder.rs
// decode_float, decode_float32): a JSON number or a numeric string in Rust's
// f64 grammar (floatLexeme), parsed to the nearest float64 (FLOAT then
// narrowed to float32, as Rust's `as f32`), or exactly one of the strings
// "NaN", "Infinity", "-Infinity". A finite spelling that overflows (1e400;
// 3.5e38 for FLOAT) is refused, never turned into ±Inf; underflow becomes 0.
func (st *state) float(d *domain.Datum, t *typ, raw []byte) error {
	lex := raw
	switch raw[0] {
	case '"':
		s, err := st.unquote(raw)
		if err != nil {
			return st.syntaxErr(err)
		}
		switch string(s) {
		case "NaN":
			d.F64 = math.NaN()
			return nil
		case "Infinity":
			d.F64 = math.Inf(1)
			return nil
		case "-Infinity":
			d.F64 = math.Inf(-1)
			return nil
		}
		lex = s
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
	default:
		return st.mismatch(t, raw, `a JSON number, a numeric string or "NaN", "Infinity", "-Infinity"`)
	}
	if !floatLexeme(lex) {
		return st.fail(`expected a number, a numeric string or "NaN", "Infinity", "-Infinity" for %s, got %s`, t.name, showRaw(raw))
	}
	v, err := strconv.ParseFloat(string(lex), 64)
	if err != nil || math.IsInf(v, 0) {
		return st.fail("%s value %s out of range", t.name, showRaw(raw))
	}
	if t.kind == kFloat {
		f := float32(v)
		if math.IsInf(float64(f), 0) {
			return st.fail("%s value %s out of the 32-bit float range", t.name, showRaw(raw))
		}
		v = float64(f)
	}
	d.F64 = v
	return nil
}

// floatLexeme reports whether b is a finite number in the grammar Rust's
// f64::from_str takes, which the official decoder uses for FLOAT and DOUBLE:
// [+-]? (digits | digits '.' digits* | '.' digits) ([eE] [+-]? digits)?.
// Its non-finite spellings (inf, nan, ...) are refused by the decoder, so
// they are not part of it; nor are hex, underscores or spaces (which Go's
// ParseFloat would take).
func floatLexeme(b []byte) bool {
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	s := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	nd := i - s
	if i < len(b) && b[i] == '.' {
		i++
		s := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		nd += i - s
	}
	if nd == 0 {
		return false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		s := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		if i == s {
			return false
		}
	}
	return i == len(b)
}

// timestamp decodes TIMESTAMP(p) and TIMESTAMP_LTZ(p).
func (st *state) timestamp(d *domain.Datum, t *typ, raw []byte) error {
	if raw[0] != '"' {
		if raw[0] != '-' && !isDigit(raw[0]) {
			return st.mismatch(t, raw, "an ISO-8601 string or epoch milliseconds")
		}
		ms, code := parseIntLex(raw, math.MinInt64, math.MaxInt64)
		switch code {
		case intOK:
		case intFraction:
			return st.fail("%s epoch milliseconds %s must be an integer", t.name, showRaw(raw))
		default:
			return st.fail("%s epoch milliseconds %s out of range", t.name, showRaw(raw))
		}
		if t.precision < 3 && ms%pow10[3-t.precision] != 0 {
			return st.fail("%s epoch milliseconds %s has sub-second digits beyond precision %d", t.name, showRaw(raw), t.precision)
		}
		d.I64 = ms
		return nil
	}
	s, err := st.unquote(raw)
	if err != nil {
		return st.syntaxErr(err)
	}
	ms, nanos, msg := parseTimestamp(s, t.kind == kTsLTZ, t.precision)
	if msg != "" {
		if isDigits(s) {
			example := "2026-12-01T08:00:00"
			if t.kind == kTsLTZ {
				example += "Z"
			}
			return st.fail("invalid %s %s: a timestamp is ISO-8601 text (e.g. %s) or epoch milliseconds as a JSON number, not a string of digits",
				t.name, showRaw(raw), example)
		}
		return st.fail("invalid %s %s: %s", t.name, showRaw(raw), msg)
	}
	d.I64, d.Nanos = ms, nanos
	return nil
}

var pow10 = [...]int64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000}

// isDigits reports whether s is an optionally signed run of ASCII digits.
func isDigits(s []byte) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 {
		return false
	}
	for _, b := range s {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}
