package meta

import (
	"context"
	"errors"
	"fmt"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Unsupported is the error of a table the gateway cannot read or write
// (a feature, type or format it does not implement): KindUnsupported, the
// message naming the table, then format and args as in fmt.Sprintf.
func Unsupported(path domain.TablePath, format string, args ...any) error {
	return &domain.Error{Kind: domain.KindUnsupported,
		Message: fmt.Sprintf("table `%s`: ", path) + fmt.Sprintf(format, args...)}
}

// DomainError translates a failure of a metadata call into a *domain.Error.
// what names the object, e.g. "table `db.t`". Errors that already are
// domain errors are returned unchanged.
func DomainError(err error, what string) error {
	if err == nil {
		return nil
	}
	if de := domain.AsError(err); de != nil {
		return de
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &domain.Error{Kind: domain.KindCancelled, Message: what + ": request cancelled", Cause: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &domain.Error{Kind: domain.KindTimeout, Message: what + ": deadline exceeded", Retryable: true, Cause: err}
	}
	code := ErrorCode(err)
	msg := fmt.Sprintf("%s: %s", what, err.Error())
	switch code {
	case wire.CodeTableNotExist:
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable, Message: what + " does not exist", Cause: err}
	case wire.CodeDatabaseNotExist:
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceDatabase, Message: what + ": database does not exist", Cause: err}
	case wire.CodePartitionNotExists:
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourcePartition, Message: what + " does not exist", Cause: err}
	case wire.CodeSchemaNotExist:
		return &domain.Error{Kind: domain.KindNotFound, Message: what + ": schema does not exist", Cause: err}
	case wire.CodeAuthorizationException:
		return &domain.Error{Kind: domain.KindUnauthorized, Message: msg, Cause: err}
	case wire.CodeAuthenticateException:
		return &domain.Error{Kind: domain.KindUnauthenticated, Message: msg, Cause: err}
	case wire.CodeRequestTimeOut:
		return &domain.Error{Kind: domain.KindTimeout, Message: msg, Retryable: true, Cause: err}
	case wire.CodePartitionSpecInvalidException, wire.CodeInvalidTableException:
		return &domain.Error{Kind: domain.KindInvalidArgument, Message: msg, Cause: err}
	case wire.CodePartitionMaxNumException:
		return &domain.Error{Kind: domain.KindLimitExceeded, Message: msg, Cause: err}
	case wire.CodeUnknownServerError:
		// Metadata reads fail so while the object is being created,
		// altered or dropped (another client's DDL); the Java text stays
		// in the cause.
		return &domain.Error{Kind: domain.KindUnavailable, Retryable: true, RetryAfterMillis: 1000, Cause: err,
			Message: what + ": the Fluss cluster could not read its metadata (it is probably being created, altered or dropped right now); retry"}
	}
	var c Classified
	if !errors.As(err, &c) || c.Retriable() || c.Ambiguous() || c.NotSent() {
		return &domain.Error{Kind: domain.KindUnavailable, Message: msg, Retryable: true, Cause: err}
	}
	return &domain.Error{Kind: domain.KindBackend, Message: msg, Cause: err}
}
