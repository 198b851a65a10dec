package domain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// timeField is a numeric time field of an auto-partition time format.
type timeField uint8

const (
	fieldLiteral timeField = iota
	fieldYear              // four digits, 0001-9999
	fieldQuarter           // one digit, 1-4
	fieldMonth             // two digits, 01-12
	fieldDay               // two digits, 01 to the month's last day
	fieldHour              // two digits, 00-23
)

// width is the number of digits the field always has in a time format Fluss
// accepts (apache/fluss: PartitionUtils.TimeFormatField at 545c553: year 4,
// quarter 1, month 2, day 2, hour 2).
func (f timeField) width() int {
	switch f {
	case fieldYear:
		return 4
	case fieldQuarter:
		return 1
	default:
		return 2
	}
}

func (f timeField) String() string {
	return [...]string{"literal", "year", "quarter", "month", "day", "hour"}[f]
}

// fieldOfLetter maps a DateTimeFormatter pattern letter to the field it
// stands for in a time format Fluss accepts: y (year of era) and u (year),
// Q and q (quarter), M and L (month), d (day of month), H (hour of day);
// every other letter is refused (apache/fluss: PartitionUtils.TimeFormatField
// #fromPattern at 545c553).
func fieldOfLetter(c byte) (timeField, bool) {
	switch c {
	case 'y', 'u':
		return fieldYear, true
	case 'Q', 'q':
		return fieldQuarter, true
	case 'M', 'L':
		return fieldMonth, true
	case 'd':
		return fieldDay, true
	case 'H':
		return fieldHour, true
	}
	return fieldLiteral, false
}

// unitFields are the fields a time format of the unit holds, in this order
// (apache/fluss: PartitionUtils#getExpectedTimeFormatFields at 545c553).
var unitFields = map[AutoPartitionUnit][]timeField{
	UnitYear:    {fieldYear},
	UnitQuarter: {fieldYear, fieldQuarter},
	UnitMonth:   {fieldYear, fieldMonth},
	UnitDay:     {fieldYear, fieldMonth, fieldDay},
	UnitHour:    {fieldYear, fieldMonth, fieldDay, fieldHour},
}

// layoutPart is a numeric field, or (field fieldLiteral) literal text.
type layoutPart struct {
	field timeField
	text  string
}

// timeLayout is a compiled auto-partition time format: its fields and
// literal texts in pattern order.
type timeLayout []layoutPart

// defaultLayouts are the units' default formats, compiled.
var defaultLayouts = func() map[AutoPartitionUnit]timeLayout {
	m := make(map[AutoPartitionUnit]timeLayout, len(unitFields))
	for u := range unitFields {
		l, err := compileTimeFormat(u.Format(), u)
		if err != nil {
			panic(err) // the defaults are constants
		}
		m[u] = l
	}
	return m
}()

// compileTimeFormat reads a table.auto-partition.time-format pattern the way
// a Fluss 1.0 coordinator validates it when the table is created (apache/fluss:
// PartitionUtils#validateTimeFormat at 545c553, over java.time's
// DateTimeFormatterBuilder#appendPattern rules):
//   - text between single quotes is literal, and two single quotes stand for
//     one (inside or outside quoted text); an unclosed quote is an error;
//   - a run of one ASCII letter is a field: y or u (width 4), Q or q (1),
//     M or L (2), d (2), H (2); any other letter, or another width, is an
//     error;
//   - '[' and ']' (optional sections) and '{', '}', '#' (reserved) are errors;
//   - every other character is literal;
//   - the fields are exactly the unit's, largest first (unitFields), so that
//     the values sort in time order as text;
//   - the value rendered for 2024-11-11 11:00 must be a name Fluss accepts
//     for a new partition (ValidateNewName).
//
// Errors name the pattern, cut short.
func compileTimeFormat(pattern string, unit AutoPartitionUnit) (timeLayout, error) {
	bad := func(why string) error {
		return fmt.Errorf("time format %s: %s", quoteName(pattern), why)
	}
	var l timeLayout
	lit := func(s string) {
		if n := len(l); n > 0 && l[n-1].field == fieldLiteral {
			l[n-1].text += s
			return
		}
		l = append(l, layoutPart{text: s})
	}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			// A quoted literal, or '' for one quote.
			var sb strings.Builder
			j := i + 1
			closed := false
			for j < len(pattern) {
				if pattern[j] == '\'' {
					if j+1 < len(pattern) && pattern[j+1] == '\'' {
						sb.WriteByte('\'')
						j += 2
						continue
					}
					closed = true
					break
				}
				sb.WriteByte(pattern[j])
				j++
			}
			if !closed {
				return nil, bad("a quoted literal is not closed")
			}
			if j == i+1 {
				lit("'")
			} else {
				lit(sb.String())
			}
			i = j + 1
		case c == '[' || c == ']':
			return nil, bad("optional sections ('[' and ']') are not supported")
		case c == '{' || c == '}' || c == '#':
			return nil, bad(fmt.Sprintf("%q is a reserved pattern character", c))
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(pattern) && pattern[j] == c {
				j++
			}
			f, ok := fieldOfLetter(c)
			if !ok {
				return nil, bad(fmt.Sprintf("the time field %q is not supported", c))
			}
			if j-i != f.width() {
				return nil, bad(fmt.Sprintf("the %s field must have width %d, got %d", f, f.width(), j-i))
			}
			l = append(l, layoutPart{field: f})
			i = j
		default:
			lit(pattern[i : i+1])
			i++
		}
	}
	var got []timeField
	for _, p := range l {
		if p.field != fieldLiteral {
			got = append(got, p.field)
		}
	}
	want, ok := unitFields[unit]
	if !ok {
		return nil, bad("unknown time unit " + string(unit))
	}
	if !slices.Equal(got, want) {
		return nil, bad(fmt.Sprintf("time unit %s needs the fields %v in this order, got %v", unit, want, got))
	}
	if err := ValidateNewName("partition value", l.format(time.Date(2024, 11, 11, 11, 0, 0, 0, time.UTC))); err != nil {
		return nil, bad(err.Message)
	}
	return l, nil
}

// format renders t (already in the table's zone) in the layout, as
// java.time's DateTimeFormatter#format does for the fields above in years
// 1-9999.
func (l timeLayout) format(t time.Time) string {
	var b []byte
	for _, p := range l {
		switch p.field {
		case fieldLiteral:
			b = append(b, p.text...)
		case fieldYear:
			b = appendPadded(b, t.Year(), 4)
		case fieldQuarter:
			b = strconv.AppendInt(b, int64((int(t.Month())-1)/3+1), 10)
		case fieldMonth:
			b = appendPadded(b, int(t.Month()), 2)
		case fieldDay:
			b = appendPadded(b, t.Day(), 2)
		case fieldHour:
			b = appendPadded(b, t.Hour(), 2)
		}
	}
	return string(b)
}

func appendPadded(b []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// matches reports whether value is the layout applied to a real time: each
// literal as written, each field its width in ASCII digits within its range
// (the day within the month before it; every layout has a year and a month
// before a day). It reads value once, without allocating.
func (l timeLayout) matches(value string) bool {
	year, month := 0, 0
	for _, p := range l {
		if p.field == fieldLiteral {
			if !strings.HasPrefix(value, p.text) {
				return false
			}
			value = value[len(p.text):]
			continue
		}
		w := p.field.width()
		if len(value) < w {
			return false
		}
		n := 0
		for i := 0; i < w; i++ {
			c := value[i]
			if c < '0' || c > '9' {
				return false
			}
			n = n*10 + int(c-'0')
		}
		value = value[w:]
		switch p.field {
		case fieldYear:
			if n < 1 {
				return false
			}
			year = n
		case fieldQuarter:
			if n < 1 || n > 4 {
				return false
			}
		case fieldMonth:
			if n < 1 || n > 12 {
				return false
			}
			month = n
		case fieldDay:
			if n < 1 || n > daysIn(year, month) {
				return false
			}
		case fieldHour:
			if n > 23 {
				return false
			}
		}
	}
	return value == ""
}

// daysIn is the number of days of month (1-12) in year (proleptic
// Gregorian, as java.time's ISO calendar).
func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
