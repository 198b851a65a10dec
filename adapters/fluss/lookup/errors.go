package lookup

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func itoa(n int) string { return strconv.Itoa(n) }

func keyWord(prefix bool) string {
	if prefix {
		return "prefix"
	}
	return "key"
}

func apiWord(prefix bool) string {
	if prefix {
		return "prefix lookup"
	}
	return "lookup"
}

// ctxError is the whole-request error when ctx ended (timeout or cancelled).
func ctxError(ctx context.Context, path domain.TablePath) error {
	return meta.DomainError(ctx.Err(), fmt.Sprintf("lookup on table `%s`", path))
}

// partitionNotFound reports whether err says a partition does not exist.
func partitionNotFound(err error) bool {
	if de := domain.AsError(err); de != nil && de.Kind == domain.KindNotFound && de.Resource == domain.ResourcePartition {
		return true
	}
	return meta.ErrorCode(err) == wire.CodePartitionNotExists
}

// where names a bucket in messages.
func (x *exchange) where(part string, bucket int32) string {
	if part != "" {
		return fmt.Sprintf("bucket %d of partition `%s` of table `%s`", bucket, part, x.c.path)
	}
	return fmt.Sprintf("bucket %d of table `%s`", bucket, x.c.path)
}

// requestError translates the failure of a whole request to one node.
func (x *exchange) requestError(ng *nodeGroup, err error) *domain.Error {
	what := fmt.Sprintf("%s on table `%s` at tablet server %d", apiWord(x.prefix), x.c.path, ng.node.ID)
	de := domain.AsError(meta.DomainError(err, what))
	if de == nil {
		de = &domain.Error{Kind: domain.KindUnavailable, Retryable: true, Message: what + ": " + err.Error(), Cause: err}
	}
	return de
}

// bucketError translates a per-bucket error of an answer; se nil means an
// answer that does not fit the request.
func (x *exchange) bucketError(g *bucketGroup, se *wire.ServerError) *domain.Error {
	where := x.where(g.name, g.bucket)
	if se == nil {
		return &domain.Error{Kind: domain.KindBackend, Message: fmt.Sprintf("%s in %s failed", apiWord(x.prefix), where)}
	}
	code := se.EffectiveCode()
	kind, res := codeKind(code)
	return &domain.Error{
		Kind: kind, Resource: res, Retryable: code.Retriable(), Cause: se,
		Message: fmt.Sprintf("%s in %s failed: %s (code %d): %s", apiWord(x.prefix), where, se.Code, int32(se.Code), se.Summary()),
	}
}

// codeKind maps a per-bucket Fluss error code to the gateway's error kind.
func codeKind(code wire.ErrorCode) (domain.Kind, domain.Resource) {
	switch code {
	case wire.CodeTableNotExist:
		return domain.KindNotFound, domain.ResourceTable
	case wire.CodeDatabaseNotExist:
		return domain.KindNotFound, domain.ResourceDatabase
	case wire.CodePartitionNotExists:
		return domain.KindNotFound, domain.ResourcePartition
	case wire.CodeAuthorizationException:
		return domain.KindUnauthorized, domain.ResourceNone
	case wire.CodeAuthenticateException:
		return domain.KindUnauthenticated, domain.ResourceNone
	case wire.CodeRequestTimeOut:
		return domain.KindTimeout, domain.ResourceNone
	case wire.CodeNonPrimaryKeyTableException:
		return domain.KindInvalidArgument, domain.ResourceNone
	case wire.CodeUnsupportedVersion:
		return domain.KindUnsupported, domain.ResourceNone
	case wire.CodeStorageBackpressureException, wire.CodeHistoricalPartitionThrottled:
		return domain.KindResourceExhausted, domain.ResourceNone
	}
	if code.Retriable() {
		return domain.KindUnavailable, domain.ResourceNone
	}
	return domain.KindBackend, domain.ResourceNone
}

// leaderUnknown is the failure of a key whose bucket has no known leader
// even after a metadata refresh.
func (x *exchange) leaderUnknown(it *item) *domain.Error {
	return &domain.Error{Kind: domain.KindUnavailable, Retryable: true,
		Message: fmt.Sprintf("%s in %s: no leader is available (%s)", apiWord(x.prefix), x.where(it.part, it.bucket),
			wire.CodeLeaderNotAvailableException)}
}

// valueError is the failure to decode a stored value.
func valueError(c *codec, err error) *domain.Error {
	de := domain.AsError(err)
	if de == nil {
		return &domain.Error{Kind: domain.KindBackend, Cause: err,
			Message: fmt.Sprintf("table `%s`: cannot decode a stored row: %v", c.path, err)}
	}
	cp := *de
	cp.Message = fmt.Sprintf("table `%s`: cannot decode a stored row: %s", c.path, de.Message)
	return &cp
}

// wholeFailure returns the whole-request error when every key failed for a
// reason that is not about the key itself: a retriable failure (the cluster
// or the table's leaders are unavailable), a table or database that
// vanished, or a denied principal. Keys that failed for their own reasons
// (a bad value, a corrupt row) keep per-key errors.
func wholeFailure(c *codec, x *exchange) error {
	var first *domain.Error
	for i := range x.out {
		e := x.out[i].err
		if e == nil || !(e.Retryable || requestWide(e)) {
			return nil
		}
		if first == nil {
			first = e
		}
	}
	if first == nil {
		return nil
	}
	return &domain.Error{Kind: first.Kind, Resource: first.Resource, Retryable: first.Retryable, Cause: first,
		RetryAfterMillis: first.RetryAfterMillis,
		Message:          fmt.Sprintf("%s on table `%s` failed for all %d %ss: %s", apiWord(x.prefix), c.path, len(x.out), keyWord(x.prefix), first.Message)}
}

func requestWide(e *domain.Error) bool {
	switch e.Kind {
	case domain.KindUnauthorized, domain.KindUnauthenticated:
		return true
	case domain.KindNotFound:
		return e.Resource == domain.ResourceTable || e.Resource == domain.ResourceDatabase
	}
	return false
}

// tableError normalises a failure to resolve a table. Fluss 0.9.1 answers
// GetMetadata for a missing table with UNKNOWN_SERVER_ERROR wrapping a
// TableNotExistException; when the metadata layer reports that as a backend
// error, the wrapped code (wire.ServerError.EffectiveCode) is used instead.
func tableError(err error, path domain.TablePath) error {
	de := domain.AsError(err)
	var se *wire.ServerError
	if de == nil || de.Kind != domain.KindBackend || !errors.As(err, &se) {
		return err
	}
	switch se.EffectiveCode() {
	case wire.CodeTableNotExist:
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable, Cause: err,
			Message: fmt.Sprintf("table `%s` does not exist", path)}
	case wire.CodeDatabaseNotExist:
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceDatabase, Cause: err,
			Message: fmt.Sprintf("table `%s`: database does not exist", path)}
	}
	return err
}
