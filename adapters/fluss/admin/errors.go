package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// op describes one catalog call for error translation.
type op struct {
	api wire.APIKey
	// what names the object in messages, e.g. `database "sales"`.
	what string
	// idempotent: repeating the request cannot change the outcome (reads,
	// and DDL with ignore-if-exists / ignore-if-not-exists), so an ambiguous
	// failure may be retried.
	idempotent bool
}

// toDomain translates an rpc failure into a *domain.Error.
//
//   - answered Fluss codes map to resource-specific kinds (see codeKind);
//   - requests that never reached the cluster (unreachable, connection
//     refused, no coordinator in metadata) are KindUnavailable and retryable;
//   - SASL failures are KindUnavailable with a message saying authentication
//     to the cluster failed (the caller's own credentials are not at fault in
//     service identity mode);
//   - timeouts are KindTimeout, cancellation KindCancelled; ambiguous
//     failures of non-idempotent DDL are not marked retryable.
func toDomain(err error, o op) error {
	if err == nil {
		return nil
	}
	if de := domain.AsError(err); de != nil {
		return de
	}
	e := rpc.AsError(err)
	if e == nil {
		switch {
		case errors.Is(err, context.Canceled):
			return &domain.Error{Kind: domain.KindCancelled, Message: fmt.Sprintf("%s cancelled", o.api), Cause: err}
		case errors.Is(err, context.DeadlineExceeded):
			return &domain.Error{Kind: domain.KindTimeout, Message: timeoutMessage(o, o.readOnly(), false), Cause: err}
		}
		return &domain.Error{Kind: domain.KindInternal, Message: fmt.Sprintf("%s failed: %v", o.api, err), Cause: err}
	}
	if rpc.IsAuthentication(err) {
		return &domain.Error{Kind: domain.KindUnavailable, Cause: err,
			Message: "authentication to the Fluss cluster failed: " + e.Message}
	}
	if e.Outcome == rpc.Answered {
		return answeredToDomain(e, o)
	}

	retryable := e.Retriable() && (e.NotSent() || o.idempotent)
	unknown := ""
	if e.Ambiguous() && !o.idempotent {
		unknown = "; the request may or may not have been applied"
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &domain.Error{Kind: domain.KindCancelled, Cause: err,
			Message: fmt.Sprintf("%s on %s cancelled%s", o.api, o.what, unknown)}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, rpc.ErrTimeout):
		return &domain.Error{Kind: domain.KindTimeout, Retryable: retryable, Cause: err,
			Message: timeoutMessage(o, o.readOnly() || e.NotSent(), true)}
	case errors.Is(err, rpc.ErrUnsupportedAPI):
		return &domain.Error{Kind: domain.KindUnsupported, Cause: err,
			Message: fmt.Sprintf("the Fluss cluster does not support %s: %s", o.api, e.Message)}
	case e.Code == wire.CodeRecordTooLargeException:
		return &domain.Error{Kind: domain.KindLimitExceeded, Cause: err, Message: e.Message}
	case errors.Is(err, rpc.ErrProtocol):
		return &domain.Error{Kind: domain.KindBackend, Cause: err,
			Message: fmt.Sprintf("%s on %s: unexpected answer from the Fluss cluster%s", o.api, o.what, unknown)}
	case e.Retriable():
		return &domain.Error{Kind: domain.KindUnavailable, Retryable: retryable, Cause: err,
			Message: fmt.Sprintf("Fluss cluster unavailable: %s%s", e.Error(), unknown)}
	default:
		return &domain.Error{Kind: domain.KindInternal, Cause: err,
			Message: fmt.Sprintf("%s on %s failed: %s", o.api, o.what, e.Message)}
	}
}

func answeredToDomain(e *rpc.Error, o op) error {
	msg, code := e.Message, e.Code
	var se *wire.ServerError
	if errors.As(e.Err, &se) {
		// No Java stack traces in API errors; recover wrapped causes.
		msg, code = se.Summary(), se.EffectiveCode()
	}
	switch code {
	case wire.CodeDatabaseNotExist:
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceDatabase, Message: msg, Cause: e}
	case wire.CodeDatabaseAlreadyExist:
		return &domain.Error{Kind: domain.KindAlreadyExists, Resource: domain.ResourceDatabase, Message: msg, Cause: e}
	case wire.CodeDatabaseNotEmpty:
		return &domain.Error{Kind: domain.KindNotEmpty, Resource: domain.ResourceDatabase, Message: msg, Cause: e}
	case wire.CodeTableNotExist:
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable, Message: msg, Cause: e}
	case wire.CodeTableAlreadyExist:
		return &domain.Error{Kind: domain.KindAlreadyExists, Resource: domain.ResourceTable, Message: msg, Cause: e}
	case wire.CodePartitionNotExists:
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourcePartition, Message: msg, Cause: e}
	case wire.CodePartitionAlreadyExists:
		return &domain.Error{Kind: domain.KindAlreadyExists, Resource: domain.ResourcePartition, Message: msg, Cause: e}
	case wire.CodeInvalidTableException, wire.CodeInvalidDatabaseException, wire.CodeInvalidReplicationFactor,
		wire.CodeInvalidConfigException, wire.CodeConfigException, wire.CodePartitionSpecInvalidException,
		wire.CodeInvalidAlterTableException, wire.CodeTableNotPartitionedException,
		wire.CodeInvalidColumnProjection, wire.CodeInvalidTargetColumn, wire.CodeInvalidTimestampException,
		wire.CodeNonPrimaryKeyTableException:
		return &domain.Error{Kind: domain.KindInvalidArgument, Message: msg, Cause: e}
	case wire.CodePartitionMaxNumException, wire.CodeBucketMaxNumException,
		wire.CodeInsufficientKvLeaderReplicaCapacity, wire.CodeLakeStorageNotConfiguredException,
		wire.CodeLakeTableAlreadyExist:
		return &domain.Error{Kind: domain.KindFailedPrecondition, Message: msg, Cause: e}
	case wire.CodeAuthorizationException:
		// Name the operation and the object: Fluss's message names the
		// operation type and resource, but not always the request.
		return &domain.Error{Kind: domain.KindUnauthorized, Cause: e,
			Message: fmt.Sprintf("%s on %s denied by the Fluss cluster: %s", o.api, o.what, msg)}
	case wire.CodeSecurityDisabledException, wire.CodeUnsupportedVersion:
		return &domain.Error{Kind: domain.KindUnsupported, Message: msg, Cause: e}
	case wire.CodeRequestTimeOut:
		return &domain.Error{Kind: domain.KindTimeout, Retryable: true, Message: msg, Cause: e}
	case wire.CodeNotCoordinatorLeaderException:
		return &domain.Error{Kind: domain.KindUnavailable, Retryable: true, Cause: e,
			Message: "the Fluss coordinator is not the leader: " + msg}
	}
	if code == wire.CodeUnknownServerError && o.readOnly() {
		// A read the coordinator failed unexpectedly: in practice the
		// object is being created, altered or dropped at this moment
		// (GET_TABLE_INFO on a table whose znode exists but is still
		// empty answers an IOException wrapped in UNKNOWN_SERVER_ERROR).
		// Retryable; the Java text stays in the cause (logs), not the
		// answer.
		return &domain.Error{Kind: domain.KindUnavailable, Retryable: true, RetryAfterMillis: ddlRaceRetryAfter, Cause: e,
			Message: fmt.Sprintf("the Fluss cluster could not read %s: it is probably being created, altered or dropped right now; nothing was changed; retry", orCluster(o.what))}
	}
	if code.Retriable() {
		return &domain.Error{Kind: domain.KindUnavailable, Retryable: true, Cause: e,
			Message: fmt.Sprintf("%s on %s failed with Fluss error %s: %s", o.api, o.what, code, msg)}
	}
	return &domain.Error{Kind: domain.KindBackend, Cause: e,
		Message: fmt.Sprintf("%s on %s failed with Fluss error %s: %s", o.api, o.what, code, msg)}
}

// ddlRaceRetryAfter is the Retry-After of a read that met DDL in progress
// (milliseconds): creation and drops settle well within a second on the
// coordinator.
const ddlRaceRetryAfter = 1000

func orCluster(what string) string {
	if what == "" {
		return "the Fluss cluster's metadata"
	}
	return what
}

// readOnly reports whether the call only reads (metadata, descriptions,
// listings, existence checks).
func (o op) readOnly() bool {
	name := o.api.String()
	for _, p := range []string{"GET_", "LIST_", "DESCRIBE_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return name == "METADATA" || strings.HasSuffix(name, "_EXISTS")
}

// timeoutMessage says, without internal call names, what a call that ran
// out of time was about and whether anything changed: nothing when it only
// read or was never sent; otherwise the change may or may not have been
// applied (known tells whether the rpc layer could say it was not sent).
func timeoutMessage(o op, nothingChanged, _ bool) string {
	what := o.what
	if what == "" {
		what = "the Fluss cluster"
	}
	msg := "the request deadline passed while waiting for the Fluss cluster (" + what + ")"
	switch {
	case nothingChanged:
		return msg + "; nothing was changed"
	case o.idempotent:
		return msg + "; the change may have been applied, and repeating the request is safe"
	default:
		return msg + "; the change may or may not have been applied"
	}
}
