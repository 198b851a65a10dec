package record

import (
	"math"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Value checks shared by every encoder. Fluss's Java writers receive typed
// values (byte, short, int, ...), so a Datum outside its type's range can only
// come from a caller bug; it is rejected instead of being silently truncated.

func intValue(c *column, d *domain.Datum) (int64, error) {
	v := d.I64
	switch c.kind {
	case kindBoolean:
		if v != 0 && v != 1 {
			return 0, invalidValue("BOOLEAN value %d, want 0 or 1", v)
		}
	case kindTinyInt:
		if v < math.MinInt8 || v > math.MaxInt8 {
			return 0, invalidValue("value %d out of range for TINYINT", v)
		}
	case kindSmallInt:
		if v < math.MinInt16 || v > math.MaxInt16 {
			return 0, invalidValue("value %d out of range for SMALLINT", v)
		}
	case kindInt:
		if v < math.MinInt32 || v > math.MaxInt32 {
			return 0, invalidValue("value %d out of range for %s", v, c.root)
		}
	}
	return v, nil
}

// checkNanos validates the nano-of-millisecond of a timestamp
// (TimestampNtz/TimestampLtz constructors require 0..999999).
func checkNanos(d *domain.Datum) error {
	if d.Nanos < 0 || d.Nanos > 999_999 {
		return invalidValue("timestamp nano-of-millisecond %d outside 0..999999", d.Nanos)
	}
	return nil
}

// decimalBytes returns the unscaled value of a non-compact DECIMAL as Java's
// BigInteger.toByteArray would: the minimal big-endian two's-complement form
// (a subslice of d.Bytes, redundant sign bytes dropped; an empty slice means
// zero and becomes {0}). At most 16 bytes fit DECIMAL(38).
func decimalBytes(d *domain.Datum) ([]byte, error) {
	b := d.Bytes
	if len(b) == 0 {
		return zeroByte[:], nil
	}
	for len(b) > 1 && ((b[0] == 0x00 && b[1] < 0x80) || (b[0] == 0xFF && b[1] >= 0x80)) {
		b = b[1:]
	}
	if len(b) > 16 {
		return nil, invalidValue("DECIMAL unscaled value of %d bytes exceeds 16", len(b))
	}
	return b, nil
}

var zeroByte = [1]byte{0}
