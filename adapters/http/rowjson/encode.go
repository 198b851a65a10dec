package rowjson

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// AppendRow appends row as a JSON object with one member per column, in
// schema order, and returns the extended buffer. The output is exact and
// stable, and decodes (DecodeWrite, DecodeKeys) to the same Datums:
//
//   - null: null
//   - BOOLEAN: true/false; TINYINT, SMALLINT, INTEGER: JSON numbers
//   - BIGINT and DECIMAL: JSON strings ("-12", "3.140"), because JSON
//     consumers commonly read numbers as float64; DECIMAL always has exactly
//     scale fraction digits
//   - FLOAT, DOUBLE: the shortest representation that parses back to the same
//     value ('g' format); non-finite values as "NaN", "Infinity", "-Infinity"
//   - CHAR, STRING: JSON strings (invalid UTF-8, which the gateway never
//     writes, is replaced by U+FFFD)
//   - BINARY, BYTES: standard padded base64
//   - DATE: "YYYY-MM-DD"; TIME(p): "HH:MM:SS" plus p fraction digits
//   - TIMESTAMP(p): "YYYY-MM-DDTHH:MM:SS" plus p fraction digits, no zone;
//     TIMESTAMP_LTZ(p): the same in UTC with a "Z"
//   - ARRAY: JSON array; ROW: JSON object of its fields
//   - MAP: always a JSON array of {"key": k, "value": v} objects, in stored
//     order, whatever the key type
//
// A value finer than its type's precision (which the gateway never writes)
// gets as many fraction digits as it needs, so nothing is lost. A row
// shorter than columns renders the missing columns as null.
func AppendRow(dst []byte, columns []domain.Column, row []domain.Datum) []byte {
	dst = append(dst, '{')
	for i := range columns {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst, _ = jsontext.AppendQuote(dst, columns[i].Name)
		dst = append(dst, ':')
		if i < len(row) {
			dst = AppendValue(dst, &columns[i].Type, &row[i])
		} else {
			dst = append(dst, "null"...)
		}
	}
	return append(dst, '}')
}

// RowKeys are the member names AppendRow writes for some columns, each
// quoted and followed by ':', made once for rendering many rows
// (NewRowKeys). RowKeys.AppendRow renders exactly what AppendRow does.
type RowKeys struct {
	columns []domain.Column
	keys    [][]byte
}

// NewRowKeys quotes the names of columns once.
func NewRowKeys(columns []domain.Column) RowKeys {
	k := RowKeys{columns: columns, keys: make([][]byte, len(columns))}
	for i := range columns {
		key, _ := jsontext.AppendQuote(nil, columns[i].Name)
		k.keys[i] = append(key, ':')
	}
	return k
}

// AppendRow appends row as the package's AppendRow does with the columns
// k was made for.
func (k RowKeys) AppendRow(dst []byte, row []domain.Datum) []byte {
	dst = append(dst, '{')
	for i := range k.columns {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, k.keys[i]...)
		if i < len(row) {
			dst = AppendValue(dst, &k.columns[i].Type, &row[i])
		} else {
			dst = append(dst, "null"...)
		}
	}
	return append(dst, '}')
}

// AppendValue appends one value of type t as AppendRow renders it.
func AppendValue(dst []byte, t *domain.DataType, d *domain.Datum) []byte {
	if d.Null {
		return append(dst, "null"...)
	}
	switch t.Root {
	case domain.TypeBoolean:
		if d.I64 != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case domain.TypeTinyInt, domain.TypeSmallInt, domain.TypeInteger:
		return strconv.AppendInt(dst, d.I64, 10)
	case domain.TypeBigInt:
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, d.I64, 10)
		return append(dst, '"')
	case domain.TypeFloat:
		return appendFloat(dst, float64(float32(d.F64)), 32)
	case domain.TypeDouble:
		return appendFloat(dst, d.F64, 64)
	case domain.TypeDecimal:
		dst = append(dst, '"')
		dst = appendDecimal(dst, t, d)
		return append(dst, '"')
	case domain.TypeChar, domain.TypeString:
		dst, _ = jsontext.AppendQuote(dst, d.Bytes)
		return dst
	case domain.TypeBinary, domain.TypeBytes:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, d.Bytes)
		return append(dst, '"')
	case domain.TypeDate:
		if d.I64 < math.MinInt32 || d.I64 > math.MaxInt32 {
			// Not a Fluss DATE (an int); render the raw day count.
			return strconv.AppendInt(dst, d.I64, 10)
		}
		dst = append(dst, '"')
		dst = appendDate(dst, d.I64)
		return append(dst, '"')
	case domain.TypeTime:
		if d.I64 < 0 || d.I64 >= millisPerDay {
			// Not a time of day; render the raw millisecond count.
			return strconv.AppendInt(dst, d.I64, 10)
		}
		frac := d.I64 % 1000 * 1_000_000
		dst = append(dst, '"')
		dst = appendTimeOfDay(dst, d.I64, frac, fractionDigits(frac, t.Precision))
		return append(dst, '"')
	case domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		days := floorDiv(d.I64, millisPerDay)
		ms := d.I64 - days*millisPerDay
		frac := ms%1000*1_000_000 + int64(d.Nanos)
		dst = append(dst, '"')
		dst = appendDate(dst, days)
		dst = append(dst, 'T')
		dst = appendTimeOfDay(dst, ms, frac, fractionDigits(frac, t.Precision))
		if t.Root == domain.TypeTimestampLTZ {
			dst = append(dst, 'Z')
		}
		return append(dst, '"')
	case domain.TypeArray:
		dst = append(dst, '[')
		for i := range d.Elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendValue(dst, t.Element, &d.Elems[i])
		}
		return append(dst, ']')
	case domain.TypeMap:
		dst = append(dst, '[')
		for i := 0; i+1 < len(d.Elems); i += 2 {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"key":`...)
			dst = AppendValue(dst, t.Key, &d.Elems[i])
			dst = append(dst, `,"value":`...)
			dst = AppendValue(dst, t.Value, &d.Elems[i+1])
			dst = append(dst, '}')
		}
		return append(dst, ']')
	case domain.TypeRow:
		dst = append(dst, '{')
		for i := range t.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst, _ = jsontext.AppendQuote(dst, t.Fields[i].Name)
			dst = append(dst, ':')
			if i < len(d.Elems) {
				dst = AppendValue(dst, &t.Fields[i].Type, &d.Elems[i])
			} else {
				dst = append(dst, "null"...)
			}
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}

func appendFloat(dst []byte, v float64, bitSize int) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(v, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, bitSize)
}

// appendDecimal renders the unscaled value with exactly scale fraction digits.
func appendDecimal(dst []byte, t *domain.DataType, d *domain.Datum) []byte {
	var digits []byte
	var buf [48]byte
	neg := false
	if t.Precision <= 18 {
		u := uint64(d.I64)
		if d.I64 < 0 {
			neg, u = true, -u
		}
		digits = strconv.AppendUint(buf[:0], u, 10)
	} else if len(d.Bytes) <= 16 {
		var hi, lo uint64
		neg, hi, lo = fromTwosComplement(d.Bytes)
		digits = appendUint128(buf[:0], hi, lo)
	} else {
		v := fromTwosComplementBig(d.Bytes)
		neg = v.Sign() < 0
		digits = v.Abs(v).Append(buf[:0], 10)
	}
	if neg {
		dst = append(dst, '-')
	}
	s := max(t.Scale, 0)
	if len(digits) <= s {
		dst = append(dst, '0')
		if s > 0 {
			dst = append(dst, '.')
			for range s - len(digits) {
				dst = append(dst, '0')
			}
			dst = append(dst, digits...)
		}
		return dst
	}
	dst = append(dst, digits[:len(digits)-s]...)
	if s > 0 {
		dst = append(dst, '.')
		dst = append(dst, digits[len(digits)-s:]...)
	}
	return dst
}

// fromTwosComplement reads up to 16 big-endian two's complement bytes as a
// sign and 128-bit magnitude.
func fromTwosComplement(b []byte) (neg bool, hi, lo uint64) {
	var buf [16]byte
	fill := byte(0)
	if len(b) > 0 && b[0]&0x80 != 0 {
		fill = 0xff
	}
	for i := range 16 - len(b) {
		buf[i] = fill
	}
	copy(buf[16-len(b):], b)
	hi = binary.BigEndian.Uint64(buf[:8])
	lo = binary.BigEndian.Uint64(buf[8:])
	if fill == 0xff {
		var c uint64
		lo, c = bits.Add64(^lo, 1, 0)
		hi = ^hi + c
		neg = true
	}
	return neg, hi, lo
}

func fromTwosComplementBig(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}

// appendUint128 appends (hi,lo) in decimal.
func appendUint128(dst []byte, hi, lo uint64) []byte {
	const e19 = 10_000_000_000_000_000_000
	var parts [3]uint64 // base-10^19 digits below the leading one, least significant first
	n := 0
	for hi != 0 {
		qhi, rhi := hi/e19, hi%e19
		qlo, r := bits.Div64(rhi, lo, e19)
		parts[n] = r
		n++
		hi, lo = qhi, qlo
	}
	dst = strconv.AppendUint(dst, lo, 10)
	for i := n - 1; i >= 0; i-- {
		dst = appendUint(dst, parts[i], 19)
	}
	return dst
}
