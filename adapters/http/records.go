package http

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/http/rowjson"
	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// The data-plane routes: writes, primary-key lookups and prefix lookups.
// Bodies are decoded by rowjson against the table's schema (the use cases
// fetch and cache it and hand it to the decoders below); rows are rendered
// by rowjson too, in the schema the response names.

// writeResponse is the answer to a write whose entries all have a verdict.
type writeResponse struct {
	RowCount     int            `json:"row_count"`
	SuccessCount int            `json:"success_count"`
	ErrorCount   int            `json:"error_count"`
	Successes    []writeSuccess `json:"successes"`
	Failures     []writeFailure `json:"failures"`
}

type writeSuccess struct {
	ID string `json:"id"`
}

type writeFailure struct {
	ID        string `json:"id"`
	ErrorCode string `json:"error_code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
	Applied   string `json:"applied"`
}

// newWriteResponse is the answer as a value; the route writes it with
// appendWriteResponse, which tests keep equal to encoding/json's spelling
// of this.
func newWriteResponse(res application.WriteResult) writeResponse {
	out := writeResponse{
		RowCount:  len(res.Results),
		Successes: make([]writeSuccess, 0, res.Summary.Succeeded),
		Failures:  make([]writeFailure, 0, res.Summary.Failed),
	}
	for i, r := range res.Results {
		if r.OK() {
			out.Successes = append(out.Successes, writeSuccess{ID: res.IDs[i]})
			continue
		}
		applied := r.Applied
		if applied != domain.AppliedNo {
			// Anything but a definite "no" may have landed.
			applied = domain.AppliedUnknown
		}
		code, msg := renderEntryVerdict(r)
		out.Failures = append(out.Failures, writeFailure{
			ID: res.IDs[i], ErrorCode: code, Message: msg, Retryable: r.Retryable, Applied: string(applied),
		})
	}
	out.SuccessCount, out.ErrorCount = len(out.Successes), len(out.Failures)
	return out
}

// buffers recycles the memory write rows are decoded into; a buffer is
// reset once the use case has returned, when no one reads the rows.
var buffers = newRowBuffers(maxPooledRowBuffers)

// maxPooledRowBuffers bounds the idle row buffers kept for reuse: with at
// most 1 MiB each of Datum and byte chunks per buffer (rowjson.Buffer.Reset),
// the pool holds at most 32 MiB after a burst, whatever the burst's
// concurrency (a sync.Pool kept one buffer per request of the burst until two
// garbage collections passed without use; issue 21).
const maxPooledRowBuffers = 16

// rowBuffers is a bounded free list of rowjson.Buffers.
type rowBuffers struct{ free chan *rowjson.Buffer }

func newRowBuffers(n int) *rowBuffers { return &rowBuffers{free: make(chan *rowjson.Buffer, n)} }

// Get returns an idle buffer, or a new one.
func (p *rowBuffers) Get() *rowjson.Buffer {
	select {
	case b := <-p.free:
		return b
	default:
		return new(rowjson.Buffer)
	}
}

// Put resets b and keeps it for reuse, unless the list is full (then b is
// left to the garbage collector). The rows decoded into b must no longer
// be read.
func (p *rowBuffers) Put(b *rowjson.Buffer) {
	b.Reset()
	select {
	case p.free <- b:
	default:
	}
}

func (a *api) writeRecords(c *fiber.Ctx) error {
	scope, path, err := a.tableScope(c)
	if err != nil {
		return err
	}
	if a.records == nil {
		return unsupportedRecords(scope.Cluster, "writes")
	}
	switch streamedMediaType(c) {
	case MIMEApplicationNDJSON:
		return a.writeNDJSON(c, scope, path)
	case MIMEArrowStream:
		return a.writeArrow(c, scope, path)
	}
	handlerStart := time.Now()
	body, err := a.jsonBody(c)
	if err != nil {
		return err
	}
	buf := buffers.Get()
	defer buffers.Put(buf)
	var tl domain.WriteTimeline
	res, err := a.write(domain.WithWriteTimeline(c.UserContext(), &tl), c, scope, application.WriteCommand{
		Path: path,
		Decoder: &bodyDecoder{body: body, buf: buf, report: invalidEntriesReported(c),
			ctx: c.UserContext(), charge: a.charge(c), credit: rowsCredit(c)},
	}, body)
	if err != nil {
		return err
	}
	sum := res.Summary
	a.observeIngest(c, fiber.MIMEApplicationJSON, path, int64(sum.Rows), int64(len(body)))
	c.Locals(localWriteSummary, sum)
	addLogAttrs(c, "table", path.String(), "rows", sum.Rows, "rows_failed", sum.Failed,
		"rows_applied_unknown", sum.AppliedUnknown, "delivery_ms", float64(sum.Delivery.Microseconds())/1000)
	if sum.Failed > 0 {
		addLogAttrs(c, "failed_by_code", failedByCode(sum.FailedByCode))
	}
	if err := deniedWrite(path, res); err != nil {
		return err
	}
	// Verdicts are owed to the caller even if answering runs late.
	c.Locals(localVerdicts, true)
	// The writer's delivery time (W3C Server Timing): what the caller's
	// request time minus this leaves is the time the gateway itself added.
	// The other metrics are the writer's timeline (see serverTiming).
	c.Set("Server-Timing", serverTiming(sum.Delivery, time.Since(handlerStart), &tl))
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	if writePositionsAsked(c) {
		return c.Send(appendWriteResponsePositions(make([]byte, 0, writeResponseSize(res, true)), res, true))
	}
	return c.Send(appendWriteResponse(make([]byte, 0, writeResponseSize(res, false)), res))
}

// writeResponseSize is the capacity to give a write's answer: exact for the
// successes without positions (`{"id":"…"},` each, ids needing no escape),
// with room for a position each when asked (64 bytes and the partition) and 128 bytes per
// failure besides its id, so that the common answer is written without
// growing its buffer (a 500-row answer of 7-digit ids grew twice from the
// 12 bytes per entry it was given).
func writeResponseSize(res application.WriteResult, positions bool) int {
	n := 96
	for _, id := range res.IDs {
		n += len(id) + 10
	}
	if _, failed, known := okCount(res); known && !positions {
		return n + 128*failed
	}
	for i := range res.Results {
		if r := &res.Results[i]; !r.OK() {
			n += 128
		} else if positions {
			n += 64 + len(r.At.Partition) // bucket and offset: at most 60
		}
	}
	return n
}

// HeaderWritePositions is a request header of the write route (an
// extension, issue 23): `X-Fluss-Write-Positions: true` makes each success
// carry where its row landed, so a writer can hand a reader a position:
// `partition` (partitioned tables), `bucket`, and `offset` (log tables: the
// row's own offset, a scan from it returns the row first) or
// `log_end_offset` (primary-key tables: the changelog's end offset after the
// row's batch; Fluss does not say which changelog records a row made). A
// success whose answer gave no offset (a retried batch the server reported
// as a duplicate, a delete in a partition that does not exist) carries only
// its id. Without the header the answer is the official one, unchanged.
const HeaderWritePositions = "X-Fluss-Write-Positions"

func writePositionsAsked(c *fiber.Ctx) bool {
	v := strings.TrimSpace(c.Get(HeaderWritePositions))
	return strings.EqualFold(v, "true") || v == "1"
}

// appendWritePosition appends `,"partition":…,"bucket":…,"offset":…` (or
// `log_end_offset`) of a success whose position is known.
func appendWritePosition(dst []byte, at domain.WrittenAt) []byte {
	if !at.Known {
		return dst
	}
	if at.Partition != "" {
		dst = append(dst, `,"partition":`...)
		dst = appendJSONString(dst, at.Partition)
	}
	dst = append(dst, `,"bucket":`...)
	dst = strconv.AppendInt(dst, int64(at.Bucket), 10)
	if at.Exact {
		dst = append(dst, `,"offset":`...)
	} else {
		dst = append(dst, `,"log_end_offset":`...)
	}
	return strconv.AppendInt(dst, at.Offset, 10)
}

// appendWriteResponse appends the JSON of newWriteResponse(res) to dst,
// byte for byte what encoding/json makes of it, without reflection or the
// intermediate slices (a write's answer has one element per entry).
func appendWriteResponse(dst []byte, res application.WriteResult) []byte {
	return appendWriteResponsePositions(dst, res, false)
}

// appendWriteResponsePositions is appendWriteResponse, with each success's
// position when positions is true (HeaderWritePositions).
func appendWriteResponsePositions(dst []byte, res application.WriteResult, positions bool) []byte {
	ok, _, known := okCount(res)
	if !known {
		for _, r := range res.Results {
			if r.OK() {
				ok++
			}
		}
	}
	dst = append(dst, `{"row_count":`...)
	dst = strconv.AppendInt(dst, int64(len(res.Results)), 10)
	dst = append(dst, `,"success_count":`...)
	dst = strconv.AppendInt(dst, int64(ok), 10)
	dst = append(dst, `,"error_count":`...)
	dst = strconv.AppendInt(dst, int64(len(res.Results)-ok), 10)
	dst = append(dst, `,"successes":[`...)
	first := true
	for i, r := range res.Results {
		if !r.OK() {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `{"id":`...)
		dst = appendJSONString(dst, res.IDs[i])
		if positions {
			dst = appendWritePosition(dst, r.At)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `],"failures":[`...)
	if ok == len(res.Results) {
		return append(dst, "]}"...)
	}
	first = true
	for i, r := range res.Results {
		if r.OK() {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		applied := r.Applied
		if applied != domain.AppliedNo {
			// Anything but a definite "no" may have landed.
			applied = domain.AppliedUnknown
		}
		code, msg := renderEntryVerdict(r)
		dst = append(dst, `{"id":`...)
		dst = appendJSONString(dst, res.IDs[i])
		dst = append(dst, `,"error_code":`...)
		dst = appendJSONString(dst, code)
		dst = append(dst, `,"message":`...)
		dst = appendJSONString(dst, msg)
		dst = append(dst, `,"retryable":`...)
		dst = strconv.AppendBool(dst, r.Retryable)
		dst = append(dst, `,"applied":`...)
		dst = appendJSONString(dst, string(applied))
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// okCount returns the successes and failures of res from its summary
// (application.WriteSummary, taken in the use case's pass over the
// verdicts), known false when the summary is not of res.Results (a result
// assembled without one): the answer then counts them itself.
func okCount(res application.WriteResult) (ok, failed int, known bool) {
	s := res.Summary
	if s.Rows != len(res.Results) || s.Succeeded+s.Failed != s.Rows || s.Rows == 0 {
		return 0, 0, false
	}
	return s.Succeeded, s.Failed, true
}

// appendJSONString appends s as encoding/json spells it: printable ASCII
// other than `"`, `\`, `<`, `>`, `&` as is; anything else through
// json.Marshal (escapes, invalid UTF-8, U+2028/U+2029).
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x7F || b == '"' || b == '\\' || b == '<' || b == '>' || b == '&' {
			q, _ := json.Marshal(s)
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// deniedWrite turns a write whose every entry was refused by the Fluss
// authorizer (entry code `unauthorized`, definitely not applied) into a
// whole-request 403 `unauthorized` naming the table: the request as a whole
// was denied, and the per-entry verdicts would all say the same. A write
// with any other verdict keeps its per-entry answer.
func deniedWrite(path domain.TablePath, res application.WriteResult) error {
	sum := res.Summary
	if sum.Rows == 0 || sum.Failed != sum.Rows || sum.AppliedUnknown > 0 || sum.FailedByCode[codeUnauthorized] != sum.Rows {
		return nil
	}
	msg := ""
	for _, r := range res.Results {
		if r.Message != "" {
			msg = ": " + r.Message
			break
		}
	}
	return &domain.Error{Kind: domain.KindUnauthorized,
		Message: fmt.Sprintf("write to table `%s` denied by the Fluss cluster for all %d entries; nothing was written%s", path, sum.Rows, msg)}
}

// codeUnauthorized is the entry code of a write refused by the authorizer.
const codeUnauthorized = "unauthorized"

// failedByCode renders failure counts as "code=n,..." in code order.
func failedByCode(m map[string]int) string {
	var b []byte
	for _, code := range slices.Sorted(maps.Keys(m)) {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, code...)
		b = append(b, '=')
		b = strconv.AppendInt(b, int64(m[code]), 10)
	}
	return string(b)
}

func (a *api) lookupRecords(c *fiber.Ctx) error {
	scope, path, err := a.tableScope(c)
	if err != nil {
		return err
	}
	if a.records == nil {
		return unsupportedRecords(scope.Cluster, "lookups")
	}
	body, err := a.jsonBody(c)
	if err != nil {
		return err
	}
	costKey := scope.Cluster + "/" + path.String()
	ab := a.newAnswerBudget(c)
	dec := &bodyDecoder{body: body, ctx: c.UserContext(), charge: a.charge(c), lookupCost: func(keys int) int64 {
		return a.lookupCosts.estimate(costKey, keys, 2*int64(ab.limit))
	}}
	res, err := a.records.Lookup(c.UserContext(), scope, path, dec)
	if err != nil {
		return err
	}
	cols := res.Table.Columns()
	proj := newProjection(cols, dec.read.Columns, res.Table.Info.SchemaID)
	// The rows fetched are charged too (they are held until the answer is
	// written); duplicates share one row.
	var fetched int64
	seen := map[*domain.Datum]bool{}
	for _, r := range res.Response.Results {
		if len(r.Row) == 0 || seen[&r.Row[0]] {
			continue
		}
		seen[&r.Row[0]] = true
		fetched += datumBytes(r.Row)
	}
	a.lookupCosts.observe(costKey, len(res.Response.Results), fetched)
	// What the estimate charged before the fetch counts towards it; what
	// it charged beyond the rows fetched is given back now, before the
	// answer grows (a table's first lookups are charged the most a lookup
	// may take: held until the answer is written, two of them filled the
	// default budget and every other request waited for them).
	if fetched < dec.precharged {
		ab.ch.Return(dec.precharged - fetched)
	} else if err := ab.ch.Acquire(ab.ctx, fetched-dec.precharged); err != nil {
		return budgetError(err, "the rows fetched")
	}
	w := ab.answerInto(c.Response(), 256+len(res.Response.Results)*64)
	defer w.done()
	head := append(*w.part, `{"schema_id":`...)
	head = strconv.AppendInt(head, int64(res.Table.Info.SchemaID), 10) // the schema rows are rendered in
	*w.part = append(head, `,"results":[`...)
	if err := w.add(); err != nil {
		return err
	}
	found := 0
	// Each result is rendered into w.part (one row at most), then added to
	// the answer, which is charged before it grows.
	for i, r := range res.Response.Results {
		part := *w.part
		if i > 0 {
			part = append(part, ',')
		}
		part = append(part, `{"input_index":`...)
		part = strconv.AppendInt(part, int64(i), 10)
		part = append(part, `,"found":`...)
		part = strconv.AppendBool(part, r.Row != nil && r.Err == nil)
		part = append(part, `,"row":`...)
		if r.Row != nil && r.Err == nil {
			part = proj.appendRow(part, r.Row)
			found++
		} else {
			part = append(part, "null"...)
		}
		if r.Err != nil {
			part = appendKeyError(part, r.Err)
		}
		*w.part = append(part, '}')
		if err := w.add(); err != nil {
			return err
		}
	}
	if err := w.finish("]}"); err != nil {
		return err
	}
	addLogAttr(c, slog.String("table", path.String()), slog.Int("keys", len(res.Response.Results)), slog.Int("found", found))
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return nil
}

func (a *api) prefixLookupRecords(c *fiber.Ctx) error {
	scope, path, err := a.tableScope(c)
	if err != nil {
		return err
	}
	if a.records == nil {
		return unsupportedRecords(scope.Cluster, "prefix lookups")
	}
	body, err := a.jsonBody(c)
	if err != nil {
		return err
	}
	dec := &bodyDecoder{body: body}
	res, err := a.records.PrefixLookup(c.UserContext(), scope, path, dec)
	if err != nil {
		return err
	}
	cols := res.Table.Columns()
	proj := newProjection(cols, dec.read.Columns, res.Table.Info.SchemaID)
	ab := a.newAnswerBudget(c)
	var fetched int64
	for _, r := range res.Response.Results {
		for _, row := range r.Rows {
			fetched += datumBytes(row)
		}
	}
	if err := ab.ch.Acquire(ab.ctx, fetched); err != nil {
		return budgetError(err, "the rows fetched")
	}
	w := ab.answerInto(c.Response(), 256)
	defer w.done()
	head := append(*w.part, `{"schema_id":`...)
	head = strconv.AppendInt(head, int64(res.Table.Info.SchemaID), 10) // the schema rows are rendered in
	*w.part = append(head, `,"results":[`...)
	if err := w.add(); err != nil {
		return err
	}
	rows := 0
	// Every piece is rendered into w.part (one row at most), then added to
	// the answer, which is charged before it grows.
	for i, r := range res.Response.Results {
		part := *w.part
		if i > 0 {
			part = append(part, ',')
		}
		part = append(part, `{"input_index":`...)
		part = strconv.AppendInt(part, int64(i), 10)
		part = append(part, `,"row_count":`...)
		part = strconv.AppendInt(part, int64(len(r.Rows)), 10)
		part = append(part, `,"truncated":`...)
		part = strconv.AppendBool(part, r.Truncated)
		part = append(part, `,"rows":[`...)
		for j, row := range r.Rows {
			if j > 0 {
				part = append(part, ',')
			}
			*w.part = proj.appendRow(part, row)
			if err := w.add(); err != nil {
				return err
			}
			part = *w.part
		}
		part = append(part, ']')
		if i < len(res.NextPageTokens) && res.NextPageTokens[i] != "" {
			part = append(part, `,"next_page_token":`...)
			part = strconv.AppendQuote(part, res.NextPageTokens[i])
		}
		rows += len(r.Rows)
		if r.Err != nil {
			part = appendKeyError(part, r.Err)
		}
		*w.part = append(part, '}')
		if err := w.add(); err != nil {
			return err
		}
	}
	if err := w.finish("]}"); err != nil {
		return err
	}
	addLogAttr(c, slog.String("table", path.String()), slog.Int("prefixes", len(res.Response.Results)), slog.Int("rows_returned", rows))
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return nil
}

// keyError is the error of one key or prefix that failed on its own.
type keyError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

// appendKeyError appends `,"error":{...}`; internal causes are not shown.
func appendKeyError(out []byte, e *domain.Error) []byte {
	code, _ := envelopeCode(e)
	ke := keyError{Code: code, Message: e.Error(), Retryable: e.Retryable}
	if e.Kind == domain.KindInternal || ke.Message == "" {
		ke.Message = "internal error"
	}
	b, _ := json.Marshal(ke)
	out = append(out, `,"error":`...)
	return append(out, b...)
}

func unsupportedRecords(cluster, what string) error {
	return domain.Errorf(domain.KindUnsupported, "cluster `%s` does not support %s", cluster, what)
}

// bodyDecoder decodes a data-plane request body with the rowjson codec of
// the table definition the use case passes in.
type bodyDecoder struct {
	body []byte
	buf  *rowjson.Buffer // write rows' memory; nil for a fresh one
	// report answers invalid write entries one by one
	// (`X-Fluss-Invalid-Entries: report`); rejected are those of the last
	// DecodeWrite.
	report   bool
	rejected []application.RejectedEntry
	// read are the lookup body's extension fields (columns, page_token).
	read rowjson.ReadOptions
	// charge, when set, is charged for the decoded rows' memory (buf's
	// chunks, as they are put to use) and for the writer's copy of them,
	// until the request's answer is written; ctx bounds the waits. hooked:
	// buf charges to it; rowBytes: the value bytes charged by buf; charged:
	// the writer's copy charged.
	ctx      context.Context
	charge   *membudget.Charge
	hooked   bool
	rowBytes int64
	charged  int64
	// lookupCost (lookups; nil: none) estimates the bytes the rows of keys
	// keys will take once fetched; DecodeKeys charges that much before the
	// fetch (precharged).
	lookupCost func(keys int) int64
	precharged int64
	// credit: bytes acquired with the body for the rows (admitBodyFor),
	// drawn from before anything more is acquired; what is left once the
	// rows are decoded and charged is returned.
	credit int64
}

// rowsCredit is the rows credit admitBodyFor acquired for c (0: none).
func rowsCredit(c *fiber.Ctx) int64 {
	n, _ := c.Locals(localRowsCredit).(int64)
	return n
}

// acquire takes n bytes for the rows: from the credit first, then from the
// budget.
func (d *bodyDecoder) acquire(n int64, what string) error {
	from := min(n, d.credit)
	d.credit -= from
	if n -= from; n <= 0 {
		return nil
	}
	if err := d.charge.Acquire(d.ctx, n); err != nil {
		return budgetError(err, what)
	}
	return nil
}

// returnCredit gives back what the rows did not use of the credit.
func (d *bodyDecoder) returnCredit() {
	if d.credit > 0 {
		d.charge.Return(d.credit)
		d.credit = 0
	}
}

var (
	_ application.WriteDecoder  = (*bodyDecoder)(nil)
	_ application.KeyDecoder    = (*bodyDecoder)(nil)
	_ application.PrefixDecoder = (*bodyDecoder)(nil)
)

// Size returns the body's length.
func (d *bodyDecoder) Size() int { return len(d.body) }

// DecodeWrite decodes the write body against t; with
// `X-Fluss-Invalid-Entries: report` the invalid entries come back in
// Rejected.
func (d *bodyDecoder) DecodeWrite(t *application.Table, maxRows int) (application.DecodedWrite, error) {
	batch, ids, err := d.decodeWrite(t, maxRows)
	return application.DecodedWrite{Batch: batch, IDs: ids, Rejected: d.rejected}, err
}

func (d *bodyDecoder) decodeWrite(t *application.Table, maxRows int) (domain.WriteBatch, []string, error) {
	codec, err := codecOf(t)
	if err != nil {
		return domain.WriteBatch{}, nil, err
	}
	if err := d.chargeAsDecoded(); err != nil {
		return domain.WriteBatch{}, nil, err
	}
	if !d.report {
		batch, ids, err := codec.DecodeWriteTo(d.buf, d.body, rowjson.Limits{MaxEntries: maxRows})
		if err == nil {
			err = d.chargeWriterCopy(&batch)
		}
		return batch, ids, err
	}
	batch, ids, rejected, err := codec.DecodeWriteReport(d.buf, d.body, rowjson.Limits{MaxEntries: maxRows})
	d.rejected = d.rejected[:0]
	for _, r := range rejected {
		d.rejected = append(d.rejected, application.RejectedEntry{Index: r.Index, ID: r.ID, Message: r.Message, UnknownColumn: r.UnknownColumn})
	}
	if err == nil {
		err = d.chargeWriterCopy(&batch)
	}
	return batch, ids, err
}

// chargeAsDecoded makes the decode charge the rows' memory to the request's
// ledger chunk by chunk, before each chunk is allocated (rowjson.Buffer's
// ChargeFunc): a body whose rows do not fit in the budget ends its decode
// with 429 before the rows exist, and before any of them is sent.
func (d *bodyDecoder) chargeAsDecoded() error {
	if d.charge == nil || d.hooked {
		return nil
	}
	d.hooked = true
	if d.buf == nil {
		d.buf = new(rowjson.Buffer)
	}
	return d.buf.SetCharge(func(datums, bytes int) error {
		d.rowBytes += int64(bytes)
		return d.acquire(int64(datums+bytes), "the decoded rows")
	})
}

// Per-entry memory of a write besides its values, in bytes: the entries
// array of the decoded batch (domain.WriteEntry), and the writer's record
// and verdict of the entry (adapters/fluss/writer: rec, domain.EntryResult,
// about 200 bytes together).
const writeEntryOverhead = 256

// writerCopyBytes estimates what the writer holds for a decoded batch until
// its verdicts, besides the decoded rows: the encoded records (at most 16
// bytes per value plus the value bytes, adapters/fluss/writer estimateArena)
// twice, once in the request's arena and once in the batch being sent, and
// the per-entry overhead. valueBytes are the bytes the rows' strings, bytes
// and wide decimals hold.
func writerCopyBytes(batch *domain.WriteBatch, valueBytes int64) int64 {
	n := int64(len(batch.Entries))
	if n == 0 {
		return 0
	}
	values := n * int64(len(batch.Entries[0].Row))
	return 2*(16*values+valueBytes) + writeEntryOverhead*n
}

// chargeWriterCopy charges what the writer will hold for batch (see
// writerCopyBytes) before any row is handed to it: a batch that does not
// fit in the budget is refused with 429 before any of it is sent. The
// writer's own buffer (adapters/fluss/writer Options.BufferMemory) is sized
// from the same budget (bootstrap), so its bound is counted inside it.
func (d *bodyDecoder) chargeWriterCopy(batch *domain.WriteBatch) error {
	if d.charge == nil {
		return nil
	}
	defer d.returnCredit()
	want := writerCopyBytes(batch, d.rowBytes)
	if want <= d.charged {
		return nil
	}
	if err := d.acquire(want-d.charged, "the writer's copy of the rows"); err != nil {
		return err
	}
	d.charged = want
	return nil
}

// DecodeKeys decodes the lookup body against t.
func (d *bodyDecoder) DecodeKeys(t *application.Table, maxKeys int) ([][]domain.Datum, error) {
	codec, err := codecOf(t)
	if err != nil {
		return nil, err
	}
	keys, ro, err := codec.DecodeKeysWith(d.body, rowjson.Limits{MaxEntries: maxKeys})
	d.read = ro
	if err == nil && d.charge != nil && d.lookupCost != nil {
		// The rows are charged, by the table's recent lookups, before
		// they are fetched: what does not fit is refused with 429 before
		// anything is asked of the cluster.
		if n := d.lookupCost(len(keys)); n > 0 {
			if err := d.charge.Acquire(d.ctx, n); err != nil {
				return nil, budgetError(err, "the rows to fetch")
			}
			d.precharged = n
		}
	}
	return keys, err
}

// DecodePrefixes decodes the prefix-lookup body against t, with its
// page_token.
func (d *bodyDecoder) DecodePrefixes(t *application.Table, maxPrefixes int) (application.DecodedPrefixes, error) {
	codec, err := codecOf(t)
	if err != nil {
		return application.DecodedPrefixes{}, err
	}
	cols, prefixes, ro, err := codec.DecodePrefixesWith(d.body, rowjson.Limits{MaxEntries: maxPrefixes})
	d.read = ro
	return application.DecodedPrefixes{Columns: cols, Prefixes: prefixes, PageToken: ro.PageToken}, err
}

// codecOf returns the table definition's compiled rowjson codec, built
// once per cached definition.
func codecOf(t *application.Table) (*rowjson.Codec, error) {
	v, err := t.Compiled(func(info domain.TableInfo) (any, error) {
		s := info.Descriptor.Schema
		return rowjson.NewCodec(rowjson.TableSpec{
			Columns:              s.Columns,
			PrimaryKey:           s.PrimaryKey,
			AutoIncrementColumns: s.AutoIncrementColumn,
		})
	})
	if err != nil {
		return nil, err
	}
	return v.(*rowjson.Codec), nil
}

// HeaderInvalidEntries is the request header of the per-entry invalid-entry
// extension: `X-Fluss-Invalid-Entries: report` answers each entry that fails
// decoding with its own `invalid_argument` verdict (`applied: no`) and writes
// the valid ones, instead of a 400 for the whole request. Official clients
// never send it.
const HeaderInvalidEntries = "X-Fluss-Invalid-Entries"

func invalidEntriesReported(c *fiber.Ctx) bool {
	return strings.EqualFold(strings.TrimSpace(c.Get(HeaderInvalidEntries)), "report")
}

// projection renders rows with all columns, or only those a lookup body's
// `columns` extension names, in its order.
type projection struct {
	all  []domain.Column
	cols []domain.Column
	pos  []int
	buf  []domain.Datum
}

// newProjection projects onto positions (nil: all columns). Positions
// were resolved against the definition the request was decoded with; rows
// are rendered with the table's definition of schemaID, the same unless the
// schema changed in between, in which case positions past the columns
// render nothing.
func newProjection(cols []domain.Column, positions []int, _ int32) *projection {
	p := &projection{all: cols}
	if positions == nil {
		return p
	}
	for _, ci := range positions {
		if ci < len(cols) {
			p.cols = append(p.cols, cols[ci])
			p.pos = append(p.pos, ci)
		}
	}
	p.buf = make([]domain.Datum, len(p.pos))
	return p
}

func (p *projection) appendRow(out []byte, row []domain.Datum) []byte {
	if p.pos == nil {
		return rowjson.AppendRow(out, p.all, row)
	}
	for i, ci := range p.pos {
		if ci < len(row) {
			p.buf[i] = row[ci]
		} else {
			p.buf[i] = domain.Datum{Null: true}
		}
	}
	return rowjson.AppendRow(out, p.cols, p.buf)
}

// serverTiming is the Server-Timing value of a write's answer (W3C Server
// Timing; an extension of this gateway): `delivery` is the writer's whole
// time, `handler` the handler's (body, decoding, delivery), and the writer's
// timeline (domain.WriteTimeline) follows as `w-encode`, `w-queue`, `w-slot`,
// `w-build`, `w-fluss`, `w-resolve` (milliseconds) and `w-batch` with
// desc="batches=<n> rows=<rows of the last batch> inflight=<its bucket's
// batches in flight> attempts=<its sends>". The benchmark
// (tools/load -mode bench) reports their percentiles.
func serverTiming(delivery, handler time.Duration, tl *domain.WriteTimeline) string {
	b := make([]byte, 0, 256)
	metric := func(name string, d time.Duration) {
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, name...)
		b = append(b, ";dur="...)
		b = strconv.AppendFloat(b, float64(d.Microseconds())/1000, 'f', 3, 64)
	}
	metric("delivery", delivery)
	metric("handler", handler)
	metric("w-encode", tl.Encode)
	metric("w-queue", tl.Queue)
	metric("w-slot", tl.Slot)
	metric("w-build", tl.Build)
	metric("w-fluss", tl.Backend)
	metric("w-resolve", tl.Resolve)
	b = append(b, `, w-batch;desc="batches=`...)
	b = strconv.AppendInt(b, int64(tl.Batches), 10)
	b = append(b, " rows="...)
	b = strconv.AppendInt(b, int64(tl.BatchRows), 10)
	b = append(b, " inflight="...)
	b = strconv.AppendInt(b, int64(tl.InFlight), 10)
	b = append(b, " attempts="...)
	b = strconv.AppendInt(b, int64(tl.Attempts), 10)
	return string(append(b, '"'))
}
