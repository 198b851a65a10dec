package http

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/http/rowjson"
	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// NDJSON write bodies (Content-Type: application/x-ndjson, a gateway-go
// extension): one write entry per line, in exactly the shape of one element
// of a JSON body's `entries` ({"id": …, "upsert"|"delete"|"append": {…}});
// blank lines are skipped; lines are numbered from 1, blank ones included.
//
// The body is read as it arrives, straight into the chunks' documents
// (no copy per line: each line's newline becomes the comma after it), and
// cut into chunks (ndjsonChunkRows lines or ndjsonChunkBytes bytes, at most
// gateway.rest.write.max-rows); each chunk is decoded by the row codec
// (rowjson, the JSON body's own decoder, over the chunk's lines as one
// `entries` array, each line's entry checked to end where the line ends)
// and handed to the write use case while the next
// chunk is read: chunk k+1 is decoded while chunk k waits for its verdicts
// (only its decoding must be done first, so that a line that is not JSON
// stops every later line); at most ndjsonInFlight chunks hold memory at a
// time. Answers:
//
//   - by default the JSON body's answer (row_count, success_count,
//     error_count, successes, failures), one entry per non-blank line;
//   - with `Accept: application/x-ndjson`, one verdict line per entry in
//     line order: {"line":n,"id":"…","ok":true} or {"line":n,"id":"…",
//     "ok":false,"error_code":"…","message":"…","retryable":b,"applied":"no"|"unknown"}.
//     The lines are sent as the chunks' verdicts arrive, while the body is
//     still read (a streamed answer, stream.go).
//
// With X-Fluss-Write-Positions (HeaderWritePositions) each success, in
// either answer, also carries its partition, bucket and offset or
// log_end_offset (appendWritePosition).
//
// An invalid entry (unknown column, wrong type, missing id…) gets its own
// invalid_argument verdict whose message starts with "line n: ". A line that
// is not JSON ends the request: 400 invalid_argument naming the line and
// stating which earlier entries were already written; nothing from that line
// on is written. So do a body over the row cap (413 limit_exceeded), a body
// that cannot be read to its end (truncated, bad gzip: 400), and a chunk the
// use case refuses as a whole (its own status, e.g. 504 when the deadline
// passed). Entry ids are not checked for uniqueness across chunks.

const (
	// ndjsonChunkRows: 2,048 lines (8,192 before session 10) keep the rows
	// of the chunks in flight small enough for the collector and the
	// caches: 100,000-line bodies cost a third less CPU per row, 10,000-line
	// ones a tenth (docs/performance.md, session 10). Cutting a 500-line
	// body into 256-line chunks cost more than it saved.
	ndjsonChunkRows  = 2048
	ndjsonChunkBytes = 4 << 20
	ndjsonInFlight   = 3
	// ndjsonBudgetFactor estimates a chunk's memory from its bytes: the
	// lines, the decoded rows (an 80-byte Datum per value) and the writer's
	// encoded copy.
	ndjsonBudgetFactor = 6
)

// ndjsonChunk is a run of lines written by one use-case call.
type ndjsonChunk struct {
	// doc is {"entries":[line,line,…]}: the body's bytes as read, each
	// newline after a line turned into the comma that separates it from
	// the next (the one after the last line, and those of blank lines, into
	// a space), so the lines are decoded where they were read, not copied.
	doc []byte
	// starts and ends hold where each non-blank line's JSON (its JSON
	// whitespace cut off) starts and ends in doc; ends are also the entry
	// ends the codec checks (rowjson.Limits.EntryEnds).
	starts []int
	ends   []int
	lines  []int // line number of each line
	idx    *lineIndex
	bytes  int // body bytes of the chunk (lines and newlines)
	// sep is the offset in doc of the separator after the last line, -1 for
	// none (no line yet, or a last line the body ended without a newline).
	sep int

	decoded chan struct{} // closed once the chunk's lines were decoded (or the call ended)
	done    chan struct{} // closed once res and err are set
	once    sync.Once
	res     application.WriteResult
	err     error
	// badLine is the position in the chunk of a line that is not JSON, -1
	// for none; badMsg is its syntax error. The lines before it were
	// written.
	badLine int
	badMsg  string
	// skipped is set when the chunk was decoded but not handed to the
	// writer: an earlier chunk has a line that is not JSON (or was skipped
	// itself). It has no verdicts.
	skipped bool
	// sent is set once the chunk is dispatched (in the pipeline's pending
	// list): its buffers are recycled by the write and the fold, not by run.
	sent bool
}

// chunkDocs recycles the chunks' documents: a long body reuses a handful
// (each grown to what its chunks need, at most ndjsonChunkBytes and a line)
// instead of growing a new one per chunk.
var chunkDocs = sync.Pool{New: func() any { b := make([]byte, 0, 256<<10); return &b }}

// lineIndex is a chunk's ends and lines, recycled through lineIndexes like
// the documents (growing them line by line was a tenth of a 500-line
// body's allocated bytes).
type lineIndex struct{ starts, ends, lines []int }

var lineIndexes = sync.Pool{New: func() any {
	return &lineIndex{starts: make([]int, 0, 1024), ends: make([]int, 0, 1024), lines: make([]int, 0, 1024)}
}}

func newNDJSONChunk() *ndjsonChunk {
	doc := chunkDocs.Get().(*[]byte)
	idx := lineIndexes.Get().(*lineIndex)
	return &ndjsonChunk{doc: append((*doc)[:0], ndjsonDocHead...), starts: idx.starts[:0], ends: idx.ends[:0], lines: idx.lines[:0], idx: idx,
		sep: -1, badLine: -1, decoded: make(chan struct{}), done: make(chan struct{})}
}

// recycle returns the chunk's document once nothing reads it (the use case
// has returned: rows and ids never alias the document).
func (ch *ndjsonChunk) recycle() {
	if ch.doc != nil && cap(ch.doc) <= 2*(ndjsonChunkBytes+64<<10) {
		doc := ch.doc[:0]
		chunkDocs.Put(&doc)
	}
	ch.doc = nil
}

// recycleIndex returns the chunk's ends and lines once its verdicts are
// folded (nothing reads them afterwards); release is recycle and
// recycleIndex for a chunk never dispatched.
func (ch *ndjsonChunk) recycleIndex() {
	if ch.idx != nil && cap(ch.lines) <= 2*ndjsonChunkRows {
		ch.idx.starts, ch.idx.ends, ch.idx.lines = ch.starts[:0], ch.ends[:0], ch.lines[:0]
		lineIndexes.Put(ch.idx)
	}
	ch.idx, ch.starts, ch.ends, ch.lines = nil, nil, nil, nil
}

func (ch *ndjsonChunk) release() {
	ch.recycle()
	ch.recycleIndex()
}

// add copies a line (its JSON whitespace cut off) to the end of the
// chunk; n is its bytes in the body. Used for a body held whole
// (ingest_keyed.go); run reads lines into the document in place (endLine).
func (ch *ndjsonChunk) add(line []byte, lineNo, n int) {
	if ch.sep >= 0 {
		ch.doc[ch.sep] = ','
	}
	ch.starts = append(ch.starts, len(ch.doc))
	ch.doc = append(ch.doc, line...)
	ch.ends = append(ch.ends, len(ch.doc))
	ch.lines = append(ch.lines, lineNo)
	ch.doc = append(ch.doc, ' ')
	ch.sep = len(ch.doc) - 1
	ch.bytes += n
}

// endLine ends the line doc[start:end] read in place (end is its newline,
// or len(doc) for a last line without one). A non-blank line is recorded
// and its newline becomes a space, to be turned into a comma when another
// line follows (the comma before a line is written when it ends, so the
// document always holds an entries array that needs only "]}"); a blank
// line's newline becomes a space.
func (ch *ndjsonChunk) endLine(start, end, lineNo int) {
	s, e := start, end
	for s < e && isJSONSpace(ch.doc[s]) {
		s++
	}
	for e > s && isJSONSpace(ch.doc[e-1]) {
		e--
	}
	if end < len(ch.doc) {
		ch.doc[end] = ' '
		ch.bytes += end + 1 - start
	} else {
		ch.bytes += end - start
	}
	if s == e {
		return
	}
	if ch.sep >= 0 {
		ch.doc[ch.sep] = ','
	}
	ch.sep = -1
	if end < len(ch.doc) {
		ch.sep = end
	}
	ch.starts = append(ch.starts, s)
	ch.ends = append(ch.ends, e)
	ch.lines = append(ch.lines, lineNo)
}

func (ch *ndjsonChunk) line(i int) []byte { return ch.doc[ch.starts[i]:ch.ends[i]] }

func (ch *ndjsonChunk) markDecoded() { ch.once.Do(func() { close(ch.decoded) }) }

// ndjsonDecoder decodes one chunk for the write use case, answering invalid
// lines one by one (DecodedWrite.Rejected).
type ndjsonDecoder struct {
	ch *ndjsonChunk
	// prev is the chunk dispatched before ch (nil for the first, and for a
	// body decoded whole): ch is decoded while prev is, but handed to the
	// writer only once prev is decoded, and not at all when prev has a
	// line that is not JSON. ctx bounds that wait.
	prev     *ndjsonChunk
	ctx      context.Context
	buf      *rowjson.Buffer
	rejected []application.RejectedEntry
	one      []byte
	oneEnd   [1]int
}

// DecodeWrite decodes the chunk's lines as one entries array, each line one
// entry; when that fails as a whole (a line that is not JSON or not one
// entry, an invalid entry without a usable id, a duplicate id) it decodes
// line by line, answering each invalid line on its own and stopping at the
// first line that is not JSON.
func (d *ndjsonDecoder) DecodeWrite(t *application.Table, maxRows int) (application.DecodedWrite, error) {
	batch, ids, err := d.decodeWrite(t, maxRows)
	return application.DecodedWrite{Batch: batch, IDs: ids, Rejected: d.rejected}, err
}

func (d *ndjsonDecoder) decodeWrite(t *application.Table, maxRows int) (domain.WriteBatch, []string, error) {
	defer d.ch.markDecoded()
	codec, err := codecOf(t)
	if err != nil {
		return domain.WriteBatch{}, nil, err
	}
	ch := d.ch
	ch.badLine, ch.badMsg = -1, ""
	d.rejected = d.rejected[:0]
	// Each line must be one entry on its own: the codec checks that entry i
	// ends where line i ends (rowjson.Limits.EntryEnds), in the same pass
	// that decodes it.
	doc := append(ch.doc, "]}"...)
	batch, ids, rejected, err := codec.DecodeWriteReport(d.buf, doc, rowjson.Limits{MaxEntries: maxRows, EntryEnds: ch.ends})
	ch.doc = doc[:len(doc)-2]
	if err == nil {
		for _, r := range rejected {
			d.rejected = append(d.rejected, application.RejectedEntry{Index: r.Index, ID: r.ID, Message: lineMessage(ch.lines[r.Index], r.Message)})
		}
		if err := d.afterPrev(); err != nil {
			return domain.WriteBatch{}, nil, err
		}
		return batch, ids, nil
	}
	if de := domain.AsError(err); !errors.Is(err, rowjson.ErrEntryBounds) && (de == nil || de.Kind != domain.KindInvalidArgument) {
		return domain.WriteBatch{}, nil, err
	}
	// Line by line: a line that is not JSON, an invalid entry without a
	// usable id, a duplicate id, or lines that are not one entry each.
	var all domain.WriteBatch
	ids = ids[:0]
	for i := range ch.lines {
		line := ch.line(i)
		d.one = append(append(append(d.one[:0], ndjsonDocHead...), line...), "]}"...)
		d.oneEnd[0] = len(ndjsonDocHead) + len(line)
		b, oneIDs, rej, err := codec.DecodeWriteReport(d.buf, d.one, rowjson.Limits{MaxEntries: 1, EntryEnds: d.oneEnd[:]})
		if err != nil && !lineIsJSON(line) {
			// Checked only when the entry failed: a line that is one JSON
			// value decodes as one entry ending at the line's end.
			ch.badLine, ch.badMsg = i, syntaxMessage(line)
			break
		}
		switch {
		case err != nil:
			msg := errorMessage(err)
			if errors.Is(err, rowjson.ErrEntryBounds) {
				msg = "not one JSON value" // unreachable for a line that is JSON
			}
			d.rejected = append(d.rejected, application.RejectedEntry{Index: i, ID: lineID(line), Message: lineMessage(ch.lines[i], msg)})
		case len(rej) > 0:
			d.rejected = append(d.rejected, application.RejectedEntry{Index: i, ID: rej[0].ID, Message: lineMessage(ch.lines[i], rej[0].Message)})
		default:
			all.Entries = append(all.Entries, b.Entries...)
			ids = append(ids, oneIDs...)
		}
	}
	if err := d.afterPrev(); err != nil {
		return domain.WriteBatch{}, nil, err
	}
	return all, ids, nil
}

// errChunkSkipped ends the write call of a chunk after a line that is not
// JSON (ndjsonChunk.skipped).
var errChunkSkipped = errors.New("an earlier line is not JSON")

// afterPrev waits, once the chunk is decoded, until the chunk before it is
// decoded too, so that chunks reach the writer in line order and none after
// a line that is not JSON does; it fails when the request's context ends
// first.
func (d *ndjsonDecoder) afterPrev() error {
	prev := d.prev
	if prev == nil {
		return nil
	}
	select {
	case <-prev.decoded:
	case <-d.ctx.Done():
		return &domain.Error{Kind: domain.KindTimeout, Retryable: true, Cause: d.ctx.Err(),
			Message: "the request deadline passed before the lines before them were decoded"}
	}
	if prev.badLine >= 0 || prev.skipped {
		d.ch.skipped = true
		return errChunkSkipped
	}
	return nil
}

// trimJSONSpace cuts JSON whitespace (RFC 8259: space, tab, LF, CR) from
// both ends of line; a line of nothing else is blank. Other spaces (a
// vertical tab, U+00A0) are not JSON's: a line holding them is not JSON.
func trimJSONSpace(line []byte) []byte {
	for len(line) > 0 && isJSONSpace(line[0]) {
		line = line[1:]
	}
	for len(line) > 0 && isJSONSpace(line[len(line)-1]) {
		line = line[:len(line)-1]
	}
	return line
}

// ndjsonDocHead opens the entries array a chunk's lines are joined into.
const ndjsonDocHead = `{"entries":[`

// lineMessage prefixes an entry's message with its line, dropping the
// codec's "entries[i]: " (a position in the chunk, not in the body).
func lineMessage(line int, msg string) string {
	if strings.HasPrefix(msg, "entries[") {
		if i := strings.Index(msg, "]: "); i > 0 {
			msg = msg[i+3:]
		}
	}
	return "line " + strconv.Itoa(line) + ": " + msg
}

func errorMessage(err error) string {
	if de := domain.AsError(err); de != nil {
		return de.Message
	}
	return err.Error()
}

// lineJSONOptions make jsontext check only the JSON grammar of a line, as
// RFC 8259 states it: duplicate member names and invalid UTF-8 in strings
// are the entry's problems (its verdict), not a line that is not JSON.
var lineJSONOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// lineIsJSON reports whether line is one JSON value.
func lineIsJSON(line []byte) bool { return jsontext.Value(line).IsValid(lineJSONOptions...) }

// lineID is the `id` member of a line that is a JSON object whose `id` is a
// string, "" otherwise (the first `id` when there are several).
func lineID(line []byte) string {
	dec := jsontext.NewDecoder(bytes.NewReader(line), lineJSONOptions...)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return ""
		}
		if name.String() != "id" {
			if dec.SkipValue() != nil {
				return ""
			}
			continue
		}
		if v, err := dec.ReadToken(); err == nil && v.Kind() == '"' {
			return v.String()
		}
		return ""
	}
	return ""
}

// syntaxMessage describes why line is not JSON, quoting at most a little of
// it: "not valid JSON (<jsontext's syntax error>): <line, cut short>".
func syntaxMessage(line []byte) string {
	msg := "not valid JSON"
	dec := jsontext.NewDecoder(bytes.NewReader(line), lineJSONOptions...)
	_, err := dec.ReadValue()
	if err == nil {
		if _, err = dec.ReadToken(); err == io.EOF {
			err = nil
		} else if err == nil {
			err = errors.New("more than one JSON value on the line")
		}
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		msg += " (" + strings.TrimPrefix(err.Error(), "jsontext: ") + ")"
	}
	return msg + ": " + quoteCut(line, 40)
}

func quoteCut(b []byte, n int) string {
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "…"
	}
	return strconv.Quote(string(b))
}

// verdictSink renders the verdicts of a streamed write as they are folded
// in, in input order: the JSON body's answer or NDJSON verdict lines.
type verdictSink struct {
	ndjson bool
	// positions adds each success's partition, bucket and offset (or
	// log_end_offset) to its element or line (HeaderWritePositions).
	positions bool
	rows      int
	ok        int
	// succ is, for the JSON body, sinkHead reserved bytes (where send puts
	// the counts, so the answer is never copied whole) and the successes'
	// elements, comma-separated.
	succ      []byte
	fail      []byte // JSON body: the failures' elements
	out       []byte // NDJSON: the verdict lines
	firstFail []string
	// stream, when set, receives the NDJSON verdict lines as they are
	// folded in (a streamed answer, stream.go) instead of out holding them
	// all.
	stream *streamOut
}

// flush sends the verdict lines rendered so far to a streamed answer.
func (s *verdictSink) flush() {
	if s.stream == nil || len(s.out) == 0 {
		return
	}
	_, _ = s.stream.Write(s.out)
	_ = s.stream.Flush() // a failure cancels the stream's context, which stops the pipeline
	s.out = s.out[:0]
}

func (s *verdictSink) add(line int, id string, r domain.EntryResult) {
	s.rows++
	if r.OK() {
		s.ok++
	} else if len(s.firstFail) < 5 {
		s.firstFail = append(s.firstFail, fmt.Sprintf("line %d (id %q)", line, id))
	}
	if s.ndjson {
		if s.stream != nil && len(s.out) >= 32<<10 {
			s.flush()
		}
		s.out = append(s.out, `{"line":`...)
		s.out = strconv.AppendInt(s.out, int64(line), 10)
		s.out = append(s.out, `,"id":`...)
		s.out = appendJSONString(s.out, id)
		if r.OK() {
			s.out = append(s.out, `,"ok":true`...)
			if s.positions {
				s.out = appendWritePosition(s.out, r.At)
			}
			s.out = append(s.out, "}\n"...)
			return
		}
		s.out = append(s.out, `,"ok":false`...)
		s.out = appendFailureFields(s.out, r)
		s.out = append(s.out, "}\n"...)
		return
	}
	if r.OK() {
		if len(s.succ) < sinkHead {
			s.succ = make([]byte, sinkHead, sinkHead+4<<10)
		} else if len(s.succ) > sinkHead {
			s.succ = append(s.succ, ',')
		}
		s.succ = append(s.succ, `{"id":`...)
		s.succ = appendJSONString(s.succ, id)
		if s.positions {
			s.succ = appendWritePosition(s.succ, r.At)
		}
		s.succ = append(s.succ, '}')
		return
	}
	if len(s.fail) > 0 {
		s.fail = append(s.fail, ',')
	}
	s.fail = append(s.fail, `{"id":`...)
	s.fail = appendJSONString(s.fail, id)
	s.fail = appendFailureFields(s.fail, r)
	s.fail = append(s.fail, '}')
}

// reserve makes room in the JSON answer for the successes of the entries
// ids about to be added (sized from the ids instead of a fixed 64 KiB, five
// times what a 500-entry body needs).
func (s *verdictSink) reserve(ids []string) {
	if s.ndjson {
		return
	}
	need := 0
	for _, id := range ids {
		need += len(id) + len(`,{"id":""}`)
	}
	if s.positions {
		need += len(ids) * 64
	}
	if len(s.succ) < sinkHead {
		// send appends the failures and the closing bytes (sinkTail)
		// after the successes: room for them too, or that append copies
		// the whole answer into a new array.
		s.succ = make([]byte, sinkHead, sinkHead+need+sinkTail)
		return
	}
	s.succ = slices.Grow(s.succ, need+sinkTail)
}

// sinkHead is the room reserved for the answer's head: three counts and
// the member names.
const sinkHead = 96

// sinkTail is the room reserved after the successes for what send appends
// when no entry failed: `],"failures":[` and `]}`.
const sinkTail = len(`],"failures":[]}`)

// appendFailureFields appends a failed entry's fields after its id, as the
// JSON body's answer spells them.
func appendFailureFields(dst []byte, r domain.EntryResult) []byte {
	applied := r.Applied
	if applied != domain.AppliedNo {
		applied = domain.AppliedUnknown
	}
	code, msg := renderEntryVerdict(r)
	dst = append(dst, `,"error_code":`...)
	dst = appendJSONString(dst, code)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, msg)
	dst = append(dst, `,"retryable":`...)
	dst = strconv.AppendBool(dst, r.Retryable)
	dst = append(dst, `,"applied":`...)
	return appendJSONString(dst, string(applied))
}

// send writes the answer.
func (s *verdictSink) send(c *fiber.Ctx) error {
	if s.ndjson {
		c.Set(fiber.HeaderContentType, MIMEApplicationNDJSON)
		return c.Send(s.out)
	}
	var room [sinkHead]byte
	head := append(room[:0], `{"row_count":`...)
	head = strconv.AppendInt(head, int64(s.rows), 10)
	head = append(head, `,"success_count":`...)
	head = strconv.AppendInt(head, int64(s.ok), 10)
	head = append(head, `,"error_count":`...)
	head = strconv.AppendInt(head, int64(s.rows-s.ok), 10)
	head = append(head, `,"successes":[`...)
	if len(s.succ) < sinkHead {
		s.succ = make([]byte, sinkHead)
	}
	// The head goes right before the elements, in the reserved bytes.
	out := s.succ[sinkHead-len(head):]
	copy(out, head)
	out = append(out, `],"failures":[`...)
	out = append(out, s.fail...)
	out = append(out, "]}"...)
	s.succ, s.fail = nil, nil
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(out)
}

// written describes, for the error that ends a streamed write, what had
// been written before it.
func (s *verdictSink) written() string {
	if s.rows == 0 {
		return "no earlier entry had been written"
	}
	entries := "entries"
	if s.rows == 1 {
		entries = "entry"
	}
	msg := fmt.Sprintf("%d other %s had already been handed to the writer: %d written, %d failed", s.rows, entries, s.ok, s.rows-s.ok)
	if len(s.firstFail) > 0 {
		msg += " (failed: " + strings.Join(s.firstFail, ", ")
		if s.rows-s.ok > len(s.firstFail) {
			msg += ", …"
		}
		msg += ")"
	}
	return msg
}

// streamStop is the error that ends a streamed write, with what was written
// before it.
func streamStop(err error, sink *verdictSink, what string) error {
	de := domain.AsError(err)
	if de == nil {
		de = &domain.Error{Kind: domain.KindInternal, Cause: err}
	}
	out := *de
	if out.Message == "" && out.Kind != domain.KindInternal {
		out.Message = err.Error()
	}
	prefix := what
	if out.Message != "" {
		// A message that ends a sentence (Fluss's do) loses its full stop
		// before the clauses joined to it.
		prefix += ": " + strings.TrimSuffix(out.Message, ".")
	}
	out.Message = prefix + "; " + sink.written() + "; nothing from there on was written"
	return &out
}

// writeMaxRows is the use case's row cap of one write call, which bounds a
// chunk.
func (a *api) writeMaxRows() int {
	if r, ok := a.records.(interface {
		Limits() application.RecordLimits
	}); ok && r.Limits().WriteMaxRows > 0 {
		return r.Limits().WriteMaxRows
	}
	return 10_000
}

// writeNDJSON serves POST …/records with an NDJSON body.
func (a *api) writeNDJSON(c *fiber.Ctx, scope application.Scope, path domain.TablePath) error {
	if c.Get(HeaderIdempotencyKey) != "" {
		return a.writeNDJSONKeyed(c, scope, path) // ingest_keyed.go
	}
	body, err := streamedBody(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	sink := &verdictSink{ndjson: acceptsNDJSON(c.Get(fiber.HeaderAccept)), positions: writePositionsAsked(c)}
	if sink.ndjson {
		a.streamNDJSONVerdicts(c, scope, path, body, sink)
		return nil
	}
	p := &ndjsonPipeline{a: a, ctx: ctx, charge: a.streamCharger(c), scope: scope, path: path, sink: sink}
	err = p.run(body)
	p.drain()
	p.releaseBuffers()
	if p.dispatched {
		// Verdicts (or the error saying what was written) are owed even if
		// answering runs late.
		c.Locals(localVerdicts, true)
	}
	if p.stopErr != nil {
		err = streamStop(p.stopErr, sink, p.stopWhat)
	}
	a.observeIngest(c, MIMEApplicationNDJSON, path, int64(sink.rows), body.n)
	c.Locals(localBytesIn, body.n)
	addLogAttrs(c, "table", path.String(), "rows", sink.rows, "rows_failed", sink.rows-sink.ok)
	if err != nil {
		// The rest of the body is not read: the connection cannot carry
		// another request.
		c.Context().SetConnectionClose()
		return err
	}
	c.Locals(localVerdicts, true)
	a.chargeAnswer(c, int64(cap(sink.succ)+cap(sink.fail)+cap(sink.out)))
	return sink.send(c)
}

// streamNDJSONVerdicts answers an NDJSON body with its verdict lines
// streamed as the verdicts arrive (Accept: application/x-ndjson, a streamed
// answer: stream.go): the body is read, written and answered after the
// handler returns. The answer is 200 with the verdict lines in input order;
// an error that ends the request (a line that is not JSON, a limit, the
// deadline, a chunk the cluster refused) comes after the verdicts of every
// entry written before it as a last line holding the error envelope, whose
// message says what was written.
func (a *api) streamNDJSONVerdicts(c *fiber.Ctx, scope application.Scope, path domain.TablePath, body *bodyReader, sink *verdictSink) {
	charge := a.streamCharger(c)
	if c.Request().IsBodyStream() {
		// Take the body stream off the request: the stream reads it (body
		// holds it; fasthttp keeps its buffered bytes and drains what is
		// left after the answer), and no middleware may drain it first
		// (otelfiber measures c.Request().Body(), which reads a stream
		// whole).
		c.Request().ResetBody()
	}
	c.Locals(localVerdicts, true)
	addLogAttrs(c, "content_type", MIMEApplicationNDJSON, "table", path.String())
	observer, _ := a.opts.Observer.(IngestObserver)
	streamAnswer(c, MIMEApplicationNDJSON, func(ctx context.Context, out *streamOut) error {
		sink.stream = out
		p := &ndjsonPipeline{a: a, ctx: ctx, charge: charge, scope: scope, path: path, sink: sink,
			kick: make(chan struct{}, 1), quit: make(chan struct{}), emitted: make(chan struct{})}
		go p.emit()
		err := p.run(body)
		p.drain()
		p.releaseBuffers()
		close(p.quit)
		<-p.emitted
		if p.stopErr != nil {
			err = streamStop(p.stopErr, sink, p.stopWhat)
		}
		sink.flush()
		if observer != nil {
			observer.ObserveIngest(ctx, MIMEApplicationNDJSON, path, int64(sink.rows), body.n)
		}
		out.logAttrs("bytes_in_read", body.n, "rows", sink.rows, "rows_failed", sink.rows-sink.ok)
		return err
	})
}

// emit folds the chunks whose verdicts are in as they arrive (a streamed
// answer: the fold sends their verdict lines), until quit is closed.
func (p *ndjsonPipeline) emit() {
	defer close(p.emitted)
	for {
		select {
		case <-p.kick:
			p.settle(math.MaxInt) // folds the chunks that are done, in order, without waiting
		case <-p.quit:
			return
		}
	}
}

// poke tells the emitter (if any) that a chunk is done.
func (p *ndjsonPipeline) poke() {
	if p.kick != nil {
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
}

// stopped reports whether a chunk error ended the request (checked per
// line: an atomic load, not the mutex).
func (p *ndjsonPipeline) stopped() bool { return p.stop.Load() }

// idle reports, folding the chunks that are done, whether no chunk is in
// flight.
func (p *ndjsonPipeline) idle() bool {
	p.settle(math.MaxInt)
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending) == 0
}

// ndjsonPipeline reads, dispatches and folds the chunks of one NDJSON body.
type ndjsonPipeline struct {
	// mu guards pending, the sink and the stop error: with a streamed
	// answer the emitter folds chunks while run reads.
	mu sync.Mutex
	// kick, quit and emitted drive the emitter of a streamed answer (nil
	// otherwise).
	kick       chan struct{}
	quit       chan struct{}
	emitted    chan struct{}
	a          *api
	ctx        context.Context
	charge     func(ctx context.Context, n int) error // chargeStreamed
	dispatched bool                                   // a chunk was handed to the use case
	scope      application.Scope
	path       domain.TablePath
	sink       *verdictSink
	pending    []*ndjsonChunk // dispatched, in order, not yet folded
	// stopErr and stopWhat are the first chunk error that ends the request
	// and where it happened; the message is built once every dispatched
	// chunk is folded (chunks in flight still write).
	stopErr  error
	stopWhat string
	stop     atomic.Bool // stopErr is set
	// free holds the row buffers of this body's finished chunks, kept
	// whole for its next chunks (rowjson.Buffer.Recycle) while the memory
	// budget holds their bytes (a body whose client pauses keeps them
	// idle), and handed to the shared pool by releaseBuffers once the body
	// is done. freeMu guards it, not mu: drain and settle hold mu while
	// they wait for a chunk, and a chunk gives its buffer back before it is
	// done.
	freeMu sync.Mutex
	free   []idleBuffer
}

// idleBuffer is a row buffer kept between two chunks of a body, and the
// budget bytes that hold its memory meanwhile.
type idleBuffer struct {
	b    *rowjson.Buffer
	held int64
}

// rowBuffer returns a row buffer for a chunk: one an earlier chunk of the
// body used (its idle hold returned: the chunk's own charge covers it), or
// one from the shared pool.
func (p *ndjsonPipeline) rowBuffer() *rowjson.Buffer {
	p.freeMu.Lock()
	defer p.freeMu.Unlock()
	if n := len(p.free); n > 0 {
		ib := p.free[n-1]
		p.free = p.free[:n-1]
		p.a.budget.Release(ib.held, 0)
		return ib.b
	}
	return buffers.Get()
}

// recycleBuffer keeps a finished chunk's row buffer for the next chunk when
// the memory budget can hold its bytes now; otherwise the buffer goes to
// the shared pool, trimmed, as after the body.
func (p *ndjsonPipeline) recycleBuffer(b *rowjson.Buffer) {
	b.Recycle()
	held, ok := p.a.budget.TryAcquire(int64(b.Retained()))
	if !ok {
		buffers.Put(b)
		return
	}
	p.freeMu.Lock()
	p.free = append(p.free, idleBuffer{b: b, held: held})
	p.freeMu.Unlock()
}

// releaseBuffers hands the body's row buffers to the shared pool (trimmed
// there to its bound) and returns their budget; called once every chunk is
// done.
func (p *ndjsonPipeline) releaseBuffers() {
	p.freeMu.Lock()
	free := p.free
	p.free = nil
	p.freeMu.Unlock()
	for _, ib := range free {
		p.a.budget.Release(ib.held, 0)
		buffers.Put(ib.b)
	}
}

// ndjsonReadSize bounds one read of the body into a chunk's document. The
// bytes read after a chunk's last line move to the next chunk when it is
// cut, so a read much larger than a chunk would copy them again and again.
const ndjsonReadSize = 64 << 10

// run reads the body straight into the chunks' documents, ends its lines
// in place (ndjsonChunk.endLine) and dispatches full chunks; it returns the
// error that ended reading, if any.
func (p *ndjsonPipeline) run(body io.Reader) error {
	maxRows := p.a.streamMaxRows()
	chunkRows := min(ndjsonChunkRows, p.a.writeMaxRows())
	maxLine := int(min(p.a.opts.MaxRequestBytes, 1<<30))
	cur := newNDJSONChunk()
	defer func() {
		if !cur.sent {
			cur.release()
		}
	}()
	// cur.doc[start:scan] is the start of a line, with no newline in it;
	// cur.doc[scan:] was read but not looked at yet.
	start, scan := len(cur.doc), len(cur.doc)
	// next moves the bytes from start on to a new chunk after cur is
	// dispatched.
	next := func() error {
		n, err := p.cut(cur, start)
		if err != nil {
			return err
		}
		cur, start, scan = n, len(ndjsonDocHead), len(ndjsonDocHead)+scan-start
		return nil
	}
	lineNo, rows := 0, 0
	eof := false
	for !p.stopped() {
		for !p.stopped() {
			i := bytes.IndexByte(cur.doc[scan:], '\n')
			if i < 0 {
				break
			}
			end := scan + i
			lineNo++
			if end+1-start > maxLine {
				return p.stopAtLine(cur, start, lineNo, fmt.Sprintf("longer than the limit of %d bytes", maxLine))
			}
			if !blankLine(cur.doc[start:end]) {
				if rows == maxRows {
					return p.stopAtLine(cur, start, lineNo, fmt.Sprintf("the body has more than %d entries, the limit of one request", maxRows))
				}
				rows++
			}
			cur.endLine(start, end, lineNo)
			start, scan = end+1, end+1
			if len(cur.lines) >= chunkRows || start >= ndjsonChunkBytes {
				if err := next(); err != nil {
					return err
				}
			}
		}
		if len(cur.doc)-start > maxLine {
			return p.stopAtLine(cur, start, lineNo+1, fmt.Sprintf("longer than the limit of %d bytes", maxLine))
		}
		scan = len(cur.doc)
		if eof {
			if start < len(cur.doc) {
				// The last line, without a newline.
				lineNo++
				if !blankLine(cur.doc[start:]) && rows == maxRows {
					return p.stopAtLine(cur, start, lineNo, fmt.Sprintf("the body has more than %d entries, the limit of one request", maxRows))
				}
				cur.endLine(start, len(cur.doc), lineNo)
			}
			if len(cur.lines) == 0 {
				return nil
			}
			return p.dispatchChunk(cur, true)
		}
		// A streamed answer also sends the lines read so far when the next
		// read may wait for the client and nothing is in flight, so a slow
		// body gets its verdicts as it goes.
		if p.kick != nil && len(cur.lines) > 0 && p.idle() {
			if err := next(); err != nil {
				return err
			}
		}
		// The deadline is checked before each read (one per up to
		// ndjsonReadSize bytes, not per line: the context's mutex).
		if p.ctx.Err() != nil {
			return &domain.Error{Kind: domain.KindTimeout, Retryable: true, Cause: p.ctx.Err(),
				Message: fmt.Sprintf("line %d: the request deadline passed while reading the body; %s; nothing from there on was written", lineNo, p.settled())}
		}
		cur.doc = slices.Grow(cur.doc, ndjsonReadSize)
		n, err := body.Read(cur.doc[len(cur.doc) : len(cur.doc)+ndjsonReadSize])
		cur.doc = cur.doc[:len(cur.doc)+n]
		switch {
		case errors.Is(err, io.EOF):
			eof = true
		case err != nil:
			cur.doc = cur.doc[:start] // the line being read is not written
			if derr := p.flush(cur); derr != nil {
				return derr
			}
			return domain.InvalidArgument("reading the body failed after line %d: %v; %s; nothing from there on was written", lineNo, err, p.settled())
		}
	}
	return nil
}

// blankLine reports whether line holds nothing but JSON whitespace.
func blankLine(line []byte) bool {
	for _, c := range line {
		if !isJSONSpace(c) {
			return false
		}
	}
	return true
}

// cut ends cur before its bytes from start on (the line being read and
// those not looked at yet), dispatches it and returns the chunk those bytes
// move to.
func (p *ndjsonPipeline) cut(cur *ndjsonChunk, start int) (*ndjsonChunk, error) {
	next := newNDJSONChunk()
	// As large as cur's document, which held a chunk and a read, so the
	// next chunk's is not grown (and copied) read by read; not larger than
	// a chunk's bound and two reads, so one long line does not size every
	// later document of the body.
	next.doc = slices.Grow(next.doc, min(cap(cur.doc), ndjsonChunkBytes+2*ndjsonReadSize)-len(next.doc))
	next.doc = append(next.doc, cur.doc[start:]...)
	cur.doc = cur.doc[:start]
	if err := p.dispatch(cur); err != nil {
		next.release()
		return cur, err // cur was sent: run's deferred release skips it
	}
	return next, nil
}

// stopAtLine ends the request at line lineNo (from start in cur.doc) for
// a limit it is over (what), writing the lines before it.
func (p *ndjsonPipeline) stopAtLine(cur *ndjsonChunk, start, lineNo int, what string) error {
	cur.doc = cur.doc[:start]
	if err := p.flush(cur); err != nil {
		return err
	}
	return &domain.Error{Kind: domain.KindLimitExceeded,
		Message: fmt.Sprintf("line %d: %s; %s; nothing from there on was written", lineNo, what, p.settled())}
}

// flush dispatches the lines read before an error that ends the request.
func (p *ndjsonPipeline) flush(cur *ndjsonChunk) error {
	if len(cur.lines) == 0 {
		return nil
	}
	return p.dispatch(cur)
}

// settled describes what the chunks dispatched so far wrote, after waiting
// for them.
func (p *ndjsonPipeline) settled() string {
	p.drain()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sink.written()
}

// dispatch charges the chunk's bytes, waits until the previous chunk is
// decoded (so a line that is not JSON stops everything after it) and hands
// the chunk to the use case on its own goroutine.
func (p *ndjsonPipeline) dispatch(ch *ndjsonChunk) error { return p.dispatchChunk(ch, false) }

// dispatchChunk is dispatch; last says the body ended with this chunk. The
// last chunk with no chunk before it in flight (a body of one chunk, the
// common small request) is written on the caller's goroutine, as a JSON
// body is: there is nothing left to overlap, and handing it to another
// goroutine and waiting for it costs a wake-up across threads.
func (p *ndjsonPipeline) dispatchChunk(ch *ndjsonChunk, last bool) error {
	if err := p.charge(p.ctx, ch.bytes); err != nil {
		return streamStop(err, p.settledSink(), fmt.Sprintf("line %d", ch.lines[0]))
	}
	if p.stopped() {
		return nil
	}
	p.settle(ndjsonInFlight - 1)
	if p.stopped() {
		return nil
	}
	// The chunk before this one, if still in flight: this one is decoded
	// meanwhile, and written after it (ndjsonDecoder.afterPrev).
	p.mu.Lock()
	var prev *ndjsonChunk
	if n := len(p.pending); n > 0 {
		prev = p.pending[n-1]
	}
	p.mu.Unlock()
	release, err := p.a.acquireChunk(p.ctx, int64(len(ch.doc))*ndjsonBudgetFactor)
	if err != nil {
		return streamStop(err, p.settledSink(), fmt.Sprintf("line %d", ch.lines[0]))
	}
	p.dispatched = true
	write := func() {
		defer p.poke() // after done is closed
		defer close(ch.done)
		defer ch.markDecoded()
		defer release()
		buf := p.rowBuffer()
		defer p.recycleBuffer(buf)
		ch.res, ch.err = p.a.records.Write(p.ctx, p.scope, application.WriteCommand{
			Path: p.path, Decoder: &ndjsonDecoder{ch: ch, prev: prev, ctx: p.ctx, buf: buf},
		})
		ch.recycle()
	}
	p.mu.Lock()
	p.pending = append(p.pending, ch)
	ch.sent = true
	p.mu.Unlock()
	if last && prev == nil {
		write()
		return nil
	}
	go write()
	return nil
}

// settle folds the chunks that are done, in order, and waits for the
// oldest until at most n are in flight.
func (p *ndjsonPipeline) settle(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = settleInOrder(p.pending, n, func(x *ndjsonChunk) <-chan struct{} { return x.done }, p.fold)
}

func (p *ndjsonPipeline) settledSink() *verdictSink {
	p.drain()
	return p.sink
}

// drain waits for and folds every dispatched chunk.
func (p *ndjsonPipeline) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ch := range p.pending {
		<-ch.done
		p.fold(ch)
	}
	p.pending = nil
}

// fold adds a finished chunk's verdicts to the answer, or records the error
// that ends the request.
func (p *ndjsonPipeline) fold(ch *ndjsonChunk) {
	defer ch.recycleIndex()
	if ch.skipped {
		return // after a line that is not JSON: not written, no verdicts
	}
	if ch.err != nil {
		if p.stopErr == nil {
			p.stopErr, p.stopWhat = ch.err, fmt.Sprintf("lines %d-%d were not written", ch.lines[0], ch.lines[len(ch.lines)-1])
			p.stop.Store(true)
		}
		return
	}
	p.sink.reserve(ch.res.IDs)
	for i, r := range ch.res.Results {
		p.sink.add(ch.lines[i], ch.res.IDs[i], r)
	}
	if ch.badLine >= 0 && p.stopErr == nil {
		p.stop.Store(true)
		p.stopErr = domain.InvalidArgument("%s", ch.badMsg)
		p.stopWhat = fmt.Sprintf("line %d", ch.lines[ch.badLine])
	}
	p.sink.flush()
}

// settleInOrder folds, in input order, the chunks of a streamed write whose
// verdicts are in (done closed), and waits for the oldest until at most n are
// still in flight; it returns those still pending. Used by the NDJSON and
// the Arrow IPC pipelines.
func settleInOrder[T any](pending []T, n int, done func(T) <-chan struct{}, fold func(T)) []T {
	for len(pending) > 0 {
		head := pending[0]
		if len(pending) <= n {
			select {
			case <-done(head):
			default:
				return pending
			}
		}
		<-done(head)
		fold(head)
		pending = pending[1:]
	}
	return pending
}
