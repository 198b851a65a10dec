package config

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
)

// Redacted is how every credential renders, as in the official gateway.
const Redacted = "******"

// Secret holds a credential. It renders as Redacted through fmt (%v, %s, %+v,
// %#v), JSON and slog, so a config dump or a log line cannot leak it; only
// Reveal returns the value.
type Secret struct {
	value string
	set   bool
}

// NewSecret wraps a credential.
func NewSecret(v string) Secret { return Secret{value: v, set: true} }

// Reveal returns the credential, for the component that authenticates with it.
func (s Secret) Reveal() string { return s.value }

// IsSet reports whether a value was configured (possibly blank).
func (s Secret) IsSet() bool { return s.set }

// String returns Redacted, or "" when unset.
func (s Secret) String() string {
	if !s.set {
		return ""
	}
	return Redacted
}

// GoString makes %#v redact too.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// MarshalJSON renders the redacted form.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(s.String())), nil }

// LogValue renders the redacted form in slog records.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// splitNumberAndUnit splits "30 s" into "30" and "s" after trimming.
func splitNumberAndUnit(s string) (digits, unit string) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// ParseDuration parses the official syntax `<integer><ms|s|m|h|d>`
// (whitespace allowed around and before the unit, unit case-insensitive). The
// result must be positive and at most MaxDuration.
func ParseDuration(s string) (time.Duration, error) {
	digits, unit := splitNumberAndUnit(s)
	if digits == "" {
		return 0, fmt.Errorf("invalid duration %q: expected <integer><ms|s|m|h|d>", s)
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: number out of range", s)
	}
	var scale time.Duration
	switch strings.ToLower(unit) {
	case "ms":
		scale = time.Millisecond
	case "s":
		scale = time.Second
	case "m":
		scale = time.Minute
	case "h":
		scale = time.Hour
	case "d":
		scale = 24 * time.Hour
	default:
		return 0, fmt.Errorf("invalid duration %q: unit must be one of ms, s, m, h, d", s)
	}
	if n == 0 {
		return 0, fmt.Errorf("invalid duration %q: must be greater than zero", s)
	}
	if n > uint64(MaxDuration/scale) {
		return 0, fmt.Errorf("invalid duration %q: must not exceed %d seconds", s, int64(MaxDuration/time.Second))
	}
	return time.Duration(n) * scale, nil
}

// FormatDuration renders d in the configuration syntax with the largest unit
// that represents it exactly; zero (unset) renders as "0".
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	for _, u := range []struct {
		unit  string
		scale time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}} {
		if d != 0 && d%u.scale == 0 {
			return strconv.FormatInt(int64(d/u.scale), 10) + u.unit
		}
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// ParseByteSize parses a positive size with an optional 1024-based unit (B,
// K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB, case-insensitive), as Fluss does.
func ParseByteSize(s string) (int64, error) {
	digits, unit := splitNumberAndUnit(s)
	if digits == "" {
		return 0, fmt.Errorf("invalid byte size %q: expected <integer>[unit]", s)
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid byte size %q: number out of range", s)
	}
	var mult uint64
	switch strings.ToLower(unit) {
	case "", "b", "bytes":
		mult = 1
	case "k", "kb", "kib", "kibibyte", "kibibytes":
		mult = 1 << 10
	case "m", "mb", "mib", "mebibyte", "mebibytes":
		mult = 1 << 20
	case "g", "gb", "gib", "gibibyte", "gibibytes":
		mult = 1 << 30
	case "t", "tb", "tib", "tebibyte", "tebibytes":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("invalid byte size %q: unit must be one of B, KB/KiB, MB/MiB, GB/GiB, TB/TiB", s)
	}
	if n == 0 {
		return 0, fmt.Errorf("invalid byte size %q: must be non-zero", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("invalid byte size %q: too large", s)
	}
	return int64(n * mult), nil
}

// FormatByteSize renders n with the largest binary unit that represents it
// exactly.
func FormatByteSize(n int64) string {
	for _, u := range []struct {
		unit  string
		scale int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.scale == 0 {
			return strconv.FormatInt(n/u.scale, 10) + u.unit
		}
	}
	return strconv.FormatInt(n, 10)
}
