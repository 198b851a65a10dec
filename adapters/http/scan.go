package http

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/http/rowjson"
	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// Scans is what the scan routes need; *application.ScanService implements it.
type Scans interface {
	Scan(ctx context.Context, scope application.Scope, path domain.TablePath, req application.ScanRequest) (application.ScanResult, error)
	Offsets(ctx context.Context, scope application.Scope, path domain.TablePath, start application.ScanStart, partitions []string, buckets []int32) (application.OffsetsResult, error)
}

var _ Scans = (*application.ScanService)(nil)

// scanBody is the body of POST .../records/scan (issue 23; an extension).
type scanBody struct {
	Start *struct {
		Position string `json:"position"`
		// Timestamp is RFC 3339 text or epoch milliseconds.
		Timestamp any `json:"timestamp"`
		// Offsets go with position `offsets` (an extension): explicit
		// start offsets of some buckets, as a write with
		// X-Fluss-Write-Positions answers them.
		Offsets []struct {
			Partition string `json:"partition"`
			Bucket    *int32 `json:"bucket"`
			Offset    *int64 `json:"offset"`
		} `json:"offsets"`
	} `json:"start"`
	Cursor       *string  `json:"cursor"`
	MaxRows      *int     `json:"max_rows"`
	MaxWaitMs    *int64   `json:"max_wait_ms"`
	Columns      []string `json:"columns"`
	Partitions   []string `json:"partitions"`
	Buckets      []int32  `json:"buckets"`
	OnOutOfRange *string  `json:"on_out_of_range"`
}

// parsePosition parses `earliest` | `latest` | `timestamp` (with ts).
func parsePosition(field, position string, ts any, tsField string) (application.ScanStart, error) {
	var st application.ScanStart
	switch position {
	case "earliest":
		st.Position = domain.OffsetEarliest
	case "latest":
		st.Position = domain.OffsetLatest
	case "timestamp":
		st.Position = domain.OffsetTimestamp
		ms, err := parseTimestamp(tsField, ts)
		if err != nil {
			return st, err
		}
		st.Timestamp = ms
		return st, nil
	default:
		return st, domain.InvalidArgument("%s: expected `earliest`, `latest` or `timestamp`, got %s", field, quoteHeader(position))
	}
	if ts != nil {
		return st, domain.InvalidArgument("%s: only with position `timestamp`", tsField)
	}
	return st, nil
}

// parseTimestamp reads an RFC 3339 time or epoch milliseconds (a JSON
// number or its text).
func parseTimestamp(field string, v any) (int64, error) {
	switch x := v.(type) {
	case nil:
		return 0, domain.InvalidArgument("%s: required with position `timestamp`", field)
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, domain.InvalidArgument("%s: expected whole epoch milliseconds", field)
		}
		return int64(x), nil
	case string:
		if ms, err := strconv.ParseInt(x, 10, 64); err == nil {
			return ms, nil
		}
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return 0, domain.InvalidArgument("%s: expected RFC 3339 (2026-12-01T10:00:00Z) or epoch milliseconds, got %s", field, quoteHeader(x))
		}
		return t.UnixMilli(), nil
	default:
		return 0, domain.InvalidArgument("%s: expected RFC 3339 text or epoch milliseconds", field)
	}
}

// parseStartOffsets reads `"position": "offsets"` with its `offsets`:
// the named buckets start at their offsets, every other one at latest.
func parseStartOffsets(ts any, offsets []struct {
	Partition string `json:"partition"`
	Bucket    *int32 `json:"bucket"`
	Offset    *int64 `json:"offset"`
}) (application.ScanStart, error) {
	st := application.ScanStart{Position: domain.OffsetLatest}
	if ts != nil {
		return st, domain.InvalidArgument("start.timestamp: only with position `timestamp`")
	}
	if len(offsets) == 0 {
		return st, domain.InvalidArgument("start.offsets: required with position `offsets`, at least one")
	}
	for i, o := range offsets {
		if o.Bucket == nil || o.Offset == nil {
			return st, domain.InvalidArgument("start.offsets[%d]: `bucket` and `offset` are required", i)
		}
		st.Offsets = append(st.Offsets, application.StartOffset{Partition: o.Partition, Bucket: *o.Bucket, Offset: *o.Offset})
	}
	return st, nil
}

func (a *api) scanRecords(c *fiber.Ctx) error {
	scope, path, err := a.tableScope(c)
	if err != nil {
		return err
	}
	if a.scans == nil {
		return unsupportedRecords(scope.Cluster, "log scans")
	}
	body, err := a.jsonBody(c)
	if err != nil {
		return err
	}
	var in scanBody
	if err := decodeStrictContext(c.UserContext(), body, &in); err != nil {
		return err
	}
	req := application.ScanRequest{Columns: in.Columns, Partitions: in.Partitions, Buckets: in.Buckets}
	if in.Start != nil {
		var st application.ScanStart
		if in.Start.Position == "offsets" {
			if st, err = parseStartOffsets(in.Start.Timestamp, in.Start.Offsets); err != nil {
				return err
			}
		} else {
			if in.Start.Offsets != nil {
				return domain.InvalidArgument("start.offsets: only with position `offsets`")
			}
			if st, err = parsePosition("start.position", in.Start.Position, in.Start.Timestamp, "start.timestamp"); err != nil {
				return err
			}
		}
		req.Start = &st
	}
	if in.Cursor != nil {
		if *in.Cursor == "" {
			return domain.InvalidArgument("cursor: empty")
		}
		req.Cursor = *in.Cursor
	}
	if in.MaxRows != nil {
		if *in.MaxRows <= 0 {
			return domain.InvalidArgument("max_rows: must be positive, got %d", *in.MaxRows)
		}
		req.MaxRows = *in.MaxRows
	}
	if in.MaxWaitMs != nil {
		if *in.MaxWaitMs < 0 {
			return domain.InvalidArgument("max_wait_ms: must not be negative, got %d", *in.MaxWaitMs)
		}
		req.MaxWait = time.Duration(min(*in.MaxWaitMs, int64(time.Hour/time.Millisecond))) * time.Millisecond
	}
	if in.OnOutOfRange != nil {
		switch *in.OnOutOfRange {
		case "error":
		case "earliest":
			req.OutOfRange = application.OutOfRangeEarliest
		case "latest":
			req.OutOfRange = application.OutOfRangeLatest
		default:
			return domain.InvalidArgument("on_out_of_range: expected `error`, `earliest` or `latest`, got %s", quoteHeader(*in.OnOutOfRange))
		}
	}
	res, err := a.scans.Scan(c.UserContext(), scope, path, req)
	if err != nil {
		return err
	}
	ndjson := acceptsNDJSON(c.Get(fiber.HeaderAccept))
	if ndjson {
		return a.streamScan(c, path, &res)
	}
	out, n, err := a.renderScan(c, &res, ndjson)
	if err != nil {
		return err
	}
	cursor, caughtUp := scanEnd(&res, n)
	addLogAttrs(c, "table", path.String(), "records", n, "caught_up", caughtUp)
	if ndjson {
		c.Set(fiber.HeaderContentType, MIMEApplicationNDJSON)
	} else {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	}
	if len(cursor) <= maxHeaderCursor {
		c.Set(HeaderScanCursor, cursor)
		c.Set(HeaderScanCaughtUp, strconv.FormatBool(caughtUp))
	}
	return c.Send(out)
}

// scanEnd is the cursor and caught_up of an answer that holds the first n
// of res's records: res's own when it holds them all, else the cursor that
// resumes after record n-1 and caught_up false.
func scanEnd(res *application.ScanResult, n int) (cursor string, caughtUp bool) {
	if n < len(res.Records) {
		return res.CursorAfter(n), false
	}
	return res.Cursor, res.CaughtUp
}

// appendScanEnd appends the members that end a scan answer after its
// records, `"cursor":"…","caught_up":…}` (the JSON answer's object, or the
// last line of an NDJSON answer, opened by the caller).
func appendScanEnd(b []byte, cursor string, caughtUp bool) []byte {
	b = append(b, `"cursor":`...)
	b = appendJSONString(b, cursor)
	b = append(b, `,"caught_up":`...)
	b = strconv.AppendBool(b, caughtUp)
	return append(b, '}')
}

// maxHeaderCursor is the longest cursor sent in HeaderScanCursor (a cursor
// grows with the buckets read, ~20 bytes each): proxies refuse answers
// whose headers pass a few KiB (nginx's proxy_buffer_size is one page by
// default), so a longer cursor is in the body only.
const maxHeaderCursor = 2 << 10

// HeaderScanCursor and HeaderScanCaughtUp (an extension) carry a JSON scan
// answer's `cursor` and `caught_up` (the same values as its body) in its
// headers, so that a consumer can send the next request of its cursor
// chain as soon as the headers arrive and read this answer's records while
// the gateway reads the next ones, as the Java client's LogScanner fetches
// ahead while the application handles the records it has. The cursor is
// URL-safe base64 (internal/sealed). Both are left out when the cursor is
// longer than maxHeaderCursor, and streamed NDJSON answers carry them in
// their last line only: the cursor is known once the stream is written.
const (
	HeaderScanCursor   = "X-Fluss-Scan-Cursor"
	HeaderScanCaughtUp = "X-Fluss-Scan-Caught-Up"
)

// renderScan renders a scan's answer (JSON, or NDJSON: one record per line
// and the cursor in a last line) under the memory budget, as lookups are:
// the decoded records are charged (each run of records before it is
// rendered), then the answer before each time it grows (429 resource_exhausted with Retry-After when the budget cannot
// take it); the charge is released once the answer is written. An answer
// that would pass the answer-size cap (gateway.rest.lookup.max-response-bytes)
// ends after the last record that fits, with the cursor that resumes after
// it and caught_up false; only a first record larger than the cap is a 413.
// It returns the answer and the number of records in it.
func (a *api) renderScan(c *fiber.Ctx, res *application.ScanResult, ndjson bool) ([]byte, int, error) {
	return renderScanAnswer(a.newAnswerBudget(c), res, ndjson)
}

// renderScanAnswer is renderScan with the answer's budget.
func renderScanAnswer(ab *answerBudget, res *application.ScanResult, ndjson bool) ([]byte, int, error) {
	// Room for the tail: a cursor cut short is no longer than the full one.
	tail := len(res.Cursor) + 64
	ab.limit = max(ab.limit-tail, 0)
	out, err := ab.add(nil, nil)
	if err != nil {
		return nil, 0, err
	}
	if !ndjson {
		if out, err = ab.add(out, []byte(`{"records":[`)); err != nil {
			return nil, 0, err
		}
	}
	// The records are rendered in parallel chunks (scan_render.go), each
	// record followed by sep: with JSON's separating commas, the answer's
	// records are those bytes less the last comma.
	sep, extra := byte('\n'), 0
	if !ndjson {
		sep, extra = ',', 1
	}
	render := startScanRender(ab.ctx, ab.ch, res, sep, ab.limit, true) // the records charged chunk by chunk, then their part of the answer
	defer render.finish()
	n, size := len(res.Records), len(out)
	var parts [][]byte
	for k := range render.chunks {
		c := render.wait(k)
		if c.err != nil {
			return nil, 0, c.err
		}
		start, cut := 0, false
		for j, end := range c.ends {
			if i := c.from + j; size+end-start-extra > ab.limit {
				if i == 0 {
					return nil, 0, ab.tooLarge()
				}
				n, cut = i, true // cut at the cap: the cursor resumes after record i-1
				break
			}
			size += end - start
			start = end
		}
		if start > 0 {
			parts = append(parts, c.buf[:start])
		}
		if !cut && len(c.ends) < c.to-c.from {
			n, cut = c.from+len(c.ends), true // never: a chunk stops only past the cap
		}
		if cut {
			render.stopped.Store(true)
			break
		}
	}
	if n > 0 {
		size -= extra
	}
	cursor, caughtUp := scanEnd(res, n)
	ab.limit += tail
	var part []byte
	if ndjson {
		part = append(appendScanEnd(append(part, '{'), cursor, caughtUp), '\n')
	} else {
		part = appendScanEnd(append(part, "],"...), cursor, caughtUp)
	}
	// The answer in one buffer of its exact size.
	if out, err = ab.reserveExact(out, size+len(part)); err != nil {
		return nil, 0, err
	}
	for k, p := range parts {
		if k == len(parts)-1 {
			p = p[:len(p)-extra] // the last record's comma
		}
		out = append(out, p...)
	}
	return append(out, part...), n, nil
}

// streamScan answers a scan with Accept: application/x-ndjson as a
// streamed answer (stream.go): one record per line, rendered and sent as it
// goes (the answer is never held whole), then the line
// {"cursor":…,"caught_up":…}. The decoded records are charged to the memory
// budget first (429 when they do not fit) and held until the stream ends.
// The answer-size cap (gateway.rest.lookup.max-response-bytes) still
// bounds the answer: it ends after the last record that fits, with the
// cursor that resumes after it and caught_up false; a first record larger
// than the cap ends the stream with an error line (413 limit_exceeded's
// envelope). A stream the client leaves stops rendering.
func (a *api) streamScan(c *fiber.Ctx, path domain.TablePath, res *application.ScanResult) error {
	ab := a.newAnswerBudget(c)
	var decoded int64
	for i := range res.Records {
		decoded += datumBytes(res.Records[i].Row) + scanRecordOverhead
	}
	if err := ab.ch.Acquire(ab.ctx, decoded); err != nil {
		return budgetError(err, "the records read")
	}
	addLogAttrs(c, "table", path.String())
	limit := ab.limit
	streamAnswer(c, MIMEApplicationNDJSON, func(ctx context.Context, out *streamOut) error {
		n, err := writeScanLines(ctx, ab.ch, out, res, limit)
		out.logAttrs("records", n, "caught_up", res.CaughtUp && n == len(res.Records))
		return err
	})
	return nil
}

// scanFlushBytes is how many rendered bytes of a streamed scan are sent at
// a time (the first record is sent at once).
const scanFlushBytes = 32 << 10

// scanLineSent, when set (tests), is called after each send of a streamed
// scan with the number of records sent so far.
var scanLineSent func(n int)

// writeScanLines writes a scan's NDJSON records and its cursor line to out,
// at most limit bytes; it returns the number of records written. The
// records are rendered in parallel chunks (scan_render.go), each written
// as soon as it and those before it are rendered, while later ones render.
func writeScanLines(ctx context.Context, ch *membudget.Charge, out *streamOut, res *application.ScanResult, limit int) (int, error) {
	tail := len(res.Cursor) + 64 // a cursor cut short is no longer than the full one
	room := max(limit-tail, 0)
	n := len(res.Records)
	render := startScanRender(ctx, ch, res, '\n', room, false) // the records were charged before the stream began
	defer render.finish()
	written, unsent := 0, 0
	for k := range render.chunks {
		c := render.wait(k)
		if c.err == nil {
			c.err = ctx.Err()
		}
		if c.err != nil {
			return c.from, c.err
		}
		from, prev, cut := 0, 0, false // c.buf[from:prev] is rendered, fits, and is not written yet
		for j, end := range c.ends {
			i := c.from + j
			if written+end-prev > room {
				if i == 0 {
					return 0, &domain.Error{Kind: domain.KindLimitExceeded, Message: fmt.Sprintf(
						"the answer would exceed %d bytes (gateway.rest.lookup.max-response-bytes); ask for fewer keys or columns", limit)}
				}
				n, cut = i, true // cut at the cap: the cursor resumes after record i-1
				break
			}
			written += end - prev
			unsent += end - prev
			prev = end
			if i == 0 || unsent >= scanFlushBytes {
				if _, err := out.Write(c.buf[from:prev]); err != nil {
					return c.from + j, err
				}
				if err := out.Flush(); err != nil {
					return c.from + j, err
				}
				from, unsent = prev, 0
				if scanLineSent != nil {
					scanLineSent(i + 1)
				}
			}
		}
		if _, err := out.Write(c.buf[from:prev]); err != nil {
			return c.from, err
		}
		if !cut && len(c.ends) < c.to-c.from {
			n, cut = c.from+len(c.ends), true // never: a chunk stops only past the cap
		}
		if cut {
			render.stopped.Store(true)
			break
		}
	}
	cursor, caughtUp := scanEnd(res, n)
	line := append(appendScanEnd([]byte{'{'}, cursor, caughtUp), '\n')
	if _, err := out.Write(line); err != nil {
		return n, err
	}
	return n, out.Flush()
}

// scanRecordOverhead is the memory of a decoded record beside its row's
// datums (domain.LogRecord and its slice header).
const scanRecordOverhead = 64

// scanRenderer renders the records of one answer: partition (absent for a
// non-partitioned table), bucket, offset, timestamp (RFC 3339 UTC with
// milliseconds), change_type and row, as lookups render rows. The column
// names are quoted once, and a timestamp is formatted once for the run of
// records that share it (a log batch's commit timestamp).
type scanRenderer struct {
	keys   rowjson.RowKeys
	ts     int64
	tsText []byte
}

func newScanRenderer(cols []domain.Column) *scanRenderer {
	return &scanRenderer{keys: rowjson.NewRowKeys(cols)}
}

// appendRecord appends one record.
func (s *scanRenderer) appendRecord(out []byte, r *application.ScanRecord) []byte {
	out = append(out, '{')
	if r.Partition != "" {
		out = append(out, `"partition":`...)
		out = appendJSONString(out, r.Partition)
		out = append(out, ',')
	}
	out = append(out, `"bucket":`...)
	out = strconv.AppendInt(out, int64(r.Bucket), 10)
	out = append(out, `,"offset":`...)
	out = strconv.AppendInt(out, r.Offset, 10)
	out = append(out, `,"timestamp":"`...)
	if s.tsText == nil || r.Timestamp != s.ts {
		s.ts = r.Timestamp
		s.tsText = time.UnixMilli(r.Timestamp).UTC().AppendFormat(s.tsText[:0], "2006-01-02T15:04:05.000Z07:00")
	}
	out = append(out, s.tsText...)
	out = append(out, `","change_type":"`...)
	out = append(out, r.ChangeType...)
	out = append(out, `","row":`...)
	out = s.keys.AppendRow(out, r.Row)
	return append(out, '}')
}

func (a *api) listOffsets(c *fiber.Ctx) error {
	scope, path, err := a.tableScope(c)
	if err != nil {
		return err
	}
	if a.scans == nil {
		return unsupportedRecords(scope.Cluster, "log offsets")
	}
	position := c.Query("position", "latest")
	var ts any
	if v := c.Query("timestamp"); v != "" {
		ts = v
	}
	st, err := parsePosition("position", position, ts, "timestamp")
	if err != nil {
		return err
	}
	res, err := a.scans.Offsets(c.UserContext(), scope, path, st, nil, nil)
	if err != nil {
		return err
	}
	out := make([]byte, 0, 32+len(res.Offsets)*48)
	out = append(out, `{"offsets":[`...)
	for i, o := range res.Offsets {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '{')
		if o.Partition != "" {
			out = append(out, `"partition":`...)
			out = appendJSONString(out, o.Partition)
			out = append(out, ',')
		}
		out = append(out, `"bucket":`...)
		out = strconv.AppendInt(out, int64(o.Bucket), 10)
		out = append(out, `,"offset":`...)
		out = strconv.AppendInt(out, o.Offset, 10)
		out = append(out, '}')
	}
	out = append(out, "]}"...)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(out)
}
