package rowjson

import "math"

// Dates use the proleptic Gregorian calendar (java.time.LocalDate), days
// counted from 1970-01-01. Years 0000–9999 are written with four digits;
// others in ISO-8601 expanded form with a sign (+10000, -0001), as
// LocalDate#toString writes them.

const (
	millisPerDay = 86_400_000
	// maxEpochDays keeps days × millisPerDay inside int64.
	maxEpochDays = math.MaxInt64 / millisPerDay
)

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// daysFromCivil converts a Gregorian date to days since 1970-01-01
// (H. Hinnant's algorithm).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y int64, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// digitsAt parses exactly n decimal digits at b[i:].
func digitsAt(b []byte, i, n int) (int, bool) {
	if i+n > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[i : i+n] {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// parseDate parses [+-]YYYY-MM-DD at the start of b, as the official
// decoder's temporal.rs parse_date does: an optional sign, a year of at
// least 4 digits (leading zeros allowed, so 10000-01-01 and +0001-01-01 are
// fine), a 2-digit month and a 2-digit day of the proleptic Gregorian
// calendar. It returns days since the epoch and the bytes consumed, or a
// message. Years too large for any Fluss type are "out of range".
func parseDate(b []byte) (days int64, n int, msg string) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg, i = b[0] == '-', 1
	}
	start := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if i-start < 4 {
		return 0, 0, "the year must have at least 4 digits"
	}
	sig := start
	for sig < i-1 && b[sig] == '0' {
		sig++
	}
	if i-sig > 12 {
		return 0, 0, "out of range"
	}
	var y int64
	for _, c := range b[sig:i] {
		y = y*10 + int64(c-'0')
	}
	if neg {
		y = -y
	}
	if i >= len(b) || b[i] != '-' {
		return 0, 0, "expected '-' after the year"
	}
	m, ok := digitsAt(b, i+1, 2)
	if !ok || i+3 >= len(b) || b[i+3] != '-' {
		return 0, 0, "expected a 2-digit month and '-'"
	}
	d, ok := digitsAt(b, i+4, 2)
	if !ok || (i+6 < len(b) && isDigit(b[i+6])) {
		return 0, 0, "expected a 2-digit day"
	}
	if m < 1 || m > 12 {
		return 0, 0, "month out of range"
	}
	if d < 1 || d > daysIn(y, m) {
		return 0, 0, "day out of range for the month"
	}
	return daysFromCivil(y, m, d), i + 6, ""
}

// timeOfDay is a parsed HH:MM:SS[.fffffffff].
type timeOfDay struct {
	millis    int64 // milliseconds of the day
	subMilli  int32 // nanoseconds within the millisecond
	fracNanos int64 // the whole fraction in nanoseconds
}

// parseTime parses HH:MM[:SS][.f…] at the start of b, as temporal.rs
// parse_time does: seconds may be left out (12:34 and even 12:34.5 are
// fine), the fraction has 1 to 9 digits. Leap seconds and 24:00 are not
// accepted.
func parseTime(b []byte) (tm timeOfDay, n int, msg string) {
	h, ok1 := digitsAt(b, 0, 2)
	mi, ok2 := digitsAt(b, 3, 2)
	if !ok1 || !ok2 || b[2] != ':' {
		return tm, 0, "expected HH:MM[:SS]"
	}
	n = 5
	s := 0
	if n < len(b) && b[n] == ':' {
		var ok bool
		if s, ok = digitsAt(b, 6, 2); !ok {
			return tm, 0, "expected HH:MM:SS"
		}
		n = 8
	}
	if n < len(b) && isDigit(b[n]) {
		return tm, 0, "expected HH:MM[:SS]"
	}
	if h > 23 || mi > 59 || s > 59 {
		return tm, 0, "time of day out of range"
	}
	var frac int64
	if n < len(b) && b[n] == '.' {
		n++
		start := n
		for n < len(b) && isDigit(b[n]) {
			if n-start == 9 {
				return tm, 0, "more than 9 fraction digits"
			}
			frac = frac*10 + int64(b[n]-'0')
			n++
		}
		if n == start {
			return tm, 0, "expected digits after '.'"
		}
		frac *= pow10[9-(n-start)]
	}
	tm.fracNanos = frac
	tm.millis = int64(h*3600+mi*60+s)*1000 + frac/1_000_000
	tm.subMilli = int32(frac % 1_000_000)
	return tm, n, ""
}

// fractionFits checks a fraction against precision p: digits beyond p are
// accepted only when they are zeros (nothing is rounded away).
func fractionFits(tm timeOfDay, p int) string {
	if tm.fracNanos%pow10[9-p] != 0 {
		return "more fraction digits than precision " + string(rune('0'+p))
	}
	return ""
}

// parseTimestamp parses DATE 'T' TIME [ZONE], as temporal.rs
// parse_timestamp does ('T' only: a space is refused). A zone (Z or ±hh:mm,
// at most ±18:00) is required when ltz and refused otherwise.
func parseTimestamp(s []byte, ltz bool, p int) (ms int64, nanos int32, msg string) {
	if ms, nanos, ok := parseTimestampCommon(s, ltz, p); ok {
		return ms, nanos, ""
	}
	return parseTimestampGeneral(s, ltz, p)
}

// parseTimestampGeneral is parseTimestamp without the fast path.
func parseTimestampGeneral(s []byte, ltz bool, p int) (ms int64, nanos int32, msg string) {
	days, n, msg := parseDate(s)
	if msg != "" {
		return 0, 0, msg
	}
	if n >= len(s) || s[n] != 'T' {
		return 0, 0, "expected 'T' between date and time"
	}
	tm, m, msg := parseTime(s[n+1:])
	if msg != "" {
		return 0, 0, msg
	}
	rest := s[n+1+m:]
	var offMillis int64
	switch {
	case !ltz && len(rest) > 0:
		if rest[0] == 'Z' || rest[0] == '+' || rest[0] == '-' {
			return 0, 0, "a TIMESTAMP without time zone takes no zone offset"
		}
		return 0, 0, "unexpected text after the time"
	case ltz && len(rest) == 0:
		return 0, 0, "a zone offset (Z or ±hh:mm) is required"
	case ltz:
		off, msg := parseOffset(rest)
		if msg != "" {
			return 0, 0, msg
		}
		offMillis = off
	}
	if msg := fractionFits(tm, p); msg != "" {
		return 0, 0, msg
	}
	// Move one day into delta so that days × millisPerDay cannot overflow
	// for instants that still fit in int64 milliseconds.
	delta := tm.millis - offMillis
	switch {
	case days > 0:
		days, delta = days-1, delta+millisPerDay
	case days < 0:
		days, delta = days+1, delta-millisPerDay
	}
	if days > maxEpochDays || days < -maxEpochDays {
		return 0, 0, "out of range"
	}
	ms, ok := addChecked(days*millisPerDay, delta)
	if !ok {
		return 0, 0, "out of range"
	}
	return ms, tm.subMilli, ""
}

// parseTimestampCommon is the fast path of parseTimestamp for the usual
// spelling: a 4-digit year, 'T', HH:MM:SS, an optional fraction of 1
// to 9 digits, and for ltz Z or ±hh:mm. It reports false when it cannot
// decide (other spellings, any invalid or out-of-range part); then
// parseTimestampGeneral decides. Where it decides, the result is the same.
func parseTimestampCommon(s []byte, ltz bool, p int) (ms int64, nanos int32, ok bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, 0, false
	}
	y1, ok1 := digits2(s[0], s[1])
	y2, ok2 := digits2(s[2], s[3])
	mo, ok3 := digits2(s[5], s[6])
	d, ok4 := digits2(s[8], s[9])
	h, ok5 := digits2(s[11], s[12])
	mi, ok6 := digits2(s[14], s[15])
	sec, ok7 := digits2(s[17], s[18])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || h > 23 || mi > 59 || sec > 59 || mo < 1 || mo > 12 || d < 1 {
		return 0, 0, false
	}
	y := int64(y1*100 + y2)
	if d > daysIn(y, mo) {
		return 0, 0, false
	}
	n := 19
	var frac int64
	if n < len(s) && s[n] == '.' {
		n++
		start := n
		for n < len(s) && isDigit(s[n]) {
			if n-start == 9 {
				return 0, 0, false
			}
			frac = frac*10 + int64(s[n]-'0')
			n++
		}
		if n == start {
			return 0, 0, false
		}
		frac *= pow10[9-(n-start)]
	}
	if frac%pow10[9-p] != 0 {
		return 0, 0, false
	}
	var off int64
	switch rest := s[n:]; {
	case !ltz:
		if len(rest) != 0 {
			return 0, 0, false
		}
	case len(rest) == 1 && rest[0] == 'Z':
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digits2(rest[1], rest[2])
		om, ok2 := digits2(rest[4], rest[5])
		if !ok1 || !ok2 || om > 59 || oh*60+om > 18*60 {
			return 0, 0, false
		}
		off = int64(oh*60+om) * 60_000
		if rest[0] == '-' {
			off = -off
		}
	default:
		return 0, 0, false
	}
	ms = daysFromCivil(y, mo, d)*millisPerDay + int64(h*3600+mi*60+sec)*1000 + frac/1_000_000 - off
	return ms, int32(frac % 1_000_000), true
}

// digits2 parses two decimal digits.
func digits2(a, b byte) (int, bool) {
	a, b = a-'0', b-'0'
	return int(a)*10 + int(b), a <= 9 && b <= 9
}

// parseOffset parses Z or ±hh:mm (at most ±18:00, as java.time.ZoneOffset).
func parseOffset(b []byte) (int64, string) {
	if len(b) == 1 && b[0] == 'Z' {
		return 0, ""
	}
	if len(b) != 6 || (b[0] != '+' && b[0] != '-') || b[3] != ':' {
		return 0, "expected a zone offset Z or ±hh:mm"
	}
	h, ok1 := digitsAt(b, 1, 2)
	m, ok2 := digitsAt(b, 4, 2)
	if !ok1 || !ok2 || m > 59 || h*60+m > 18*60 {
		return 0, "zone offset out of range"
	}
	off := int64(h*60+m) * 60_000
	if b[0] == '-' {
		off = -off
	}
	return off, ""
}

func addChecked(a, b int64) (int64, bool) {
	c := a + b
	if (b > 0 && c < a) || (b < 0 && c > a) {
		return 0, false
	}
	return c, true
}

// appendDate appends days since the epoch as YYYY-MM-DD.
func appendDate(dst []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	switch {
	case y > 9999:
		dst = append(dst, '+')
		dst = appendUint(dst, uint64(y), 0)
	case y < 0:
		dst = append(dst, '-')
		dst = appendUint(dst, uint64(-y), 4)
	default:
		dst = appendUint(dst, uint64(y), 4)
	}
	dst = append(dst, '-')
	dst = appendUint(dst, uint64(m), 2)
	dst = append(dst, '-')
	return appendUint(dst, uint64(d), 2)
}

// appendTimeOfDay appends HH:MM:SS and a fraction of fracNanos with digits
// digits (none when 0).
func appendTimeOfDay(dst []byte, millisOfDay, fracNanos int64, digits int) []byte {
	secs := millisOfDay / 1000
	dst = appendUint(dst, uint64(secs/3600), 2)
	dst = append(dst, ':')
	dst = appendUint(dst, uint64(secs/60%60), 2)
	dst = append(dst, ':')
	dst = appendUint(dst, uint64(secs%60), 2)
	if digits > 0 {
		dst = append(dst, '.')
		dst = appendUint(dst, uint64(fracNanos/pow10[9-digits]), digits)
	}
	return dst
}

// fractionDigits is the number of fraction digits to render: the precision,
// or more when the value is finer than its type claims (never lose data).
func fractionDigits(fracNanos int64, p int) int {
	p = min(max(p, 0), 9)
	for p < 9 && fracNanos%pow10[9-p] != 0 {
		p++
	}
	return p
}

// appendUint appends v in decimal, left-padded with zeros to width.
func appendUint(dst []byte, v uint64, width int) []byte {
	var b [20]byte
	i := len(b)
	for v >= 10 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	b[i] = byte('0' + v)
	for k := len(b) - i; k < width; k++ {
		dst = append(dst, '0')
	}
	return append(dst, b[i:]...)
}
