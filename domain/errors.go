package domain

import (
	"errors"
	"fmt"
)

// Kind classifies a failure independently of transport. The HTTP adapter maps
// kinds to status codes and to the stable snake_case codes of the official
// Fluss gateway's error envelope (apache/fluss: fluss-gateway/src/error.rs).
type Kind int

// Error kinds. The comment after each gives the HTTP status and wire code.
const (
	KindInternal           Kind = iota // 500 internal
	KindInvalidArgument                // 400 invalid_argument
	KindUnauthenticated                // 401 unauthenticated
	KindUnauthorized                   // 403 unauthorized
	KindNotFound                       // 404 not_found (or <resource>_not_found)
	KindAlreadyExists                  // 409 already_exists (or <resource>_already_exists)
	KindFailedPrecondition             // 409 failed_precondition
	KindNotEmpty                       // 409 database_not_empty
	KindLimitExceeded                  // 413 limit_exceeded
	KindResourceExhausted              // 429 resource_exhausted
	KindCancelled                      // 499 cancelled
	KindBackend                        // 500 backend
	KindUnsupported                    // 501 unsupported
	KindUnavailable                    // 503 unavailable
	KindTimeout                        // 504 timeout
)

// Resource names the kind of object an error is about; it specialises the
// wire code of not-found and already-exists errors (table_not_found, ...).
type Resource string

// Resources that specialise error codes.
const (
	ResourceNone      Resource = ""
	ResourceCluster   Resource = "cluster"
	ResourceDatabase  Resource = "database"
	ResourceTable     Resource = "table"
	ResourcePartition Resource = "partition"
)

// Error is the gateway's error value. Adapters translate their own failures
// (Fluss error codes, network errors) into an *Error so that the application
// and HTTP layers can reason about them with errors.As.
type Error struct {
	Kind     Kind
	Resource Resource
	Message  string
	// Retryable tells a caller that the same request may succeed later
	// (leadership change, unavailable server, backpressure).
	Retryable bool
	// RetryAfterMillis, when > 0, is the computed wait before a retry makes sense.
	RetryAfterMillis int64
	// Cause is the underlying error, if any (never shown to HTTP callers verbatim
	// for internal errors).
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil && e.Message == "" {
		return e.Cause.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Code returns the stable snake_case wire code of the error.
func (e *Error) Code() string {
	switch e.Kind {
	case KindInvalidArgument:
		return "invalid_argument"
	case KindUnauthenticated:
		return "unauthenticated"
	case KindUnauthorized:
		return "unauthorized"
	case KindNotFound:
		if e.Resource != ResourceNone {
			return string(e.Resource) + "_not_found"
		}
		return "not_found"
	case KindAlreadyExists:
		if e.Resource != ResourceNone {
			return string(e.Resource) + "_already_exists"
		}
		return "already_exists"
	case KindFailedPrecondition:
		return "failed_precondition"
	case KindNotEmpty:
		return "database_not_empty"
	case KindLimitExceeded:
		return "limit_exceeded"
	case KindResourceExhausted:
		return "resource_exhausted"
	case KindCancelled:
		return "cancelled"
	case KindBackend:
		return "backend"
	case KindUnsupported:
		return "unsupported"
	case KindUnavailable:
		return "unavailable"
	case KindTimeout:
		return "timeout"
	default:
		return "internal"
	}
}

// Errorf builds an *Error of the given kind with a formatted message.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// NotFound builds a resource-specific not-found error.
func NotFound(res Resource, format string, args ...any) *Error {
	return &Error{Kind: KindNotFound, Resource: res, Message: fmt.Sprintf(format, args...)}
}

// AlreadyExists builds a resource-specific already-exists error.
func AlreadyExists(res Resource, format string, args ...any) *Error {
	return &Error{Kind: KindAlreadyExists, Resource: res, Message: fmt.Sprintf(format, args...)}
}

// ErrUnknownColumn is the Cause of an invalid_argument error about a column
// name the table's definition (as the request was decoded against it) does
// not have. The application refreshes the definition once on such an error
// before refusing the request: the column may have been added a moment ago
// through another gateway or client.
var ErrUnknownColumn = errors.New("unknown column")

// UnknownColumn is InvalidArgument with ErrUnknownColumn as its cause.
func UnknownColumn(format string, args ...any) *Error {
	e := InvalidArgument(format, args...)
	e.Cause = ErrUnknownColumn
	return e
}

// IsUnknownColumn reports whether err is about a column the definition does
// not have (errors.Is(err, ErrUnknownColumn)).
func IsUnknownColumn(err error) bool { return errors.Is(err, ErrUnknownColumn) }

// InvalidArgument builds an invalid_argument error; the message should name
// the offending field (for example `columns[3].data_type.precision`).
func InvalidArgument(format string, args ...any) *Error {
	return &Error{Kind: KindInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// AsError returns the *Error inside err, or nil.
func AsError(err error) *Error {
	switch e := err.(type) {
	case nil:
		return nil // without errors.As, whose target escapes (issue 22)
	case *Error:
		return e
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// KindOf returns the kind of err; KindInternal when err carries none.
func KindOf(err error) Kind {
	if e := AsError(err); e != nil {
		return e.Kind
	}
	return KindInternal
}

// ErrorCodes is the official Fluss gateway's ErrorCode enum (apache/fluss:
// fluss-gateway/openapi.yaml, schema ErrorCode), sorted. Every `error.code` of
// an envelope and every per-entry `error_code` of a write is one of them;
// finer detail (the Fluss exception, for instance) goes into the message.
var ErrorCodes = []string{
	"already_exists", "backend", "cancelled", "cluster_already_exists", "cluster_not_found",
	"database_already_exists", "database_not_empty", "database_not_found", "failed_precondition",
	"internal", "invalid_argument", "limit_exceeded", "method_not_allowed", "not_acceptable",
	"not_found", "partition_already_exists", "partition_not_found", "resource_exhausted",
	"storage_backpressure", "table_already_exists", "table_not_found", "timeout",
	"unauthenticated", "unauthorized", "unavailable", "unsupported", "unsupported_media_type",
}

// IsErrorCode reports whether code is in ErrorCodes.
func IsErrorCode(code string) bool {
	lo, hi := 0, len(ErrorCodes)
	for lo < hi {
		mid := (lo + hi) / 2
		switch {
		case ErrorCodes[mid] == code:
			return true
		case ErrorCodes[mid] < code:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return false
}
