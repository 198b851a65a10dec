package http

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"mime"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Keys of fiber locals set by the middleware.
const (
	localRequestID = "fluss-gateway.request-id"
	localStarted   = "fluss-gateway.started"
	localRoute     = "fluss-gateway.route"
	localLogged    = "fluss-gateway.logged"
	localSpanCtx   = "fluss-gateway.span-ctx"
	// localVerdicts marks a response that carries per-entry verdicts: it
	// stands even when it is sent after the request deadline.
	localVerdicts = "fluss-gateway.verdicts"
	// localLogAttrs holds extra key/value pairs for the access log line.
	localLogAttrs = "fluss-gateway.log-attrs"
	// localFailure holds the failure (a failure value) the request was
	// answered with, for the access log line.
	localFailure = "fluss-gateway.failure"
)

// failure is the error a request was answered with, as the access log
// reports it.
type failure struct {
	code    string
	message string
}

// severeCodes are the wire codes of failures on the gateway's or the
// cluster's side: operators need to see them (WARN or ERROR), unlike caller
// mistakes (INFO).
var severeCodes = map[string]bool{"internal": true, "backend": true, "unavailable": true, "timeout": true}

// accessLevel is the level of an access line: ERROR for 500 (internal or
// backend failures), WARN for other 5xx answers and for answers carrying a
// severe failure (a write whose entries failed on the cluster side), INFO
// otherwise (caller errors included).
func accessLevel(status int, f *failure, entryCodes map[string]int) slog.Level {
	switch {
	case status == fiber.StatusRequestTimeout:
		return slog.LevelInfo // a silent client (classifyFramework)
	case status == fiber.StatusInternalServerError:
		return slog.LevelError
	case status >= 500:
		return slog.LevelWarn
	case f != nil && severeCodes[f.code]:
		return slog.LevelWarn
	}
	for code := range entryCodes {
		if severeCodes[code] {
			return slog.LevelWarn
		}
	}
	return slog.LevelInfo
}

// probeLevel logs the liveness and readiness probes (GET /health, GET
// /ready: several per second per pod under Kubernetes) at DEBUG, including
// the 503 of /ready while starting or draining, which is expected; only an
// internal error stays at its level.
func probeLevel(route string, level slog.Level) slog.Level {
	if (route == pathHealth || route == pathReady) && level < slog.LevelError {
		return slog.LevelDebug
	}
	return level
}

// HeaderRequestID carries the request id in both directions.
const HeaderRequestID = "X-Request-Id"

// requestContext is the outermost middleware: it assigns the request id,
// lets the rest of the chain run and writes the access log line.
func (a *api) requestContext(c *fiber.Ctx) error {
	assignRequestID(c)
	err := c.Next()
	if err != nil {
		// Inner middleware answers every error itself; this is a backstop.
		dropStream(c)
		a.writeError(c, err)
	}
	if s := streamOf(c); s != nil {
		// The answer is written after the chain returns (stream.go),
		// which then logs it and releases the request's charge.
		a.startStream(c, s)
		return nil
	}
	a.accessLog(c)
	a.releaseWritten(c)
	return nil
}

// assignRequestID keeps an inbound x-request-id that is a UUID (the
// official ErrorBody.request_id is `format: uuid`) and otherwise generates
// a UUID v4, then echoes it in the response.
func assignRequestID(c *fiber.Ctx) {
	id := c.Get(HeaderRequestID)
	if !wellFormedRequestID(id) {
		id = uuid.NewString()
	}
	c.Locals(localRequestID, id)
	c.Locals(localStarted, time.Now())
	c.Set(HeaderRequestID, id)
}

// wellFormedRequestID accepts a UUID in its canonical 36-character form
// (hex digits and hyphens only, so a kept id cannot smuggle anything into
// logs or headers).
func wellFormedRequestID(id string) bool {
	if len(id) != 36 {
		return false
	}
	_, err := uuid.Parse(id)
	return err == nil
}

func requestID(c *fiber.Ctx) string {
	if id, ok := c.Locals(localRequestID).(string); ok {
		return id
	}
	return "unknown"
}

// accessLog writes the one access line of a request.
func (a *api) accessLog(c *fiber.Ctx) {
	if c.Locals(localLogged) != nil {
		return
	}
	ctx := c.UserContext()
	if sc, ok := c.Locals(localSpanCtx).(context.Context); ok {
		ctx = sc
	}
	var f *failure
	if v, ok := c.Locals(localFailure).(failure); ok {
		f = &v
	}
	a.accessEntry(c).emit(a, ctx, int64(len(c.Response().Body())), f)
}

// accessRecord is what the access line of a request says beside its
// duration, its answer's size and its failure: taken from the fiber context
// before the chain returns, so that a streamed answer (stream.go) can log
// it when its stream ends.
type accessRecord struct {
	matched, route, method string
	status                 int
	started                time.Time
	attrs                  []slog.Attr
	entryCodes             map[string]int
	table                  domain.TablePath
}

// accessAttrsCap is the room accessEntry makes for the attributes of an
// access line: the fixed ones, a request's usual extras (principal, table,
// counts) and the error, so that they are appended without growing.
const accessAttrsCap = 24

// accessEntry takes c's access record and marks c as logged.
func (a *api) accessEntry(c *fiber.Ctx) *accessRecord {
	c.Locals(localLogged, true)
	route, _ := c.Locals(localRoute).(string)
	if route == "" {
		// Refused before routing (e.g. an over-limit body): attribute it
		// to the route its method and path fit.
		route = a.routes.template(c.Method(), c.Path())
	}
	r := &accessRecord{matched: route, route: route, method: c.Method(), status: c.Response().StatusCode()}
	if route == "" {
		r.route = "<unmatched>"
	}
	r.started, _ = c.Locals(localStarted).(time.Time)
	r.attrs = append(make([]slog.Attr, 0, accessAttrsCap),
		slog.String("request_id", requestID(c)),
		slog.String("method", r.method),
		slog.String("route", r.route),
		slog.String("path", c.Path()),
		slog.Int("status", r.status),
		slog.Float64("duration_ms", 0), // set by emit
		slog.Int64("bytes_in", bytesIn(c)),
		slog.Int64("bytes_out", 0), // set by emit
		slog.String("remote", c.IP()),
	)
	if q := c.Request().URI().QueryString(); len(q) > 0 {
		r.attrs = append(r.attrs, slog.String("query", quoteLog(string(q)))) // ?cascade=true matters (issue 27)
	}
	if extra, ok := c.Locals(localLogAttrs).(*logAttrs); ok {
		r.attrs = append(r.attrs, extra.attrs...)
	}
	if sum, ok := c.Locals(localWriteSummary).(application.WriteSummary); ok {
		r.entryCodes = sum.FailedByCode
	}
	r.table = metricTable(route, c)
	return r
}

// accessAttrDuration and accessAttrBytesOut are the indexes of duration_ms
// and bytes_out in accessRecord.attrs.
const (
	accessAttrDuration = 5
	accessAttrBytesOut = 7
)

// emit writes the access line and the request's metrics: bytesOut is the
// size of the answer's body (for a stream, the bytes sent), f the failure
// it was answered with (a stream's error line included).
func (r *accessRecord) emit(a *api, ctx context.Context, bytesOut int64, f *failure) {
	var elapsed time.Duration
	if !r.started.IsZero() {
		elapsed = time.Since(r.started)
	}
	r.attrs[accessAttrDuration].Value = slog.Float64Value(float64(elapsed.Microseconds()) / 1000)
	r.attrs[accessAttrBytesOut].Value = slog.Int64Value(bytesOut)
	attrs := r.attrs
	if f != nil {
		attrs = append(attrs, slog.String("error_code", f.code), slog.String("error", f.message))
	}
	a.log.LogAttrs(ctx, probeLevel(r.matched, accessLevel(r.status, f, r.entryCodes)), "request", attrs...)
	if a.opts.Observer != nil {
		code := ""
		if f != nil {
			code = f.code
		}
		a.opts.Observer.ObserveRequestDetail(ctx, r.method, r.matched, r.status, code, r.table, elapsed)
	}
}

// addLogAttrs adds key/value pairs to the request's access log line, read
// as slog.Logger.Log reads its arguments (a key and its value, or an
// slog.Attr).
func addLogAttrs(c *fiber.Ctx, kv ...any) {
	l := requestLogAttrs(c)
	l.attrs = appendLogArgs(l.attrs, kv)
}

// addLogAttr adds attributes to the request's access log line.
func addLogAttr(c *fiber.Ctx, attrs ...slog.Attr) {
	l := requestLogAttrs(c)
	l.attrs = append(l.attrs, attrs...)
}

// logAttrs are the extra attributes of a request's access line, kept in
// the request's locals once (a slice stored again on every addition was
// boxed again each time), with room for the usual few.
type logAttrs struct {
	attrs []slog.Attr
	room  [6]slog.Attr
}

// requestLogAttrs returns c's extra access-line attributes, made on first
// use.
func requestLogAttrs(c *fiber.Ctx) *logAttrs {
	if l, ok := c.Locals(localLogAttrs).(*logAttrs); ok {
		return l
	}
	l := &logAttrs{}
	l.attrs = l.room[:0]
	c.Locals(localLogAttrs, l)
	return l
}

// logBadKey is the key slog gives a value without one.
const logBadKey = "!BADKEY"

// appendLogArgs appends the attributes of key/value arguments as
// slog.Logger.Log makes them: a string key takes the next argument as its
// value (alone at the end it becomes a value of key !BADKEY), an slog.Attr
// is itself, anything else is a value of key !BADKEY.
func appendLogArgs(attrs []slog.Attr, kv []any) []slog.Attr {
	for len(kv) > 0 {
		switch x := kv[0].(type) {
		case string:
			if len(kv) == 1 {
				return append(attrs, slog.String(logBadKey, x))
			}
			attrs, kv = append(attrs, slog.Any(x, kv[1])), kv[2:]
		case slog.Attr:
			attrs, kv = append(attrs, x), kv[1:]
		default:
			attrs, kv = append(attrs, slog.Any(logBadKey, x)), kv[1:]
		}
	}
	return attrs
}

// errorsAndPanics sits inside the tracing middleware, so the span sees the
// final status: it answers every error returned by the chain (404 and 405
// included) and turns a panic into 500 internal without leaking its value.
func (a *api) errorsAndPanics(c *fiber.Ctx) (err error) {
	c.Locals(localSpanCtx, c.UserContext())
	defer func() {
		if streamOf(c) == nil {
			dropUnreadBody(c) // a streamed answer may still read it
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			a.log.ErrorContext(c.UserContext(), "handler panicked", "request_id", requestID(c), "panic", fmt.Sprint(p))
			dropStream(c)
			c.Response().ResetBody()
			a.writeError(c, fmt.Errorf("panic: %v", p))
			err = nil
		}
	}()
	if err := c.Next(); err != nil {
		dropStream(c)
		a.writeError(c, err)
	}
	return nil
}

// acceptance refuses application routes while the gateway is starting or
// draining; /health and /ready stay open so probes keep working.
func (a *api) acceptance(c *fiber.Ctx) error {
	if a.routes.isOpen(c.Path()) {
		return c.Next()
	}
	if err := a.readiness.ensureAccepting(); err != nil {
		return err
	}
	return c.Next()
}

// deadline gives the request its server-side deadline; use cases receive it
// through c.UserContext(). The deadline is gateway.rest.write.request-timeout,
// or less when the caller asks for less with X-Fluss-Request-Timeout.
func (a *api) deadline(c *fiber.Ctx) error {
	timeout := a.opts.RequestTimeout
	if !a.routes.isOpen(c.Path()) {
		var err error
		if timeout, err = requestTimeout(c.Get(HeaderRequestTimeout), a.opts.RequestTimeout); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), timeout)
	handed := false
	defer func() {
		if !handed {
			cancel()
		}
	}()
	c.SetUserContext(ctx)
	err := c.Next()
	if err == nil && ctx.Err() == context.DeadlineExceeded && c.Response().StatusCode() < 400 && c.Locals(localVerdicts) == nil {
		// The handler finished after its deadline without noticing; its
		// result may be stale, so report the timeout the caller is owed.
		dropStream(c)
		c.Response().ResetBody()
		return context.DeadlineExceeded
	}
	// A streamed answer keeps the deadline until its stream ends.
	handed = err == nil && handOver(c, cancel)
	return err
}

// bodyReadTimeout is the fasthttp HeaderReceived hook: once a request's
// headers are read, the rest of it (the body, which fasthttp reads before
// the handler chain runs when it is small, and admitBody otherwise) must
// arrive within the request's deadline (the value the deadline middleware
// will give it) plus bodyReadGrace, when that is shorter than the header
// read timeout (gateway.rest.header-read-timeout, armed when the request
// began). A body that stops arriving is then answered by its deadline
// instead of when the read timeout cuts the connection, seconds later
// (issue 28: no answer later than deadline + 250 ms): 504 timeout from
// admitBody (bodyDeadlineError), or, for a small body fasthttp waited for,
// the 408 of a client that went silent. A zero RequestConfig keeps
// fasthttp's defaults; fasthttp arms the next request's deadlines itself.
func (a *api) bodyReadTimeout(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	path, _, _ := bytes.Cut(h.RequestURI(), []byte("?"))
	if a.routes.isOpenPath(path) {
		return fasthttp.RequestConfig{}
	}
	timeout, err := requestTimeout(string(h.Peek(HeaderRequestTimeout)), a.opts.RequestTimeout)
	if err != nil || timeout <= 0 || (a.opts.ReadTimeout > 0 && timeout+bodyReadGrace >= a.opts.ReadTimeout) {
		return fasthttp.RequestConfig{} // refused by the deadline middleware, or the read timeout ends first
	}
	return fasthttp.RequestConfig{ReadTimeout: timeout + bodyReadGrace}
}

// bodyReadGrace is how long past its deadline a request's body may still be
// arriving: a body that arrives by then is answered as usual (a deadline
// that passed while it was read or parsed is a 504 saying nothing was
// written), one that does not is cut with the connection. It keeps the
// answer within deadline + 250 ms (issue 28).
const bodyReadGrace = 100 * time.Millisecond

// HeaderRequestTimeout lets a caller shorten its request's deadline.
const HeaderRequestTimeout = "X-Fluss-Request-Timeout"

// requestTimeout reads the X-Fluss-Request-Timeout header: a positive
// duration with a unit ("5s", "250ms", "1m30s", "1.5s") or a bare integer of
// milliseconds ("2500"). Longer values than limit are clamped to it; an
// absent header means limit.
func requestTimeout(header string, limit time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(header)
	if v == "" {
		return limit, nil
	}
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n > 0 && n <= int64(limit/time.Millisecond) {
			d = time.Duration(n) * time.Millisecond
		} else if n > 0 {
			d = limit
		}
	} else if parsed, err := time.ParseDuration(v); err == nil {
		d = parsed
	}
	if d <= 0 {
		return 0, domain.InvalidArgument("%s: expected a positive duration such as 5s or 250ms, or a number of milliseconds, got %q",
			HeaderRequestTimeout, quoteHeader(v))
	}
	return min(d, limit), nil
}

// quoteHeader shortens a rejected header value for an error message.
func quoteHeader(v string) string {
	const keep = 32
	if len(v) > keep {
		return v[:keep] + "…"
	}
	return v
}

// acceptJSON answers 406 when the Accept header rules out JSON, the only
// representation the gateway serves (and NDJSON, on the scan route only).
func acceptJSON(c *fiber.Ctx) error {
	switch raw := c.Request().Header.Peek(fiber.HeaderAccept); string(raw) {
	case "", fiber.MIMEApplicationJSON, "*/*":
		return c.Next() // the common values, read without a copy or a parse
	}
	accept := c.Get(fiber.HeaderAccept)
	if accept == "" || acceptsJSON(accept) {
		return c.Next()
	}
	if c.Method() == fiber.MethodPost && acceptsNDJSON(accept) &&
		(strings.HasSuffix(c.Path(), "/records") || strings.HasSuffix(c.Path(), "/records/scan")) {
		// NDJSON verdict lines of a streamed write (ndjson.go), or the records of a scan (scan.go).
		return c.Next()
	}
	return newHTTPError(fiber.StatusNotAcceptable, codeNotAcceptable, "the Accept header must allow application/json")
}

func acceptsJSON(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if params["q"] == "0" || params["q"] == "0.0" || params["q"] == "0.00" || params["q"] == "0.000" {
			continue
		}
		if mt == "*/*" || mt == "application/*" || mt == "application/json" {
			return true
		}
	}
	return false
}

// route wraps a handler to record its template for the access log.
func route(template string, h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Locals(localRoute, template)
		return h(c)
	}
}

// metricTable is the table (or database) label of a request's metrics:
// none for answers that say the name is invalid or names nothing (400,
// 404), so that neither arbitrary strings (3,000 characters, bidi
// controls) become label values nor requests to tables that do not exist
// use up the bounded label budget of the real ones (issue 27).
func metricTable(route string, c *fiber.Ctx) domain.TablePath {
	switch c.Response().StatusCode() {
	case fiber.StatusBadRequest, fiber.StatusNotFound:
		return domain.TablePath{}
	}
	return tableOfPath(route, c.Path())
}
