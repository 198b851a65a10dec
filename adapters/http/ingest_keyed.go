package http

import (
	"bytes"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Idempotency-Key on streamed bodies (NDJSON, Arrow IPC). The ledger
// records one write's verdicts, at most gateway.rest.write.max-rows of them,
// so a keyed streamed body is not streamed: it must fit one write call. It
// is read whole (at most the JSON body limit,
// gateway.rest.write.max-request-bytes, decoded), checked whole (every
// NDJSON line JSON, every Arrow record batch readable; nothing is written
// when one is not), and written as one keyed write whose fingerprint is the
// SHA-256 of the content type and the decoded body; the answer keeps the
// body's own shape (verdict per line or per record batch), and a retry with
// the same key and body replays it (`Idempotent-Replayed: true`). A keyed
// body with more entries than gateway.rest.write.max-rows, or more bytes
// than the limit, is refused whole with 413 limit_exceeded before anything
// is written: send it without the key (streamed), or split it into keyed
// requests.

// keyedBody reads a keyed streamed body whole, charging its bytes to the
// write rate limit, the quotas and the memory budget (release returns the
// latter; it is never nil).
func (a *api) keyedBody(c *fiber.Ctx) (body []byte, release func(), err error) {
	release = func() {}
	br, err := streamedBody(c)
	if err != nil {
		return nil, release, err
	}
	limit := a.opts.MaxRequestBytes
	if limit <= 0 {
		limit = 32 << 20
	}
	body, err = io.ReadAll(io.LimitReader(br, limit+1))
	c.Locals(localBytesIn, br.n)
	if err != nil {
		return nil, release, domain.InvalidArgument("reading the body failed: %v; nothing was written", err)
	}
	if int64(len(body)) > limit {
		return nil, release, &domain.Error{Kind: domain.KindLimitExceeded, Message: fmt.Sprintf(
			"a streamed body with Idempotency-Key is written as one keyed write and may hold at most %d bytes (gateway.rest.write.max-request-bytes, decoded); "+
				"this one is longer: send it without the key or split it into keyed requests; nothing was written", limit)}
	}
	if err := a.chargeStreamed(c, len(body)); err != nil {
		return nil, release, err
	}
	release, err = a.acquireChunk(c.UserContext(), int64(len(body))*ndjsonBudgetFactor)
	return body, release, err
}

// keyedTooMany is the 413 of a keyed streamed body with more entries than
// one write call takes.
func keyedTooMany(what string, n, maxRows int) error {
	return &domain.Error{Kind: domain.KindLimitExceeded, Message: fmt.Sprintf(
		"a streamed body with Idempotency-Key is written as one keyed write of at most %d entries (gateway.rest.write.max-rows); "+
			"this one has %d %s: send it without the key or split it into keyed requests; nothing was written", maxRows, n, what)}
}

// writeNDJSONKeyed serves an NDJSON body with Idempotency-Key.
func (a *api) writeNDJSONKeyed(c *fiber.Ctx, scope application.Scope, path domain.TablePath) error {
	body, release, err := a.keyedBody(c)
	defer release()
	if err != nil {
		return err
	}
	ch := newNDJSONChunk()
	defer ch.release() // after the write: nothing reads the chunk afterwards
	lineNo, maxRows := 0, a.writeMaxRows()
	for rest := body; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = nil
		}
		lineNo++
		t := trimJSONSpace(line)
		if len(t) == 0 {
			continue
		}
		if !lineIsJSON(t) {
			return domain.InvalidArgument("line %d: %s; nothing was written (a body with Idempotency-Key is checked whole first)", lineNo, syntaxMessage(t))
		}
		if len(ch.lines) == maxRows {
			return keyedTooMany("entries or more", maxRows+1, maxRows)
		}
		ch.add(t, lineNo, len(line))
	}
	sink := &verdictSink{ndjson: acceptsNDJSON(c.Get(fiber.HeaderAccept)), positions: writePositionsAsked(c)}
	if len(ch.lines) > 0 {
		buf := buffers.Get()
		defer buffers.Put(buf)
		c.Locals(localVerdicts, true)
		res, err := a.write(c.UserContext(), c, scope, application.WriteCommand{Path: path, Decoder: &ndjsonDecoder{ch: ch, buf: buf}},
			append([]byte(MIMEApplicationNDJSON+"\n"), body...))
		if err != nil {
			return err
		}
		if len(res.Results) != len(ch.lines) || len(res.IDs) != len(ch.lines) {
			return domain.Errorf(domain.KindInternal, "keyed NDJSON write: %d verdicts for %d lines", len(res.Results), len(ch.lines))
		}
		sink.reserve(res.IDs)
		for i, r := range res.Results {
			sink.add(ch.lines[i], res.IDs[i], r)
		}
	}
	a.observeIngest(c, MIMEApplicationNDJSON, path, int64(sink.rows), int64(len(body)))
	addLogAttrs(c, "table", path.String(), "rows", sink.rows, "rows_failed", sink.rows-sink.ok)
	a.chargeAnswer(c, int64(cap(sink.succ)+cap(sink.fail)+cap(sink.out)))
	return sink.send(c)
}

// writeArrowKeyed serves an Arrow IPC stream with Idempotency-Key: its
// record batches are joined into one write.
func (a *api) writeArrowKeyed(c *fiber.Ctx, scope application.Scope, path domain.TablePath) error {
	body, release, err := a.keyedBody(c)
	defer release()
	if err != nil {
		return err
	}
	guard := &arrowGuard{r: bytes.NewReader(body), reserve: func(n int64) (func(), error) {
		return a.acquireFor(c.UserContext(), n, "a ZSTD-compressed record batch decompressed")
	}}
	defer guard.release() // every record batch is held until the write is done
	rd, err := newArrowReader(guard)
	if err != nil {
		return domain.InvalidArgument("the body is not an Arrow IPC stream: %v", err)
	}
	defer rd.Release()
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	total, maxRows := 0, a.writeMaxRows()
	for i := 0; ; i++ {
		ok, err := arrowNext(rd)
		if !ok {
			if guard.refused != nil {
				return guard.refused // the memory budget: 429
			}
			if err != nil && err != io.EOF {
				return domain.InvalidArgument("record batch %d: the Arrow stream cannot be read (truncated or malformed): %v; nothing was written", i, err)
			}
			break
		}
		rec := rd.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
		if total += int(rec.NumRows()); total > maxRows {
			return keyedTooMany("rows or more", total, maxRows)
		}
	}
	p := &arrowPipeline{a: a, c: c, scope: scope, path: path, positions: writePositionsAsked(c)}
	if total > 0 {
		joined, err := joinRecords(recs)
		if err != nil {
			return domain.InvalidArgument("the record batches cannot be joined into one write: %v; nothing was written", err)
		}
		defer joined.Release()
		c.Locals(localVerdicts, true)
		dec := &arrowDecoder{rec: joined, batch: 0}
		defer dec.release()
		res, err := a.write(c.UserContext(), c, scope, application.WriteCommand{Path: path, Decoder: dec},
			append([]byte(MIMEArrowStream+"\n"), body...))
		if err != nil {
			return err
		}
		if len(res.Results) != total {
			return domain.Errorf(domain.KindInternal, "keyed Arrow write: %d verdicts for %d rows", len(res.Results), total)
		}
		off := 0
		for i, r := range recs {
			n := int(r.NumRows())
			p.fold(&arrowBatch{index: i, res: application.WriteResult{Results: res.Results[off : off+n]}})
			off += n
		}
	}
	a.observeIngest(c, MIMEArrowStream, path, p.rows, int64(len(body)))
	addLogAttrs(c, "table", path.String(), "rows", p.rows, "rows_failed", p.rows-p.ok)
	return p.answer(c)
}

// joinRecords returns the rows of recs (same schema) as one record batch.
func joinRecords(recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	s := recs[0].Schema()
	cols := make([]arrow.Array, s.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	rows := int64(0)
	for _, r := range recs {
		rows += r.NumRows()
	}
	parts := make([]arrow.Array, len(recs))
	for i := range cols {
		for k, r := range recs {
			parts[k] = r.Column(i)
		}
		var err error
		if cols[i], err = array.Concatenate(parts, memory.DefaultAllocator); err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(s, cols, rows), nil
}
