package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// The data-plane memory budget (issue 21) at the HTTP edge. Request bodies
// are streamed (fiber's StreamRequestBody): fasthttp reads the head and at
// most 8 KiB of the body before the handler chain runs, and admitBody reads
// the rest only after authentication, once the body's Content-Length has been
// charged to the budget. Unauthenticated requests and requests refused before
// admitBody never have their bodies read: the connection is closed after the
// answer (fasthttp closes it when more than 256 KiB are left unread) and the
// lingering close discards the rest without buffering it.
//
// Every charge of a request (the body, the bytes a gzip body expands to, the
// decoded rows, the rendered lookup answer) goes into one membudget.Charge,
// released when fasthttp has written the answer to the connection (the
// connection turns idle or closes, see releaseWritten).

// localCharge holds the request's *membudget.Charge.
const localCharge = "fluss-gateway.memory-charge"

// bodyReadStep is the step in which a chunked body (no Content-Length) is
// charged as it arrives.
const bodyReadStep = 64 << 10

// DefaultMaxLookupResponseBytes caps the rendered answer of one lookup or
// prefix lookup (gateway.rest.lookup.max-response-bytes) when the option is 0.
const DefaultMaxLookupResponseBytes = 16 << 20

// charge returns the request's ledger, creating it on first use.
func (a *api) charge(c *fiber.Ctx) *membudget.Charge {
	if ch, ok := c.Locals(localCharge).(*membudget.Charge); ok {
		return ch
	}
	ch := a.budget.NewCharge()
	c.Locals(localCharge, ch)
	return ch
}

// budgetError turns a membudget refusal into the 429 resource_exhausted the
// caller gets (with Retry-After); other errors pass through.
func budgetError(err error, what string) error {
	var ex *membudget.ExhaustedError
	if !errors.As(err, &ex) {
		return err
	}
	return &domain.Error{
		Kind:             domain.KindResourceExhausted,
		Retryable:        true,
		RetryAfterMillis: max(ex.RetryAfter.Milliseconds(), 1),
		Message: fmt.Sprintf("the gateway's memory budget is exhausted (%s needs %d bytes, %d of %d bytes in use); retry after %s",
			what, ex.Wanted, ex.InUse, ex.Capacity, retryAfterText(ex.RetryAfter)),
	}
}

// localRowsCredit holds the bytes admitBody acquired for the rows of a JSON
// write beyond its body (int64), which the decode draws from
// (bodyDecoder.credit).
const localRowsCredit = "fluss-gateway.rows-credit"

// rowsPerBodyByte estimates, per byte of an uncompressed JSON write body,
// the memory its rows take once decoded and handed to the writer: the
// decoded Datums (80 bytes per value plus the value bytes; about 3.5 times
// the body for the benchmark's ten-column rows) and the writer's copies
// (about 2.8 times; see writerCopyBytes). Rows of long strings take less
// (about 3 times the body in all), rows of small numbers more; what the
// estimate misses is charged as the decode goes.
const rowsPerBodyByte = 6

// admitBodyFor is admitBody for the route r: the rows of a JSON write
// (writeRecords) are charged together with its body, by an estimate
// (rowsPerBodyByte), in one acquisition, so that a write waits for the
// budget before its body is read, holding nothing, instead of holding its
// body while it waits for room for its rows (64 concurrent 10,000-row writes
// each held a body and waited for the rest, and most were refused).
func (a *api) admitBodyFor(r routeSpec) fiber.Handler {
	rows := r.operationID == "writeRecords"
	return func(c *fiber.Ctx) error { return a.admitBody(c, rows) }
}

// admitBody charges the request body to the memory budget by its
// Content-Length and then reads it (a chunked body is charged as it
// arrives); with rows, the estimated memory of the rows of an uncompressed
// JSON body is charged with it (admitBodyFor). It runs after
// authentication, so an unauthenticated caller never makes the gateway read
// or hold a body. A body over the limit is refused with 413 without being
// read; a body the budget cannot take within the bounded wait with 429.
// Both close the connection.
func (a *api) admitBody(c *fiber.Ctx, rows bool) error {
	req := c.Request()
	if !req.IsBodyStream() || streamedMediaType(c) != "" {
		// A streamed write body (ingest.go) is read, and charged chunk by
		// chunk, by its handler.
		return c.Next()
	}
	limit := a.opts.MaxRequestBytes
	size := int64(req.Header.ContentLength())
	if size > limit {
		c.Context().SetConnectionClose()
		return fiber.ErrRequestEntityTooLarge
	}
	ch := a.charge(c)
	ctx := c.UserContext()
	var body []byte
	if size >= 0 {
		var credit int64
		if rows && identityEncoded(c) {
			credit = rowsPerBodyByte * size
		}
		held := ch.Held()
		if err := ch.Acquire(ctx, size+credit); err != nil {
			c.Context().SetConnectionClose()
			if credit > 0 {
				return budgetError(err, "the request body and its rows")
			}
			return budgetError(err, "the request body")
		}
		if credit = ch.Held() - held - size; credit > 0 {
			c.Locals(localRowsCredit, credit)
		}
		pooled := getBodyBuffer(int(size))
		if pooled != nil {
			body = (*pooled)[:size]
		} else {
			body = make([]byte, size)
		}
		if _, err := io.ReadFull(req.BodyStream(), body); err != nil {
			putBodyBuffer(pooled)
			c.Context().SetConnectionClose()
			return bodyReadError(err)
		}
		if pooled != nil {
			// Returned once the answer is written (releaseWritten).
			c.Locals(localBodyBuffer, pooled)
		}
	} else {
		var err error
		body, err = io.ReadAll(ch.Reader(ctx, io.LimitReader(req.BodyStream(), limit+1), bodyReadStep))
		if err != nil {
			c.Context().SetConnectionClose()
			if be := budgetError(err, "the request body"); be != err {
				return be
			}
			return bodyReadError(err)
		}
		if int64(len(body)) > limit {
			c.Context().SetConnectionClose()
			return fiber.ErrRequestEntityTooLarge
		}
	}
	req.SetBodyRaw(body)
	return c.Next()
}

// localBodyBuffer holds the pooled buffer (*[]byte) admitBody read the
// request body into, returned to its pool with the request's charge.
const localBodyBuffer = "fluss-gateway.body-buffer"

// Bodies of between minPooledBody and maxPooledBody bytes are read into
// buffers kept in pools, one per power of two: a 500-row write body (about
// 120 KiB) was a fresh allocation per request, zeroed and then overwritten
// by the read, and a tenth of the gateway's allocated bytes. Smaller bodies
// are cheap to allocate; larger ones are rare and would keep large idle
// buffers outside the memory budget. A pooled buffer is idle memory the
// budget does not count: at most the pools' contents, which the garbage
// collector empties within two cycles.
const (
	minPooledBody = 16 << 10
	maxPooledBody = 1 << 20
)

// bodyBuffers are the pools of body buffers, bodyBuffers[k] holding buffers
// of minPooledBody<<k bytes (16 KiB to 1 MiB: seven pools).
var bodyBuffers [bodyClasses]sync.Pool

// bodyClasses is the number of pools: log2(maxPooledBody/minPooledBody)+1.
const bodyClasses = 7

// bodyClass is the pool of buffers that hold n bytes (-1: none).
func bodyClass(n int) int {
	if n < minPooledBody || n > maxPooledBody {
		return -1
	}
	return bits.Len(uint((n - 1) / minPooledBody))
}

// getBodyBuffer returns a pooled buffer of at least n bytes, nil when
// bodies of n bytes are not pooled.
func getBodyBuffer(n int) *[]byte {
	k := bodyClass(n)
	if k < 0 {
		return nil
	}
	if b, ok := bodyBuffers[k].Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, minPooledBody<<k)
	return &b
}

// poisonBodyBuffers (tests) overwrites each buffer as it goes back to its
// pool, so that a body read after its buffer was returned shows up as
// garbage.
var poisonBodyBuffers atomic.Bool

// putBodyBuffer returns b (nil: nothing) to its pool. Nothing may read the
// body it held afterwards.
func putBodyBuffer(b *[]byte) {
	if b == nil {
		return
	}
	if k := bodyClass(cap(*b)); k >= 0 && minPooledBody<<k == cap(*b) {
		*b = (*b)[:cap(*b)]
		if poisonBodyBuffers.Load() {
			for i := range *b {
				(*b)[i] = '!'
			}
		}
		bodyBuffers[k].Put(b)
	}
}

// identityEncoded reports whether the request body has no content coding.
func identityEncoded(c *fiber.Ctx) bool {
	enc := strings.TrimSpace(c.Get(fiber.HeaderContentEncoding))
	return enc == "" || strings.EqualFold(enc, "identity")
}

// bodyReadError is the answer to a body that could not be read: the read
// deadline (gateway.rest.header-read-timeout) passed, or the client closed
// or sent a malformed chunk.
func bodyReadError(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fiber.ErrRequestTimeout
	}
	return domain.InvalidArgument("the request body could not be read: it ended before its Content-Length or is malformed")
}

// dropUnreadBody detaches a streamed body the chain did not read (a request
// refused before admitBody), so that nothing after the chain (the tracing
// middleware measures the request's size) reads it into memory. fasthttp
// still owns the stream: it discards a short rest, or closes the connection.
func dropUnreadBody(c *fiber.Ctx) {
	if c.Request().IsBodyStream() {
		c.Request().ResetBody()
	}
}

// requestBodySize is the size of the request body for the access log: 0
// for a streamed body that was never read.
func requestBodySize(c *fiber.Ctx) int {
	if c.Request().IsBodyStream() {
		return 0
	}
	return len(c.Request().Body())
}

// pendingCharges holds, per connection, the charge of the answer fasthttp is
// writing on it; the connection-state hook releases it once the answer is
// written (the connection turns idle) or the connection ends.
type pendingCharges struct {
	mu sync.Mutex
	m  map[net.Conn]pendingCharge
	// collectAt (0: never): a charge of at least this many bytes is
	// released only after a garbage collection (see collectAt).
	collectAt int64
	// collections counts those collections (tests).
	collections atomic.Int64
}

// collectAt is the smallest charge released only after a garbage
// collection: half the budget. Such a request (a 31 MiB body, a lookup of
// 32 MiB of rows) runs nearly alone in the budget, and the next one was
// admitted the moment its answer was written, while its rows, the writer's
// copies and its answer were still in the heap: back to back, eight of
// them took the gateway's RSS past 300 MiB (issue 21) before the collector
// caught up. Collecting first costs one collection per such request (the
// mark is of the live heap, not of the garbage).
func collectAt(b *membudget.Budget) int64 {
	if b == nil {
		return 0
	}
	return max(b.Capacity()/2, 1)
}

// pendingCharge is the charge of an answer being written and the pooled
// buffer (nil: none) the request's body was read into.
type pendingCharge struct {
	ch   *membudget.Charge
	body *[]byte
}

// release releases the charge and returns the body buffer to its pool.
func (p pendingCharge) release() {
	p.ch.Release()
	putBodyBuffer(p.body)
}

// hold registers ch (and the body buffer) for release once conn's answer is
// written; a charge still pending on conn (never the case: fasthttp answers
// one request at a time per connection) is released first.
func (p *pendingCharges) hold(conn net.Conn, ch *membudget.Charge, body *[]byte) {
	p.mu.Lock()
	prev, had := p.m[conn]
	if p.m == nil {
		p.m = map[net.Conn]pendingCharge{}
	}
	p.m[conn] = pendingCharge{ch: ch, body: body}
	p.mu.Unlock()
	if had && prev.ch != ch {
		prev.release()
	}
}

// connState is fasthttp's ConnState hook: an idle connection has written its
// answer (it is serialized; the handler has returned); a closed or hijacked
// one will write nothing more.
func (p *pendingCharges) connState(conn net.Conn, state fasthttp.ConnState) {
	switch state {
	case fasthttp.StateIdle, fasthttp.StateClosed, fasthttp.StateHijacked:
	default:
		return
	}
	p.mu.Lock()
	pc, ok := p.m[conn]
	delete(p.m, conn)
	p.mu.Unlock()
	if !ok {
		return
	}
	if p.collectAt > 0 && pc.ch.Held() >= p.collectAt {
		// The request's memory is garbage now (its answer is written):
		// reclaim it before its charge lets the next large request in.
		runtime.GC()
		p.collections.Add(1)
	}
	pc.release()
}

// releaseWritten hands the request's charge (and its pooled body buffer) to
// the connection-state hook so they are released when the answer has been
// written; without a connection (tests) they are released at once.
func (a *api) releaseWritten(c *fiber.Ctx) {
	ch, ok := c.Locals(localCharge).(*membudget.Charge)
	if !ok {
		return
	}
	body, _ := c.Locals(localBodyBuffer).(*[]byte)
	if ch.Held() == 0 && body == nil {
		return
	}
	if conn := c.Context().Conn(); conn != nil {
		a.pending.hold(conn, ch, body)
		return
	}
	pendingCharge{ch: ch, body: body}.release()
}

// answerBudget charges a lookup answer as it is rendered and holds it to
// the answer-size cap.
type answerBudget struct {
	ctx     context.Context
	ch      *membudget.Charge
	limit   int
	charged int
}

// add appends part to out. An answer that would exceed the cap is refused
// with 413 limit_exceeded; when out must grow, the larger buffer is charged
// to the budget before it is allocated (429 when it does not fit).
func (b *answerBudget) add(out, part []byte) ([]byte, error) {
	size, err := b.reserve(len(out)+len(part), cap(out))
	if err != nil {
		return out, err
	}
	return append(growTo(out, size), part...), nil
}

// growTo returns out with a capacity of size at least: out itself when it
// has room, else a copy in a buffer of exactly size bytes.
func growTo(out []byte, size int) []byte {
	if size <= cap(out) {
		return out
	}
	grown := make([]byte, len(out), size)
	copy(grown, out)
	return grown
}

// charge counts an answer buffer of size bytes against the budget (what
// was charged for the answer before counts towards it).
func (b *answerBudget) charge(size int) error {
	if size > b.charged {
		if err := b.ch.Acquire(b.ctx, int64(size-b.charged)); err != nil {
			return budgetError(err, "the answer")
		}
		b.charged = size
	}
	return nil
}

// tooLarge is add's refusal of an answer past the cap.
func (b *answerBudget) tooLarge() error {
	return &domain.Error{Kind: domain.KindLimitExceeded, Message: fmt.Sprintf(
		"the answer would exceed %d bytes (gateway.rest.lookup.max-response-bytes); ask for fewer keys or columns", b.limit)}
}

// reserveExact returns out with room for size bytes in all (the cap and the
// budget checked as add does), grown at most once, to exactly size.
func (b *answerBudget) reserveExact(out []byte, size int) ([]byte, error) {
	if size > b.limit {
		return out, b.tooLarge()
	}
	if size <= cap(out) {
		return out, nil
	}
	if err := b.charge(size); err != nil {
		return out, err
	}
	return growTo(out, size), nil
}

// reserve checks that an answer of need bytes fits the cap and, when need
// exceeds capacity (the size of the answer's buffer so far), charges the
// larger buffer (twice capacity at least, need at most the cap) before it
// is allocated. It returns the buffer size to grow to (capacity when it
// need not grow).
func (b *answerBudget) reserve(need, capacity int) (int, error) {
	if need > b.limit {
		return capacity, b.tooLarge()
	}
	if need <= capacity {
		return capacity, nil
	}
	size := min(max(need, 2*capacity), b.limit)
	if err := b.charge(size); err != nil {
		return capacity, err
	}
	return size, nil
}

// answerBody renders a lookup answer straight into the response's body
// buffer, which fasthttp takes from its pool and reuses once the answer is
// written (issue 22: a buffer allocated and grown per answer was the
// largest allocation of a small prefix lookup). It is charged exactly as
// answerBudget.add charges a buffer of its own that starts at capacity
// bytes: the budget counts the answer's memory, wherever it lives.
type answerBody struct {
	b        *answerBudget
	resp     *fasthttp.Response
	capacity int
	// part is where one piece (a result, one row at most) is rendered
	// before add checks and appends it; pooled.
	part *[]byte
	// own holds the answer once it outgrows maxPooledAnswer: fasthttp keeps
	// a response's body buffer in its pool after the answer is written, at
	// the size it grew to, where the memory budget no longer sees it (a few
	// large lookup answers left ~150 MiB of pooled bodies behind in the
	// resource benchmark). A large answer is built in memory of its own,
	// handed to the response by finish and collected once written.
	own []byte
}

// maxPooledAnswer is the largest answer rendered in the response's pooled
// body buffer.
const maxPooledAnswer = 64 << 10

// answerParts are idle answerBody.part buffers.
var answerParts = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledPart is the largest part buffer kept for reuse.
const maxPooledPart = 64 << 10

// answerInto starts rendering an answer into resp's (emptied) body;
// capacity is the buffer size an answer of its own would start with
// (uncharged, as add's initial buffer is). Call done when finished.
func (b *answerBudget) answerInto(resp *fasthttp.Response, capacity int) *answerBody {
	resp.ResetBody()
	part := answerParts.Get().(*[]byte)
	*part = (*part)[:0]
	return &answerBody{b: b, resp: resp, capacity: capacity, part: part}
}

// add appends the rendered part (w.part) to the answer and empties it.
func (w *answerBody) add() error {
	part := *w.part
	have := len(w.own)
	if w.own == nil {
		have = len(w.resp.Body())
	}
	size, err := w.b.reserve(have+len(part), w.capacity)
	if err != nil {
		return err
	}
	w.capacity = size
	switch {
	case w.own == nil && have+len(part) <= maxPooledAnswer:
		w.resp.AppendBody(part)
	case w.own == nil:
		w.own = append(append(growTo(nil, size), w.resp.Body()...), part...)
		w.resp.ResetBody()
	default:
		w.own = append(growTo(w.own, size), part...)
	}
	*w.part = part[:0]
	return nil
}

// finish appends closing, the answer's last bytes (charged like add), and
// makes the rendered answer the response's body (an answer of its own is
// handed over without a copy). Not after a refusal: the error answer
// replaces the body then.
func (w *answerBody) finish(closing string) error {
	if err := w.addString(closing); err != nil {
		return err
	}
	if w.own != nil {
		w.resp.SetBodyRaw(w.own)
		w.own = nil
	}
	return nil
}

// addString appends s to the answer (charged like add).
func (w *answerBody) addString(s string) error {
	*w.part = append((*w.part)[:0], s...)
	return w.add()
}

// done returns the part buffer to its pool.
func (w *answerBody) done() {
	if cap(*w.part) <= maxPooledPart {
		answerParts.Put(w.part)
	}
	w.part = nil
}

// newAnswerBudget starts charging the answer of the request c.
func (a *api) newAnswerBudget(c *fiber.Ctx) *answerBudget {
	limit := a.opts.MaxLookupResponseBytes
	if limit <= 0 {
		limit = DefaultMaxLookupResponseBytes
	}
	return &answerBudget{ctx: c.UserContext(), ch: a.charge(c), limit: int(min(limit, int64(^uint(0)>>1)))}
}

// datumSize is the size of a domain.Datum on 64-bit platforms.
const datumSize = 80

// datumBytes estimates the memory of a decoded row: its datums and the bytes
// they point to.
func datumBytes(row []domain.Datum) int64 {
	n := int64(len(row)) * datumSize
	for _, d := range row {
		n += int64(len(d.Bytes))
		if len(d.Elems) > 0 {
			n += datumBytes(d.Elems)
		}
	}
	return n
}

// lookupCosts learns, per table, the memory the row of one looked-up key
// takes once fetched (an average over the table's recent lookups), so that
// a lookup is charged for the rows it is about to fetch before it fetches
// them: 64 concurrent 128-key lookups of 256 KiB rows each fetched 32 MiB
// and were charged only afterwards (issue 21). A table not looked up yet
// is charged the most a lookup may take (the limit), so that a first burst
// of lookups of a table of wide rows cannot fetch them all at once either.
// It is safe for concurrent use.
type lookupCosts struct {
	mu sync.Mutex
	m  map[string]float64 // table -> bytes per key
}

// maxLookupCostTables bounds the tables remembered (then all are forgotten).
const maxLookupCostTables = 4096

// estimate returns the bytes keys lookups of table are expected to fetch,
// at most limit; limit when the table was never looked up.
func (l *lookupCosts) estimate(table string, keys int, limit int64) int64 {
	l.mu.Lock()
	perKey, ok := l.m[table]
	l.mu.Unlock()
	if !ok {
		return limit
	}
	return min(int64(perKey*float64(keys)), limit)
}

// observe records that keys lookups of table fetched fetched bytes.
func (l *lookupCosts) observe(table string, keys int, fetched int64) {
	if keys <= 0 {
		return
	}
	perKey := float64(fetched) / float64(keys)
	l.mu.Lock()
	defer l.mu.Unlock()
	old, ok := l.m[table]
	switch {
	case l.m == nil || len(l.m) >= maxLookupCostTables && !ok:
		l.m = map[string]float64{}
		l.m[table] = perKey
	case !ok:
		l.m[table] = perKey
	default:
		l.m[table] = old + ewmaLookupWeight*(perKey-old)
	}
}

// ewmaLookupWeight is the weight of the newest lookup in the average.
const ewmaLookupWeight = 0.3
