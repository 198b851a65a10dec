package record

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Vectors of apache/fluss fluss-common/src/test/java/org/apache/fluss/utils/crc/Crc32CTest.java
// (v0.9.1-incubating); docs/fluss-records.md, Test vectors tier 1.
func TestCRC32C(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []string // chained updates
		want uint32
	}{
		{"Some String", []string{"Some String"}, 608512271},
		{"hello", []string{"hello"}, 2591144780},
		{"fluss", []string{"fluss"}, 2355313305},
		{"checksum", []string{"checksum"}, 2474969539},
		{"hello then world", []string{"hello", "world"}, 1456190592},
		{"split update", []string{"Some ", "String"}, 608512271},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var crc uint32
			for _, s := range tc.in {
				crc = UpdateCRC32C(crc, []byte(s))
			}
			assert.Equal(t, tc.want, crc)
			if len(tc.in) == 1 {
				assert.Equal(t, tc.want, CRC32C([]byte(tc.in[0])))
			}
		})
	}
	// Crc32CTest.testComputeByteArrayWithOffsetAndSize: " hello"[1:6].
	assert.Equal(t, uint32(2591144780), CRC32C([]byte(" hello")[1:6]))
}

func TestUvarint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v32  *uint32
		v64  uint64
		want string
	}{
		{name: "0", v64: 0, want: "00"},
		{name: "127", v64: 127, want: "7F"},
		{name: "128", v64: 128, want: "80 01"},
		{name: "200", v64: 200, want: "C8 01"},
		{name: "1000", v64: 1000, want: "E8 07"},
		{name: "19655 (DATE 2023-10-25, all-types key row)", v64: 19655, want: "C7 99 01"},
		{name: "34200000 (TIME 09:30, all-types key row)", v64: 34200000, want: "C0 B3 A7 10"},
		{name: "int32 -1 is 5 bytes", v32: ptr(uint32(0xFFFFFFFF)), want: "FF FF FF FF 0F"},
		{name: "int64 -1 is 10 bytes", v64: ^uint64(0), want: "FF FF FF FF FF FF FF FF FF 01"},
		{name: "BIGINT 1698235273182 (all-types key row)", v64: 1698235273182, want: "DE 9F D7 B5 B6 31"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := unhex(t, tc.want)
			if tc.v32 != nil || tc.v64 <= 0xFFFFFFFF {
				v := uint32(tc.v64)
				if tc.v32 != nil {
					v = *tc.v32
				}
				got := AppendUvarint32(nil, v)
				assert.Equal(t, want, got)
				assert.Equal(t, len(want), SizeUvarint32(v))
				back, n := Uvarint32(got)
				assert.Equal(t, v, back)
				assert.Equal(t, len(want), n)
			}
			if tc.v32 == nil {
				got := AppendUvarint64(nil, tc.v64)
				assert.Equal(t, want, got)
				back, n := Uvarint64(got)
				assert.Equal(t, tc.v64, back)
				assert.Equal(t, len(want), n)
			}
		})
	}
}

func TestUvarintMalformed(t *testing.T) {
	t.Parallel()
	_, n := Uvarint32(nil)
	assert.Equal(t, 0, n, "empty")
	_, n = Uvarint32([]byte{0x80, 0x80})
	assert.Equal(t, 0, n, "truncated")
	_, n = Uvarint32([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	assert.Equal(t, -1, n, "fifth byte with continuation bit")
	// VarLengthUtilsTest: ten continuation bytes are rejected.
	_, n = Uvarint64([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80})
	assert.Equal(t, -1, n)
}

func TestLittleEndianHelpers(t *testing.T) {
	t.Parallel()
	b := AppendInt16LE(nil, -2)
	b = AppendInt32LE(b, 0x01020304)
	b = AppendInt64LE(b, -1)
	require.Equal(t, unhex(t, "FE FF 04 03 02 01 FF FF FF FF FF FF FF FF"), b)
	assert.Equal(t, int16(-2), Int16LE(b))
	assert.Equal(t, int32(0x01020304), Int32LE(b[2:]))
	assert.Equal(t, int64(-1), Int64LE(b[6:]))
	PutInt16LE(b, 7)
	PutInt32LE(b[2:], -7)
	PutInt64LE(b[6:], 0x0102030405060708)
	assert.Equal(t, unhex(t, "07 00 F9 FF FF FF 08 07 06 05 04 03 02 01"), b)
}

func ptr[T any](v T) *T { return &v }
