package http

import (
	"context"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
)

// Keys of fiber locals set by the middleware.
const (
	localRequestID = "fluss-gateway.request-id"
	localStarted   = "fluss-gateway.started"
	localRoute     = "fluss-gateway.route"
	localLogged    = "fluss-gateway.logged"
)

// HeaderRequestID carries the request id in both directions.
const HeaderRequestID = "X-Request-Id"

// maxRequestIDLength bounds an inbound request id that is kept.
const maxRequestIDLength = 128

// requestContext is the outermost middleware: it assigns the request id,
// lets the rest of the chain run and writes the access log line.
func (a *api) requestContext(c *fiber.Ctx) error {
	assignRequestID(c)
	err := c.Next()
	if err != nil {
		// Inner middleware answers every error itself; this is a backstop.
		a.writeError(c, err)
	}
	a.accessLog(c)
	return nil
}

// assignRequestID keeps a well-formed inbound x-request-id and otherwise
// generates a UUID, then echoes it in the response.
func assignRequestID(c *fiber.Ctx) {
	id := c.Get(HeaderRequestID)
	if !wellFormedRequestID(id) {
		id = uuid.NewString()
	}
	c.Locals(localRequestID, id)
	c.Locals(localStarted, time.Now())
	c.Set(HeaderRequestID, id)
}

// wellFormedRequestID accepts 1..128 characters from a conservative set, so a
// kept id cannot smuggle anything into logs or headers.
func wellFormedRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		b := id[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("-_.:", b) >= 0) {
			return false
		}
	}
	return true
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
	c.Locals(localLogged, true)
	route, _ := c.Locals(localRoute).(string)
	if route == "" {
		route = "<unmatched>"
	}
	var elapsed time.Duration
	if started, ok := c.Locals(localStarted).(time.Time); ok {
		elapsed = time.Since(started)
	}
	a.log.InfoContext(c.UserContext(), "request",
		"request_id", requestID(c),
		"method", c.Method(),
		"route", route,
		"path", c.Path(),
		"status", c.Response().StatusCode(),
		"duration_ms", float64(elapsed.Microseconds())/1000,
		"bytes_in", len(c.Request().Body()),
		"bytes_out", len(c.Response().Body()),
		"remote", c.IP(),
	)
}

// errorsAndPanics sits inside the tracing middleware, so the span sees the
// final status: it answers every error returned by the chain (404 and 405
// included) and turns a panic into 500 internal without leaking its value.
func (a *api) errorsAndPanics(c *fiber.Ctx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			a.log.ErrorContext(c.UserContext(), "handler panicked", "request_id", requestID(c), "panic", fmt.Sprint(p))
			c.Response().ResetBody()
			a.writeError(c, fmt.Errorf("panic: %v", p))
			err = nil
		}
	}()
	if err := c.Next(); err != nil {
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
// through c.UserContext().
func (a *api) deadline(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), a.opts.RequestTimeout)
	defer cancel()
	c.SetUserContext(ctx)
	err := c.Next()
	if err == nil && ctx.Err() == context.DeadlineExceeded && c.Response().StatusCode() < 400 {
		// The handler finished after its deadline without noticing; its
		// result may be stale, so report the timeout the caller is owed.
		c.Response().ResetBody()
		return context.DeadlineExceeded
	}
	return err
}

// acceptJSON answers 406 when the Accept header rules out JSON, the only
// representation the gateway serves.
func acceptJSON(c *fiber.Ctx) error {
	accept := c.Get(fiber.HeaderAccept)
	if accept == "" || acceptsJSON(accept) {
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
