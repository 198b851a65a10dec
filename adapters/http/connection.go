package http

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Connection-level defences of the REST listener (issue 14): lingering
// close, refusal of ambiguous framing and authentication before an
// `Expect: 100-continue` body is read.

// DefaultLingerBytes bounds what a lingering close reads and discards.
const DefaultLingerBytes = 64 << 20

// LingeringListener wraps ln so that closing one of its connections first
// shuts down the sending side (the client sees the answer and then the end
// of the stream), then reads and discards what the client still sends, for
// at most timeout and maxBytes, before closing the socket in the
// background. Without it a server that answers before it has read the whole
// request (413 on a body over the limit, 401 on an Expect: 100-continue
// request) closes a socket with unread data, the kernel sends a reset, and
// the client typically reports "connection reset" instead of the answer
// (RFC 9112 section 9.6). timeout <= 0 passes connections through unchanged.
// The server's owner calls Shutdown after the server has stopped, to end the
// lingering closes still running.
func LingeringListener(ln net.Listener, timeout time.Duration, maxBytes int64) *Lingering {
	if maxBytes <= 0 {
		maxBytes = DefaultLingerBytes
	}
	return &Lingering{Listener: ln, timeout: timeout, maxBytes: maxBytes, closing: map[*lingeringConn]struct{}{}}
}

// Lingering is the listener LingeringListener returns.
type Lingering struct {
	net.Listener
	timeout  time.Duration
	maxBytes int64

	mu      sync.Mutex
	stopped bool
	closing map[*lingeringConn]struct{} // lingering closes in progress
	wg      sync.WaitGroup              // their goroutines
}

// Accept wraps the next TCP connection for a lingering close.
func (l *Lingering) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil || l.timeout <= 0 {
		return c, err
	}
	half, ok := c.(halfCloser)
	if !ok {
		return c, nil
	}
	return &lingeringConn{TCPConn: half, l: l}, nil
}

// halfCloser is a connection whose sending side can be shut down alone
// (*net.TCPConn, and GuardedListener's connections over it).
type halfCloser interface {
	net.Conn
	CloseWrite() error
}

// Shutdown cuts the lingering closes in progress short (their sockets close
// at once) and returns when their goroutines have ended; connections closed
// afterwards close at once. It does not close the listener.
func (l *Lingering) Shutdown() {
	l.mu.Lock()
	l.stopped = true
	for c := range l.closing {
		_ = c.TCPConn.SetReadDeadline(aLongTimeAgo)
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// aLongTimeAgo is a read deadline in the past: it ends a blocked read.
var aLongTimeAgo = time.Unix(1, 0)

type lingeringConn struct {
	// TCPConn is the connection (named for what it usually is).
	TCPConn halfCloser
	l       *Lingering
	once    sync.Once
}

func (c *lingeringConn) Read(p []byte) (int, error)         { return c.TCPConn.Read(p) }
func (c *lingeringConn) Write(p []byte) (int, error)        { return c.TCPConn.Write(p) }
func (c *lingeringConn) LocalAddr() net.Addr                { return c.TCPConn.LocalAddr() }
func (c *lingeringConn) RemoteAddr() net.Addr               { return c.TCPConn.RemoteAddr() }
func (c *lingeringConn) SetDeadline(t time.Time) error      { return c.TCPConn.SetDeadline(t) }
func (c *lingeringConn) SetReadDeadline(t time.Time) error  { return c.TCPConn.SetReadDeadline(t) }
func (c *lingeringConn) SetWriteDeadline(t time.Time) error { return c.TCPConn.SetWriteDeadline(t) }

// Close shuts the sending side down and drains the receiving side in the
// background; it never blocks the server's goroutine.
func (c *lingeringConn) Close() error {
	var err error
	c.once.Do(func() {
		l := c.l
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.stopped {
			err = c.TCPConn.Close()
			return
		}
		if werr := c.TCPConn.CloseWrite(); werr != nil {
			err = c.TCPConn.Close()
			return
		}
		// The deadline is set before Shutdown can see the connection, so
		// that Shutdown's deadline in the past always wins.
		_ = c.TCPConn.SetReadDeadline(time.Now().Add(l.timeout))
		l.closing[c] = struct{}{}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			_, _ = io.CopyN(io.Discard, c.TCPConn, l.maxBytes)
			_ = c.TCPConn.Close()
			l.mu.Lock()
			delete(l.closing, c)
			l.mu.Unlock()
		}()
	})
	return err
}

// framingProblem reports why a request's head could be framed differently
// by another HTTP parser (a proxy in front): Content-Length together with
// Transfer-Encoding, obsolete line folding, or a header that must appear
// once appearing more than once. fasthttp itself refuses differing or
// repeated Content-Length and any Transfer-Encoding other than chunked.
//
// It reads the raw head once without allocating (issue 22: it split the
// head into lines and counted every header name in a map of lowercased
// copies, on every request); header names are compared as the lowercased
// names were.
func framingProblem(h *fasthttp.RequestHeader, single []string) string {
	raw := h.RawHeaders()
	if bytes.Contains(raw, []byte("\n ")) || bytes.Contains(raw, []byte("\n\t")) {
		return "header lines folded onto continuation lines are not accepted"
	}
	var contentLength, transferEncoding bool
	var counted [4]int
	var counts []int
	if len(single) <= len(counted) {
		counts = counted[:len(single)]
	} else {
		counts = make([]int, len(single))
	}
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		name, _, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		name = bytes.TrimSpace(name)
		switch {
		case sameHeaderName(name, "content-length"):
			contentLength = true
		case sameHeaderName(name, "transfer-encoding"):
			transferEncoding = true
		}
		for i, s := range single {
			if sameHeaderName(name, s) {
				counts[i]++
			}
		}
	}
	if contentLength && transferEncoding {
		return "Content-Length and Transfer-Encoding must not both be sent"
	}
	for i, name := range single {
		if counts[i] > 1 {
			return "the " + name + " header must not be sent more than once"
		}
	}
	return ""
}

// sameHeaderName reports whether strings.ToLower gives name and s the same
// value: by ASCII case folding, or with strings.ToLower itself when either
// holds a byte outside ASCII (rare: header names are tokens).
func sameHeaderName(name []byte, s string) bool {
	if len(name) == len(s) {
		ascii := true
		for i := range len(name) {
			a, b := name[i], s[i]
			if a >= utf8.RuneSelf || b >= utf8.RuneSelf {
				ascii = false
				break
			}
			if 'A' <= a && a <= 'Z' {
				a += 'a' - 'A'
			}
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			if a != b {
				return false
			}
		}
		if ascii {
			return true
		}
	} else if isASCII(name) && isASCII(s) {
		return false
	}
	// Not strings.EqualFold: the old reading compared lowercased copies,
	// which differs from case folding for a few non-ASCII letters.
	lower := strings.ToLower(string(name))
	return lower == strings.ToLower(s)
}

func isASCII[T []byte | string](b T) bool {
	for i := range len(b) {
		if b[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// checkFraming refuses requests with ambiguous framing: 400 and the
// connection is closed after the answer, so nothing that follows on it
// (a request hidden in a body) is served.
func (a *api) checkFraming(c *fiber.Ctx) error {
	if msg := framingProblem(&c.Request().Header, a.singleHeaders); msg != "" {
		c.Context().SetConnectionClose()
		return domain.InvalidArgument("malformed request: %s", msg)
	}
	return c.Next()
}

// localPreauthenticated holds the principal established before the body of
// an Expect: 100-continue request was read.
const localPreauthenticated = "fluss-gateway.preauthenticated"

// expectContinue decides an `Expect: 100-continue` request before its body
// is read: ambiguous framing is refused with 400, and a caller that fails
// authentication gets its 401 (or 403) at once, so an unauthenticated client
// cannot make the gateway read up to the body limit. The connection is
// closed after such an answer (the client may have started sending the body
// anyway; the lingering close discards it). Accepted requests continue
// (100) and authenticate only once: the principal is kept for the chain.
func (a *api) expectContinue(ctx *fasthttp.RequestCtx) int {
	c := a.app.AcquireCtx(ctx)
	defer a.app.ReleaseCtx(c)
	if msg := framingProblem(&ctx.Request.Header, a.singleHeaders); msg != "" {
		a.answerEarly(c, domain.InvalidArgument("malformed request: %s", msg))
		return fasthttp.StatusBadRequest
	}
	r, ok := a.routes.match(string(ctx.Method()), string(ctx.Path()))
	if !ok || r.open || r.public || a.identity == nil {
		return fasthttp.StatusContinue
	}
	authCtx, cancel := context.WithTimeout(context.Background(), a.opts.RequestTimeout)
	defer cancel()
	c.SetUserContext(authCtx)
	// The chain gets its own context (deadline middleware).
	defer c.SetUserContext(context.Background())
	p, err := a.authenticateRequest(c)
	if err != nil {
		a.setChallenge(c, err)
		a.answerEarly(c, err)
		return c.Response().StatusCode()
	}
	ctx.SetUserValue(localPreauthenticated, p)
	return fasthttp.StatusContinue
}

// answerEarly writes the error envelope and the access line of a request
// answered before its body was read.
func (a *api) answerEarly(c *fiber.Ctx, err error) {
	assignRequestID(c)
	a.writeError(c, err)
	a.accessLog(c)
}

// knownMethods answers requests whose method fiber does not know (methods
// are case-sensitive: "get" is not GET) with the 405 envelope, a request id
// and an access line; fiber itself would answer a bare text 400.
func (a *api) knownMethods(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Method()) {
		case fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut, fiber.MethodDelete,
			fiber.MethodConnect, fiber.MethodOptions, fiber.MethodTrace, fiber.MethodPatch:
			next(ctx)
			return
		}
		c := a.app.AcquireCtx(ctx)
		defer a.app.ReleaseCtx(c)
		a.answerEarly(c, newHTTPError(fiber.StatusMethodNotAllowed, codeMethodNotAllowed,
			"method %q is not allowed for %s (methods are case-sensitive)", quoteHeader(string(ctx.Method())), quoteHeader(c.Path())))
	}
}
