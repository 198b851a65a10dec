package arrowlog

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// DefaultMaxBufferSize bounds one decompressed Arrow buffer in a Reader.
const DefaultMaxBufferSize = 256 << 20

// Reader decodes ARROW log batches of one table schema back into rows. It is
// an independent decoder (it shares no code with arrow-go's IPC reader): it
// checks the message against what Fluss 0.9.1 relies on
// (ParseRecordBatchMessage), the Arrow Java buffer layout per type, and the
// compression framing Fluss reads, and converts values back exactly as the
// Builder converted them. Byte slices in the returned Datums alias the input
// or a decompressed buffer. A Reader is not safe for concurrent use.
type Reader struct {
	nodes []node
	dec   decompressor
}

// NewReader returns a reader for batches of the given table columns.
func NewReader(columns []domain.Column) (*Reader, error) {
	return NewReaderFromTypes(domain.ColumnTypes(columns))
}

// NewReaderFromTypes is NewReader for bare column types.
func NewReaderFromTypes(types []domain.DataType) (*Reader, error) {
	nodes, err := compileColumns(types)
	if err != nil {
		return nil, err
	}
	return &Reader{nodes: nodes, dec: decompressor{max: DefaultMaxBufferSize}}, nil
}

// SetMaxBufferSize bounds the size of one decompressed buffer (and so the
// memory a hostile message can make the reader allocate).
func (r *Reader) SetMaxBufferSize(n int) {
	if n > 0 {
		r.dec.max = n
	}
}

// LogBatch is a decoded ARROW log batch.
type LogBatch struct {
	// Header is the batch header; its Records field is the records area.
	Header record.LogBatch
	// ChangeTypes holds one change type per row when the batch is not
	// append-only (the change-type vector precedes the Arrow message); nil
	// for append-only batches, which carry none.
	ChangeTypes []record.ChangeType
	// Message is the decoded Arrow message, nil for an empty batch.
	Message *RecordBatchMessage
	// Rows holds one Datum per column for each record.
	Rows [][]domain.Datum
}

// ReadLogBatch decodes the log batch at the start of b (magic V0 or the
// 0.9.1 V1 layout, CRC checked) and its Arrow records, and returns it with the
// bytes that follow it.
func (r *Reader) ReadLogBatch(b []byte) (*LogBatch, []byte, error) {
	h, rest, err := record.ReadLogBatch(b)
	if err != nil {
		return nil, nil, err
	}
	lb := &LogBatch{Header: h}
	if h.RecordCount < 0 {
		return nil, nil, corrupt("negative record count %d", h.RecordCount)
	}
	records := h.Records
	if !h.AppendOnly() {
		if int64(h.RecordCount) > int64(len(records)) {
			return nil, nil, corrupt("%d change types in a %d-byte records area", h.RecordCount, len(records))
		}
		lb.ChangeTypes = make([]record.ChangeType, h.RecordCount)
		for i := range lb.ChangeTypes {
			ct := record.ChangeType(records[i])
			if ct < record.ChangeAppendOnly || ct > record.ChangeDelete {
				return nil, nil, corrupt("record %d: unknown change type %d", i, records[i])
			}
			lb.ChangeTypes[i] = ct
		}
		records = records[h.RecordCount:]
	}
	if len(records) == 0 {
		if h.RecordCount != 0 {
			return nil, nil, corrupt("log batch claims %d records but has no Arrow message", h.RecordCount)
		}
		return lb, rest, nil
	}
	m, rows, err := r.ReadRecords(records)
	if err != nil {
		return nil, nil, err
	}
	if m.Length != int64(h.RecordCount) {
		return nil, nil, corrupt("log batch header says %d records, the Arrow batch has %d", h.RecordCount, m.Length)
	}
	lb.Message, lb.Rows = m, rows
	return lb, rest, nil
}

// ReadRecords decodes a records area that is exactly one Arrow IPC RecordBatch
// message (no Schema message) into rows.
func (r *Reader) ReadRecords(records []byte) (*RecordBatchMessage, [][]domain.Datum, error) {
	m, err := ParseRecordBatchMessage(records)
	if err != nil {
		return nil, nil, err
	}
	if m.Size != len(records) {
		return nil, nil, corrupt("%d bytes after the Arrow message", len(records)-m.Size)
	}
	if m.VariadicBufferCounts != 0 {
		return nil, nil, corrupt("Arrow batch has variadic buffers, which no Fluss type uses")
	}
	d := batchDecoder{msg: m}
	d.bufs = make([][]byte, len(m.Buffers))
	total := int64(len(records))
	for i, bf := range m.Buffers {
		raw := m.Body[bf.Offset : bf.Offset+bf.Length]
		if m.Compressed {
			if raw, err = r.dec.buffer(m.Codec, raw); err != nil {
				return nil, nil, prefix(err, "buffer %d", i)
			}
			total += int64(len(raw))
		}
		d.bufs[i] = raw
	}
	// Every Fluss type but a field-less ROW costs at least one bit per value
	// in some buffer, which bounds the lengths worth allocating for.
	d.maxLen = 8*total + 64
	// The columns are decoded straight into row-major rows.
	nc := len(r.nodes)
	var flat []domain.Datum
	if m.Length >= 0 && m.Length <= d.maxLen && m.Length <= math.MaxInt32 {
		flat = make([]domain.Datum, int(m.Length)*nc)
	} else if nc == 0 {
		return nil, nil, corrupt("Arrow batch length %d is implausible for the batch size", m.Length)
	} // else the first column names the implausible length, before writing
	if len(flat) == 0 {
		flat = nil
	}
	for i := range r.nodes {
		var dst []domain.Datum
		if flat != nil {
			dst = flat[i:]
		}
		if err = d.fieldInto(&r.nodes[i], m.Length, true, dst, nc); err != nil {
			return nil, nil, prefix(err, "column %d", i)
		}
	}
	if d.node != len(m.Nodes) || d.buf != len(m.Buffers) {
		return nil, nil, corrupt("Arrow batch has %d field nodes and %d buffers, the schema uses %d and %d",
			len(m.Nodes), len(m.Buffers), d.node, d.buf)
	}
	rows := make([][]domain.Datum, m.Length)
	for i := range rows {
		rows[i] = flat[i*nc : (i+1)*nc : (i+1)*nc]
	}
	return m, rows, nil
}

type batchDecoder struct {
	msg    *RecordBatchMessage
	bufs   [][]byte
	node   int
	buf    int
	maxLen int64
}

// field decodes the next field node, of type n, which must have length rows.
// Nulls in a NOT NULL type are corrupt, except in the fields of a null ROW
// (Java leaves them unset, that is null); the struct case checks those.
func (d *batchDecoder) field(n *node, length int64) ([]domain.Datum, error) {
	if length > d.maxLen || length > math.MaxInt32 || length < 0 {
		// Not allocated for: fieldInto names what is wrong.
		if err := d.fieldInto(n, length, true, nil, 1); err != nil {
			return nil, err
		}
		return nil, corrupt("%s field node length %d is implausible for the batch size", n, length)
	}
	out := make([]domain.Datum, length)
	if err := d.fieldInto(n, length, true, out, 1); err != nil {
		return nil, err
	}
	return out, nil
}

// fieldInto decodes the next field node, of type n and length rows, into
// out[0], out[stride], out[2*stride], ... (zero Datums on entry): a column
// of its own (stride 1) or one column of row-major rows (stride = the row's
// width), which spares copying a column into rows.
func (d *batchDecoder) fieldInto(n *node, length int64, checkNulls bool, out []domain.Datum, stride int) error {
	if d.node >= len(d.msg.Nodes) {
		return corrupt("Arrow batch has too few field nodes for %s", n)
	}
	fn := d.msg.Nodes[d.node]
	d.node++
	if fn.Length != length {
		return corrupt("%s field node has length %d, want %d", n, fn.Length, length)
	}
	if length > d.maxLen || length > math.MaxInt32 {
		return corrupt("%s field node length %d is implausible for the batch size", n, length)
	}
	if fn.NullCount < 0 || fn.NullCount > length {
		return corrupt("%s null count %d outside 0..%d", n, fn.NullCount, length)
	}
	nb := n.bufferCount()
	if len(d.bufs)-d.buf < nb {
		return corrupt("Arrow batch has too few buffers for %s", n)
	}
	bufs := d.bufs[d.buf : d.buf+nb]
	d.buf += nb
	L := int(length)

	valid, err := validity(bufs[0], L, int(fn.NullCount))
	if err != nil {
		return prefix(err, "%s", n)
	}
	if checkNulls && fn.NullCount > 0 && !n.nullable {
		return corrupt("%d nulls in NOT NULL %s", fn.NullCount, n)
	}
	isNull := func(i int) bool { return valid != nil && valid[i>>3]&(1<<(i&7)) == 0 }
	allNull := valid == nil && fn.NullCount > 0

	// Check the buffer sizes before allocating anything for them.
	values := bufs[min(1, nb-1)]
	switch n.kind {
	case kBool:
		if len(values) < (L+7)/8 {
			return corrupt("%s values buffer of %d bytes for %d rows", n, len(values), L)
		}
	case kUtf8, kBinary, kList, kMap:
		// checked by offsets
	case kStruct:
	default:
		if int64(len(values)) < int64(L)*int64(n.width) {
			return corrupt("%s values buffer of %d bytes for %d rows", n, len(values), L)
		}
	}
	var offs []byte
	if n.kind == kUtf8 || n.kind == kBinary || n.kind == kList || n.kind == kMap {
		if offs, err = offsets(values, L); err != nil {
			return prefix(err, "%s", n)
		}
	}
	le := binary.LittleEndian
	switch n.kind {
	case kBool:
		for i := 0; i < L; i++ {
			out[i*stride].I64 = int64(values[i>>3] >> (i & 7) & 1)
		}
	case kInt8:
		for i := 0; i < L; i++ {
			out[i*stride].I64 = int64(int8(values[i]))
		}
	case kInt16:
		for i := 0; i < L; i++ {
			out[i*stride].I64 = int64(int16(le.Uint16(values[2*i:])))
		}
	case kInt32, kDate:
		for i := 0; i < L; i++ {
			out[i*stride].I64 = int64(int32(le.Uint32(values[4*i:])))
		}
	case kInt64:
		for i := 0; i < L; i++ {
			out[i*stride].I64 = int64(le.Uint64(values[8*i:]))
		}
	case kFloat32:
		for i := 0; i < L; i++ {
			out[i*stride].F64 = float64(math.Float32frombits(le.Uint32(values[4*i:])))
		}
	case kFloat64:
		for i := 0; i < L; i++ {
			out[i*stride].F64 = math.Float64frombits(le.Uint64(values[8*i:]))
		}
	case kDecimal:
		var arena []byte
		if n.precision > maxCompactPrecision {
			arena = make([]byte, 0, 16*L)
		}
		for i := 0; i < L; i++ {
			if allNull || isNull(i) {
				continue
			}
			lo := le.Uint64(values[16*i:])
			hi := int64(le.Uint64(values[16*i+8:]))
			// Java's Decimal.fromBigDecimal yields null for a value wider
			// than the precision; here it is corrupt data.
			if !fitsPrecision(hi, lo, n.precision) {
				return corrupt("%s value %d has more digits than the precision", n, i)
			}
			if n.precision <= maxCompactPrecision {
				out[i*stride].I64 = int64(lo)
				continue
			}
			start := len(arena)
			arena = appendDecimalBytes(arena, hi, lo)
			out[i*stride].Bytes = arena[start:len(arena):len(arena)]
		}
	case kTime:
		for i := 0; i < L; i++ {
			if allNull || isNull(i) {
				continue
			}
			var v int64
			if n.width == 4 {
				v = int64(int32(le.Uint32(values[4*i:])))
			} else {
				v = int64(le.Uint64(values[8*i:]))
			}
			// ArrowTimeColumnVector: back to int milliseconds of the day.
			switch n.unit {
			case unitSecond:
				v *= 1000
			case unitMicro:
				v /= 1000
			case unitNano:
				v /= 1_000_000
			}
			if v < math.MinInt32 || v > math.MaxInt32 {
				return corrupt("%s value %d does not fit Java's int milliseconds", n, i)
			}
			out[i*stride].I64 = v
		}
	case kTimestamp:
		for i := 0; i < L; i++ {
			if allNull || isNull(i) {
				continue
			}
			v := int64(le.Uint64(values[8*i:]))
			// The inverse of the writer's conversion. Java's
			// ArrowTimestamp*ColumnVector use truncating division here and
			// so fail on pre-1970 values with sub-millisecond digits.
			switch n.unit {
			case unitSecond:
				if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
					return corrupt("%s value %d s overflows milliseconds", n, i)
				}
				out[i*stride].I64 = v * 1000
			case unitMilli:
				out[i*stride].I64 = v
			case unitMicro:
				out[i*stride].I64, out[i*stride].Nanos = floorDiv(v, 1000), int32(floorMod(v, 1000)*1000)
			case unitNano:
				out[i*stride].I64, out[i*stride].Nanos = floorDiv(v, 1_000_000), int32(floorMod(v, 1_000_000))
			}
		}
	case kFixedBin:
		w := n.width
		for i := 0; i < L; i++ {
			out[i*stride].Bytes = values[w*i : w*(i+1) : w*(i+1)]
		}
	case kUtf8, kBinary:
		data := bufs[2]
		for i := 0; i < L; i++ {
			s, e := int(int32(le.Uint32(offs[4*i:]))), int(int32(le.Uint32(offs[4*i+4:])))
			if e > len(data) {
				return corrupt("%s offset %d beyond its %d-byte data buffer", n, e, len(data))
			}
			out[i*stride].Bytes = data[s:e:e]
		}
	case kList:
		elems, err := d.field(n.elem, int64(lastOffset(offs, L)))
		if err != nil {
			return prefix(err, "element")
		}
		for i := 0; i < L; i++ {
			s, e := int(int32(le.Uint32(offs[4*i:]))), int(int32(le.Uint32(offs[4*i+4:])))
			out[i*stride].Elems = elems[s:e:e]
		}
	case kMap:
		kv, err := d.mapEntries(n, int64(lastOffset(offs, L)))
		if err != nil {
			return err
		}
		for i := 0; i < L; i++ {
			s, e := int(int32(le.Uint32(offs[4*i:]))), int(int32(le.Uint32(offs[4*i+4:])))
			out[i*stride].Elems = kv[2*s : 2*e : 2*e]
		}
	case kStruct:
		nf := len(n.fields)
		flat := make([]domain.Datum, L*nf)
		for f := range n.fields {
			fn := &n.fields[f]
			if err := d.fieldInto(fn, length, false, flat[f:], nf); err != nil {
				return prefix(err, "field %d", f)
			}
			for i := 0; i < L; i++ {
				if flat[i*nf+f].Null && !fn.nullable && !allNull && !isNull(i) {
					return corrupt("field %d: null in NOT NULL %s of a non-null row", f, fn)
				}
			}
		}
		for i := 0; i < L; i++ {
			out[i*stride].Elems = flat[i*nf : (i+1)*nf : (i+1)*nf]
		}
	}
	for i := 0; i < L; i++ {
		if allNull || isNull(i) {
			out[i*stride] = domain.Datum{Null: true}
		}
	}
	return nil
}

// mapEntries decodes the "entries" struct of a map (never null) and its key
// and value children, returning key0, value0, key1, value1, ...
func (d *batchDecoder) mapEntries(n *node, length int64) ([]domain.Datum, error) {
	entries := node{kind: kStruct, root: "MAP entries", nullable: false}
	if d.node >= len(d.msg.Nodes) || d.buf >= len(d.bufs) {
		return nil, corrupt("Arrow batch ends inside %s", n)
	}
	fn := d.msg.Nodes[d.node]
	d.node++
	if fn.Length != length {
		return nil, corrupt("%s entries field node has length %d, want %d", n, fn.Length, length)
	}
	if fn.NullCount != 0 {
		return nil, corrupt("%s has %d null entries", n, fn.NullCount)
	}
	if _, err := validity(d.bufs[d.buf], int(length), 0); err != nil {
		return nil, prefix(err, "%s", &entries)
	}
	d.buf++
	keys, err := d.field(n.elem, length)
	if err != nil {
		return nil, prefix(err, "key")
	}
	vals, err := d.field(n.value, length)
	if err != nil {
		return nil, prefix(err, "value")
	}
	kv := make([]domain.Datum, 2*length)
	for i := range keys {
		kv[2*i], kv[2*i+1] = keys[i], vals[i]
	}
	return kv, nil
}

// validity checks a validity bitmap of L bits with nulls zero bits and
// returns it, or nil when it is absent (0 bytes: then there must be no null,
// or only nulls, as Arrow Java's BitVectorHelper.loadValidityBuffer accepts).
func validity(b []byte, L, nulls int) ([]byte, error) {
	if len(b) == 0 {
		if nulls != 0 && nulls != L {
			return nil, corrupt("%d nulls in %d values without a validity bitmap", nulls, L)
		}
		return nil, nil
	}
	nb := (L + 7) / 8
	if len(b) < nb {
		return nil, corrupt("validity bitmap of %d bytes for %d values", len(b), L)
	}
	set := 0
	for i := 0; i < L/8; i++ {
		set += bits.OnesCount8(b[i])
	}
	if r := L % 8; r != 0 {
		set += bits.OnesCount8(b[L/8] & (1<<r - 1))
	}
	if L-set != nulls {
		return nil, corrupt("validity bitmap has %d nulls, the field node says %d", L-set, nulls)
	}
	return b, nil
}

// offsets checks an int32 offsets buffer for L values: L+1 offsets (none
// when L is 0 and the buffer is empty), non-negative and non-decreasing.
func offsets(b []byte, L int) ([]byte, error) {
	if L == 0 && len(b) == 0 {
		return []byte{0, 0, 0, 0}, nil
	}
	if int64(len(b)) < 4*(int64(L)+1) {
		return nil, corrupt("offsets buffer of %d bytes for %d values", len(b), L)
	}
	prev := int32(binary.LittleEndian.Uint32(b))
	if prev < 0 {
		return nil, corrupt("negative offset %d", prev)
	}
	for i := 1; i <= L; i++ {
		o := int32(binary.LittleEndian.Uint32(b[4*i:]))
		if o < prev {
			return nil, corrupt("offset %d (%d) below offset %d (%d)", i, o, i-1, prev)
		}
		prev = o
	}
	return b, nil
}

func lastOffset(offs []byte, L int) int {
	return int(int32(binary.LittleEndian.Uint32(offs[4*L:])))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
