package http

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/time/rate"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Streamed write bodies (issue 25): `POST …/records` also takes
//
//   - application/x-ndjson: one write entry per line (ndjson.go);
//   - application/vnd.apache.arrow.stream: an Arrow IPC stream of rows
//     (arrowipc.go).
//
// Such a body is never held whole: the handler reads it from the connection
// as it arrives (fasthttp's StreamRequestBody), decodes it in chunks and
// hands each chunk to the write use case while later bytes are still being
// read. Its size is bounded by the row cap (Options.StreamMaxRows), the
// request deadline and, chunk by chunk, the memory budget
// (Options.StreamBudget); the body limit of JSON documents
// (gateway.rest.write.max-request-bytes) does not apply to it, only to each
// NDJSON line. The write rate limit and the quotas count its decoded bytes
// (after gzip) chunk by chunk instead of up front.

// Media types of the streamed write bodies.
const (
	MIMEApplicationNDJSON = "application/x-ndjson"
	MIMEArrowStream       = "application/vnd.apache.arrow.stream"
)

// DefaultStreamMaxRows is the default Options.StreamMaxRows
// (gateway.rest.write.stream.max-rows).
const DefaultStreamMaxRows = 1_000_000

// streamedMediaType returns the media type of a streamed write body
// (MIMEApplicationNDJSON or MIMEArrowStream), "" for any other request.
func streamedMediaType(c *fiber.Ctx) string {
	if c.Method() != fiber.MethodPost || !strings.HasSuffix(c.Path(), "/records") {
		return ""
	}
	mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil {
		return ""
	}
	switch mt {
	case MIMEApplicationNDJSON, MIMEArrowStream:
		return mt
	}
	return ""
}

// acceptsNDJSON reports whether the Accept header asks for
// application/x-ndjson (not merely allows it through a wildcard).
func acceptsNDJSON(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || strings.HasPrefix(params["q"], "0") && strings.Trim(params["q"], "0.") == "" {
			continue
		}
		if mt == MIMEApplicationNDJSON {
			return true
		}
	}
	return false
}

// rawBodyStream returns the request body as the client sends it: the
// connection's stream when the server streams request bodies, else the
// buffered body. The connection's read deadline is moved to the request's
// deadline: the header read timeout must not cut off a long body.
func rawBodyStream(c *fiber.Ctx) io.Reader {
	if dl, ok := c.UserContext().Deadline(); ok {
		if conn := c.Context().Conn(); conn != nil {
			_ = conn.SetReadDeadline(dl)
		}
	}
	if s := c.Context().RequestBodyStream(); s != nil {
		return s
	}
	return bytes.NewReader(c.Request().Body())
}

// localBytesIn holds the body bytes a streamed write read (decoded).
const localBytesIn = "fluss-gateway.bytes-in"

// bytesIn is the request body's size for the access log: for a streamed
// write the decoded bytes it read (never reading the rest), else the body.
func bytesIn(c *fiber.Ctx) int64 {
	if n, ok := c.Locals(localBytesIn).(int64); ok {
		return n
	}
	return int64(requestBodySize(c))
}

// bodyReader is a streamed body decoded as its Content-Encoding says
// (identity or gzip), counting the decoded bytes read.
type bodyReader struct {
	r io.Reader
	n int64 // decoded bytes read so far
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}

// streamedBody opens the decoded stream of a streamed write body.
func streamedBody(c *fiber.Ctx) (*bodyReader, error) {
	raw := rawBodyStream(c)
	switch enc := strings.ToLower(strings.TrimSpace(c.Get(fiber.HeaderContentEncoding))); enc {
	case "", "identity":
		return &bodyReader{r: raw}, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bufio.NewReaderSize(raw, 32<<10))
		if err != nil {
			return nil, domain.InvalidArgument("invalid gzip request body: %v", err)
		}
		return &bodyReader{r: zr}, nil
	default:
		return nil, newHTTPError(fiber.StatusUnsupportedMediaType, codeUnsupportedMediaType,
			"Content-Encoding %q is not supported; send the body uncompressed or with gzip", quoteHeader(enc))
	}
}

// localQuotaKey holds the quota key of the request (quota.go), for the
// byte charges of a streamed body.
const localQuotaKey = "fluss-gateway.quota-key"

// chargeStreamed counts n more decoded bytes of a streamed body against the
// write rate limit and the caller's byte quota. Unlike a JSON document,
// whose bytes are admitted before the handler, a stream pays as it is read:
// when the tokens are not there the read waits for them (back pressure on
// the client), until the request's deadline, after which the request ends
// with 429 resource_exhausted.
func (a *api) chargeStreamed(c *fiber.Ctx, n int) error {
	return a.streamCharger(c)(c.UserContext(), n)
}

// streamCharger returns chargeStreamed for the request c that no longer
// needs c (it may run after the handler returned, see ndjson.go).
func (a *api) streamCharger(c *fiber.Ctx) func(ctx context.Context, n int) error {
	var limiters []*rate.Limiter
	var names []string
	if a.admission != nil && a.admission.writeRate != nil && a.admission.writeRate.bytes != nil {
		limiters, names = append(limiters, a.admission.writeRate.bytes), append(names, "write rate limit")
	}
	if a.quotas != nil && a.quotas.cfg.BytesPerSecond > 0 {
		if key, ok := c.Locals(localQuotaKey).(string); ok {
			limiters, names = append(limiters, a.quotas.entry(key).bytes), append(names, "byte quota")
		}
	}
	return func(ctx context.Context, n int) error {
		for i, l := range limiters {
			if err := waitBytes(ctx, l, n, names[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// waitBytes takes n tokens from l, at most its burst at a time, waiting for
// them within ctx.
func waitBytes(ctx context.Context, l *rate.Limiter, n int, what string) error {
	if l == nil {
		return nil
	}
	for n > 0 {
		k := min(n, l.Burst())
		if err := l.WaitN(ctx, k); err != nil {
			return &domain.Error{Kind: domain.KindResourceExhausted, Retryable: true, RetryAfterMillis: 1000,
				Message: fmt.Sprintf("%s reached while reading the streamed body before the request deadline", what), Cause: err}
		}
		n -= k
	}
	return nil
}

// acquireChunk takes the n bytes one chunk of a streamed body holds while
// it is decoded and written (its body bytes and the rows decoded from them,
// estimated) from the data-plane memory budget (budget.go), waiting within
// its bounded wait; release returns them once the chunk's rows have their
// verdicts and is never nil. Unlike a JSON body's charge, which is held
// until the answer is written, a chunk's is returned as soon as the chunk
// is done, so a body of any length holds at most a few chunks.
func (a *api) acquireChunk(ctx context.Context, n int64) (func(), error) {
	return a.acquireFor(ctx, n, "a chunk of the streamed body")
}

// acquireFor is acquireChunk for what (named in the 429's message).
func (a *api) acquireFor(ctx context.Context, n int64, what string) (func(), error) {
	if a.budget == nil {
		return func() {}, nil
	}
	got, err := a.budget.Acquire(ctx, n)
	if err != nil {
		return func() {}, budgetError(err, what)
	}
	start := time.Now()
	return func() { a.budget.Release(got, time.Since(start)) }, nil
}

// chargeAnswer charges the finished answer of a streamed write (its
// verdicts, one per entry) to the request's charge, held until the answer is
// written (budget.go). The verdicts are owed whatever the budget says (the
// rows were written), so a budget that stays full does not refuse them: the
// charge only makes other requests wait while the answer is out.
func (a *api) chargeAnswer(c *fiber.Ctx, n int64) {
	if a.budget == nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), 100*time.Millisecond)
	defer cancel()
	_ = a.charge(c).Acquire(ctx, n)
}

// streamMaxRows is Options.StreamMaxRows, defaulted.
func (a *api) streamMaxRows() int {
	if a.opts.StreamMaxRows > 0 {
		return a.opts.StreamMaxRows
	}
	return DefaultStreamMaxRows
}

// IngestObserver is implemented by Options.Observer values that count
// write bodies by content type (telemetry.GatewayMetrics): contentType is
// the body's media type (one of the gateway's, never request text), rows the
// entries decoded and bytes the body bytes read, after gzip.
type IngestObserver interface {
	ObserveIngest(ctx context.Context, contentType string, table domain.TablePath, rows, bytes int64)
}

// observeIngest records a write body by content type when the observer
// counts them, and names the content type in the access log.
func (a *api) observeIngest(c *fiber.Ctx, contentType string, path domain.TablePath, rows, bytes int64) {
	if o, ok := a.opts.Observer.(IngestObserver); ok {
		o.ObserveIngest(c.UserContext(), contentType, path, rows, bytes)
	}
	addLogAttrs(c, "content_type", contentType)
}
