package http

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// arrowGuard checks each message of an Arrow IPC stream before arrow-go's
// reader sees it. arrow-go trusts the flatbuffer metadata: a schema that
// claims 2^31 fields makes it allocate them (found by FuzzArrowStream), and
// a compressed body makes it allocate the uncompressed size each buffer
// claims. The guard reads the framing of the Arrow columnar format's
// "Encapsulated message format" (a 0xFFFFFFFF continuation marker, an int32
// metadata length, the Message flatbuffer, the body; apache/arrow
// format/Message.fbs and Schema.fbs for the tables) and refuses, before
// passing the bytes on unchanged:
//
//   - metadata longer than arrowMaxMetadata, a body longer than
//     arrowMaxBody (arrow-go's own limits are set to the same);
//   - a vector or string of the Message, Schema, Field or RecordBatch tables
//     that does not fit in the metadata, or fields nested deeper than
//     arrowMaxDepth;
//   - dictionary batches and dictionary-encoded fields, tensors, and
//     record batch bodies compressed with LZ4_FRAME (none of which the
//     gateway takes).
//
// A record batch body compressed with ZSTD (IPC BodyCompression, method
// BUFFER) is read whole and handed on decompressed, as an uncompressed
// message with the same field nodes (decompress: every buffer decompresses
// to exactly its stated length, as Fluss's Java readers require, at most
// arrowMaxBody bytes together): arrow-go never allocates a size a client
// claims. With keepPacked, the compressed message of each record
// batch is queued for takePacked (nil for an uncompressed one), so that the
// client's compressed buffers can go to Fluss as they are.
//
// Its memory is one metadata buffer; an uncompressed body streams through.
type arrowGuard struct {
	r       io.Reader
	pending []byte // validated bytes not yet handed out
	body    int64  // body bytes of the current message still to pass through
	meta    []byte
	err     error

	keepPacked bool
	packed     []*arrowPacked

	// reserve (nil: none) takes from the memory budget what decompressing
	// a record batch holds, before anything is allocated for it: its
	// compressed body, its decompressed message and arrow-go's copy of it;
	// held are the releases, called by release once the record batches
	// read so far are charged otherwise (or done). refused is a refusal
	// of reserve, which ends the stream with its own status (429).
	reserve func(n int64) (func(), error)
	held    []func()
	refused error
	// unpacked is the decompressed message being handed out (dropped once
	// read: up to arrowMaxBody, it is not kept for the next message).
	unpacked []byte
}

// release returns the budget reserved for the record batches decompressed
// so far.
func (g *arrowGuard) release() {
	for _, r := range g.held {
		r()
	}
	g.held = g.held[:0]
}

// takePacked returns the compressed message of the oldest record batch
// handed out and not yet taken (nil: it was not compressed). arrow-go's
// reader reads one message per record batch, so after its Next this is the
// batch it returned.
func (g *arrowGuard) takePacked() *arrowPacked {
	if len(g.packed) == 0 {
		return nil
	}
	m := g.packed[0]
	g.packed[0] = nil
	g.packed = g.packed[1:]
	return m
}

const (
	arrowMaxMetadata = 1 << 20
	arrowMaxBody     = 64 << 20
	arrowMaxDepth    = 32
)

// errArrowGuard marks the guard's refusals.
var errArrowGuard = errors.New("arrow stream refused")

func (g *arrowGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 && len(g.unpacked) == 0 && g.body == 0 {
		if g.err != nil {
			return 0, g.err
		}
		g.err = g.next()
	}
	if len(g.pending) > 0 {
		n := copy(p, g.pending)
		g.pending = g.pending[n:]
		return n, nil
	}
	if len(g.unpacked) > 0 {
		n := copy(p, g.unpacked)
		if g.unpacked = g.unpacked[n:]; len(g.unpacked) == 0 {
			g.unpacked = nil
		}
		return n, nil
	}
	if int64(len(p)) > g.body {
		p = p[:g.body]
	}
	n, err := g.r.Read(p)
	g.body -= int64(n)
	if err == io.EOF && g.body > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil && err != io.EOF {
		return n, err
	}
	return n, nil
}

// next reads and checks the next message's framing and metadata, queueing
// them in pending and the body length in body; io.EOF at the end.
func (g *arrowGuard) next() error {
	var head [8]byte
	if _, err := io.ReadFull(g.r, head[:4]); err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return io.ErrUnexpectedEOF
	}
	frame := head[:4]
	n := binary.LittleEndian.Uint32(head[:4])
	if n == 0xFFFFFFFF {
		if _, err := io.ReadFull(g.r, head[4:8]); err != nil {
			return io.ErrUnexpectedEOF
		}
		frame = head[:8]
		n = binary.LittleEndian.Uint32(head[4:8])
	}
	if n == 0 { // end-of-stream marker
		g.pending = append(g.pending[:0], frame...)
		return io.EOF
	}
	if n > arrowMaxMetadata {
		return fmt.Errorf("%w: message metadata of %d bytes exceeds %d", errArrowGuard, n, arrowMaxMetadata)
	}
	if cap(g.meta) < int(n) {
		g.meta = make([]byte, n)
	}
	g.meta = g.meta[:n]
	if _, err := io.ReadFull(g.r, g.meta); err != nil {
		return io.ErrUnexpectedEOF
	}
	body, kind, err := checkArrowMessage(g.meta)
	if err != nil {
		return fmt.Errorf("%w: %v", errArrowGuard, err)
	}
	if kind == arrowCompressedBatch {
		return g.decompress(frame, body)
	}
	if kind == arrowRecordBatch && g.keepPacked {
		g.packed = append(g.packed, nil)
	}
	g.pending = append(append(g.pending[:0], frame...), g.meta...)
	g.body = body
	return nil
}

// decompress reads the body of a ZSTD-compressed record batch (its framing
// in frame, its metadata in g.meta) and queues in pending the message
// arrow-go reads without decompressing anything: the same metadata with
// every buffer re-laid out as the uncompressed form the IPC format allows
// in a compressed body (an int64 -1, then the raw bytes; arrow-go slices
// them) and the body length patched; the flatbuffer keeps its size.
func (g *arrowGuard) decompress(frame []byte, bodyLen int64) error {
	if g.reserve != nil {
		// The compressed body, before it is read.
		rel, err := g.reserve(bodyLen)
		if err != nil {
			g.refused = err
			return err
		}
		g.held = append(g.held, rel)
	}
	raw := make([]byte, bodyLen)
	if _, err := io.ReadFull(g.r, raw); err != nil {
		return io.ErrUnexpectedEOF
	}
	b := fb(g.meta)
	m, _ := b.table(0) // checked by checkArrowMessage
	hpos, _ := b.field(m, 2)
	h, _ := b.table(hpos)
	nstart, nn, _ := b.vector(h, 1, 16)
	bstart, nb, _ := b.vector(h, 2, 16)
	le := binary.LittleEndian
	// The stated uncompressed lengths first: nothing is decompressed for a
	// body that claims too much.
	total := int64(0)
	bufs := make([][]byte, nb)
	for i := range nb {
		off, n := int64(le.Uint64(g.meta[bstart+16*i:])), int64(le.Uint64(g.meta[bstart+16*i+8:]))
		if off < 0 || n < 0 || off > bodyLen || n > bodyLen-off {
			return fmt.Errorf("%w: record batch buffer %d (offset %d, length %d) lies outside its %d-byte body", errArrowGuard, i, off, n, bodyLen)
		}
		bufs[i] = raw[off : off+n]
		size := int64(0)
		switch {
		case n == 0:
		case n < 8:
			return fmt.Errorf("%w: compressed buffer %d of %d bytes has no 8-byte length", errArrowGuard, i, n)
		default:
			size = int64(le.Uint64(bufs[i]))
			if size == -1 {
				size = n - 8
			}
		}
		if size < 0 || size > arrowMaxBody-total {
			return fmt.Errorf("%w: compressed buffer %d: uncompressed length %d takes the record batch past %d bytes", errArrowGuard, i, size, arrowMaxBody)
		}
		total += align8(size + 8)
	}
	if g.reserve != nil {
		// The decompressed message and arrow-go's copy of its body.
		rel, err := g.reserve(2 * (int64(len(g.meta)) + total))
		if err != nil {
			g.refused = err
			return err
		}
		g.held = append(g.held, rel)
	}
	out := make([]byte, 0, len(frame)+len(g.meta)+int(total))
	out = append(append(out, frame...), g.meta...)
	bodyAt := len(out)
	dec := zstdDecoders.Get().(*zstd.Decoder)
	defer zstdDecoders.Put(dec)
	for i, c := range bufs {
		at := int64(len(out) - bodyAt)
		length := int64(0)
		if len(c) > 0 {
			size := int64(le.Uint64(c))
			out = le.AppendUint64(out, ^uint64(0))
			if size == -1 {
				out = append(out, c[8:]...)
			} else {
				n := len(out)
				got, err := dec.DecodeAll(c[8:], out[n:n:n+int(size)])
				if err != nil || int64(len(got)) != size {
					return fmt.Errorf("%w: compressed buffer %d does not decompress to its stated %d bytes (%d, %v)", errArrowGuard, i, size, len(got), err)
				}
				if size > 0 && &got[0] != &out[n : n+1][0] {
					copy(out[n:n+int(size)], got) // not expected with the cap limit
				}
				out = out[:n+int(size)]
			}
			length = int64(len(out)-bodyAt) - at
			for (len(out)-bodyAt)%8 != 0 {
				out = append(out, 0)
			}
		}
		le.PutUint64(out[len(frame)+bstart+16*i:], uint64(at))
		le.PutUint64(out[len(frame)+bstart+16*i+8:], uint64(length))
	}
	newBody := int64(len(out) - bodyAt)
	if pos, _ := b.field(m, 3); pos != 0 {
		le.PutUint64(out[len(frame)+pos:], uint64(newBody))
	} else if newBody != 0 {
		return fmt.Errorf("%w: compressed record batch without a body length", errArrowGuard)
	}
	g.unpacked = out
	if g.keepPacked {
		p := &arrowPacked{buffers: bufs, nullCounts: make([]int64, nn), size: int(bodyLen)}
		for i := range nn {
			p.nullCounts[i] = int64(le.Uint64(g.meta[nstart+16*i+8:]))
		}
		g.packed = append(g.packed, p)
	}
	return nil
}

// arrowPacked is a compressed record batch as the client sent it: its
// buffers (slices of its body) and its field nodes' null counts.
type arrowPacked struct {
	buffers    [][]byte
	nullCounts []int64
	size       int
}

// zstdDecoders decode compressed record batch buffers (DecodeAll only: no
// goroutines), at most arrowMaxBody each.
var zstdDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(arrowMaxBody),
		zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		panic(err) // only for invalid options
	}
	return d
}}

func align8(n int64) int64 { return (n + 7) &^ 7 }

// fb reads one flatbuffer with bounds checks.
type fb []byte

func (b fb) u32(pos int) (int, error) {
	if pos < 0 || pos+4 > len(b) {
		return 0, errors.New("offset out of bounds")
	}
	return int(binary.LittleEndian.Uint32(b[pos:])), nil
}

// table returns the position of the table that the uoffset at pos points to.
func (b fb) table(pos int) (int, error) {
	off, err := b.u32(pos)
	if err != nil {
		return 0, err
	}
	t := pos + off
	if _, err := b.u32(t); err != nil {
		return 0, err
	}
	return t, nil
}

// field returns the position of field i of the table at t, 0 when absent.
func (b fb) field(t, i int) (int, error) {
	so, err := b.u32(t)
	if err != nil {
		return 0, err
	}
	vt := t - int(int32(so))
	if vt < 0 || vt+4 > len(b) {
		return 0, errors.New("vtable out of bounds")
	}
	size := int(binary.LittleEndian.Uint16(b[vt:]))
	if 4+2*i+2 > size {
		return 0, nil
	}
	if vt+4+2*i+2 > len(b) {
		return 0, errors.New("vtable out of bounds")
	}
	off := int(binary.LittleEndian.Uint16(b[vt+4+2*i:]))
	if off == 0 {
		return 0, nil
	}
	if t+off >= len(b) {
		return 0, errors.New("field out of bounds")
	}
	return t + off, nil
}

// byteField returns the byte field i of table t (0 when absent).
func (b fb) byteField(t, i int) (byte, error) {
	pos, err := b.field(t, i)
	if err != nil || pos == 0 {
		return 0, err
	}
	return b[pos], nil
}

// vector checks the vector (elements of elem bytes) the uoffset field i of
// table t points to and returns its element positions' start and length;
// n is 0 when the field is absent.
func (b fb) vector(t, i, elem int) (start, n int, err error) {
	pos, err := b.field(t, i)
	if err != nil || pos == 0 {
		return 0, 0, err
	}
	v, err := b.table(pos)
	if err != nil {
		return 0, 0, err
	}
	n, err = b.u32(v)
	if err != nil {
		return 0, 0, err
	}
	if n > (len(b)-v-4)/elem {
		return 0, 0, fmt.Errorf("a vector of %d elements does not fit in %d bytes of metadata", n, len(b))
	}
	return v + 4, n, nil
}

// The kinds of message checkArrowMessage lets through.
const (
	arrowSchema = iota + 1
	arrowRecordBatch
	arrowCompressedBatch // a record batch whose body is compressed with ZSTD
)

// checkArrowMessage checks the Message flatbuffer and returns its body
// length and kind.
func checkArrowMessage(meta []byte) (body int64, kind int, err error) {
	b := fb(meta)
	m, err := b.table(0)
	if err != nil {
		return 0, 0, err
	}
	if _, _, err := b.vector(m, 4, 4); err != nil { // custom_metadata
		return 0, 0, err
	}
	header, err := b.byteField(m, 1)
	if err != nil {
		return 0, 0, err
	}
	if pos, err := b.field(m, 3); err != nil {
		return 0, 0, err
	} else if pos != 0 {
		if pos+8 > len(b) {
			return 0, 0, errors.New("body length out of bounds")
		}
		body = int64(binary.LittleEndian.Uint64(b[pos:]))
	}
	if body < 0 || body > arrowMaxBody {
		return 0, 0, fmt.Errorf("message body of %d bytes exceeds %d", body, arrowMaxBody)
	}
	hpos, err := b.field(m, 2)
	if err != nil || hpos == 0 {
		return 0, 0, errors.New("message without a header")
	}
	h, err := b.table(hpos)
	if err != nil {
		return 0, 0, err
	}
	switch header {
	case 1: // Schema
		if body != 0 {
			return 0, 0, errors.New("a schema message has no body")
		}
		if _, _, err := b.vector(h, 2, 4); err != nil { // custom_metadata
			return 0, 0, err
		}
		if _, _, err := b.vector(h, 3, 8); err != nil { // features
			return 0, 0, err
		}
		return body, arrowSchema, b.fields(h, 1, 0)
	case 3: // RecordBatch
		if _, _, err := b.vector(h, 1, 16); err != nil { // nodes
			return 0, 0, err
		}
		if _, _, err := b.vector(h, 2, 16); err != nil { // buffers
			return 0, 0, err
		}
		if _, _, err := b.vector(h, 4, 8); err != nil { // variadicBufferCounts
			return 0, 0, err
		}
		pos, err := b.field(h, 3)
		if err != nil {
			return 0, 0, err
		}
		if pos == 0 {
			return body, arrowRecordBatch, nil
		}
		// BodyCompression { codec: byte (LZ4_FRAME 0, ZSTD 1); method: byte (BUFFER 0) }
		c, err := b.table(pos)
		if err != nil {
			return 0, 0, err
		}
		codec, err := b.byteField(c, 0)
		if err != nil {
			return 0, 0, err
		}
		method, err := b.byteField(c, 1)
		if err != nil {
			return 0, 0, err
		}
		if codec != 1 || method != 0 {
			return 0, 0, errors.New("record batch bodies compressed with LZ4_FRAME are not supported; compress with ZSTD (pyarrow: IpcWriteOptions(compression=\"zstd\")) or send uncompressed IPC")
		}
		return body, arrowCompressedBatch, nil
	case 2:
		return 0, 0, errors.New("dictionary batches are not supported")
	default:
		return 0, 0, fmt.Errorf("message type %d is neither a schema nor a record batch", header)
	}
}

// fields checks the vector of Field tables in field i of table t, and their
// children, to depth arrowMaxDepth.
func (b fb) fields(t, i, depth int) error {
	if depth > arrowMaxDepth {
		return fmt.Errorf("fields nested deeper than %d", arrowMaxDepth)
	}
	start, n, err := b.vector(t, i, 4)
	if err != nil {
		return err
	}
	for k := range n {
		f, err := b.table(start + 4*k)
		if err != nil {
			return err
		}
		if _, _, err := b.vector(f, 0, 1); err != nil { // name
			return err
		}
		if pos, err := b.field(f, 4); err != nil {
			return err
		} else if pos != 0 {
			return errors.New("dictionary-encoded fields are not supported")
		}
		if _, _, err := b.vector(f, 6, 4); err != nil { // custom_metadata
			return err
		}
		if err := b.fields(f, 5, depth+1); err != nil { // children
			return err
		}
	}
	return nil
}
