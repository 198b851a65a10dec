package http

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
//     compressed record batch bodies (none of which the gateway takes: send
//     uncompressed IPC, with HTTP Content-Encoding: gzip if needed).
//
// Its memory is one metadata buffer; the body streams through.
type arrowGuard struct {
	r       io.Reader
	pending []byte // validated bytes not yet handed out
	body    int64  // body bytes of the current message still to pass through
	meta    []byte
	err     error
}

const (
	arrowMaxMetadata = 1 << 20
	arrowMaxBody     = 64 << 20
	arrowMaxDepth    = 32
)

// errArrowGuard marks the guard's refusals.
var errArrowGuard = errors.New("arrow stream refused")

func (g *arrowGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 && g.body == 0 {
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
	body, err := checkArrowMessage(g.meta)
	if err != nil {
		return fmt.Errorf("%w: %v", errArrowGuard, err)
	}
	g.pending = append(append(g.pending[:0], frame...), g.meta...)
	g.body = body
	return nil
}

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

// checkArrowMessage checks the Message flatbuffer and returns its body
// length.
func checkArrowMessage(meta []byte) (body int64, err error) {
	b := fb(meta)
	m, err := b.table(0)
	if err != nil {
		return 0, err
	}
	if _, _, err := b.vector(m, 4, 4); err != nil { // custom_metadata
		return 0, err
	}
	var kind byte
	if pos, err := b.field(m, 1); err != nil {
		return 0, err
	} else if pos != 0 {
		kind = b[pos]
	}
	if pos, err := b.field(m, 3); err != nil {
		return 0, err
	} else if pos != 0 {
		if pos+8 > len(b) {
			return 0, errors.New("body length out of bounds")
		}
		body = int64(binary.LittleEndian.Uint64(b[pos:]))
	}
	if body < 0 || body > arrowMaxBody {
		return 0, fmt.Errorf("message body of %d bytes exceeds %d", body, arrowMaxBody)
	}
	hpos, err := b.field(m, 2)
	if err != nil || hpos == 0 {
		return 0, errors.New("message without a header")
	}
	h, err := b.table(hpos)
	if err != nil {
		return 0, err
	}
	switch kind {
	case 1: // Schema
		if body != 0 {
			return 0, errors.New("a schema message has no body")
		}
		if _, _, err := b.vector(h, 2, 4); err != nil { // custom_metadata
			return 0, err
		}
		if _, _, err := b.vector(h, 3, 8); err != nil { // features
			return 0, err
		}
		return body, b.fields(h, 1, 0)
	case 3: // RecordBatch
		if _, _, err := b.vector(h, 1, 16); err != nil { // nodes
			return 0, err
		}
		if _, _, err := b.vector(h, 2, 16); err != nil { // buffers
			return 0, err
		}
		if _, _, err := b.vector(h, 4, 8); err != nil { // variadicBufferCounts
			return 0, err
		}
		if pos, err := b.field(h, 3); err != nil {
			return 0, err
		} else if pos != 0 {
			return 0, errors.New("compressed record batch bodies are not supported; send uncompressed IPC (HTTP Content-Encoding: gzip compresses the whole body)")
		}
		return body, nil
	case 2:
		return 0, errors.New("dictionary batches are not supported")
	default:
		return 0, fmt.Errorf("message type %d is neither a schema nor a record batch", kind)
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
