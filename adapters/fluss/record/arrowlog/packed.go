package arrowlog

import (
	"encoding/binary"
	"sync"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Packed record batches: the rows of a client's Arrow IPC record batch whose
// buffers are already compressed with the table's codec
// (domain.PackedColumns) become the records of a Fluss ARROW log batch
// without being decompressed and compressed again. The message is the one
// serializer.go writes for the same rows in everything Fluss's readers look
// at (one FieldNode per column, the buffers in TypeLayout order at 8-byte
// aligned offsets with zero padding, metadata V5, BodyCompression of the
// codec, method BUFFER); what may differ is within what Arrow Java's
// VectorLoader and AbstractCompressionCodec.decompress read:
//
//   - a buffer's frame is the client's (another compression level, several
//     frames, or -1 and the raw bytes);
//   - a buffer may be longer than its rows need (Arrow writers may pad);
//   - an empty validity buffer (a column without nulls: arrow-go and Arrow
//     C++ write none) becomes the all-ones bitmap Java writes, stored raw
//     (-1 and ceil(rows/8) bytes).

var fbBuilders = sync.Pool{New: func() any { return flatbuffers.NewBuilder(1024) }}

// appendRecordBatchMessage appends the encapsulated RecordBatch message of
// rows rows with the given field nodes and body buffers (already compressed
// with codec, or raw for CompressionNone), laid out and framed as Arrow
// Java's MessageSerializer does (serializer.go).
func appendRecordBatchMessage(dst []byte, rows int64, nodes []FieldNode, bufs [][]byte, codec Compression) []byte {
	layout := appendLayout(make([]Buffer, 0, len(bufs)), len(bufs), func(i int) int { return len(bufs[i]) })
	fb := fbBuilders.Get().(*flatbuffers.Builder)
	meta := recordBatchMetadata(fb, rows, bodyLength(layout), nodes, layout, codec)
	dst = appendFramed(dst, meta, layout, func(i int) []byte { return bufs[i] })
	fbBuilders.Put(fb)
	return dst
}

// AppendPacked appends the encapsulated RecordBatch message of the packed
// rows p (rows rows of this encoder's columns) for a table whose codec is
// codec. It refuses, as invalid values, packed rows of another codec, a
// column count or buffer count other than the schema's, and a validity
// buffer that is empty while its column has nulls; the buffers' contents
// are taken as checked (domain.PackedColumns).
func (e *RowEncoder) AppendPacked(dst []byte, rows int, codec Compression, p *domain.PackedColumns) ([]byte, error) {
	pc, err := ParseCompression(p.Codec)
	if err != nil || pc != codec || codec == CompressionNone {
		return dst, invalidValue("packed rows compressed with %q, the table's codec is %s", p.Codec, codec)
	}
	if len(p.NullCounts) != len(e.nodes) {
		return dst, invalidValue("packed rows: %d columns, want %d", len(p.NullCounts), len(e.nodes))
	}
	want := 0
	for i := range e.nodes {
		want += e.nodes[i].bufferCount()
	}
	if len(p.Buffers) != want {
		return dst, invalidValue("packed rows: %d buffers, want %d", len(p.Buffers), want)
	}
	nodes := make([]FieldNode, len(e.nodes))
	bufs := make([][]byte, 0, len(p.Buffers))
	next := 0
	for i := range e.nodes {
		nulls := p.NullCounts[i]
		if nulls < 0 || nulls > int64(rows) {
			return dst, invalidValue("packed rows: column %d: %d nulls in %d rows", i, nulls, rows)
		}
		nodes[i] = FieldNode{Length: int64(rows), NullCount: nulls}
		valid := p.Buffers[next]
		if len(valid) == 0 && rows > 0 {
			if nulls > 0 {
				return dst, invalidValue("packed rows: column %d: %d nulls and no validity bitmap", i, nulls)
			}
			valid = allValid(rows)
		}
		bufs = append(bufs, valid)
		bufs = append(bufs, p.Buffers[next+1:next+e.nodes[i].bufferCount()]...)
		next += e.nodes[i].bufferCount()
	}
	return appendRecordBatchMessage(dst, int64(rows), nodes, bufs, codec), nil
}

// allValid is a raw (-1) validity buffer of rows set bits, as Java writes
// for a column without nulls.
func allValid(rows int) []byte {
	nb := (rows + 7) / 8
	b := make([]byte, 8+nb)
	binary.LittleEndian.PutUint64(b, ^uint64(0))
	for i := 8; i < len(b); i++ {
		b[i] = 0xFF
	}
	if r := rows % 8; r != 0 {
		b[len(b)-1] = byte(1)<<r - 1
	}
	return b
}
