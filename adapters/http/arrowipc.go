package http

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Arrow IPC stream write bodies (Content-Type:
// application/vnd.apache.arrow.stream, a gateway-go extension; the format is
// the Arrow columnar "IPC streaming format": a schema message, then record
// batches, then an optional end-of-stream marker). Every row of every record
// batch is one entry: an append on a log table, an upsert on a primary-key
// table.
//
// The stream's fields are matched to the table's columns by name (exactly,
// case-sensitive) and type; a table column the stream lacks is null (a NOT
// NULL one is refused). Arrow type -> Fluss type:
//
//	bool                              BOOLEAN
//	int8 / int16 / int32 / int64      TINYINT / SMALLINT / INTEGER / BIGINT
//	float32 / float64                 FLOAT / DOUBLE
//	decimal128(p, s)                  DECIMAL(p, s), same p and s
//	utf8, large_utf8                  STRING, CHAR(n) (at most n characters)
//	binary, large_binary              BYTES, BINARY(n) (exactly n bytes)
//	fixed_size_binary(n)              BINARY(n), BYTES
//	date32                            DATE
//	time32[s|ms]                      TIME(p)
//	timestamp[s|ms|us|ns] (no zone)   TIMESTAMP(p)
//	timestamp[s|ms|us|ns, any zone]   TIMESTAMP_LTZ(p)
//
// Anything else (ARRAY, MAP, ROW columns; dictionary-encoded, list, struct
// fields; a type of another width) is a 400 invalid_argument naming the
// column. Values are converted column by column into the rows the writer
// encodes (no JSON), checked as the JSON decoder checks them (CHAR and
// BINARY lengths, NOT NULL). Each record batch is one call to the write
// use case; at most arrowInFlight batches hold memory at a time. A batch
// larger than gateway.rest.write.max-rows is refused (send smaller batches).
//
// The answer (200):
//
//	{"row_count": n, "success_count": n, "error_count": n,
//	 "batches": [{"batch": 0, "row_count": n, "success_count": n, "error_count": n,
//	              "failures": [{"first_row": i, "last_row": j, "error_code": "…",
//	                            "message": "…", "retryable": b, "applied": "no"|"unknown"}]}]}
//
// batch counts record batches from 0; rows count from 0 within their batch;
// consecutive failed rows with the same verdict share one range. With
// X-Fluss-Write-Positions each batch also has "positions": [{"first_row": i,
// "last_row": j, "partition": "…", "bucket": b, "offset": o |
// "log_end_offset": o}] (appendPositionRanges). A schema
// that does not match, a stream that is not Arrow IPC or ends early, a
// batch refused as a whole, or more rows than gateway.rest.write.stream.max-rows
// end the request with an error stating what earlier batches wrote.

const (
	arrowInFlight     = 3
	arrowBudgetPerRow = 64 // estimate of the writer's encoded bytes per row, beyond the Datums
)

// writeArrow serves POST …/records with an Arrow IPC stream body.
func (a *api) writeArrow(c *fiber.Ctx, scope application.Scope, path domain.TablePath) error {
	if c.Get(HeaderIdempotencyKey) != "" {
		return a.writeArrowKeyed(c, scope, path) // ingest_keyed.go
	}
	body, err := streamedBody(c)
	if err != nil {
		return err
	}
	p := &arrowPipeline{a: a, c: c, scope: scope, path: path, positions: writePositionsAsked(c)}
	err = p.run(body)
	p.drain()
	if p.stopErr != nil {
		err = p.stopErr
	}
	a.observeIngest(c, MIMEArrowStream, path, p.rows, body.n)
	c.Locals(localBytesIn, body.n)
	addLogAttrs(c, "table", path.String(), "rows", p.rows, "rows_failed", p.rows-p.ok)
	if err != nil {
		c.Context().SetConnectionClose()
		return p.stopMessage(err)
	}
	c.Locals(localVerdicts, true)
	return p.answer(c)
}

// answer sends the ArrowWriteResponse of the folded batches.
func (p *arrowPipeline) answer(c *fiber.Ctx) error {
	p.a.chargeAnswer(c, int64(2*cap(p.out)))
	out := make([]byte, 0, 96+len(p.out))
	out = append(out, `{"row_count":`...)
	out = strconv.AppendInt(out, p.rows, 10)
	out = append(out, `,"success_count":`...)
	out = strconv.AppendInt(out, p.ok, 10)
	out = append(out, `,"error_count":`...)
	out = strconv.AppendInt(out, p.rows-p.ok, 10)
	out = append(out, `,"batches":[`...)
	out = append(out, p.out...)
	out = append(out, "]}"...)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(out)
}

// arrowBatch is one record batch written by one use-case call.
type arrowBatch struct {
	index int
	rec   arrow.RecordBatch
	done  chan struct{}
	res   application.WriteResult
	err   error
}

type arrowPipeline struct {
	a       *api
	c       *fiber.Ctx
	scope   application.Scope
	path    domain.TablePath
	pending []*arrowBatch
	// positions adds each batch's written row ranges and where they landed
	// (HeaderWritePositions).
	positions bool
	// rows and ok count the entries folded; out holds the batches' answers.
	rows, ok int64
	out      []byte
	stopErr  error
	stopAt   int // the batch stopErr belongs to
}

func (p *arrowPipeline) run(body io.Reader) error {
	guard := &arrowGuard{r: body, keepPacked: true, reserve: func(n int64) (func(), error) {
		return p.a.acquireFor(p.c.UserContext(), n, "a ZSTD-compressed record batch decompressed")
	}}
	defer guard.release()
	rd, err := newArrowReader(guard)
	if err != nil {
		return domain.InvalidArgument("the body is not an Arrow IPC stream: %v", err)
	}
	defer rd.Release()
	maxRows, batchMax := int64(p.a.streamMaxRows()), int64(p.a.writeMaxRows())
	read := int64(0)
	for i := 0; p.stopErr == nil; i++ {
		if ok, err := arrowNext(rd); !ok {
			if guard.refused != nil {
				return guard.refused // the memory budget: 429
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return domain.InvalidArgument("record batch %d: the Arrow stream cannot be read (truncated or malformed): %v", i, err)
			}
			return nil
		}
		rec := rd.RecordBatch()
		packed := guard.takePacked()
		n := rec.NumRows()
		if n > batchMax {
			return &domain.Error{Kind: domain.KindLimitExceeded,
				Message: fmt.Sprintf("record batch %d: %d rows exceed the limit of %d rows per record batch (gateway.rest.write.max-rows); send smaller batches", i, n, batchMax)}
		}
		if read+n > maxRows {
			return &domain.Error{Kind: domain.KindLimitExceeded,
				Message: fmt.Sprintf("record batch %d: the stream has more than %d rows, the limit of one request", i, maxRows)}
		}
		read += n
		size := 0
		for _, col := range rec.Columns() {
			for _, b := range col.Data().Buffers() {
				if b != nil {
					size += b.Len()
				}
			}
		}
		if err := p.a.chargeStreamed(p.c, size); err != nil { // the decoded bytes
			return err
		}
		held := size // the memory: the arrays, and the client's compressed buffers kept for the writer
		if packed != nil {
			held += packed.size
		}
		p.settle(arrowInFlight - 1)
		release, err := p.a.acquireChunk(p.c.UserContext(), int64(held)+n*(int64(rec.NumCols())*80+arrowBudgetPerRow))
		if err != nil {
			return err
		}
		guard.release() // the batch's decompression, now charged as its arrays and packed buffers
		rec.Retain()
		b := &arrowBatch{index: i, rec: rec, done: make(chan struct{})}
		p.c.Locals(localVerdicts, true)
		go func() {
			defer close(b.done)
			defer release()
			defer rec.Release()
			dec := &arrowDecoder{rec: rec, batch: i, packed: packed}
			if s, ok := datumSlabs.Get().(*[]domain.Datum); ok {
				dec.slab = *s
			}
			defer dec.release()
			b.res, b.err = p.a.records.Write(p.c.UserContext(), p.scope, application.WriteCommand{
				Path: p.path, Decoder: dec, Runs: true,
			})
		}()
		p.pending = append(p.pending, b)
	}
	return nil
}

// settle folds the batches that are done, in order, and waits for the
// oldest until at most n are in flight.
func (p *arrowPipeline) settle(n int) {
	p.pending = settleInOrder(p.pending, n, func(x *arrowBatch) <-chan struct{} { return x.done }, p.fold)
}

// newArrowReader opens the stream behind the guard g (arrowguard.go), with
// arrow-go's own size limits at the guard's. arrow-go panics on some
// malformed metadata the guard does not look into (a type table's fields):
// that is an invalid body, not a gateway failure.
func newArrowReader(g *arrowGuard) (rd *ipc.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			rd, err = nil, fmt.Errorf("malformed schema message (%v)", p)
		}
	}()
	return ipc.NewReader(g, ipc.WithAllocator(memory.DefaultAllocator), ipc.WithEnsureNativeEndian(true),
		ipc.WithMetadataSizeLimit(arrowMaxMetadata), ipc.WithBodySizeLimit(arrowMaxBody))
}

// arrowNext is rd.Next with rd's error, and arrow-go's panics on malformed
// messages turned into an error.
func arrowNext(rd *ipc.Reader) (ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			ok, err = false, fmt.Errorf("malformed record batch message (%v)", p)
		}
	}()
	if rd.Next() {
		return true, nil
	}
	return false, rd.Err()
}

func (p *arrowPipeline) drain() {
	for _, b := range p.pending {
		<-b.done
		p.fold(b)
	}
	p.pending = nil
}

// fold adds a finished batch's verdicts to the answer: its runs
// (WriteResult.Runs, a verdict per batch the writer cut the record batch
// into) or, from a write answered entry by entry, a run per row.
func (p *arrowPipeline) fold(b *arrowBatch) {
	if b.err != nil {
		if p.stopErr == nil {
			p.stopErr, p.stopAt = b.err, b.index
		}
		return
	}
	runs := b.res.Runs
	if runs == nil {
		runs = make([]domain.ResultRun, len(b.res.Results))
		for i, r := range b.res.Results {
			runs[i] = domain.ResultRun{Rows: 1, Result: r}
		}
	}
	n, ok := int64(0), int64(0)
	for i := range runs {
		n += int64(runs[i].Rows)
		if runs[i].Result.OK() {
			ok += int64(runs[i].Rows)
		}
	}
	p.rows += n
	p.ok += ok
	if len(p.out) > 0 {
		p.out = append(p.out, ',')
	}
	p.out = append(p.out, `{"batch":`...)
	p.out = strconv.AppendInt(p.out, int64(b.index), 10)
	p.out = append(p.out, `,"row_count":`...)
	p.out = strconv.AppendInt(p.out, n, 10)
	p.out = append(p.out, `,"success_count":`...)
	p.out = strconv.AppendInt(p.out, ok, 10)
	p.out = append(p.out, `,"error_count":`...)
	p.out = strconv.AppendInt(p.out, n-ok, 10)
	p.out = append(p.out, `,"failures":[`...)
	first := true
	row := 0
	for k := 0; k < len(runs); {
		if runs[k].Result.OK() {
			row += runs[k].Rows
			k++
			continue
		}
		v, from := runs[k].Result, row
		for k < len(runs) && !runs[k].Result.OK() && sameVerdict(runs[k].Result, v) {
			row += runs[k].Rows
			k++
		}
		if !first {
			p.out = append(p.out, ',')
		}
		first = false
		p.out = append(p.out, `{"first_row":`...)
		p.out = strconv.AppendInt(p.out, int64(from), 10)
		p.out = append(p.out, `,"last_row":`...)
		p.out = strconv.AppendInt(p.out, int64(row-1), 10)
		p.out = appendFailureFields(p.out, v)
		p.out = append(p.out, '}')
	}
	p.out = append(p.out, ']')
	if p.positions {
		p.out = appendPositionRanges(p.out, runs)
	}
	p.out = append(p.out, '}')
}

// appendPositionRanges appends `,"positions":[…]` for a record batch's
// verdicts: its successful rows whose position is known, as ranges of rows
// that landed next to each other, {"first_row":i,"last_row":j,
// "partition":…,"bucket":b,"offset":o} (rows i…j at offsets o…o+j-i of the
// bucket's log: log tables) or {…,"log_end_offset":o} (rows i…j in batches
// of one bucket after which the changelog ended at o: primary-key tables;
// see HeaderWritePositions). Failed rows and successes without a position
// are in no range.
func appendPositionRanges(dst []byte, runs []domain.ResultRun) []byte {
	dst = append(dst, `,"positions":[`...)
	first := true
	row := 0
	for k := 0; k < len(runs); {
		at := runs[k].Result.At
		if !runs[k].Result.OK() || !at.Known {
			row += runs[k].Rows
			k++
			continue
		}
		from := row
		row += runs[k].Rows
		k++
		for k < len(runs) && runs[k].Result.OK() && nextPosition(at, row-1-from, runs[k].Result.At) {
			row += runs[k].Rows
			k++
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `{"first_row":`...)
		dst = strconv.AppendInt(dst, int64(from), 10)
		dst = append(dst, `,"last_row":`...)
		dst = strconv.AppendInt(dst, int64(row-1), 10)
		dst = appendWritePosition(dst, at)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// nextPosition reports whether next continues the range that starts at
// first and has k rows after its first: the same partition and bucket, and
// the next offset of a log (Exact) or the same log end offset.
func nextPosition(first domain.WrittenAt, k int, next domain.WrittenAt) bool {
	if !next.Known || next.Exact != first.Exact || next.Partition != first.Partition || next.Bucket != first.Bucket {
		return false
	}
	if first.Exact {
		return next.Offset == first.Offset+int64(k)+1
	}
	return next.Offset == first.Offset
}

func sameVerdict(a, b domain.EntryResult) bool {
	return !a.OK() && a.Code == b.Code && a.Message == b.Message && a.Retryable == b.Retryable &&
		(a.Applied == domain.AppliedNo) == (b.Applied == domain.AppliedNo)
}

// stopMessage adds to the error that ended the request what the batches
// before it wrote.
func (p *arrowPipeline) stopMessage(err error) error {
	de := domain.AsError(err)
	if de == nil {
		de = &domain.Error{Kind: domain.KindInternal, Cause: err}
	}
	out := *de
	written := "no row had been written before it"
	if p.rows > 0 {
		written = fmt.Sprintf("%d rows of other record batches had already been handed to the writer: %d written, %d failed", p.rows, p.ok, p.rows-p.ok)
	}
	msg := out.Message
	if errors.Is(err, p.stopErr) && p.stopErr != nil {
		msg = fmt.Sprintf("record batch %d was not written: %s", p.stopAt, msg)
	}
	out.Message = msg + "; " + written + "; nothing after it was written"
	return &out
}

// arrowDecoder turns one record batch into write entries for a table
// definition.
type arrowDecoder struct {
	rec   arrow.RecordBatch
	batch int
	// packed is the record batch as the client compressed it (nil: it was
	// not), for packedOf.
	packed *arrowPacked
	// slab holds the rows' values (from datumSlabs); every value is
	// overwritten when a batch is converted.
	slab []domain.Datum
}

// datumSlabs recycles the rows of converted record batches.
var datumSlabs sync.Pool

// release returns the decoder's rows once nothing reads them (the use case
// has returned).
func (d *arrowDecoder) release() {
	if d.slab != nil && cap(d.slab) <= 4<<20 {
		s := d.slab[:0]
		datumSlabs.Put(&s)
	}
	d.slab = nil
}

// DecodeWrite matches the batch's schema to t and converts its rows.
func (d *arrowDecoder) DecodeWrite(t *application.Table, maxRows int) (application.DecodedWrite, error) {
	batch, ids, err := d.decodeWrite(t, maxRows)
	return application.DecodedWrite{Batch: batch, IDs: ids}, err
}

func (d *arrowDecoder) decodeWrite(t *application.Table, maxRows int) (batch domain.WriteBatch, ids []string, err error) {
	defer func() {
		// Buffers shorter than the row count claims (arrow-go does not
		// check them) fail a bounds check: the body is invalid.
		if p := recover(); p != nil {
			batch, ids, err = domain.WriteBatch{}, nil, domain.InvalidArgument("record batch %d: malformed Arrow data (%v)", d.batch, p)
		}
	}()
	cols := t.Columns()
	n := int(d.rec.NumRows())
	if n > maxRows {
		return domain.WriteBatch{}, nil, &domain.Error{Kind: domain.KindLimitExceeded,
			Message: fmt.Sprintf("record batch %d: %d rows exceed the limit of %d", d.batch, n, maxRows)}
	}
	conv, err := matchArrowSchema(d.rec.Schema(), cols)
	if err != nil {
		return domain.WriteBatch{}, nil, err
	}
	if domain.ColumnarAppendable(t.Info) {
		// The fast path (arrowcolumns.go): the columns as they are, no Datum.
		cr, err := d.decodeColumns(cols, conv)
		if err != nil {
			return domain.WriteBatch{}, nil, err
		}
		if cr.Packed, err = d.packedOf(cols, conv, cr); err != nil {
			return domain.WriteBatch{}, nil, err
		}
		return domain.WriteBatch{Columns: cr}, noIDs(n), nil
	}
	op := domain.OpAppend
	if len(t.Info.Descriptor.Schema.PrimaryKey) > 0 {
		op = domain.OpUpsert
	}
	width := len(cols)
	if cap(d.slab) < n*width {
		d.slab = make([]domain.Datum, n*width)
	}
	slab := d.slab[:n*width]
	for ci, cv := range conv {
		if cv.field < 0 {
			for r := range n {
				slab[r*width+ci] = domain.Datum{Null: true}
			}
			continue
		}
		if err := cv.fill(d.rec.Column(cv.field), slab, width, ci); err != nil {
			return domain.WriteBatch{}, nil, domain.InvalidArgument("record batch %d: column `%s`: %s", d.batch, cols[ci].Name, err)
		}
	}
	entries := make([]domain.WriteEntry, n)
	for r := range entries {
		entries[r] = domain.WriteEntry{Op: op, Row: slab[r*width : (r+1)*width : (r+1)*width]}
	}
	return domain.WriteBatch{Entries: entries}, noIDs(n), nil
}

// arrowNoIDs backs noIDs: Arrow rows have no entry ids, and the use case
// wants one per row; nothing writes into an ids slice, so every batch
// shares these (a 160 KB zeroed allocation per 10,000-row batch before).
var arrowNoIDs = make([]string, 16<<10)

// noIDs returns n empty entry ids, read-only.
func noIDs(n int) []string {
	if n <= len(arrowNoIDs) {
		return arrowNoIDs[:n:n]
	}
	return make([]string, n)
}

// arrowColumn converts one stream field into one table column.
type arrowColumn struct {
	field int // the stream field, -1: the stream lacks the column (null)
	fill  func(arr arrow.Array, slab []domain.Datum, width, ci int) error
}

// matchArrowSchema matches the stream's fields to the table's columns by
// name and type.
func matchArrowSchema(s *arrow.Schema, cols []domain.Column) ([]arrowColumn, error) {
	byName := make(map[string]int, len(cols))
	for i, c := range cols {
		byName[c.Name] = i
	}
	conv := make([]arrowColumn, len(cols))
	for i := range conv {
		conv[i].field = -1
	}
	for fi, f := range s.Fields() {
		ci, ok := byName[f.Name]
		if !ok {
			return nil, domain.InvalidArgument("Arrow field `%s`: the table has no such column", cutName(f.Name))
		}
		if conv[ci].field >= 0 {
			return nil, domain.InvalidArgument("Arrow field `%s`: appears more than once in the stream's schema", cutName(f.Name))
		}
		fill, err := arrowFill(f.Type, &cols[ci].Type)
		if err != nil {
			return nil, domain.InvalidArgument("column `%s`: Arrow type %s does not match Fluss type %s: %s", f.Name, f.Type, typeName(&cols[ci].Type), err)
		}
		conv[ci] = arrowColumn{field: fi, fill: fill}
	}
	for ci, c := range cols {
		if conv[ci].field < 0 && !c.Type.Nullable {
			return nil, domain.InvalidArgument("column `%s`: NOT NULL, but the Arrow stream has no field of that name", c.Name)
		}
	}
	return conv, nil
}

func cutName(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func typeName(t *domain.DataType) string {
	switch t.Root {
	case domain.TypeDecimal:
		return fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case domain.TypeChar, domain.TypeBinary:
		return fmt.Sprintf("%s(%d)", t.Root, t.Length)
	case domain.TypeTime, domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		return fmt.Sprintf("%s(%d)", t.Root, t.Precision)
	}
	return string(t.Root)
}

// fillFunc converts the non-null value at row r of arr into d.
type fillFunc func(d *domain.Datum, r int) error

// rowsOf runs set on every row of arr, marking nulls (refused for a NOT
// NULL column).
func rowsOf(arr arrow.Array, t *domain.DataType, slab []domain.Datum, width, ci int, set fillFunc) error {
	n := arr.Len()
	for r := range n {
		d := &slab[r*width+ci]
		if arr.IsNull(r) {
			if !t.Nullable {
				return fmt.Errorf("row %d: null value for a NOT NULL column", r)
			}
			*d = domain.Datum{Null: true}
			continue
		}
		*d = domain.Datum{}
		if err := set(d, r); err != nil {
			return fmt.Errorf("row %d: %w", r, err)
		}
	}
	return nil
}

var errArrowType = errors.New("not in the Arrow-to-Fluss type mapping")

// arrowFill returns the converter of an Arrow type into the Fluss type t.
func arrowFill(at arrow.DataType, t *domain.DataType) (func(arrow.Array, []domain.Datum, int, int) error, error) {
	wrap := func(mk func(arr arrow.Array) fillFunc) func(arrow.Array, []domain.Datum, int, int) error {
		return func(arr arrow.Array, slab []domain.Datum, width, ci int) error {
			return rowsOf(arr, t, slab, width, ci, mk(arr))
		}
	}
	id := at.ID()
	switch t.Root {
	case domain.TypeBoolean:
		if id == arrow.BOOL {
			return wrap(func(arr arrow.Array) fillFunc {
				a := arr.(*array.Boolean)
				return func(d *domain.Datum, r int) error {
					if a.Value(r) {
						d.I64 = 1
					}
					return nil
				}
			}), nil
		}
	case domain.TypeTinyInt:
		if id == arrow.INT8 {
			return wrap(func(arr arrow.Array) fillFunc {
				v := arr.(*array.Int8).Int8Values()
				return func(d *domain.Datum, r int) error { d.I64 = int64(v[r]); return nil }
			}), nil
		}
	case domain.TypeSmallInt:
		if id == arrow.INT16 {
			return wrap(func(arr arrow.Array) fillFunc {
				v := arr.(*array.Int16).Int16Values()
				return func(d *domain.Datum, r int) error { d.I64 = int64(v[r]); return nil }
			}), nil
		}
	case domain.TypeInteger:
		if id == arrow.INT32 {
			return wrap(func(arr arrow.Array) fillFunc {
				v := arr.(*array.Int32).Int32Values()
				return func(d *domain.Datum, r int) error { d.I64 = int64(v[r]); return nil }
			}), nil
		}
	case domain.TypeBigInt:
		if id == arrow.INT64 {
			return wrap(func(arr arrow.Array) fillFunc {
				v := arr.(*array.Int64).Int64Values()
				return func(d *domain.Datum, r int) error { d.I64 = v[r]; return nil }
			}), nil
		}
	case domain.TypeFloat:
		if id == arrow.FLOAT32 {
			return wrap(func(arr arrow.Array) fillFunc {
				v := arr.(*array.Float32).Float32Values()
				return func(d *domain.Datum, r int) error { d.F64 = float64(v[r]); return nil }
			}), nil
		}
	case domain.TypeDouble:
		if id == arrow.FLOAT64 {
			return wrap(func(arr arrow.Array) fillFunc {
				v := arr.(*array.Float64).Float64Values()
				return func(d *domain.Datum, r int) error { d.F64 = v[r]; return nil }
			}), nil
		}
	case domain.TypeDecimal:
		if dt, ok := at.(*arrow.Decimal128Type); ok {
			if int(dt.Precision) != t.Precision || int(dt.Scale) != t.Scale {
				return nil, fmt.Errorf("want decimal128(%d, %d)", t.Precision, t.Scale)
			}
			return wrap(func(arr arrow.Array) fillFunc {
				a := arr.(*array.Decimal128)
				return func(d *domain.Datum, r int) error {
					v := a.Value(r)
					if !v.FitsInPrecision(dt.Precision) {
						return fmt.Errorf("value %s does not fit DECIMAL(%d, %d)", v.ToString(dt.Scale), t.Precision, t.Scale)
					}
					if t.Precision <= 18 {
						d.I64 = int64(v.LowBits())
						return nil
					}
					d.Bytes = twosComplement(v.HighBits(), v.LowBits())
					return nil
				}
			}), nil
		}
	case domain.TypeString, domain.TypeChar:
		var get func(arr arrow.Array) func(int) []byte
		switch id {
		case arrow.STRING:
			get = func(arr arrow.Array) func(int) []byte {
				a := arr.(*array.String)
				data, offs := a.ValueBytes(), a.ValueOffsets()
				base := offs[0]
				return func(r int) []byte { return data[offs[r]-base : offs[r+1]-base] }
			}
		case arrow.LARGE_STRING:
			get = func(arr arrow.Array) func(int) []byte {
				a := arr.(*array.LargeString)
				data, offs := a.ValueBytes(), a.ValueOffsets()
				base := offs[0]
				return func(r int) []byte { return data[offs[r]-base : offs[r+1]-base] }
			}
		}
		if get != nil {
			return wrap(func(arr arrow.Array) fillFunc {
				value := get(arr)
				return func(d *domain.Datum, r int) error {
					d.Bytes = value(r)
					if t.Root == domain.TypeChar && utf8Len(d.Bytes) > t.Length {
						return fmt.Errorf("%d characters exceed CHAR(%d)", utf8Len(d.Bytes), t.Length)
					}
					return nil
				}
			}), nil
		}
	case domain.TypeBytes, domain.TypeBinary:
		var get func(arr arrow.Array) func(int) []byte
		switch id {
		case arrow.BINARY:
			get = func(arr arrow.Array) func(int) []byte { return arr.(*array.Binary).Value }
		case arrow.LARGE_BINARY:
			get = func(arr arrow.Array) func(int) []byte { return arr.(*array.LargeBinary).Value }
		case arrow.FIXED_SIZE_BINARY:
			get = func(arr arrow.Array) func(int) []byte { return arr.(*array.FixedSizeBinary).Value }
		}
		if get != nil {
			return wrap(func(arr arrow.Array) fillFunc {
				value := get(arr)
				return func(d *domain.Datum, r int) error {
					d.Bytes = value(r)
					if t.Root == domain.TypeBinary && len(d.Bytes) != t.Length {
						return fmt.Errorf("%d bytes, BINARY(%d) takes exactly %d", len(d.Bytes), t.Length, t.Length)
					}
					return nil
				}
			}), nil
		}
	case domain.TypeDate:
		if id == arrow.DATE32 {
			return wrap(func(arr arrow.Array) fillFunc {
				a := arr.(*array.Date32)
				return func(d *domain.Datum, r int) error { d.I64 = int64(a.Value(r)); return nil }
			}), nil
		}
	case domain.TypeTime:
		if tt, ok := at.(*arrow.Time32Type); ok {
			mul := int64(1)
			if tt.Unit == arrow.Second {
				mul = 1000
			}
			return wrap(func(arr arrow.Array) fillFunc {
				a := arr.(*array.Time32)
				return func(d *domain.Datum, r int) error {
					d.I64 = int64(a.Value(r)) * mul
					if d.I64 < 0 || d.I64 >= 86_400_000 {
						return fmt.Errorf("time %d ms is not within a day", d.I64)
					}
					return nil
				}
			}), nil
		}
	case domain.TypeTimestampNTZ, domain.TypeTimestampLTZ:
		if ts, ok := at.(*arrow.TimestampType); ok {
			if (ts.TimeZone != "") != (t.Root == domain.TypeTimestampLTZ) {
				return nil, errors.New("a timestamp with a time zone maps to TIMESTAMP_LTZ, one without to TIMESTAMP")
			}
			per := map[arrow.TimeUnit]int64{arrow.Second: 0, arrow.Millisecond: 1, arrow.Microsecond: 1000, arrow.Nanosecond: 1_000_000}[ts.Unit]
			return wrap(func(arr arrow.Array) fillFunc {
				a := arr.(*array.Timestamp)
				return func(d *domain.Datum, r int) error {
					v := int64(a.Value(r))
					switch per {
					case 0:
						d.I64 = v * 1000
					case 1:
						d.I64 = v
					default:
						ms, rem := v/per, v%per
						if rem < 0 {
							ms, rem = ms-1, rem+per
						}
						d.I64, d.Nanos = ms, int32(rem*(1_000_000/per))
					}
					return nil
				}
			}), nil
		}
	default:
		return nil, fmt.Errorf("%s columns are %s", t.Root, errArrowType)
	}
	return nil, errArrowType
}

// twosComplement renders a 128-bit value as java.math.BigInteger#toByteArray
// does: big-endian two's complement in the fewest bytes.
func twosComplement(hi int64, lo uint64) []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(hi))
	binary.BigEndian.PutUint64(b[8:], lo)
	i := 0
	for i < 15 && (b[i] == 0 && b[i+1]&0x80 == 0 || b[i] == 0xFF && b[i+1]&0x80 != 0) {
		i++
	}
	return append([]byte(nil), b[i:]...)
}

func utf8Len(b []byte) int {
	n := 0
	for _, c := range b {
		if c&0xC0 != 0x80 {
			n++
		}
	}
	return n
}
