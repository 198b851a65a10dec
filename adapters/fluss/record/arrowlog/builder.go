package arrowlog

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Builder accumulates rows of one table schema and serialises them as the
// records area of an ARROW log batch: one Arrow IPC encapsulated RecordBatch
// message compressed with the table's codec (see the package comment).
//
// Create one per (schema, codec) and reuse it: Build resets it while keeping
// its arrow-go builders, its compressor and its recycled buffer memory. A
// Builder is not safe for concurrent use.
type Builder struct {
	nodes  []node
	schema *arrow.Schema
	codec  Compression
	level  int

	mem  *poolAllocator
	rb   *array.RecordBuilder
	cols []colWriter

	// Flat schemas (no ARRAY, MAP, ROW): own column buffers fed with
	// encoded rows (flat.go); rb, cols and pending stay unused.
	flat    []flatCol
	enc     *RowEncoder
	scratch []byte

	rows    int               // rows in the arrow-go builders
	pending arrow.RecordBatch // rows already turned into arrays by AppendTo
	body    int               // estimated uncompressed body bytes of all rows
	meta    int               // metadata bytes of the last message (0: not known yet)
	ratio   float64           // last observed compressed/uncompressed body ratio
}

// colWriter feeds one arrow-go builder.
type colWriter struct {
	n    *node
	b    array.Builder
	kids []colWriter // ARRAY: element; MAP: key, value; ROW: fields
}

// NewBuilder returns a builder for rows of the given table columns (one
// Datum per column, in column order, as domain/write_rows.go describes),
// compressed with codec. zstdLevel is the table's
// `table.log.arrow.compression.zstd.level` (1..22, checked for ZSTD only);
// see the package comment about what it changes.
func NewBuilder(columns []domain.Column, codec Compression, zstdLevel int) (*Builder, error) {
	return newBuilder(domain.ColumnTypes(columns), columnNames(columns), codec, zstdLevel)
}

// NewBuilderFromTypes is NewBuilder for bare column types; the Arrow field
// names (never sent) become f0, f1, ...
func NewBuilderFromTypes(types []domain.DataType, codec Compression, zstdLevel int) (*Builder, error) {
	return newBuilder(types, nil, codec, zstdLevel)
}

// NewTableBuilder is NewBuilderFromTypes with the codec given as the table
// option string (`table.log.arrow.compression.type`, case-insensitive, empty
// for the ZSTD default). Its signature matches what an ARROW batch factory
// for package writer needs.
func NewTableBuilder(types []domain.DataType, compression string, zstdLevel int) (*Builder, error) {
	codec, err := ParseCompression(compression)
	if err != nil {
		return nil, err
	}
	return newBuilder(types, nil, codec, zstdLevel)
}

func newBuilder(types []domain.DataType, names []string, codec Compression, level int) (*Builder, error) {
	return newBuilderMode(types, names, codec, level, true)
}

// newBuilderMode is newBuilder; with allowFlat false even a flat schema uses
// the arrow-go builders (tests compare the two paths).
func newBuilderMode(types []domain.DataType, names []string, codec Compression, level int, allowFlat bool) (*Builder, error) {
	if codec > CompressionZstd {
		return nil, unsupported("arrow compression %s", codec)
	}
	if err := checkLevel(codec, level); err != nil {
		return nil, err
	}
	nodes, err := compileColumns(types)
	if err != nil {
		return nil, err
	}
	b := &Builder{
		nodes:  nodes,
		schema: arrowSchema(nodes, names),
		codec:  codec,
		level:  level,
		mem:    &poolAllocator{},
		ratio:  1,
	}
	if enc, err := newRowEncoder(b.nodes); err == nil && allowFlat {
		b.enc = enc
		b.flat = make([]flatCol, len(b.nodes))
		for i := range b.flat {
			b.flat[i].n = &b.nodes[i]
			b.flat[i].reset()
		}
	} else {
		b.rb = array.NewRecordBuilder(b.mem, b.schema)
		b.cols = make([]colWriter, len(nodes))
		for i := range nodes {
			b.cols[i] = newColWriter(&b.nodes[i], b.rb.Field(i))
		}
	}
	// Fail now rather than at the first AppendTo if the codec cannot be set up.
	ser, err := getSerializer(codec, level)
	if err != nil {
		return nil, err
	}
	putSerializer(ser)
	return b, nil
}

func newColWriter(n *node, ab array.Builder) colWriter {
	w := colWriter{n: n, b: ab}
	switch n.kind {
	case kList:
		w.kids = []colWriter{newColWriter(n.elem, ab.(*array.ListBuilder).ValueBuilder())}
	case kMap:
		mb := ab.(*array.MapBuilder)
		w.kids = []colWriter{newColWriter(n.elem, mb.KeyBuilder()), newColWriter(n.value, mb.ItemBuilder())}
	case kStruct:
		sb := ab.(*array.StructBuilder)
		w.kids = make([]colWriter, len(n.fields))
		for i := range n.fields {
			w.kids[i] = newColWriter(&n.fields[i], sb.FieldBuilder(i))
		}
	}
	return w
}

// Compression returns the codec of the messages this builder produces.
func (b *Builder) Compression() Compression { return b.codec }

// RecordCount returns the number of rows appended since the last Reset or Build.
func (b *Builder) RecordCount() int {
	n := b.rows
	if b.pending != nil {
		n += int(b.pending.NumRows())
	}
	return n
}

// EstimatedSizeInBytes estimates the size of the message Build would produce
// now: the metadata size of the last message (or an estimate before the
// first) plus the uncompressed body size scaled by the compression ratio of
// the last message. Use it to close batches before they exceed a size limit,
// as Java's ArrowWriter.isFull does with its ratio estimator.
func (b *Builder) EstimatedSizeInBytes() int {
	if b.RecordCount() == 0 {
		return 0
	}
	meta := b.meta
	if meta == 0 {
		meta = 120 + 40*len(b.nodes)
	}
	return meta + int(float64(b.body)*b.ratio)
}

// RowEncoder returns the encoder of rows for AppendEncoded, or nil when the
// schema has ARRAY, MAP or ROW columns (then only Append takes rows).
func (b *Builder) RowEncoder() *RowEncoder { return b.enc }

// Append adds one row: one Datum per column. The row is checked completely
// first, so on error nothing was added. Byte slices are copied.
func (b *Builder) Append(row []domain.Datum) error {
	if b.flat != nil {
		var err error
		if b.scratch, err = b.enc.AppendRow(b.scratch[:0], row); err != nil {
			return err
		}
		return b.AppendEncoded(b.scratch)
	}
	if len(row) != len(b.nodes) {
		return invalidValue("row has %d values, want %d", len(row), len(b.nodes))
	}
	for i := range row {
		if err := check(&b.nodes[i], &row[i]); err != nil {
			return prefix(err, "column %d", i)
		}
	}
	for i := range row {
		b.body += b.cols[i].append(&row[i])
	}
	b.rows++
	return nil
}

// append adds a checked value and returns the uncompressed body bytes it adds
// (approximately: validity bits are not counted).
func (w *colWriter) append(d *domain.Datum) int {
	n := w.n
	if d.Null {
		w.appendNull()
		return n.width + 4*b2i(n.kind == kUtf8 || n.kind == kBinary || n.kind == kList || n.kind == kMap)
	}
	switch n.kind {
	case kBool:
		w.b.(*array.BooleanBuilder).Append(d.I64 != 0)
		return 1
	case kInt8:
		w.b.(*array.Int8Builder).Append(int8(d.I64))
	case kInt16:
		w.b.(*array.Int16Builder).Append(int16(d.I64))
	case kInt32:
		w.b.(*array.Int32Builder).Append(int32(d.I64))
	case kInt64:
		w.b.(*array.Int64Builder).Append(d.I64)
	case kFloat32:
		w.b.(*array.Float32Builder).Append(float32(d.F64))
	case kFloat64:
		w.b.(*array.Float64Builder).Append(d.F64)
	case kDecimal:
		hi, lo, _ := decimalValue(n, d) // checked
		w.b.(*array.Decimal128Builder).Append(decimal128.New(hi, lo))
	case kUtf8:
		w.b.(*array.StringBuilder).BinaryBuilder.Append(d.Bytes)
		return 4 + len(d.Bytes)
	case kFixedBin:
		w.b.(*array.FixedSizeBinaryBuilder).Append(d.Bytes)
	case kBinary:
		w.b.(*array.BinaryBuilder).Append(d.Bytes)
		return 4 + len(d.Bytes)
	case kDate:
		w.b.(*array.Date32Builder).Append(arrow.Date32(d.I64))
	case kTime:
		v := timeValue(n.unit, d.I64)
		if n.unit <= unitMilli {
			w.b.(*array.Time32Builder).Append(arrow.Time32(v))
		} else {
			w.b.(*array.Time64Builder).Append(arrow.Time64(v))
		}
	case kTimestamp:
		v, _ := timestampValue(n.unit, d.I64, d.Nanos) // checked
		w.b.(*array.TimestampBuilder).Append(arrow.Timestamp(v))
	case kList:
		w.b.(*array.ListBuilder).Append(true)
		size := 4
		for i := range d.Elems {
			size += w.kids[0].append(&d.Elems[i])
		}
		return size
	case kMap:
		w.b.(*array.MapBuilder).Append(true)
		size := 4
		for i := 0; i < len(d.Elems); i += 2 {
			size += w.kids[0].append(&d.Elems[i])
			size += w.kids[1].append(&d.Elems[i+1])
		}
		return size
	case kStruct:
		w.b.(*array.StructBuilder).Append(true)
		size := 0
		for i := range w.kids {
			size += w.kids[i].append(&d.Elems[i])
		}
		return size
	}
	return n.width
}

// appendNull appends a null. For a null ROW, arrow-go's StructBuilder also
// appends a null to every field (recursively), which is what Java writes: it
// leaves the child validity bits of a null struct slot unset.
func (w *colWriter) appendNull() {
	w.b.AppendNull()
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// Build appends the records area for the rows added since the last Reset or
// Build to dst (one Arrow IPC RecordBatch message; nothing at all when there
// are no rows, as Java writes no Arrow bytes for an empty batch), returns the
// extended slice and the number of rows, and resets the builder. On error dst
// is returned unextended and the rows are dropped.
func (b *Builder) Build(dst []byte) ([]byte, int, error) {
	n := b.RecordCount()
	dst, err := b.AppendTo(dst)
	b.Reset()
	if err != nil {
		return dst, 0, err
	}
	return dst, n, nil
}

// AppendTo appends the message for all rows added since the last Reset to
// dst without forgetting them: rows appended afterwards join them, and the
// next AppendTo covers all of them. On error dst is returned unextended.
func (b *Builder) AppendTo(dst []byte) (out []byte, err error) {
	if b.RecordCount() == 0 {
		return dst, nil
	}
	orig := len(dst)
	defer func() {
		if r := recover(); r != nil {
			out, err = dst[:orig], internal("arrowlog: building the Arrow batch failed: %v", r)
		}
	}()
	ser, err := getSerializer(b.codec, b.level)
	if err != nil {
		return dst, err
	}
	defer putSerializer(ser)
	if b.flat != nil {
		out, err = ser.appendFlatMessage(dst, b.rows, b.flat)
	} else {
		if err := b.flushRows(); err != nil {
			return dst, err
		}
		out, err = ser.appendMessage(dst, b.pending, b.nodes)
	}
	if err != nil {
		return dst[:orig], err
	}
	msg := out[orig:]
	b.meta = 8 + int(int32(uint32(msg[4])|uint32(msg[5])<<8|uint32(msg[6])<<16|uint32(msg[7])<<24))
	if b.body > 0 {
		b.ratio = float64(len(msg)-b.meta) / float64(b.body)
	}
	return out, nil
}

// flushRows turns the rows in the arrow-go builders into arrays and joins
// them to the pending record.
func (b *Builder) flushRows() error {
	if b.rows == 0 {
		return nil
	}
	rec := b.rb.NewRecordBatch()
	b.rows = 0
	if b.pending == nil {
		b.pending = rec
		return nil
	}
	defer rec.Release()
	cols := make([]arrow.Array, len(b.nodes))
	for i := range cols {
		c, err := array.Concatenate([]arrow.Array{b.pending.Column(i), rec.Column(i)}, b.mem)
		if err != nil {
			for _, a := range cols[:i] {
				a.Release()
			}
			return internal("arrowlog: concatenating column %d: %v", i, err)
		}
		cols[i] = c
	}
	joined := array.NewRecordBatch(b.schema, cols, b.pending.NumRows()+rec.NumRows())
	for _, a := range cols {
		a.Release()
	}
	b.pending.Release()
	b.pending = joined
	return nil
}

// Reset forgets the rows added so far, keeping the builder's memory.
func (b *Builder) Reset() {
	if b.flat != nil {
		for i := range b.flat {
			b.flat[i].reset()
		}
		b.rows, b.body = 0, 0
		return
	}
	if b.rows > 0 {
		b.rb.NewRecordBatch().Release()
		b.rows = 0
	}
	if b.pending != nil {
		b.pending.Release()
		b.pending = nil
	}
	b.body = 0
}

// BuildLogBatch appends to dst a complete magic-V0 log batch holding the rows
// added since the last Reset or Build (see Build), and resets the builder.
// The header gets the append-only attribute, as every client batch; writerID
// and batchSequence are record.NoWriterID and record.NoBatchSequence when
// idempotence is off. It returns the extended slice and the record count;
// the batch starts at the original len(dst). Use SetWriterState to
// re-stamp a built batch.
func (b *Builder) BuildLogBatch(dst []byte, schemaID int32, writerID int64, batchSequence int32) ([]byte, int, error) {
	orig := len(dst)
	dst, start := record.BeginLogBatch(dst)
	dst, n, err := b.Build(dst)
	if err != nil {
		return dst[:orig], 0, err
	}
	if err := record.FinishLogBatch(dst, start, record.LogBatchParams{
		SchemaID: schemaID, Attributes: record.AttrAppendOnly, WriterID: writerID,
		BatchSequence: batchSequence, RecordCount: int32(n),
	}); err != nil {
		return dst[:orig], 0, err
	}
	return dst, n, nil
}

// BuildLogBatch wraps an already built records area (the output of
// Builder.Build, possibly empty) into a complete append-only magic-V0 log
// batch appended to dst.
func BuildLogBatch(dst []byte, records []byte, recordCount int, schemaID int32, writerID int64, batchSequence int32) ([]byte, error) {
	if recordCount < 0 || recordCount > math.MaxInt32 {
		return dst, invalidValue("record count %d out of range", recordCount)
	}
	if (recordCount == 0) != (len(records) == 0) {
		return dst, invalidValue("%d records in a %d-byte records area", recordCount, len(records))
	}
	return record.AppendLogBatch(dst, record.LogBatchParams{
		SchemaID: schemaID, Attributes: record.AttrAppendOnly, WriterID: writerID,
		BatchSequence: batchSequence, RecordCount: int32(recordCount),
	}, records)
}

// SetWriterState rewrites the writer id and batch sequence of a built V0 log
// batch (exactly one batch) and recomputes its CRC, as Java's
// MemoryLogRecordsArrowBuilder.setWriterState followed by build does.
func SetWriterState(batch []byte, writerID int64, batchSequence int32) error {
	lb, rest, err := record.ReadLogBatch(batch)
	if err != nil {
		return err
	}
	if len(rest) != 0 || lb.Magic != record.LogMagicV0 {
		return invalidValue("not exactly one magic V0 log batch")
	}
	return record.FinishLogBatch(batch, 0, record.LogBatchParams{
		SchemaID: int32(lb.SchemaID), Attributes: lb.Attributes, WriterID: writerID,
		BatchSequence: batchSequence, RecordCount: lb.RecordCount,
	})
}
