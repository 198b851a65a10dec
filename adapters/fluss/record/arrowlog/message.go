package arrowlog

import (
	"encoding/binary"
)

// A minimal, bounds-checked reader of the Arrow IPC flatbuffers this package
// needs (format/Message.fbs and format/Schema.fbs of the Arrow specification):
// Message { version: short; header: union MessageHeader; bodyLength: long;
// custom_metadata } and RecordBatch { length: long; nodes: [FieldNode];
// buffers: [Buffer]; compression: BodyCompression; variadicBufferCounts }.
// It is used by the reader and by the structural tests.

// Arrow MessageHeader union tags.
const (
	headerSchema      = 1
	headerRecordBatch = 3
)

// Arrow MetadataVersion V5, what Arrow Java 15 writes (IpcOption.DEFAULT).
const metadataV5 = 4

// ContinuationMarker starts every encapsulated IPC message since Arrow 0.15.
const ContinuationMarker = 0xFFFFFFFF

type fbTable struct {
	buf   []byte
	pos   int // table start
	vt    int // vtable start
	vtLen int
	size  int // inline table size
}

func fbRoot(buf []byte) (fbTable, bool) {
	if len(buf) < 4 {
		return fbTable{}, false
	}
	return fbTableAt(buf, int64(binary.LittleEndian.Uint32(buf)))
}

func fbTableAt(buf []byte, pos int64) (fbTable, bool) {
	if pos < 0 || pos+4 > int64(len(buf)) {
		return fbTable{}, false
	}
	vt := pos - int64(int32(binary.LittleEndian.Uint32(buf[pos:])))
	if vt < 0 || vt+4 > int64(len(buf)) {
		return fbTable{}, false
	}
	vtLen := int64(binary.LittleEndian.Uint16(buf[vt:]))
	size := int64(binary.LittleEndian.Uint16(buf[vt+2:]))
	if vtLen < 4 || vt+vtLen > int64(len(buf)) || size < 4 || pos+size > int64(len(buf)) {
		return fbTable{}, false
	}
	return fbTable{buf: buf, pos: int(pos), vt: int(vt), vtLen: int(vtLen), size: int(size)}, true
}

// field returns the offset of field i inside the table (0 when absent) and
// whether a value of n bytes there stays inside the table.
func (t fbTable) field(i, n int) (int, bool) {
	at := 4 + 2*i
	if at+2 > t.vtLen {
		return 0, true
	}
	o := int(binary.LittleEndian.Uint16(t.buf[t.vt+at:]))
	if o == 0 {
		return 0, true
	}
	if o+n > t.size {
		return 0, false
	}
	return o, true
}

func (t fbTable) uint8(i int, def uint8) (uint8, bool) {
	o, ok := t.field(i, 1)
	if !ok || o == 0 {
		return def, ok
	}
	return t.buf[t.pos+o], true
}

func (t fbTable) int16(i int, def int16) (int16, bool) {
	o, ok := t.field(i, 2)
	if !ok || o == 0 {
		return def, ok
	}
	return int16(binary.LittleEndian.Uint16(t.buf[t.pos+o:])), true
}

func (t fbTable) int64(i int, def int64) (int64, bool) {
	o, ok := t.field(i, 8)
	if !ok || o == 0 {
		return def, ok
	}
	return int64(binary.LittleEndian.Uint64(t.buf[t.pos+o:])), true
}

// indirect follows the uoffset stored in field i; present is false when the
// field is absent.
func (t fbTable) indirect(i int) (target int64, present, ok bool) {
	o, ok := t.field(i, 4)
	if !ok || o == 0 {
		return 0, false, ok
	}
	p := int64(t.pos + o)
	return p + int64(binary.LittleEndian.Uint32(t.buf[p:])), true, true
}

func (t fbTable) table(i int) (sub fbTable, present, ok bool) {
	target, present, ok := t.indirect(i)
	if !present || !ok {
		return fbTable{}, present, ok
	}
	sub, ok = fbTableAt(t.buf, target)
	return sub, true, ok
}

// vector returns the element bytes of a vector of elemSize-byte elements.
func (t fbTable) vector(i, elemSize int) (elems []byte, count int, present, ok bool) {
	target, present, ok := t.indirect(i)
	if !present || !ok {
		return nil, 0, present, ok
	}
	if target+4 > int64(len(t.buf)) {
		return nil, 0, true, false
	}
	n := int64(binary.LittleEndian.Uint32(t.buf[target:]))
	start := target + 4
	if n*int64(elemSize) > int64(len(t.buf))-start {
		return nil, 0, true, false
	}
	return t.buf[start : start+n*int64(elemSize)], int(n), true, true
}

// FieldNode is one Arrow FieldNode: the length and null count of a
// (possibly nested) field, in depth-first schema order.
type FieldNode struct {
	Length    int64
	NullCount int64
}

// Buffer is one Arrow Buffer: a body range; Length excludes the padding that
// follows it.
type Buffer struct {
	Offset int64
	Length int64
}

// RecordBatchMessage is a decoded encapsulated Arrow IPC RecordBatch message.
type RecordBatchMessage struct {
	// MetadataLength is the int32 after the continuation marker: the
	// flatbuffer size plus the padding that makes 8+MetadataLength a
	// multiple of 8.
	MetadataLength int32
	// Version is the Arrow MetadataVersion (4 = V5).
	Version int16
	// Length is the number of rows.
	Length  int64
	Nodes   []FieldNode
	Buffers []Buffer
	// Compressed is true when the message has a BodyCompression; Codec is
	// then LZ4_FRAME or ZSTD, otherwise NONE.
	Compressed bool
	Codec      Compression
	// VariadicBufferCounts is the number of entries of that vector (only
	// view types use it; never present in Fluss batches).
	VariadicBufferCounts int
	HasCustomMetadata    bool
	BodyLength           int64
	// Body aliases the input.
	Body []byte
	// Size is the whole message: 8 + MetadataLength + BodyLength.
	Size int
}

// ParseRecordBatchMessage decodes the encapsulated RecordBatch message at the
// start of b, enforcing what Fluss 0.9.1 relies on: the continuation marker
// and metadata length that FileLogProjection reads directly, metadata
// version V5, a body starting 8-byte aligned, buffers inside the body in
// increasing, non-overlapping, 8-byte aligned order (FileLogProjection takes
// buffer i to end where buffer i+1 starts), a body length that is a multiple
// of 8, and BodyCompression method BUFFER with codec LZ4_FRAME or ZSTD.
func ParseRecordBatchMessage(b []byte) (*RecordBatchMessage, error) {
	if len(b) < 8 {
		return nil, corrupt("Arrow message of %d bytes is shorter than its 8-byte prefix", len(b))
	}
	if binary.LittleEndian.Uint32(b) != ContinuationMarker {
		return nil, corrupt("Arrow message does not start with the continuation marker 0xFFFFFFFF")
	}
	metaLen := int32(binary.LittleEndian.Uint32(b[4:]))
	if metaLen <= 0 || int64(metaLen) > int64(len(b)-8) {
		return nil, corrupt("Arrow metadata length %d outside 1..%d", metaLen, len(b)-8)
	}
	if (8+metaLen)%8 != 0 {
		return nil, corrupt("Arrow metadata length %d does not align the body to 8 bytes", metaLen)
	}
	fb := b[8 : 8+metaLen]
	m := &RecordBatchMessage{MetadataLength: metaLen}
	msg, ok := fbRoot(fb)
	bad := func(what string) (*RecordBatchMessage, error) {
		return nil, corrupt("malformed Arrow message metadata: %s", what)
	}
	if !ok {
		return bad("root table")
	}
	if m.Version, ok = msg.int16(0, 0); !ok {
		return bad("version")
	}
	if m.Version != metadataV5 {
		return nil, corrupt("Arrow metadata version %d, want V5 (%d)", m.Version, metadataV5)
	}
	typ, ok := msg.uint8(1, 0)
	if !ok {
		return bad("header type")
	}
	if typ != headerRecordBatch {
		return nil, corrupt("Arrow message header type %d, want RecordBatch (%d)", typ, headerRecordBatch)
	}
	if m.BodyLength, ok = msg.int64(3, 0); !ok {
		return bad("body length")
	}
	if _, present, ok := msg.indirect(4); !ok {
		return bad("custom metadata")
	} else {
		m.HasCustomMetadata = present
	}
	rb, present, ok := msg.table(2)
	if !ok || !present {
		return bad("record batch header")
	}
	if m.Length, ok = rb.int64(0, 0); !ok {
		return bad("length")
	}
	if m.Length < 0 {
		return nil, corrupt("negative Arrow batch length %d", m.Length)
	}
	nodes, n, _, ok := rb.vector(1, 16)
	if !ok {
		return bad("nodes")
	}
	m.Nodes = make([]FieldNode, n)
	for i := range m.Nodes {
		e := nodes[16*i:]
		m.Nodes[i] = FieldNode{
			Length:    int64(binary.LittleEndian.Uint64(e)),
			NullCount: int64(binary.LittleEndian.Uint64(e[8:])),
		}
	}
	bufs, n, _, ok := rb.vector(2, 16)
	if !ok {
		return bad("buffers")
	}
	m.Buffers = make([]Buffer, n)
	for i := range m.Buffers {
		e := bufs[16*i:]
		m.Buffers[i] = Buffer{
			Offset: int64(binary.LittleEndian.Uint64(e)),
			Length: int64(binary.LittleEndian.Uint64(e[8:])),
		}
	}
	comp, present, ok := rb.table(3)
	if !ok {
		return bad("compression")
	}
	if present {
		codec, ok1 := comp.uint8(0, 0) // CompressionType: LZ4_FRAME = 0 (the default), ZSTD = 1
		method, ok2 := comp.uint8(1, 0)
		if !ok1 || !ok2 {
			return bad("compression")
		}
		if method != 0 {
			return nil, corrupt("Arrow body compression method %d, want BUFFER (0)", method)
		}
		switch codec {
		case 0:
			m.Codec = CompressionLZ4Frame
		case 1:
			m.Codec = CompressionZstd
		default:
			return nil, corrupt("unknown Arrow compression codec %d", codec)
		}
		m.Compressed = true
	}
	if _, n, _, ok := rb.vector(4, 8); !ok {
		return bad("variadic buffer counts")
	} else {
		m.VariadicBufferCounts = n
	}

	bodyStart := int64(8) + int64(metaLen)
	if m.BodyLength < 0 || m.BodyLength > int64(len(b))-bodyStart {
		return nil, corrupt("Arrow body length %d outside 0..%d", m.BodyLength, int64(len(b))-bodyStart)
	}
	if m.BodyLength%8 != 0 {
		return nil, corrupt("Arrow body length %d is not a multiple of 8", m.BodyLength)
	}
	m.Body = b[bodyStart : bodyStart+m.BodyLength]
	m.Size = int(bodyStart + m.BodyLength)
	var end int64
	for i, buf := range m.Buffers {
		if buf.Offset < end || buf.Offset%8 != 0 || buf.Length < 0 || buf.Length > m.BodyLength-buf.Offset {
			return nil, corrupt("Arrow buffer %d (offset %d, length %d) is misplaced in a %d-byte body after offset %d",
				i, buf.Offset, buf.Length, m.BodyLength, end)
		}
		end = buf.Offset + buf.Length
	}
	return m, nil
}
