package arrowlog

import (
	"encoding/binary"
	"math/bits"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Decompression of Arrow body buffers as Fluss 0.9.1 reads them
// (Arrow Java AbstractCompressionCodec.decompress, Fluss
// ZstdArrowCompressionCodec and Lz4ArrowCompressionCodec):
//
//	int64 LE uncompressed length, then the codec's bytes;
//	length -1: the bytes that follow are the raw buffer;
//	length 0: an empty buffer;
//	a buffer of 0 bytes is never decompressed (VectorLoader skips it).

// lz4Magic is the LZ4 frame magic number (FlussLZ4BlockOutputStream.MAGIC).
const lz4Magic = 0x184D2204

// decompressor turns compressed buffers back into raw ones. It keeps one
// zstd decoder.
type decompressor struct {
	zstd *zstd.Decoder
	max  int
}

func (d *decompressor) buffer(codec Compression, b []byte) ([]byte, error) {
	if len(b) == 0 {
		return b, nil
	}
	if len(b) < 8 {
		return nil, corrupt("compressed Arrow buffer of %d bytes has no length prefix", len(b))
	}
	n := int64(binary.LittleEndian.Uint64(b))
	src := b[8:]
	switch {
	case n == -1:
		return src, nil
	case n == 0:
		return src[:0], nil
	case n < 0 || n > int64(d.max):
		return nil, corrupt("Arrow buffer uncompressed length %d outside 0..%d", n, d.max)
	}
	switch codec {
	case CompressionZstd:
		return d.zstdDecode(src, int(n))
	case CompressionLZ4Frame:
		return lz4FrameDecode(src, int(n))
	default:
		return nil, corrupt("Arrow buffer compressed with unknown codec %s", codec)
	}
}

func (d *decompressor) zstdDecode(src []byte, n int) ([]byte, error) {
	if d.zstd == nil {
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(uint64(d.max)), zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			return nil, internal("arrowlog: zstd decoder: %v", err)
		}
		d.zstd = dec
	}
	out, err := d.zstd.DecodeAll(src, make([]byte, 0, n))
	if err != nil {
		return nil, corrupt("zstd Arrow buffer: %v", err)
	}
	if len(out) != n {
		return nil, corrupt("zstd Arrow buffer decompressed to %d bytes, its prefix says %d", len(out), n)
	}
	return out, nil
}

// lz4FrameDecode decodes one LZ4 frame with exactly the checks of Fluss's
// FlussLZ4BlockInputStream (a Kafka-derived reader): magic, FLG version 01,
// reserved and dictionary-id bits 0, independent blocks; BD block size code
// 4..7 with reserved bits 0; the header checksum byte
// (xxh32(descriptor) >> 8) & 0xFF; optional content size (skipped); blocks of
// at most the maximum block size, the high bit marking a stored block;
// optional block checksums (verified); an end mark, then an optional content
// checksum (read, not verified). Stricter than Fluss, it also requires the
// output to have the prefixed length and nothing to follow the frame.
func lz4FrameDecode(src []byte, n int) ([]byte, error) {
	bad := func(format string, args ...any) ([]byte, error) {
		return nil, corrupt("LZ4 Arrow buffer: "+format, args...)
	}
	if len(src) < 7 {
		return bad("frame of %d bytes", len(src))
	}
	if binary.LittleEndian.Uint32(src) != lz4Magic {
		return bad("bad magic %#x", binary.LittleEndian.Uint32(src))
	}
	flg, bd := src[4], src[5]
	if flg>>6 != 1 {
		return bad("frame version %d", flg>>6)
	}
	if flg&3 != 0 {
		return bad("reserved or dictionary-id FLG bits set (%#x)", flg)
	}
	if flg&0x20 == 0 {
		return bad("dependent blocks are unsupported")
	}
	blockChecksum, contentSize, contentChecksum := flg&0x10 != 0, flg&0x08 != 0, flg&0x04 != 0
	if bd&0x8F != 0 {
		return bad("reserved BD bits set (%#x)", bd)
	}
	code := int(bd>>4) & 7
	if code < 4 {
		return bad("block size code %d outside 4..7", code)
	}
	maxBlock := 1 << (2*code + 8)
	pos := 6
	if contentSize {
		pos += 8
	}
	if len(src) < pos+1 {
		return bad("truncated frame descriptor")
	}
	if want := byte(xxh32(src[4:pos], 0) >> 8); src[pos] != want {
		return bad("descriptor checksum %#x, want %#x", src[pos], want)
	}
	pos++
	out := make([]byte, 0, n)
	for {
		if len(src)-pos < 4 {
			return bad("truncated block header")
		}
		size := binary.LittleEndian.Uint32(src[pos:])
		pos += 4
		if size == 0 {
			break
		}
		stored := size&0x80000000 != 0
		size &^= 0x80000000
		if int(size) > maxBlock {
			return bad("block of %d bytes exceeds the maximum %d", size, maxBlock)
		}
		if len(src)-pos < int(size) {
			return bad("truncated block")
		}
		block := src[pos : pos+int(size)]
		pos += int(size)
		if blockChecksum {
			if len(src)-pos < 4 {
				return bad("truncated block checksum")
			}
			if binary.LittleEndian.Uint32(src[pos:]) != xxh32(block, 0) {
				return bad("block checksum mismatch")
			}
			pos += 4
		}
		if stored {
			if len(out)+len(block) > n {
				return bad("more than the %d bytes announced", n)
			}
			out = append(out, block...)
			continue
		}
		room := min(maxBlock, n-len(out))
		k, err := lz4.UncompressBlock(block, out[len(out):len(out)+room])
		if err != nil {
			if room < maxBlock {
				return bad("more than the %d bytes announced, or %v", n, err)
			}
			return bad("%v", err)
		}
		out = out[:len(out)+k]
	}
	if contentChecksum {
		if len(src)-pos < 4 {
			return bad("truncated content checksum")
		}
		pos += 4
	}
	if pos != len(src) {
		return bad("%d bytes after the frame", len(src)-pos)
	}
	if len(out) != n {
		return bad("decompressed to %d bytes, its prefix says %d", len(out), n)
	}
	return out, nil
}

// xxh32 is the 32-bit xxHash (the LZ4 frame format's checksum).
func xxh32(b []byte, seed uint32) uint32 {
	const (
		p1 = 2654435761
		p2 = 2246822519
		p3 = 3266489917
		p4 = 668265263
		p5 = 374761393
	)
	n := len(b)
	var h uint32
	if n >= 16 {
		v1, v2, v3, v4 := seed+p1+p2, seed+p2, seed, seed-p1
		for len(b) >= 16 {
			v1 = bits.RotateLeft32(v1+binary.LittleEndian.Uint32(b)*p2, 13) * p1
			v2 = bits.RotateLeft32(v2+binary.LittleEndian.Uint32(b[4:])*p2, 13) * p1
			v3 = bits.RotateLeft32(v3+binary.LittleEndian.Uint32(b[8:])*p2, 13) * p1
			v4 = bits.RotateLeft32(v4+binary.LittleEndian.Uint32(b[12:])*p2, 13) * p1
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = seed + p5
	}
	h += uint32(n)
	for len(b) >= 4 {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(b)*p3, 17) * p4
		b = b[4:]
	}
	for _, c := range b {
		h = bits.RotateLeft32(h+uint32(c)*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
