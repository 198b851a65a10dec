package writer

import (
	"errors"
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Entry codes the writer produces itself.
const (
	CodeTimeout           = "timeout"
	CodeResourceExhausted = "resource_exhausted"
	CodeUnsupported       = "unsupported"
	CodeInvalidArgument   = "invalid_argument"
	CodeCancelled         = "cancelled"
	CodeClosed            = "unavailable"
)

var errTooLarge = errors.New("writer: request larger than the whole buffer")

// codeNames overrides the derived snake_case name of a Fluss error code where
// the gateway's vocabulary (domain.Error codes) has a better word.
var codeNames = map[wire.ErrorCode]string{
	wire.CodeUnknownServerError:            "backend",
	wire.CodeNetworkException:              "unavailable",
	wire.CodeDatabaseNotExist:              "database_not_found",
	wire.CodeTableNotExist:                 "table_not_found",
	wire.CodeSchemaNotExist:                "schema_not_found",
	wire.CodePartitionNotExists:            "partition_not_found",
	wire.CodeRecordTooLargeException:       "record_too_large",
	wire.CodeCorruptRecordException:        "corrupt_record",
	wire.CodeInvalidTargetColumn:           "invalid_target_column",
	wire.CodeNonPrimaryKeyTableException:   "not_primary_key_table",
	wire.CodeUnknownTableOrBucketException: "unknown_table_or_bucket",
	wire.CodeRequestTimeOut:                "timeout",
	wire.CodeAuthorizationException:        "unauthorized",
	wire.CodeAuthenticateException:         "unauthenticated",
	wire.CodeOutOfOrderSequenceException:   "out_of_order_sequence",
	wire.CodeUnknownWriterIDException:      "unknown_writer_id",
	wire.CodeDeletionDisabledException:     "deletion_disabled",
	wire.CodeLeaderNotAvailableException:   "leader_not_available",
	wire.CodeStorageBackpressureException:  "storage_backpressure",
	wire.CodeUnsupportedVersion:            "unsupported",
}

// entryKinds maps the writer's finer entry codes (Fluss exception names,
// snake_case) to the official code they count as. A code that is official
// already needs no entry; an unknown one counts as `unavailable` when the
// entry is retryable and `backend` otherwise (domain.EntryResult.Official).
var entryKinds = map[string]domain.EntryKind{
	"record_too_large":        domain.EntryLimitExceeded,
	"corrupt_record":          domain.EntryInvalidArgument,
	"invalid_record":          domain.EntryInvalidArgument,
	"invalid_target_column":   domain.EntryInvalidArgument,
	"not_primary_key_table":   domain.EntryInvalidArgument,
	"deletion_disabled":       domain.EntryFailedPrecondition,
	"schema_not_found":        domain.EntryUnavailable,
	"unknown_table_or_bucket": domain.EntryUnavailable,
	"leader_not_available":    domain.EntryUnavailable,
	"not_leader_or_follower":  domain.EntryUnavailable,
	"not_enough_replicas":     domain.EntryUnavailable,
	"network":                 domain.EntryUnavailable,
}

// withKinds gives every failed verdict its official kind (entryKinds, then
// the generic rule of domain.EntryResult.Official): the one place where the
// Fluss adapter's reasons become the gateway's vocabulary.
func withKinds(results []domain.EntryResult) {
	for i := range results {
		r := &results[i]
		if r.OK() || r.Kind != "" {
			continue
		}
		if k, ok := entryKinds[r.Code]; ok {
			r.Kind = k
		} else {
			r.Kind = r.Official()
		}
	}
}

// entryCode returns the snake_case entry code of a Fluss error: the
// override above, `invalid_record` for an InvalidRecordException (which Fluss
// sends as UNKNOWN_SERVER_ERROR), or the lower-cased Fluss name without its
// `_EXCEPTION` suffix (NOT_ENOUGH_REPLICAS_EXCEPTION → not_enough_replicas).
func entryCode(code wire.ErrorCode, msg string) string {
	if code == wire.CodeUnknownServerError && strings.Contains(msg, "InvalidRecordException") {
		return "invalid_record"
	}
	if name, ok := codeNames[code]; ok {
		return name
	}
	info, ok := wire.Lookup(code)
	if !ok {
		return "backend"
	}
	return strings.ToLower(strings.TrimSuffix(info.Name, "_EXCEPTION"))
}

// retriableCode reports whether a per-bucket or request-level failure with
// code may succeed when the batch is sent again (the Java RetriableException
// set, see wire.ErrorCode.Retriable).
func retriableCode(code wire.ErrorCode) bool { return code.Retriable() }

// domainCode returns the entry code of a *domain.Error (encoding failures,
// metadata failures).
func domainCode(err error) (code string, retryable bool) {
	if de := domain.AsError(err); de != nil {
		return de.Code(), de.Retryable
	}
	return "internal", false
}

// notWritten is the verdict of an entry that failed before it was sent
// (encoding, partition or metadata failures): err's entry code and
// retryability (domainCode), its message, applied "no".
func notWritten(err error) domain.EntryResult {
	code, retryable := domainCode(err)
	return domain.EntryResult{Code: code, Message: err.Error(), Retryable: retryable, Applied: domain.AppliedNo}
}
