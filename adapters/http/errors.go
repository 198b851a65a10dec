package http

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Wire codes that exist only at the HTTP layer, in addition to the codes of
// domain.Error.Code (apache/fluss: fluss-gateway/src/error.rs).
const (
	codeMethodNotAllowed     = "method_not_allowed"
	codeNotAcceptable        = "not_acceptable"
	codeUnsupportedMediaType = "unsupported_media_type"
)

// envelope is the error response body.
type envelope struct {
	Error envelopeBody `json:"error"`
}

type envelopeBody struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

// httpError is a failure of the HTTP protocol itself (route, method, media
// type) that has no domain kind.
type httpError struct {
	status  int
	code    string
	message string
}

// Error returns the client-facing message.
func (e *httpError) Error() string { return e.message }

func newHTTPError(status int, code, format string, args ...any) *httpError {
	return &httpError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// statusOf maps a domain kind to its HTTP status, as the official gateway does.
func statusOf(k domain.Kind) int {
	switch k {
	case domain.KindInvalidArgument:
		return fiber.StatusBadRequest
	case domain.KindUnauthenticated:
		return fiber.StatusUnauthorized
	case domain.KindUnauthorized:
		return fiber.StatusForbidden
	case domain.KindNotFound:
		return fiber.StatusNotFound
	case domain.KindAlreadyExists, domain.KindFailedPrecondition, domain.KindNotEmpty:
		return fiber.StatusConflict
	case domain.KindLimitExceeded:
		return fiber.StatusRequestEntityTooLarge
	case domain.KindResourceExhausted:
		return fiber.StatusTooManyRequests
	case domain.KindCancelled:
		return 499
	case domain.KindUnsupported:
		return fiber.StatusNotImplemented
	case domain.KindUnavailable:
		return fiber.StatusServiceUnavailable
	case domain.KindTimeout:
		return fiber.StatusGatewayTimeout
	default: // KindInternal, KindBackend
		return fiber.StatusInternalServerError
	}
}

// isDefinitionChange reports whether e says that the table or its schema
// changed while the request was being prepared (a retryable failed
// precondition). The official gateway answers that 503 `unavailable`
// ("the table/schema changed before submission").
func isDefinitionChange(e *domain.Error) bool {
	return e.Kind == domain.KindFailedPrecondition && e.Retryable
}

// envelopeCode returns the official code and the message of a domain error:
// a definition change is `unavailable`.
func envelopeCode(e *domain.Error) (string, string) {
	if isDefinitionChange(e) {
		return "unavailable", e.Error()
	}
	return e.Code(), e.Message
}

// classify turns any error into the status, code and client-safe message of
// its envelope. internal reports whether the real cause must stay in the log.
func classify(c *fiber.Ctx, err error, maxBody int64) (status int, code, message string, retryAfter int64, internal bool) {
	var he *httpError
	var fe *fiber.Error
	switch de := domain.AsError(err); {
	case de != nil:
		status = statusOf(de.Kind)
		code, message = envelopeCode(de)
		if isDefinitionChange(de) {
			status = fiber.StatusServiceUnavailable
		}
		if de.Kind == domain.KindInternal {
			message, internal = "internal error", true
		}
		message = backendRPC.ReplaceAllString(message, "the Fluss cluster:")
		if status >= fiber.StatusInternalServerError {
			message = redactBackend(message)
		}
		if status == fiber.StatusServiceUnavailable || de.Kind == domain.KindResourceExhausted {
			retryAfter = max(1, (de.RetryAfterMillis+999)/1000)
		}
		return status, code, message, retryAfter, internal
	case errors.As(err, &he):
		return he.status, he.code, he.message, 0, false
	case errors.Is(err, context.DeadlineExceeded):
		if m := c.Method(); m == fiber.MethodGet || m == fiber.MethodHead || strings.HasSuffix(c.Path(), "/lookup") || strings.HasSuffix(c.Path(), "/prefix-lookup") {
			return fiber.StatusGatewayTimeout, "timeout", "request deadline exceeded before the gateway answered; the request only reads, nothing was written", 0, false
		}
		return fiber.StatusGatewayTimeout, "timeout", "request deadline exceeded before the gateway answered; a change the request asked for may or may not have been applied", 0, false
	case errors.Is(err, context.Canceled):
		return 499, "cancelled", "request cancelled", 0, false
	case errors.As(err, &fe):
		return classifyFramework(c, fe, maxBody)
	default:
		return fiber.StatusInternalServerError, "internal", "internal error", 0, true
	}
}

// bodyDeadlineError turns a timed-out body read under the read deadline
// bodyReadTimeout set from the request's deadline into that deadline's
// answer (504 timeout, nothing was written), as every deadline is answered;
// a body read that outlasts the header read timeout stays a silent client's
// 408.
func (a *api) bodyDeadlineError(c *fiber.Ctx, err error) error {
	var fe *fiber.Error
	if !errors.As(err, &fe) || fe.Code != fiber.StatusRequestTimeout {
		return err
	}
	rc := a.bodyReadTimeout(&c.Request().Header)
	if rc.ReadTimeout <= 0 {
		return err
	}
	return &domain.Error{Kind: domain.KindTimeout, Retryable: true, Cause: err,
		Message: fmt.Sprintf("the request deadline (%s) passed before the request body arrived; nothing was written", rc.ReadTimeout-bodyReadGrace)}
}

// classifyFramework maps the errors fiber and fasthttp raise themselves.
func classifyFramework(c *fiber.Ctx, fe *fiber.Error, maxBody int64) (int, string, string, int64, bool) {
	switch fe.Code {
	case fiber.StatusNotFound:
		return fiber.StatusNotFound, "not_found", fmt.Sprintf("no route for %s %s", c.Method(), c.Path()), 0, false
	case fiber.StatusMethodNotAllowed:
		return fiber.StatusMethodNotAllowed, codeMethodNotAllowed, fmt.Sprintf("method %s is not allowed for %s", c.Method(), c.Path()), 0, false
	case fiber.StatusRequestEntityTooLarge:
		return fiber.StatusRequestEntityTooLarge, "limit_exceeded", fmt.Sprintf("request body exceeds the limit of %d bytes", maxBody), 0, false
	case fiber.StatusRequestHeaderFieldsTooLarge:
		return fiber.StatusRequestEntityTooLarge, "limit_exceeded", "request headers are too large", 0, false
	case fiber.StatusRequestTimeout:
		// The client went silent: its failure, not the gateway's or the
		// cluster's (issue 27: it was counted as 504 and logged at WARN).
		return fiber.StatusRequestTimeout, "timeout", "timed out reading the request; nothing was done", 0, false
	case fiber.StatusUnsupportedMediaType:
		return fe.Code, codeUnsupportedMediaType, "unsupported media type", 0, false
	case fiber.StatusServiceUnavailable:
		return fe.Code, "unavailable", "service unavailable", 1, false
	}
	if fe.Code >= 500 {
		return fiber.StatusInternalServerError, "internal", "internal error", 0, true
	}
	return fiber.StatusBadRequest, "invalid_argument", "malformed request", 0, false
}

// writeError answers err as the error envelope. Internal causes are logged
// with the request id and never sent.
func (a *api) writeError(c *fiber.Ctx, err error) {
	err = a.bodyDeadlineError(c, err)
	status, code, message, retryAfter, internal := classify(c, err, a.opts.MaxRequestBytes)
	message = boundMessage(message)
	id := requestID(c)
	if internal {
		a.log.ErrorContext(c.UserContext(), "request failed", "request_id", id, "error", err)
	}
	// The access line names the failure. The envelope message is what the
	// caller was told (it never holds credentials); an internal cause stays
	// out of the envelope but is already logged in full above.
	logged := message
	if internal || status >= fiber.StatusInternalServerError || status == fiber.StatusForbidden {
		logged = boundMessage(err.Error()) // backend details stay in the gateway's log (redactBackend)
	}
	c.Locals(localFailure, failure{code: code, message: logged})
	if retryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(retryAfter, 10))
	}
	if status == fiber.StatusMethodNotAllowed {
		if allow := a.routes.allowed(c.Path()); allow != "" {
			c.Set(fiber.HeaderAllow, allow)
		}
	}
	c.Status(status)
	if werr := writeJSONBody(c, envelope{Error: envelopeBody{Code: code, Message: message, RequestID: id}}); werr != nil {
		a.log.ErrorContext(c.UserContext(), "cannot encode error envelope", "request_id", id, "error", werr)
	}
}

// errorHandler is fiber's last-resort handler. It sees the errors fasthttp
// raises before any middleware runs (body too large, malformed request line)
// and anything a middleware could not answer.
func (a *api) errorHandler(c *fiber.Ctx, err error) error {
	first := c.Locals(localRequestID) == nil
	if first {
		assignRequestID(c)
	}
	a.writeError(c, err)
	if first {
		a.accessLog(c)
	}
	return nil
}

var (
	// backendRPC is the "fluss <API> <address>" prefix of the Fluss client's
	// errors (adapters/fluss/rpc, Error.Error).
	backendRPC = regexp.MustCompile(`\bfluss(?: [A-Z][A-Z_]+)?(?: (?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d+)?:`)
	// backendAddr is a host:port or [v6]:port inside a message.
	backendAddr = regexp.MustCompile(`(?:\[[0-9A-Fa-f:.]+\]|\b[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):\d{1,5}\b`)
)

// redactBackend removes, from the message of a 5xx answer, what would map
// the internal network for a caller: the Fluss RPC names and the addresses
// of tablet servers and coordinators (issue 27). The full message is in the
// access log line of the request.
func redactBackend(message string) string {
	message = backendRPC.ReplaceAllString(message, "the Fluss cluster:")
	return backendAddr.ReplaceAllString(message, "<server>")
}

// maxMessageBytes bounds an error message in an answer or a log line: the
// decoders already cut the names they quote, this is the backstop for any
// message that quotes user input (issue 21).
const maxMessageBytes = 2 << 10

// boundMessage cuts msg to maxMessageBytes, marking the cut.
func boundMessage(msg string) string {
	if len(msg) <= maxMessageBytes {
		return msg
	}
	return truncateUTF8(msg, maxMessageBytes) + "… (cut)"
}
