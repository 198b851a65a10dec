package rpc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
)

// Outcome says what is known about a failed request's effect on the server.
type Outcome uint8

// Outcomes of a failed request.
const (
	// NotSent: no complete request frame left this client (dial or handshake
	// failure, closed connection, local validation, cancellation before the
	// write). The server cannot have acted on it; retrying is always safe.
	NotSent Outcome = iota + 1
	// Ambiguous: the request was fully written but no answer arrived
	// (timeout, cancellation, connection loss, server failure frame). It may
	// or may not have been applied.
	Ambiguous
	// Answered: the server answered with an ERROR_RESPONSE; the request failed
	// as a whole with the error code in Error.Code.
	Answered
)

// String names the outcome.
func (o Outcome) String() string {
	switch o {
	case NotSent:
		return "not sent"
	case Ambiguous:
		return "ambiguous"
	case Answered:
		return "answered"
	default:
		return "unknown"
	}
}

// Sentinel causes, matched with errors.Is on an *Error.
var (
	// ErrTimeout: the per-request timeout (Config.RequestTimeout) elapsed
	// before a response arrived. The server drops requests it cannot parse or
	// route without answering, so this is also what such a request yields.
	ErrTimeout = errors.New("fluss rpc: request timed out")
	// ErrClosed: the connection or client was closed by its owner.
	ErrClosed = errors.New("fluss rpc: closed")
	// ErrServerType: ApiVersions reported another server type than the
	// metadata promised (the node was replaced); refresh metadata.
	ErrServerType = errors.New("fluss rpc: unexpected server type")
	// ErrUnsupportedAPI: the server did not list the API in ApiVersions, or no
	// version both sides implement exists. Sending it would get no answer.
	ErrUnsupportedAPI = errors.New("fluss rpc: API not supported by server")
	// ErrNoNode: the cluster metadata names no node of the wanted kind
	// (no coordinator, no tablet server, unknown node id).
	ErrNoNode = errors.New("fluss rpc: no such server node")
	// ErrProtocol: the peer sent bytes this client cannot decode.
	ErrProtocol = errors.New("fluss rpc: protocol violation")
)

// Classified is the small interface through which callers outside this
// package (the application's retry policy) inspect failures without importing
// it: every error returned by this package satisfies it via errors.As. Only
// standard types appear in the method set, so a consumer can declare the same
// interface locally.
type Classified interface {
	error
	// NotSent reports that the server cannot have seen the request.
	NotSent() bool
	// Ambiguous reports that the request was sent but its outcome is unknown.
	Ambiguous() bool
	// Retriable reports that the same request may succeed later (possibly on
	// a new connection or after a metadata refresh). For ambiguous failures
	// the caller must still decide whether a repeat is safe.
	Retriable() bool
	// FlussErrorCode is the Fluss error code (wire.ErrorCode): the server's
	// code for answered requests, NETWORK_EXCEPTION (1) for connection
	// failures, REQUEST_TIME_OUT (25) for timeouts, UNSUPPORTED_VERSION (2)
	// for APIs the server lacks, 0 when no code applies (cancellation, local
	// encoding errors).
	FlussErrorCode() int32
}

var _ Classified = (*Error)(nil)

// Error is the error type of package rpc.
type Error struct {
	// Outcome tells whether the request may have been applied.
	Outcome Outcome
	// Code is the Fluss error code; see Classified.FlussErrorCode.
	Code wire.ErrorCode
	// API is the request's API key; 0 for dial and handshake failures that
	// happened before any user request.
	API wire.APIKey
	// Addr is the server address (host:port).
	Addr string
	// Message describes the failure; for answered requests it is the
	// server's message.
	Message string
	// Err is the cause: a *wire.ServerError for answered requests and server
	// failures, a sentinel of this package, a context error or an I/O error.
	Err error

	retriable bool
}

// Error renders "fluss <API> <addr>: <message>: <cause>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("fluss")
	if e.API != 0 {
		b.WriteString(" ")
		b.WriteString(e.API.String())
	}
	if e.Addr != "" {
		b.WriteString(" ")
		b.WriteString(e.Addr)
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.Err != nil {
		cause := e.Err.Error()
		var se *wire.ServerError
		if errors.As(e.Err, &se) {
			// The server's message is already part of Message; add the code.
			if strings.Contains(e.Message, se.Message) || e.Message == se.Summary() {
				cause = fmt.Sprintf("%s (code %d)", se.Code, int32(se.Code))
			}
		}
		if cause != e.Message {
			b.WriteString(": ")
			b.WriteString(cause)
		}
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// NotSent reports Outcome == NotSent.
func (e *Error) NotSent() bool { return e.Outcome == NotSent }

// Ambiguous reports Outcome == Ambiguous.
func (e *Error) Ambiguous() bool { return e.Outcome == Ambiguous }

// Retriable reports whether a retry may succeed.
func (e *Error) Retriable() bool { return e.retriable }

// FlussErrorCode returns Code as int32.
func (e *Error) FlussErrorCode() int32 { return int32(e.Code) }

// InvalidatesMetadata reports whether cached cluster metadata should be
// refreshed before a retry: connection-level failures and the codes that Fluss
// marks as metadata errors.
func (e *Error) InvalidatesMetadata() bool {
	return e.Code.InvalidatesMetadata() || errors.Is(e.Err, ErrServerType)
}

// AsError returns the *Error inside err, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// IsNotSent reports whether err is an rpc error whose request never reached
// the server.
func IsNotSent(err error) bool {
	e := AsError(err)
	return e != nil && e.NotSent()
}

// CodeOf returns the Fluss error code carried by err; ok is false when err is
// not an rpc error or carries no code.
func CodeOf(err error) (code wire.ErrorCode, ok bool) {
	e := AsError(err)
	if e == nil || e.Code == wire.CodeNone {
		return wire.CodeNone, false
	}
	return e.Code, true
}

// IsAuthentication reports whether err is a SASL authentication failure
// (AUTHENTICATE_EXCEPTION or RETRIABLE_AUTHENTICATE_EXCEPTION).
func IsAuthentication(err error) bool {
	c, ok := CodeOf(err)
	return ok && (c == wire.CodeAuthenticateException || c == wire.CodeRetriableAuthenticateException)
}

// answered builds the error of an ERROR_RESPONSE.
func answered(api wire.APIKey, addr string, se *wire.ServerError) *Error {
	return &Error{
		// The message keeps the server's first line and innermost cause, not
		// a Java stack trace (UNKNOWN_SERVER_ERROR carries one): it reaches
		// HTTP callers. The full text stays in Err for logs.
		Outcome: Answered, Code: se.Code, API: api, Addr: addr,
		Message: se.Summary(), Err: se, retriable: se.Code.Retriable(),
	}
}

// networkError builds the error of a connection-level failure.
func networkError(o Outcome, api wire.APIKey, addr, msg string, cause error) *Error {
	return &Error{
		Outcome: o, Code: wire.CodeNetworkException, API: api, Addr: addr,
		Message: msg, Err: cause, retriable: true,
	}
}

// contextError builds the error for a request whose context ended or whose
// per-request timer fired.
func contextError(o Outcome, api wire.APIKey, addr string, cause error) *Error {
	switch {
	case errors.Is(cause, ErrTimeout):
		return &Error{Outcome: o, Code: wire.CodeRequestTimeOut, API: api, Addr: addr,
			Message: "no response within the request timeout", Err: cause, retriable: true}
	case errors.Is(cause, context.DeadlineExceeded):
		return &Error{Outcome: o, Code: wire.CodeRequestTimeOut, API: api, Addr: addr,
			Message: "context deadline exceeded", Err: cause}
	default:
		return &Error{Outcome: o, API: api, Addr: addr, Message: "request cancelled", Err: cause}
	}
}

// connClosedError turns the reason a connection died into the error of one
// request on it.
func connClosedError(o Outcome, api wire.APIKey, addr string, reason error) *Error {
	if e := AsError(reason); e != nil {
		// Whatever killed the connection (server failure frame, protocol
		// error), the request may succeed on a new connection.
		c := *e
		c.Outcome = o
		c.API = api
		c.retriable = true
		return &c
	}
	if errors.Is(reason, ErrClosed) {
		return &Error{Outcome: o, Code: wire.CodeNetworkException, API: api, Addr: addr,
			Message: "connection closed", Err: reason}
	}
	return networkError(o, api, addr, "connection lost", reason)
}
