package rowjson

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exactFloat must give strconv.ParseFloat's float64, bit for bit (the sign
// of zero included), whenever it reports ok, and take every short number
// of the everyday kind.
func TestExactFloat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw string
		ok  bool
	}{
		{"0", true},
		{"-0", true},
		{"-0.0", true},
		{"0e5", true},
		{"1", true},
		{"-17", true},
		{"0.25", true},
		{"12345.75", true},
		{"0.1", true},
		{"0.000123", true},
		{"1.25e+06", true},
		{"1.25E-6", true},
		{"123456789012345", true},
		{"0.123456789012345", true},
		{"9007199254740993", false},      // 16 digits: strconv rounds it
		{"1.0000000000000000001", false}, // too many digits
		{"1e23", false},                  // 10^23 is not exact
		{"1e-23", false},
		{"1e400", false},
		{"2.2250738585072014e-308", false},
		{"1e99999999999999999999", false},
		{"", false},
		{"-", false},
		{"true", false},
		{`"1"`, false},
		{"1.", false},
		{"1e", false},
		{"e0", false},
		{".5", false},
		{"+1", false},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			v, ok := exactFloat([]byte(tc.raw))
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			want, err := strconv.ParseFloat(tc.raw, 64)
			require.NoError(t, err)
			assert.Equal(t, math.Float64bits(want), math.Float64bits(v), "%s: got %v, want %v", tc.raw, v, want)
		})
	}
}

// FuzzExactFloat: where exactFloat answers, strconv.ParseFloat agrees bit
// for bit; a JSON number of the shape it takes (short mantissa, small
// exponent) is always answered.
func FuzzExactFloat(f *testing.F) {
	for _, s := range []string{"0", "-0", "0.25", "1.25e+06", "123456789012345", "1e22", "1e-22", "7e-3", "-99.5E+2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := exactFloat([]byte(s))
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("exactFloat(%q) = %v, but strconv.ParseFloat fails: %v", s, v, err)
		}
		if math.Float64bits(want) != math.Float64bits(v) {
			t.Fatalf("exactFloat(%q) = %v, strconv.ParseFloat %v", s, v, want)
		}
	})
}
