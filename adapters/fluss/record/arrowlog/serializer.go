package arrowlog

import (
	"encoding/binary"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// serializer turns arrow-go arrays into the encapsulated RecordBatch message
// exactly as Fluss 0.9.1's Java client does (ArrowWriter.serializeToOutputView
// with Arrow Java 15):
//
//   - VectorUnloader(root, includeNullCount=true, codec, alignBuffers=true):
//     one FieldNode (length, null count) per field, depth first, and the
//     field's buffers as TypeLayout lists them, each sized by its writer
//     index: validity ceil(n/8) bytes (all ones when there is no null, as
//     Java sets a bit per written value), values n*width (a bit per value
//     for BOOLEAN), offsets 4*(n+1), data up to the last offset; every buffer
//     of a field with no values is empty.
//   - AbstractCompressionCodec.compress per buffer (when compressing): an
//     empty buffer becomes 8 zero bytes; otherwise the int64 LE uncompressed
//     length and the codec's frame, or -1 and the raw bytes when the frame is
//     larger than the raw buffer.
//   - ArrowRecordBatch: buffers laid out at 8-byte aligned offsets.
//   - MessageSerializer.serialize with IpcOption.DEFAULT: the flatbuffer
//     Message built with the same FlatBufferBuilder calls in the same order
//     as ArrowRecordBatch.writeTo and MessageSerializer.serializeMessage, the
//     0xFFFFFFFF marker, the metadata length padded so the body starts
//     8-aligned, then the buffers with zero padding.
//
// arrow-go's own IPC writer produces a valid but different message (no
// validity bitmap without nulls, no 8-byte prefix for empty compressed
// buffers, other flatbuffer field order) and compresses through a
// concurrent streaming zstd encoder that is slow for many small buffers, so
// the message is assembled here.
type serializer struct {
	codec Compression
	level int

	nodes []FieldNode
	bufs  []span // one per Arrow buffer
	// gen holds generated validity bitmaps, out compressed buffers.
	gen    []byte
	out    []byte
	layout []Buffer

	fb   *flatbuffers.Builder
	zstd *zstd.Encoder
	lz4  lz4.CompressorCCompat
}

// span is a buffer: a slice of array memory, or a range of one of the
// arenas (which may move while they grow).
type span struct {
	b          []byte
	arena      uint8 // 0: b, inGen, inOut
	start, end int
}

const (
	inGen = 1
	inOut = 2
)

func (s *serializer) bytes(sp span) []byte {
	switch sp.arena {
	case inGen:
		return s.gen[sp.start:sp.end]
	case inOut:
		return s.out[sp.start:sp.end]
	}
	return sp.b
}

// Serializers are shared by all builders of a (codec, level) through a
// pool: a ZSTD encoder with its history and hash tables and the scratch
// arenas are ~20 MB after a 2 MiB batch, too much to keep per table (a
// builder per log table lives as long as the writer caches its codec), and
// only the goroutines building batches at the same moment need one each.
var serializers sync.Map // serializerKey -> *sync.Pool

type serializerKey struct {
	codec Compression
	level int
}

func getSerializer(codec Compression, level int) (*serializer, error) {
	k := serializerKey{codec, level}
	if codec != CompressionZstd {
		k.level = 0
	}
	p, ok := serializers.Load(k)
	if !ok {
		p, _ = serializers.LoadOrStore(k, &sync.Pool{})
	}
	if s, ok := p.(*sync.Pool).Get().(*serializer); ok {
		return s, nil
	}
	return newSerializer(codec, level)
}

func putSerializer(s *serializer) {
	k := serializerKey{s.codec, s.level}
	if s.codec != CompressionZstd {
		k.level = 0
	}
	if p, ok := serializers.Load(k); ok {
		p.(*sync.Pool).Put(s)
	}
}

// zstdWindow is the ZSTD window of the serializers' encoders.
const zstdWindow = 2 << 20

func newSerializer(codec Compression, level int) (*serializer, error) {
	s := &serializer{codec: codec, level: level, fb: flatbuffers.NewBuilder(1024)}
	if codec == CompressionZstd {
		enc, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
			zstd.WithEncoderConcurrency(1),
			// A buffer is compressed on its own and is at most a batch
			// (client.writer.batch-size, 2 MiB by default): a window of
			// that size finds every match the default 8 MiB one does in
			// it, and the encoder's history is 4 MiB instead of 16 (a
			// new encoder after a collection dropped the pooled one).
			zstd.WithWindowSize(zstdWindow),
			// zstd-jni's Zstd.compressDirectByteBuffer writes no checksum.
			zstd.WithEncoderCRC(false))
		if err != nil {
			return nil, internal("arrowlog: zstd encoder: %v", err)
		}
		s.zstd = enc
	}
	return s, nil
}

func (s *serializer) begin() {
	s.nodes, s.bufs, s.gen, s.out, s.layout = s.nodes[:0], s.bufs[:0], s.gen[:0], s.out[:0], s.layout[:0]
}

// appendMessage appends the message for rec to dst.
func (s *serializer) appendMessage(dst []byte, rec arrow.RecordBatch, nodes []node) ([]byte, error) {
	s.begin()
	for i := range nodes {
		if err := s.unload(rec.Column(i), &nodes[i]); err != nil {
			return dst, prefix(err, "column %d", i)
		}
	}
	return s.finish(dst, rec.NumRows())
}

// appendFlatMessage appends the message for the rows of the flat column
// buffers to dst: the same field nodes and buffers unload takes from
// arrow-go arrays of the same rows (the buffers are already sized by the
// row count, validity bits beyond it unset).
func (s *serializer) appendFlatMessage(dst []byte, rows int, cols []flatCol) ([]byte, error) {
	s.begin()
	for i := range cols {
		c := &cols[i]
		s.nodes = append(s.nodes, FieldNode{Length: int64(rows), NullCount: int64(c.nulls)})
		s.bufs = append(s.bufs, span{b: c.valid})
		switch c.n.kind {
		case kUtf8, kBinary:
			s.bufs = append(s.bufs, span{b: c.offs}, span{b: c.data})
		default:
			s.bufs = append(s.bufs, span{b: c.vals})
		}
	}
	return s.finish(dst, int64(rows))
}

// finish compresses the collected buffers and appends the message.
func (s *serializer) finish(dst []byte, rows int64) ([]byte, error) {
	if s.codec != CompressionNone {
		for i := range s.bufs {
			s.bufs[i] = s.compress(s.bufs[i])
		}
	}
	s.layout = appendLayout(s.layout, len(s.bufs), func(i int) int { return len(s.bytes(s.bufs[i])) })
	meta := s.metadata(rows, bodyLength(s.layout))
	return appendFramed(dst, meta, s.layout, func(i int) []byte { return s.bytes(s.bufs[i]) }), nil
}

// appendLayout appends the body layout of n buffers of the given lengths:
// each at the 8-byte aligned offset after the previous one
// (ArrowRecordBatch with alignBuffers).
func appendLayout(layout []Buffer, n int, length func(int) int) []Buffer {
	var off int64
	for i := range n {
		l := int64(length(i))
		layout = append(layout, Buffer{Offset: off, Length: l})
		off = align8(off + l)
	}
	return layout
}

// bodyLength is the length of a body laid out by appendLayout.
func bodyLength(layout []Buffer) int64 {
	if len(layout) == 0 {
		return 0
	}
	last := layout[len(layout)-1]
	return align8(last.Offset + last.Length)
}

// appendFramed appends the encapsulated message (MessageSerializer.serialize
// with IpcOption.DEFAULT): the 0xFFFFFFFF marker, the metadata length padded
// so the body starts 8-aligned, the metadata, then the buffers of layout
// with zero padding.
func appendFramed(dst, meta []byte, layout []Buffer, buf func(int) []byte) []byte {
	metaLen := len(meta)
	if pad := (8 + metaLen) % 8; pad != 0 {
		metaLen += 8 - pad
	}
	dst = binary.LittleEndian.AppendUint32(dst, ContinuationMarker)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(metaLen))
	dst = append(dst, meta...)
	dst = appendZeros(dst, metaLen-len(meta))
	for i := range layout {
		b := buf(i)
		dst = append(dst, b...)
		dst = appendZeros(dst, int(align8(int64(len(b))))-len(b))
	}
	return dst
}

// metadata builds the flatbuffer Message with Java's call sequence.
func (s *serializer) metadata(rows, bodyLen int64) []byte {
	return recordBatchMetadata(s.fb, rows, bodyLen, s.nodes, s.layout, s.codec)
}

// recordBatchMetadata builds the flatbuffer Message of a RecordBatch with
// the calls of Arrow Java's ArrowRecordBatch.writeTo and
// MessageSerializer.serializeMessage, in their order.
func recordBatchMetadata(b *flatbuffers.Builder, rows, bodyLen int64, nodes []FieldNode, layout []Buffer, codec Compression) []byte {
	b.Reset()
	// ArrowRecordBatch.writeTo
	b.StartVector(16, len(nodes), 8)       // RecordBatch.startNodesVector
	for i := len(nodes) - 1; i >= 0; i-- { // FBSerializables.writeAllStructsToVector
		b.Prep(8, 16) // FieldNode.createFieldNode
		b.PlaceInt64(nodes[i].NullCount)
		b.PlaceInt64(nodes[i].Length)
	}
	nodesOff := b.EndVector(len(nodes))
	b.StartVector(16, len(layout), 8) // RecordBatch.startBuffersVector
	for i := len(layout) - 1; i >= 0; i-- {
		b.Prep(8, 16) // Buffer.createBuffer
		b.PlaceInt64(layout[i].Length)
		b.PlaceInt64(layout[i].Offset)
	}
	buffersOff := b.EndVector(len(layout))
	var compOff flatbuffers.UOffsetT
	if codec != CompressionNone {
		// BodyCompression.createBodyCompression(builder, codec, method BUFFER)
		b.StartObject(2)
		b.PrependByteSlot(1, 0, 0)                   // addMethod
		b.PrependByteSlot(0, arrowCodecID(codec), 0) // addCodec
		compOff = b.EndObject()
	}
	b.StartObject(5)               // RecordBatch.startRecordBatch
	b.PrependInt64Slot(0, rows, 0) // addLength
	b.PrependUOffsetTSlot(1, nodesOff, 0)
	b.PrependUOffsetTSlot(2, buffersOff, 0)
	if codec != CompressionNone {
		b.PrependUOffsetTSlot(3, compOff, 0)
	}
	header := b.EndObject()
	// MessageSerializer.serializeMessage
	b.StartObject(5)
	b.PrependByteSlot(1, headerRecordBatch, 0) // addHeaderType
	b.PrependUOffsetTSlot(2, header, 0)        // addHeader
	b.PrependInt16Slot(0, metadataV5, 0)       // addVersion
	b.PrependInt64Slot(3, bodyLen, 0)          // addBodyLength
	b.Finish(b.EndObject())
	return b.FinishedBytes()
}

func arrowCodecID(c Compression) byte {
	if c == CompressionZstd {
		return 1
	}
	return 0 // LZ4_FRAME
}

func align8(n int64) int64 { return (n + 7) &^ 7 }

func appendZeros(dst []byte, n int) []byte {
	for ; n > 0; n-- {
		dst = append(dst, 0)
	}
	return dst
}

// unload appends the field nodes and buffers of one array, depth first.
func (s *serializer) unload(a arrow.Array, n *node) error {
	d := a.Data()
	if d.Offset() != 0 {
		return internal("arrowlog: sliced %s array", n)
	}
	L := a.Len()
	s.nodes = append(s.nodes, FieldNode{Length: int64(L), NullCount: int64(a.NullN())})
	s.validity(d, L, a.NullN())
	bufs := d.Buffers()
	switch n.kind {
	case kBool:
		s.bitmap(bufs[1], L)
	case kUtf8, kBinary:
		end, err := s.offsets(bufs[1], L)
		if err != nil {
			return err
		}
		s.slice(bufs[2], end)
	case kList:
		end, err := s.offsets(bufs[1], L)
		if err != nil {
			return err
		}
		child := a.(*array.List).ListValues()
		if child.Len() != end {
			child = array.NewSlice(child, 0, int64(end))
			defer child.Release()
		}
		return s.unload(child, n.elem)
	case kMap:
		end, err := s.offsets(bufs[1], L)
		if err != nil {
			return err
		}
		entries := a.(*array.Map).ListValues().(*array.Struct)
		if entries.Len() != end || entries.NullN() != 0 {
			return internal("arrowlog: map entries of length %d with %d nulls, want %d without", entries.Len(), entries.NullN(), end)
		}
		// The "entries" struct: Java's MapWriter defines every slot.
		s.nodes = append(s.nodes, FieldNode{Length: int64(end)})
		s.validity(entries.Data(), end, 0)
		if err := s.unload(entries.Field(0), n.elem); err != nil {
			return err
		}
		return s.unload(entries.Field(1), n.value)
	case kStruct:
		st := a.(*array.Struct)
		for i := range n.fields {
			if err := s.unload(st.Field(i), &n.fields[i]); err != nil {
				return err
			}
		}
	default: // fixed width
		s.slice(bufs[1], L*n.width)
	}
	return nil
}

// validity appends the validity buffer: ceil(L/8) bytes, the array's bitmap
// when it has nulls, else all L bits set.
func (s *serializer) validity(d arrow.ArrayData, L, nulls int) {
	if nulls > 0 {
		s.bitmap(d.Buffers()[0], L)
		return
	}
	nb := (L + 7) / 8
	start := len(s.gen)
	for i := 0; i < nb; i++ {
		s.gen = append(s.gen, 0xFF)
	}
	if r := L % 8; r != 0 {
		s.gen[len(s.gen)-1] = byte(1)<<r - 1
	}
	s.bufs = append(s.bufs, span{arena: inGen, start: start, end: len(s.gen)})
}

// bitmap appends the first L bits of a bitmap, copying it when bits beyond L
// are set (Java's are never set).
func (s *serializer) bitmap(buf interface{ Bytes() []byte }, L int) {
	nb := (L + 7) / 8
	if nb == 0 {
		s.bufs = append(s.bufs, span{b: []byte{}})
		return
	}
	b := buf.Bytes()[:nb]
	if r := L % 8; r != 0 && b[nb-1]&^(byte(1)<<r-1) != 0 {
		start := len(s.gen)
		s.gen = append(s.gen, b...)
		s.gen[len(s.gen)-1] &= byte(1)<<r - 1
		s.bufs = append(s.bufs, span{arena: inGen, start: start, end: len(s.gen)})
		return
	}
	s.bufs = append(s.bufs, span{b: b})
}

// offsets appends an int32 offsets buffer (none for an empty field) and
// returns the last offset.
func (s *serializer) offsets(buf interface{ Bytes() []byte }, L int) (int, error) {
	if L == 0 {
		s.bufs = append(s.bufs, span{b: []byte{}})
		return 0, nil
	}
	b := buf.Bytes()[:4*(L+1)]
	if first := int32(binary.LittleEndian.Uint32(b)); first != 0 {
		return 0, internal("arrowlog: offsets start at %d", first)
	}
	s.bufs = append(s.bufs, span{b: b})
	return int(int32(binary.LittleEndian.Uint32(b[4*L:]))), nil
}

func (s *serializer) slice(buf interface{ Bytes() []byte }, n int) {
	if n == 0 {
		s.bufs = append(s.bufs, span{b: []byte{}})
		return
	}
	s.bufs = append(s.bufs, span{b: buf.Bytes()[:n]})
}

// compress applies Arrow Java's AbstractCompressionCodec.compress to one
// buffer, writing the result into the out arena.
func (s *serializer) compress(sp span) span {
	raw := s.bytes(sp)
	start := len(s.out)
	if len(raw) == 0 {
		s.out = append(s.out, 0, 0, 0, 0, 0, 0, 0, 0)
		return span{arena: inOut, start: start, end: len(s.out)}
	}
	s.out = binary.LittleEndian.AppendUint64(s.out, uint64(len(raw)))
	switch s.codec {
	case CompressionZstd:
		s.out = s.zstd.EncodeAll(raw, s.out)
	case CompressionLZ4Frame:
		s.out = s.appendLZ4Frame(s.out, raw)
	}
	if len(s.out)-start-8 > len(raw) {
		// Larger than the raw buffer: CompressionUtil.packageRawBuffer.
		s.out = s.out[:start]
		s.out = binary.LittleEndian.AppendUint64(s.out, ^uint64(0))
		s.out = append(s.out, raw...)
	}
	return span{arena: inOut, start: start, end: len(s.out)}
}

// appendLZ4Frame appends raw as an LZ4 frame laid out as Fluss's
// FlussLZ4BlockOutputStream writes it: magic, FLG 0x60 (version 1,
// independent blocks, no checksums, no content size), BD 0x40 (64 KB
// blocks), the descriptor checksum, then per 64 KB chunk an int32 LE size and
// the compressed block, or the chunk stored with the size's high bit set
// when compressing does not shrink it, then a zero end mark.
func (s *serializer) appendLZ4Frame(dst, raw []byte) []byte {
	const block = 64 << 10
	dst = append(dst, 0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x82)
	for len(raw) > 0 {
		chunk := raw[:min(block, len(raw))]
		raw = raw[len(chunk):]
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		bound := lz4.CompressBlockBound(len(chunk))
		dst = growLen(dst, bound)
		n, err := s.lz4.CompressBlock(chunk, dst[at+4:at+4+bound])
		if err != nil || n == 0 || n >= len(chunk) {
			dst = append(dst[:at+4], chunk...)
			binary.LittleEndian.PutUint32(dst[at:], uint32(len(chunk))|0x80000000)
			continue
		}
		dst = dst[:at+4+n]
		binary.LittleEndian.PutUint32(dst[at:], uint32(n))
	}
	return append(dst, 0, 0, 0, 0)
}

// growLen extends dst by n bytes (contents unspecified).
func growLen(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		nd := make([]byte, len(dst), 2*cap(dst)+n)
		copy(nd, dst)
		dst = nd
	}
	return dst[:len(dst)+n]
}
