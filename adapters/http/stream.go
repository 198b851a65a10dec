package http

// Streamed answers: the one mechanism by which an answer's body is written
// while it is produced instead of after the handler returns. Used by the
// NDJSON verdict lines of a streamed write (Accept: application/x-ndjson on
// an NDJSON body, ndjson.go) and by the NDJSON records of a scan (scan.go).
//
// A handler settles the status (200) and headers, then calls streamAnswer
// with the function that writes the body. The middlewares see the mark
// (streamOf) and leave the body alone: compressResponse does not read or
// encode it, otelfiber reads an empty body (the stream has not started
// yet), errorsAndPanics does not drop the unread request body (the stream
// may still read it). What a request holds until its answer is done is
// handed over (handOver) instead of being released when the handler
// returns: the request deadline's context (deadline), the admission slot
// (admit) and the memory-budget charge (requestContext). requestContext,
// the outermost middleware, then gives fasthttp the body as a stream
// writer (fasthttp.Response.SetBodyStreamWriter), which runs after the
// chain has returned, on its own goroutine, while the response is sent
// chunked (lazyStream). When the body function returns (or the client goes away: a
// write fails, which cancels the body's context) the handed-over
// resources are released, the access line is written with the bytes
// actually sent, and a "stream" span (child of the request's span) ends.
//
// A stream that fails after its first byte cannot change its status: it
// ends with one last line holding the official error envelope,
// {"error":{"code":…,"message":…,"request_id":…}}, and no line after it.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// localStream holds the request's *streamedAnswer.
const localStream = "fluss-gateway.stream"

// streamBody writes a streamed answer's body to out; ctx is the request's
// deadline, cancelled as well when the client goes away. An error it
// returns ends the body with an error line.
type streamBody func(ctx context.Context, out *streamOut) error

// streamedAnswer is an answer whose body is written after the handler chain
// returns.
type streamedAnswer struct {
	body     streamBody
	ctx      context.Context
	releases []func() // handed over by the middlewares; run last first
}

// streamAnswer marks c's answer as streamed: 200 with contentType, the body
// written by body once the handler chain has returned. The handler returns
// nil right after it.
func streamAnswer(c *fiber.Ctx, contentType string, body streamBody) {
	c.Status(fiber.StatusOK)
	c.Set(fiber.HeaderContentType, contentType)
	c.Locals(localStream, &streamedAnswer{body: body, ctx: c.UserContext()})
}

// streamOf is c's pending streamed answer, nil when the answer is not
// streamed.
func streamOf(c *fiber.Ctx) *streamedAnswer {
	s, _ := c.Locals(localStream).(*streamedAnswer)
	return s
}

// handOver gives release to c's streamed answer, to be run when the stream
// ends; it reports false (the caller releases) when the answer is not
// streamed.
func handOver(c *fiber.Ctx, release func()) bool {
	s := streamOf(c)
	if s == nil {
		return false
	}
	s.releases = append(s.releases, release)
	return true
}

// dropStream forgets c's streamed answer (the chain answered with an error
// after all), releasing what was handed over.
func dropStream(c *fiber.Ctx) {
	if s := streamOf(c); s != nil {
		c.Locals(localStream, nil)
		s.release()
	}
}

func (s *streamedAnswer) release() {
	for i := len(s.releases) - 1; i >= 0; i-- {
		s.releases[i]()
	}
	s.releases = nil
}

// streamOut is where a stream body writes: buffered, sent to the client on
// Flush; the first failed write (the client went away) cancels the body's
// context and makes every later call fail.
type streamOut struct {
	w      *bufio.Writer
	n      int64
	err    error
	cancel context.CancelFunc
	attrs  []any // more key/value pairs for the access line
}

// logAttrs adds key/value pairs to the stream's access line.
func (o *streamOut) logAttrs(kv ...any) { o.attrs = append(o.attrs, kv...) }

// Write buffers b.
func (o *streamOut) Write(b []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(b)
	o.n += int64(n)
	if err != nil {
		o.fail(err)
	}
	return n, o.err
}

// Flush sends what is buffered to the client.
func (o *streamOut) Flush() error {
	if o.err != nil {
		return o.err
	}
	if err := o.w.Flush(); err != nil {
		o.fail(err)
	}
	return o.err
}

func (o *streamOut) fail(err error) {
	o.err = fmt.Errorf("the client went away: %w", err)
	o.cancel()
}

// startStream hands c's streamed answer to fasthttp. Everything the stream
// needs from c is taken now: the fiber context is recycled once the chain
// returns, before the stream runs.
func (a *api) startStream(c *fiber.Ctx, s *streamedAnswer) {
	entry := a.accessEntry(c)
	id := requestID(c)
	charge, _ := c.Locals(localCharge).(*membudget.Charge)
	spanCtx := c.UserContext()
	if sc, ok := c.Locals(localSpanCtx).(context.Context); ok {
		spanCtx = sc
	}
	if dl, ok := s.ctx.Deadline(); ok && a.opts.WriteTimeout > 0 {
		// gateway.rest.response-write-timeout bounds writing a whole
		// answer; a stream is written until its deadline, so it may take
		// until then plus that timeout (a client that stops reading is
		// still cut then). fasthttp keeps a deadline the handler set.
		_ = c.Context().SetWriteDeadline(dl.Add(a.opts.WriteTimeout))
	}
	c.Context().SetBodyStream(newLazyStream(func(w *bufio.Writer) {
		tracer := trace.SpanFromContext(spanCtx).TracerProvider().Tracer("github.com/fluss-gateway/fluss-gateway-go/adapters/http")
		_, span := tracer.Start(spanCtx, "stream "+entry.route)
		// The chain's contexts end when it returns (otelfiber cancels its
		// own): the stream keeps their values and the request's deadline.
		ctx, cancel := context.WithCancel(context.WithoutCancel(s.ctx))
		if dl, ok := s.ctx.Deadline(); ok {
			ctx, cancel = context.WithDeadline(context.WithoutCancel(s.ctx), dl)
		}
		out := &streamOut{w: w, cancel: cancel}
		err := runStreamBody(ctx, s.body, out)
		var f *failure
		if err != nil && out.err == nil {
			code, message := a.streamFailure(spanCtx, id, err)
			f = &failure{code: code, message: message}
			line := appendErrorLine(nil, code, message, id)
			_, _ = out.Write(line)
		}
		_ = out.Flush()
		if out.err != nil {
			f = &failure{code: "cancelled", message: boundMessage(out.err.Error())}
		}
		cancel()
		s.release()
		if charge != nil {
			charge.Release()
		}
		span.SetAttributes(attribute.Int64("http.response.body.size", out.n))
		if f != nil {
			span.SetStatus(codes.Error, f.code)
		}
		span.End()
		entry.attrs = appendLogArgs(entry.attrs, out.attrs)
		entry.emit(a, spanCtx, out.n, f)
	}), -1)
}

// lazyStream is the body fasthttp sends for a streamed answer: write runs
// on its own goroutine from fasthttp's first Read (not when the handler
// returns, as with fasthttp's SetBodyStreamWriter: fasthttp still inspects
// the request's body stream between the two, which write may be reading)
// and writes through a pipe. Close, which fasthttp calls once the answer is
// sent or cannot be, ends the pipe (a write still running fails, cancelling
// it) and waits for write to return, so nothing reads the request after
// fasthttp takes it back.
type lazyStream struct {
	once  sync.Once
	write func(w *bufio.Writer)
	pr    *io.PipeReader
	pw    *io.PipeWriter
	done  chan struct{}
}

func newLazyStream(write func(w *bufio.Writer)) *lazyStream {
	pr, pw := io.Pipe()
	return &lazyStream{write: write, pr: pr, pw: pw, done: make(chan struct{})}
}

func (l *lazyStream) start() {
	l.once.Do(func() {
		go func() {
			defer close(l.done)
			bw := bufio.NewWriterSize(l.pw, 4<<10)
			l.write(bw)
			_ = bw.Flush()
			_ = l.pw.Close()
		}()
	})
}

// Read starts the writer and reads what it wrote.
func (l *lazyStream) Read(p []byte) (int, error) {
	l.start()
	return l.pr.Read(p)
}

// Close ends the stream and waits for its writer (started now if it never
// was, so that it releases what the request held).
func (l *lazyStream) Close() error {
	_ = l.pr.CloseWithError(errAnswerAbandoned)
	l.start()
	<-l.done
	return nil
}

// errAnswerAbandoned is what a streamed answer's writes fail with once
// fasthttp stopped sending it.
var errAnswerAbandoned = errors.New("the answer is no longer being sent")

// runStreamBody runs body, turning a panic into an internal error.
func runStreamBody(ctx context.Context, body streamBody, out *streamOut) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &domain.Error{Kind: domain.KindInternal, Cause: fmt.Errorf("panic: %v", p)}
		}
	}()
	return body(ctx, out)
}

// streamFailure is the envelope code and message of the error that ends a
// stream, as writeError would answer it.
func (a *api) streamFailure(ctx context.Context, id string, err error) (string, string) {
	if errors.Is(err, context.DeadlineExceeded) && domain.AsError(err) == nil {
		err = &domain.Error{Kind: domain.KindTimeout, Retryable: true, Cause: err,
			Message: "the request deadline passed while the answer was streamed"}
	}
	var he *httpError
	if domain.AsError(err) == nil && !errors.As(err, &he) {
		err = &domain.Error{Kind: domain.KindInternal, Cause: err}
	}
	_, code, message, _, internal := classify(nil, err, a.opts.MaxRequestBytes)
	if internal {
		a.log.ErrorContext(ctx, "streamed answer failed", "request_id", id, "error", err)
	}
	return code, boundMessage(message)
}

// appendErrorLine appends the error line that ends a failed stream: the
// official error envelope on one line.
func appendErrorLine(dst []byte, code, message, id string) []byte {
	dst = append(dst, `{"error":{"code":`...)
	dst = appendJSONString(dst, code)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, message)
	dst = append(dst, `,"request_id":`...)
	dst = appendJSONString(dst, id)
	return append(dst, "}}\n"...)
}
