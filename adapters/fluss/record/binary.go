package record

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
)

// castagnoli is the CRC-32C table (reflected polynomial 0x82F63B78).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C returns the CRC-32C (Castagnoli) checksum of b: init 0xFFFFFFFF,
// final xor 0xFFFFFFFF, the checksum Fluss stores (as an unsigned 32-bit
// little-endian value) in log and KV batch headers
// (utils/crc/Crc32C.java).
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// UpdateCRC32C continues a CRC-32C over more bytes: UpdateCRC32C(CRC32C(a), b)
// equals CRC32C(a||b). Start from 0 for an empty prefix.
func UpdateCRC32C(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }

// AppendInt16LE appends v as 2 bytes, little-endian.
func AppendInt16LE(dst []byte, v int16) []byte {
	return binary.LittleEndian.AppendUint16(dst, uint16(v))
}

// AppendInt32LE appends v as 4 bytes, little-endian.
func AppendInt32LE(dst []byte, v int32) []byte {
	return binary.LittleEndian.AppendUint32(dst, uint32(v))
}

// AppendInt64LE appends v as 8 bytes, little-endian.
func AppendInt64LE(dst []byte, v int64) []byte {
	return binary.LittleEndian.AppendUint64(dst, uint64(v))
}

// PutInt16LE writes v into b[0:2], little-endian. It panics if len(b) < 2.
func PutInt16LE(b []byte, v int16) { binary.LittleEndian.PutUint16(b, uint16(v)) }

// PutInt32LE writes v into b[0:4], little-endian. It panics if len(b) < 4.
func PutInt32LE(b []byte, v int32) { binary.LittleEndian.PutUint32(b, uint32(v)) }

// PutInt64LE writes v into b[0:8], little-endian. It panics if len(b) < 8.
func PutInt64LE(b []byte, v int64) { binary.LittleEndian.PutUint64(b, uint64(v)) }

// Int16LE reads a little-endian int16 from b[0:2]. It panics if len(b) < 2.
func Int16LE(b []byte) int16 { return int16(binary.LittleEndian.Uint16(b)) }

// Int32LE reads a little-endian int32 from b[0:4]. It panics if len(b) < 4.
func Int32LE(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) }

// Int64LE reads a little-endian int64 from b[0:8]. It panics if len(b) < 8.
func Int64LE(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) }

// AppendUvarint32 appends the unsigned LEB128 encoding of v's 32 bits
// (7 bits per byte, least-significant group first, high bit = more bytes):
// 1 to 5 bytes. Fluss encodes INT, DATE, TIME and every length this way,
// without zigzag, so a negative int32 takes 5 bytes (-1 is FF FF FF FF 0F)
// (CompactedRowWriter.writeInt, VarLengthUtils.writeUnsignedVarInt).
func AppendUvarint32(dst []byte, v uint32) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// AppendUvarint64 appends the unsigned LEB128 encoding of v's 64 bits: 1 to
// 10 bytes. Fluss encodes BIGINT, compact DECIMAL and timestamp millis this
// way (CompactedRowWriter.writeLong).
func AppendUvarint64(dst []byte, v uint64) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// SizeUvarint32 returns how many bytes AppendUvarint32 writes for v.
func SizeUvarint32(v uint32) int {
	switch {
	case v < 1<<7:
		return 1
	case v < 1<<14:
		return 2
	case v < 1<<21:
		return 3
	case v < 1<<28:
		return 4
	default:
		return 5
	}
}

// Uvarint32 decodes an unsigned LEB128 value of at most 5 bytes from b and
// returns it with the number of bytes read. Bits beyond 32 in the fifth byte
// are dropped, as CompactedRowReader.readInt does. n is 0 when b ends before
// the last byte, and -1 when the fifth byte still has its continuation bit.
func Uvarint32(b []byte) (v uint32, n int) {
	for i := 0; i < 5; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		v |= uint32(c&0x7F) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}

// Uvarint64 decodes an unsigned LEB128 value of at most 10 bytes from b and
// returns it with the number of bytes read. Bits beyond 64 are dropped. n is 0
// when b ends early, -1 when the tenth byte still has its continuation bit
// (CompactedRowReader.readLong).
func Uvarint64(b []byte) (v uint64, n int) {
	for i := 0; i < 10; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		v |= uint64(c&0x7F) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}

// appendZeros appends n zero bytes.
func appendZeros(dst []byte, n int) []byte {
	l := len(dst)
	dst = slices.Grow(dst, n)[:l+n]
	clear(dst[l:])
	return dst
}

// roundUp8 rounds n up to a multiple of 8 (BinarySection word alignment).
func roundUp8(n int) int { return (n + 7) &^ 7 }
