package arrowlog

import (
	"math"
	"math/bits"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// check validates one value against its type before anything is appended,
// so that Builder.Append either adds the whole row or nothing. It rejects
// what the Java writers would either reject or silently corrupt: values out
// of their Java type's range, a BINARY(n) value of another length
// (FixedSizeBinaryVector.set copies exactly n bytes), a DECIMAL wider than its
// precision (DecimalVector.set checks it), timestamps whose Arrow value
// overflows int64, nulls in NOT NULL positions, and nested values of the
// wrong shape.
func check(n *node, d *domain.Datum) error {
	if d.Null {
		if !n.nullable {
			return invalidValue("null value for NOT NULL type %s", n)
		}
		return nil
	}
	switch n.kind {
	case kBool:
		if d.I64 != 0 && d.I64 != 1 {
			return invalidValue("BOOLEAN value %d, want 0 or 1", d.I64)
		}
	case kInt8:
		if d.I64 < math.MinInt8 || d.I64 > math.MaxInt8 {
			return invalidValue("value %d out of range for TINYINT", d.I64)
		}
	case kInt16:
		if d.I64 < math.MinInt16 || d.I64 > math.MaxInt16 {
			return invalidValue("value %d out of range for SMALLINT", d.I64)
		}
	case kInt32, kDate, kTime:
		if d.I64 < math.MinInt32 || d.I64 > math.MaxInt32 {
			return invalidValue("value %d out of range for %s", d.I64, n.root)
		}
	case kDecimal:
		if _, _, err := decimalValue(n, d); err != nil {
			return err
		}
	case kFixedBin:
		if len(d.Bytes) != n.width {
			return invalidValue("BINARY(%d) value has %d bytes", n.width, len(d.Bytes))
		}
	case kTimestamp:
		if d.Nanos < 0 || d.Nanos > 999_999 {
			return invalidValue("timestamp nano-of-millisecond %d outside 0..999999", d.Nanos)
		}
		if _, ok := timestampValue(n.unit, d.I64, d.Nanos); !ok {
			return invalidValue("%s value %d ms overflows its Arrow %s", n, d.I64, timeUnits[n.unit])
		}
	case kList:
		for i := range d.Elems {
			if err := check(n.elem, &d.Elems[i]); err != nil {
				return prefix(err, "element %d", i)
			}
		}
	case kMap:
		if len(d.Elems)%2 != 0 {
			return invalidValue("MAP value has %d elements, want key/value pairs", len(d.Elems))
		}
		for i := 0; i < len(d.Elems); i += 2 {
			if err := check(n.elem, &d.Elems[i]); err != nil {
				return prefix(err, "key %d", i/2)
			}
			if err := check(n.value, &d.Elems[i+1]); err != nil {
				return prefix(err, "value %d", i/2)
			}
		}
	case kStruct:
		if len(d.Elems) != len(n.fields) {
			return invalidValue("ROW value has %d fields, want %d", len(d.Elems), len(n.fields))
		}
		for i := range n.fields {
			if err := check(&n.fields[i], &d.Elems[i]); err != nil {
				return prefix(err, "field %d", i)
			}
		}
	}
	return nil
}

// timestampValue converts epoch milliseconds plus nano-of-millisecond to the
// Arrow value of the unit exactly as ArrowTimestampNtzWriter and
// ArrowTimestampLtzWriter do (Java's truncating division for seconds). ok is
// false when Java's long arithmetic would overflow.
func timestampValue(unit int, ms int64, nanos int32) (int64, bool) {
	switch unit {
	case unitSecond:
		return ms / 1000, true
	case unitMilli:
		return ms, true
	case unitMicro:
		return mulAdd(ms, 1000, int64(nanos/1000))
	default:
		return mulAdd(ms, 1_000_000, int64(nanos))
	}
}

// mulAdd returns v*mul+add (mul > 0, 0 <= add < mul) and whether it fits int64.
func mulAdd(v, mul, add int64) (int64, bool) {
	if v > (math.MaxInt64-add)/mul || v < math.MinInt64/mul {
		return 0, false
	}
	return v*mul + add, true
}

// timeValue converts milliseconds of the day to the Arrow value of the unit
// (ArrowTimeWriter).
func timeValue(unit int, ms int64) int64 {
	switch unit {
	case unitSecond:
		return ms / 1000
	case unitMilli:
		return ms
	case unitMicro:
		return ms * 1000
	default:
		return ms * 1_000_000
	}
}

// decimalValue returns the unscaled value of a DECIMAL Datum as a 128-bit two's
// complement integer (hi, lo): I64 for precision <= 18, else the big-endian
// two's-complement Bytes (BigInteger.toByteArray; empty means 0). It fails
// when the value has more digits than the precision.
func decimalValue(n *node, d *domain.Datum) (hi int64, lo uint64, err error) {
	if n.precision <= maxCompactPrecision {
		v := d.I64
		hi, lo = v>>63, uint64(v)
	} else {
		b := d.Bytes
		for len(b) > 1 && ((b[0] == 0x00 && b[1] < 0x80) || (b[0] == 0xFF && b[1] >= 0x80)) {
			b = b[1:]
		}
		if len(b) > 16 {
			return 0, 0, invalidValue("DECIMAL unscaled value of %d bytes exceeds 128 bits", len(b))
		}
		var buf [16]byte
		if len(b) > 0 && b[0] >= 0x80 {
			for i := range buf {
				buf[i] = 0xFF
			}
		}
		copy(buf[16-len(b):], b)
		hi = int64(beUint64(buf[0:8]))
		lo = beUint64(buf[8:16])
	}
	if !fitsPrecision(hi, lo, n.precision) {
		return 0, 0, invalidValue("DECIMAL value has more than %d digits", n.precision)
	}
	return hi, lo, nil
}

// fitsPrecision reports whether the 128-bit value (hi, lo) has at most p
// decimal digits: |v| < 10^p.
func fitsPrecision(hi int64, lo uint64, p int) bool {
	mh, ml := uint64(hi), lo
	if hi < 0 { // magnitude of a negative value: two's complement negation
		ml = ^lo + 1
		mh = ^uint64(hi)
		if ml == 0 {
			mh++
		}
	}
	t := pow10[p]
	return mh < t[0] || (mh == t[0] && ml < t[1])
}

func beUint64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

// pow10[i] is 10^i as an unsigned 128-bit integer {hi, lo}, i = 0..38.
var pow10 = func() (t [maxDecimalPrecision + 1][2]uint64) {
	t[0] = [2]uint64{0, 1}
	for i := 1; i < len(t); i++ {
		hiLo, lo := bits.Mul64(t[i-1][1], 10)
		t[i] = [2]uint64{t[i-1][0]*10 + hiLo, lo}
	}
	return t
}()

// appendDecimalBytes appends the minimal big-endian two's-complement form of
// the 128-bit value (hi, lo), as java.math.BigInteger.toByteArray does (zero is
// one 0x00 byte).
func appendDecimalBytes(dst []byte, hi int64, lo uint64) []byte {
	var buf [16]byte
	for i := 0; i < 8; i++ {
		buf[i] = byte(uint64(hi) >> (56 - 8*i))
		buf[8+i] = byte(lo >> (56 - 8*i))
	}
	b := buf[:]
	for len(b) > 1 && ((b[0] == 0x00 && b[1] < 0x80) || (b[0] == 0xFF && b[1] >= 0x80)) {
		b = b[1:]
	}
	return append(dst, b...)
}
