package arrowlog

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"io"
	"math/rand"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// javaLayout counts the field nodes and buffers Arrow Java 15 (VectorUnloader,
// TypeLayout.getTypeBufferCount) writes for a Fluss type, written out
// independently of the package's node tree.
func javaLayout(t *domain.DataType) (nodes, buffers int) {
	switch t.Root {
	case domain.TypeChar, domain.TypeString, domain.TypeBytes:
		return 1, 3 // validity, offsets, data
	case domain.TypeArray:
		n, b := javaLayout(t.Element)
		return 1 + n, 2 + b // validity, offsets
	case domain.TypeMap:
		kn, kb := javaLayout(t.Key)
		vn, vb := javaLayout(t.Value)
		return 2 + kn + vn, 2 + 1 + kb + vb // map: validity, offsets; entries struct: validity
	case domain.TypeRow:
		nodes, buffers = 1, 1
		for i := range t.Fields {
			n, b := javaLayout(&t.Fields[i].Type)
			nodes += n
			buffers += b
		}
		return nodes, buffers
	default:
		return 1, 2 // validity, values
	}
}

func buildAllTypes(t *testing.T, codec Compression) []byte {
	t.Helper()
	b, err := NewBuilderFromTypes(allTypes(), codec, DefaultZstdLevel)
	require.NoError(t, err)
	for _, rw := range allTypesRows() {
		require.NoError(t, b.Append(rw))
	}
	msg, n, err := b.Build(nil)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	return msg
}

func TestMessageStructure(t *testing.T) {
	types := allTypes()
	var wantNodes, wantBuffers int
	for i := range types {
		n, b := javaLayout(&types[i])
		wantNodes += n
		wantBuffers += b
	}
	raw := map[Compression]*RecordBatchMessage{}
	for _, codec := range codecs {
		t.Run(codec.String(), func(t *testing.T) {
			msg := buildAllTypes(t, codec)
			// Encapsulated message: marker, int32 LE metadata length, the
			// metadata padded so the body starts on an 8-byte boundary.
			require.Equal(t, []byte{0xFF, 0xFF, 0xFF, 0xFF}, msg[:4])
			metaLen := int32(binary.LittleEndian.Uint32(msg[4:8]))
			require.Positive(t, metaLen)
			require.Zero(t, (8+metaLen)%8)

			m, err := ParseRecordBatchMessage(msg)
			require.NoError(t, err)
			require.Equal(t, metaLen, m.MetadataLength)
			require.Equal(t, len(msg), m.Size, "one message, nothing after it (no EOS)")
			require.Equal(t, int16(metadataV5), m.Version)
			require.Equal(t, int64(4), m.Length)
			require.False(t, m.HasCustomMetadata)
			require.Zero(t, m.VariadicBufferCounts)
			require.Len(t, m.Nodes, wantNodes)
			require.Len(t, m.Buffers, wantBuffers)
			require.Zero(t, m.BodyLength%8)
			for i, bf := range m.Buffers {
				require.Zero(t, bf.Offset%8, "buffer %d", i)
				if i > 0 {
					prev := m.Buffers[i-1]
					// FileLogProjection copies buffer i as [offset_i, offset_i+1):
					// the gap after a buffer is only its padding.
					require.Equal(t, (prev.Offset+prev.Length+7)/8*8, bf.Offset, "buffer %d", i)
				}
			}
			last := m.Buffers[len(m.Buffers)-1]
			require.Equal(t, (last.Offset+last.Length+7)/8*8, m.BodyLength)
			// Top-level field nodes: 4 rows each; column 1 of row 2 is all nulls.
			require.Equal(t, FieldNode{Length: 4, NullCount: 1}, m.Nodes[0])
			switch codec {
			case CompressionNone:
				require.False(t, m.Compressed, "NONE must not carry a BodyCompression")
				require.Equal(t, CompressionNone, m.Codec)
			default:
				require.True(t, m.Compressed)
				require.Equal(t, codec, m.Codec)
			}
			raw[codec] = m
		})
	}

	// Every compressed buffer is the int64 LE uncompressed length and one
	// frame (or -1 and the raw bytes) and decompresses, with decoders
	// independent of the package, to the NONE message's buffer.
	none := raw[CompressionNone]
	zdec, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer zdec.Close()
	for _, codec := range []Compression{CompressionLZ4Frame, CompressionZstd} {
		m := raw[codec]
		rawSeen, compSeen := 0, 0
		for i, bf := range m.Buffers {
			want := none.Body[none.Buffers[i].Offset : none.Buffers[i].Offset+none.Buffers[i].Length]
			got := m.Body[bf.Offset : bf.Offset+bf.Length]
			if len(want) == 0 {
				// AbstractCompressionCodec: an empty buffer is an 8-byte zero length.
				require.Equal(t, make([]byte, 8), got, "%s buffer %d", codec, i)
				continue
			}
			require.GreaterOrEqual(t, len(got), 8)
			n := int64(binary.LittleEndian.Uint64(got))
			if n == -1 {
				require.Equal(t, want, got[8:], "%s buffer %d", codec, i)
				rawSeen++
				continue
			}
			require.Equal(t, int64(len(want)), n, "%s buffer %d", codec, i)
			var dec []byte
			if codec == CompressionZstd {
				require.Equal(t, []byte{0x28, 0xB5, 0x2F, 0xFD}, got[8:12], "zstd frame magic")
				dec, err = zdec.DecodeAll(got[8:], nil)
				require.NoError(t, err)
			} else {
				// The frame header Java's FlussLZ4BlockOutputStream writes:
				// magic, FLG 0x60 (version 01, independent blocks, no
				// checksums, no size), BD 0x40 (64 KB blocks), header checksum.
				require.Equal(t, []byte{0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x82}, got[8:15], "LZ4 frame header")
				dec, err = io.ReadAll(lz4.NewReader(bytes.NewReader(got[8:])))
				require.NoError(t, err)
			}
			require.Equal(t, want, dec, "%s buffer %d", codec, i)
			compSeen++
		}
		// Tiny buffers do not compress: Java stores them raw behind -1, and
		// so do we.
		require.Positive(t, rawSeen, codec)
		require.Positive(t, compSeen, codec)
	}
}

func TestIncompressibleBufferIsStoredRaw(t *testing.T) {
	data := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(data)
	for _, codec := range []Compression{CompressionLZ4Frame, CompressionZstd} {
		b, err := NewBuilderFromTypes([]domain.DataType{notNull(typ(domain.TypeBytes))}, codec, 3)
		require.NoError(t, err)
		require.NoError(t, b.Append(row(domain.Datum{Bytes: data})))
		msg, _, err := b.Build(nil)
		require.NoError(t, err)
		m, err := ParseRecordBatchMessage(msg)
		require.NoError(t, err)
		require.Len(t, m.Buffers, 3)
		// The 1-byte validity bitmap (Java writes one even without nulls)
		// does not compress either.
		v := m.Buffers[0]
		require.Equal(t, unhex(t, "ffffffffffffffff 01"), m.Body[v.Offset:v.Offset+v.Length])
		d := m.Buffers[2]
		got := m.Body[d.Offset : d.Offset+d.Length]
		require.Equal(t, int64(-1), int64(binary.LittleEndian.Uint64(got)))
		require.Equal(t, data, got[8:])
	}
}

// TestJavaBodyGolden checks a small NONE batch against the body derived by
// hand from Fluss 0.9.1's Java writer (ArrowWriter, VectorUnloader with
// alignBuffers, MessageSerializer.writeBatchBuffers: each buffer at an
// 8-aligned offset, zero padding) and against the batch the Java writer
// actually produced for it (testdata/java_small_none.bin).
func TestJavaBodyGolden(t *testing.T) {
	b, err := NewBuilder([]domain.Column{
		{Name: "a", Type: typ(domain.TypeInteger)},
		{Name: "b", Type: typ(domain.TypeString)},
	}, CompressionNone, 0)
	require.NoError(t, err)
	require.NoError(t, b.Append(row(i64(1), str("a"))))
	require.NoError(t, b.Append(row(null(), str("bc"))))
	require.NoError(t, b.Append(row(i64(3), null())))
	msg, n, err := b.Build(nil)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	m, err := ParseRecordBatchMessage(msg)
	require.NoError(t, err)

	wantBody := unhex(t, `
		05 00 00 00 00 00 00 00
		01 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00
		03 00 00 00 00 00 00 00
		00 00 00 00 01 00 00 00 03 00 00 00 03 00 00 00
		61 62 63 00 00 00 00 00`)
	require.Equal(t, wantBody, m.Body)
	require.Equal(t, []FieldNode{{3, 1}, {3, 1}}, m.Nodes)
	require.Equal(t, []Buffer{{0, 1}, {8, 12}, {24, 1}, {32, 16}, {48, 3}}, m.Buffers)

	batch, err := BuildLogBatch(nil, msg, n, javaSchemaID, javaWriterID, javaSequence)
	require.NoError(t, err)
	java, err := os.ReadFile(javaFile("small", CompressionNone))
	require.NoError(t, err)
	require.Equal(t, java, batch)
	// The header: baseOffset 0, length 300, magic 0, commitTimestamp 0, crc,
	// schema id 1, attributes 01 (append-only), lastOffsetDelta 2, writer id
	// 42, batch sequence 7, record count 3.
	require.Equal(t, unhex(t, `
		00 00 00 00 00 00 00 00 | 2c 01 00 00 | 00 | 00 00 00 00 00 00 00 00 | `+
		hex.EncodeToString(java[21:25])+` | 01 00 | 01 |
		02 00 00 00 | 2a 00 00 00 00 00 00 00 | 07 00 00 00 | 03 00 00 00`), batch[:record.LogBatchHeaderSizeV0])
	require.Equal(t, record.CRC32C(batch[25:]), binary.LittleEndian.Uint32(batch[21:]))
}

func TestXXH32Vectors(t *testing.T) {
	// Reference values of the xxHash specification's implementation.
	require.Equal(t, uint32(0x02CC5D05), xxh32(nil, 0))
	require.Equal(t, uint32(0x550D7456), xxh32([]byte("a"), 0))
	require.Equal(t, uint32(0x32D153FF), xxh32([]byte("abc"), 0))
	require.Equal(t, uint32(0xE2293B2F), xxh32([]byte("Nobody inspects the spammish repetition"), 0))
	// The LZ4 descriptor checksum of FLG 0x60, BD 0x40.
	require.Equal(t, byte(0x82), byte(xxh32([]byte{0x60, 0x40}, 0)>>8))
}

func TestLZ4FrameReaderRules(t *testing.T) {
	data := bytes.Repeat([]byte("fluss arrow log "), 10000) // 160 000 bytes: 3 blocks of 64 KB
	frame := func(opts ...lz4.Option) []byte {
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		require.NoError(t, w.Apply(opts...))
		_, err := w.Write(data)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return buf.Bytes()
	}
	// Accepted: what arrow-go writes, and the optional parts Fluss's reader
	// accepts (block checksums, content size, content checksum, bigger blocks).
	for name, f := range map[string][]byte{
		"plain":     frame(lz4.ChecksumOption(false), lz4.BlockSizeOption(lz4.Block64Kb)),
		"checksums": frame(lz4.ChecksumOption(true), lz4.BlockChecksumOption(true), lz4.BlockSizeOption(lz4.Block256Kb)),
		"size":      frame(lz4.SizeOption(uint64(len(data))), lz4.BlockSizeOption(lz4.Block4Mb)),
	} {
		out, err := lz4FrameDecode(f, len(data))
		require.NoError(t, err, name)
		require.Equal(t, data, out, name)
	}
	good := frame(lz4.ChecksumOption(false), lz4.BlockSizeOption(lz4.Block64Kb))
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	fixHC := func(b []byte) []byte { b[6] = byte(xxh32(b[4:6], 0) >> 8); return b }
	for name, f := range map[string][]byte{
		"magic":        mutate(func(b []byte) []byte { b[0] = 0; return b }),
		"header sum":   mutate(func(b []byte) []byte { b[6] ^= 1; return b }),
		"version":      mutate(func(b []byte) []byte { b[4] = 0xA0; return fixHC(b) }),
		"dependent":    mutate(func(b []byte) []byte { b[4] = 0x40; return fixHC(b) }),
		"dict id":      mutate(func(b []byte) []byte { b[4] |= 1; return fixHC(b) }),
		"block size 3": mutate(func(b []byte) []byte { b[5] = 0x30; return fixHC(b) }),
		"bd reserved":  mutate(func(b []byte) []byte { b[5] |= 1; return fixHC(b) }),
		"truncated":    good[:len(good)-5],
		"trailing":     append(append([]byte(nil), good...), 0),
		"wrong length": good, // checked below with another n
	} {
		n := len(data)
		if name == "wrong length" {
			n--
		}
		_, err := lz4FrameDecode(f, n)
		require.Error(t, err, name)
	}
}

func TestParseRejects(t *testing.T) {
	msg := buildAllTypes(t, CompressionZstd)
	_, err := ParseRecordBatchMessage(msg)
	require.NoError(t, err)
	for name, b := range map[string][]byte{
		"short":     msg[:7],
		"marker":    append([]byte{0, 0, 0, 0}, msg[4:]...),
		"meta len":  append(append([]byte{}, msg[:4]...), append([]byte{1, 0, 0, 0}, msg[8:]...)...),
		"truncated": msg[:len(msg)-8],
	} {
		_, err := ParseRecordBatchMessage(b)
		require.Error(t, err, name)
	}
	r, err := NewReaderFromTypes(allTypes())
	require.NoError(t, err)
	_, _, err = r.ReadRecords(append(append([]byte{}, msg...), 0, 0, 0, 0, 0, 0, 0, 0))
	require.Error(t, err, "trailing bytes")
	// The schema must match the message.
	r2, err := NewReaderFromTypes(allTypes()[:5])
	require.NoError(t, err)
	_, _, err = r2.ReadRecords(msg)
	require.Error(t, err)
}
