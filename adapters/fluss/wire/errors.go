package wire

import (
	"fmt"
	"strconv"
	"strings"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"google.golang.org/protobuf/proto"
)

// ErrorCode is a Fluss protocol error code, as carried by ErrorResponse and by
// the per-bucket error_code fields (apache/fluss: fluss-rpc/src/main/java/org/
// apache/fluss/rpc/protocol/Errors.java). Codes never change meaning; names may.
type ErrorCode int32

// Error codes of Fluss 0.9.1-incubating (-1..63), followed by the codes Fluss
// 1.0 added (64..73). A 0.9.1 server never sends the 1.0 codes; they are here
// so that a newer server's answers are still named and classified.
const (
	CodeUnknownServerError                    ErrorCode = -1
	CodeNone                                  ErrorCode = 0
	CodeNetworkException                      ErrorCode = 1
	CodeUnsupportedVersion                    ErrorCode = 2
	CodeCorruptMessage                        ErrorCode = 3
	CodeDatabaseNotExist                      ErrorCode = 4
	CodeDatabaseNotEmpty                      ErrorCode = 5
	CodeDatabaseAlreadyExist                  ErrorCode = 6
	CodeTableNotExist                         ErrorCode = 7
	CodeTableAlreadyExist                     ErrorCode = 8
	CodeSchemaNotExist                        ErrorCode = 9
	CodeLogStorageException                   ErrorCode = 10
	CodeKvStorageException                    ErrorCode = 11
	CodeNotLeaderOrFollower                   ErrorCode = 12
	CodeRecordTooLargeException               ErrorCode = 13
	CodeCorruptRecordException                ErrorCode = 14
	CodeInvalidTableException                 ErrorCode = 15
	CodeInvalidDatabaseException              ErrorCode = 16
	CodeInvalidReplicationFactor              ErrorCode = 17
	CodeInvalidRequiredAcks                   ErrorCode = 18
	CodeLogOffsetOutOfRangeException          ErrorCode = 19
	CodeNonPrimaryKeyTableException           ErrorCode = 20
	CodeUnknownTableOrBucketException         ErrorCode = 21
	CodeInvalidUpdateVersionException         ErrorCode = 22
	CodeInvalidCoordinatorException           ErrorCode = 23
	CodeFencedLeaderEpochException            ErrorCode = 24
	CodeRequestTimeOut                        ErrorCode = 25
	CodeStorageException                      ErrorCode = 26
	CodeOperationNotAttemptedException        ErrorCode = 27
	CodeNotEnoughReplicasAfterAppendException ErrorCode = 28
	CodeNotEnoughReplicasException            ErrorCode = 29
	CodeSecurityTokenException                ErrorCode = 30
	CodeOutOfOrderSequenceException           ErrorCode = 31
	CodeDuplicateSequenceException            ErrorCode = 32
	CodeUnknownWriterIDException              ErrorCode = 33
	CodeInvalidColumnProjection               ErrorCode = 34
	CodeInvalidTargetColumn                   ErrorCode = 35
	CodePartitionNotExists                    ErrorCode = 36
	CodeTableNotPartitionedException          ErrorCode = 37
	CodeInvalidTimestampException             ErrorCode = 38
	CodeInvalidConfigException                ErrorCode = 39
	CodeLakeStorageNotConfiguredException     ErrorCode = 40
	CodeKvSnapshotNotExist                    ErrorCode = 41
	CodePartitionAlreadyExists                ErrorCode = 42
	CodePartitionSpecInvalidException         ErrorCode = 43
	CodeLeaderNotAvailableException           ErrorCode = 44
	CodePartitionMaxNumException              ErrorCode = 45
	CodeAuthenticateException                 ErrorCode = 46
	CodeSecurityDisabledException             ErrorCode = 47
	CodeAuthorizationException                ErrorCode = 48
	CodeBucketMaxNumException                 ErrorCode = 49
	CodeFencedTieringEpochException           ErrorCode = 50
	CodeRetriableAuthenticateException        ErrorCode = 51
	CodeInvalidServerRackInfoException        ErrorCode = 52
	CodeLakeSnapshotNotExist                  ErrorCode = 53
	CodeLakeTableAlreadyExist                 ErrorCode = 54
	CodeIneligibleReplicaException            ErrorCode = 55
	CodeInvalidAlterTableException            ErrorCode = 56
	CodeDeletionDisabledException             ErrorCode = 57
	CodeServerNotExistException               ErrorCode = 58
	CodeServerTagAlreadyExistException        ErrorCode = 59
	CodeServerTagNotExistException            ErrorCode = 60
	CodeRebalanceFailureException             ErrorCode = 61
	CodeNoRebalanceInProgressException        ErrorCode = 62
	CodeInvalidProducerIDException            ErrorCode = 63

	// Fluss 1.0 only.
	CodeConfigException                     ErrorCode = 64
	CodeNotCoordinatorLeaderException       ErrorCode = 65
	CodeScannerExpired                      ErrorCode = 66
	CodeUnknownScannerID                    ErrorCode = 67
	CodeInvalidScanRequest                  ErrorCode = 68
	CodeTooManyScanners                     ErrorCode = 69
	CodeDiskWriteLocked                     ErrorCode = 70
	CodeInsufficientKvLeaderReplicaCapacity ErrorCode = 71
	CodeStorageBackpressureException        ErrorCode = 72
	CodeHistoricalPartitionThrottled        ErrorCode = 73
)

// ErrorInfo describes one error code.
type ErrorInfo struct {
	Code ErrorCode
	// Name is the Fluss enum name (Errors.java), spelling kept as in the
	// source, for example SEVER_TAG_ALREADY_EXIST_EXCEPTION.
	Name string
	// Description is a short English description written for this gateway,
	// used when the server leaves the message out.
	Description string
	// Retriable is true when the Java exception class extends
	// RetriableException: the same request may succeed later.
	Retriable bool
	// InvalidatesMetadata is true when the Java exception class extends
	// InvalidMetadataException: cached leader/bucket metadata is stale and
	// must be re-fetched before a retry.
	InvalidatesMetadata bool
	// Since is the first Fluss version that defines the code ("0.9" covers
	// everything a 0.9.1 server can send; "1.0" codes are newer).
	Since string
}

// errorTable is indexed by code+1 (code -1 is at index 0). Retriable and
// metadata flags follow the exception hierarchy in apache/fluss:
// fluss-common/src/main/java/org/apache/fluss/exception/ at v0.9.1-incubating
// (RetriableException and InvalidMetadataException subclasses) and, for the
// 1.0 codes, the same directory on main.
var errorTable = [...]ErrorInfo{
	{CodeUnknownServerError, "UNKNOWN_SERVER_ERROR", "unexpected server error", false, false, "0.9"},
	{CodeNone, "NONE", "no error", false, false, "0.9"},
	{CodeNetworkException, "NETWORK_EXCEPTION", "the connection to the server was lost before a response arrived", true, true, "0.9"},
	{CodeUnsupportedVersion, "UNSUPPORTED_VERSION", "the server does not support this API version", false, false, "0.9"},
	{CodeCorruptMessage, "CORRUPT_MESSAGE", "corrupt message (bad checksum, size or null primary key)", true, false, "0.9"},
	{CodeDatabaseNotExist, "DATABASE_NOT_EXIST", "database does not exist", false, false, "0.9"},
	{CodeDatabaseNotEmpty, "DATABASE_NOT_EMPTY", "database is not empty", false, false, "0.9"},
	{CodeDatabaseAlreadyExist, "DATABASE_ALREADY_EXIST", "database already exists", false, false, "0.9"},
	{CodeTableNotExist, "TABLE_NOT_EXIST", "table does not exist", false, false, "0.9"},
	{CodeTableAlreadyExist, "TABLE_ALREADY_EXIST", "table already exists", false, false, "0.9"},
	{CodeSchemaNotExist, "SCHEMA_NOT_EXIST", "schema does not exist", true, false, "0.9"},
	{CodeLogStorageException, "LOG_STORAGE_EXCEPTION", "server failed to store log data", true, false, "0.9"},
	{CodeKvStorageException, "KV_STORAGE_EXCEPTION", "server failed to store kv data", true, false, "0.9"},
	{CodeNotLeaderOrFollower, "NOT_LEADER_OR_FOLLOWER", "server is not the leader or a follower of the bucket", true, true, "0.9"},
	{CodeRecordTooLargeException, "RECORD_TOO_LARGE_EXCEPTION", "record is too large", false, false, "0.9"},
	{CodeCorruptRecordException, "CORRUPT_RECORD_EXCEPTION", "record is corrupt", true, false, "0.9"},
	{CodeInvalidTableException, "INVALID_TABLE_EXCEPTION", "invalid table definition or operation", false, false, "0.9"},
	{CodeInvalidDatabaseException, "INVALID_DATABASE_EXCEPTION", "invalid database definition or operation", false, false, "0.9"},
	{CodeInvalidReplicationFactor, "INVALID_REPLICATION_FACTOR", "replication factor exceeds the number of available tablet servers", false, false, "0.9"},
	{CodeInvalidRequiredAcks, "INVALID_REQUIRED_ACKS", "invalid acks value", false, false, "0.9"},
	{CodeLogOffsetOutOfRangeException, "LOG_OFFSET_OUT_OF_RANGE_EXCEPTION", "log offset out of range", false, false, "0.9"},
	{CodeNonPrimaryKeyTableException, "NON_PRIMARY_KEY_TABLE_EXCEPTION", "table has no primary key", false, false, "0.9"},
	{CodeUnknownTableOrBucketException, "UNKNOWN_TABLE_OR_BUCKET_EXCEPTION", "unknown table or bucket", true, true, "0.9"},
	{CodeInvalidUpdateVersionException, "INVALID_UPDATE_VERSION_EXCEPTION", "invalid update version", false, false, "0.9"},
	{CodeInvalidCoordinatorException, "INVALID_COORDINATOR_EXCEPTION", "invalid coordinator", false, false, "0.9"},
	{CodeFencedLeaderEpochException, "FENCED_LEADER_EPOCH_EXCEPTION", "fenced leader epoch", false, false, "0.9"},
	{CodeRequestTimeOut, "REQUEST_TIME_OUT", "request timed out", true, false, "0.9"},
	{CodeStorageException, "STORAGE_EXCEPTION", "server storage failure", true, false, "0.9"},
	{CodeOperationNotAttemptedException, "OPERATION_NOT_ATTEMPTED_EXCEPTION", "server did not attempt the operation", false, false, "0.9"},
	{CodeNotEnoughReplicasAfterAppendException, "NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION", "written, but to fewer in-sync replicas than required", true, false, "0.9"},
	{CodeNotEnoughReplicasException, "NOT_ENOUGH_REPLICAS_EXCEPTION", "rejected: fewer in-sync replicas than required", true, false, "0.9"},
	{CodeSecurityTokenException, "SECURITY_TOKEN_EXCEPTION", "could not obtain a file-system security token", false, false, "0.9"},
	{CodeOutOfOrderSequenceException, "OUT_OF_ORDER_SEQUENCE_EXCEPTION", "out-of-order batch sequence", false, false, "0.9"},
	{CodeDuplicateSequenceException, "DUPLICATE_SEQUENCE_EXCEPTION", "duplicate batch sequence", false, false, "0.9"},
	{CodeUnknownWriterIDException, "UNKNOWN_WRITER_ID_EXCEPTION", "unknown writer id", false, false, "0.9"},
	{CodeInvalidColumnProjection, "INVALID_COLUMN_PROJECTION", "invalid column projection", false, false, "0.9"},
	{CodeInvalidTargetColumn, "INVALID_TARGET_COLUMN", "invalid target columns", false, false, "0.9"},
	{CodePartitionNotExists, "PARTITION_NOT_EXISTS", "partition does not exist", false, false, "0.9"},
	{CodeTableNotPartitionedException, "TABLE_NOT_PARTITIONED_EXCEPTION", "table is not partitioned", false, false, "0.9"},
	{CodeInvalidTimestampException, "INVALID_TIMESTAMP_EXCEPTION", "invalid timestamp", false, false, "0.9"},
	{CodeInvalidConfigException, "INVALID_CONFIG_EXCEPTION", "invalid configuration", false, false, "0.9"},
	{CodeLakeStorageNotConfiguredException, "LAKE_STORAGE_NOT_CONFIGURED_EXCEPTION", "lake storage is not configured", false, false, "0.9"},
	{CodeKvSnapshotNotExist, "KV_SNAPSHOT_NOT_EXIST", "kv snapshot does not exist", false, false, "0.9"},
	{CodePartitionAlreadyExists, "PARTITION_ALREADY_EXISTS", "partition already exists", false, false, "0.9"},
	{CodePartitionSpecInvalidException, "PARTITION_SPEC_INVALID_EXCEPTION", "invalid partition spec", false, false, "0.9"},
	{CodeLeaderNotAvailableException, "LEADER_NOT_AVAILABLE_EXCEPTION", "no leader is available for the bucket", true, true, "0.9"},
	{CodePartitionMaxNumException, "PARTITION_MAX_NUM_EXCEPTION", "maximum number of partitions exceeded", false, false, "0.9"},
	{CodeAuthenticateException, "AUTHENTICATE_EXCEPTION", "authentication failed", false, false, "0.9"},
	{CodeSecurityDisabledException, "SECURITY_DISABLED_EXCEPTION", "security is disabled on the server", false, false, "0.9"},
	{CodeAuthorizationException, "AUTHORIZATION_EXCEPTION", "authorization failed", false, false, "0.9"},
	{CodeBucketMaxNumException, "BUCKET_MAX_NUM_EXCEPTION", "maximum number of buckets exceeded", false, false, "0.9"},
	{CodeFencedTieringEpochException, "FENCED_TIERING_EPOCH_EXCEPTION", "fenced tiering epoch", false, false, "0.9"},
	// 51 extends AuthenticationException, not RetriableException: the
	// connection re-runs Authenticate with backoff instead of the caller
	// retrying the request.
	{CodeRetriableAuthenticateException, "RETRIABLE_AUTHENTICATE_EXCEPTION", "authentication failed temporarily", false, false, "0.9"},
	{CodeInvalidServerRackInfoException, "INVALID_SERVER_RACK_INFO_EXCEPTION", "invalid server rack information", false, false, "0.9"},
	{CodeLakeSnapshotNotExist, "LAKE_SNAPSHOT_NOT_EXIST", "lake snapshot does not exist", false, false, "0.9"},
	{CodeLakeTableAlreadyExist, "LAKE_TABLE_ALREADY_EXIST", "lake table already exists", false, false, "0.9"},
	{CodeIneligibleReplicaException, "INELIGIBLE_REPLICA_EXCEPTION", "ineligible replica in the new ISR", false, false, "0.9"},
	{CodeInvalidAlterTableException, "INVALID_ALTER_TABLE_EXCEPTION", "invalid table alteration", false, false, "0.9"},
	{CodeDeletionDisabledException, "DELETION_DISABLED_EXCEPTION", "deletes are disabled on this table", false, false, "0.9"},
	{CodeServerNotExistException, "SERVER_NOT_EXIST_EXCEPTION", "server does not exist", false, false, "0.9"},
	{CodeServerTagAlreadyExistException, "SEVER_TAG_ALREADY_EXIST_EXCEPTION", "server tag already exists", false, false, "0.9"},
	{CodeServerTagNotExistException, "SEVER_TAG_NOT_EXIST_EXCEPTION", "server tag does not exist", false, false, "0.9"},
	{CodeRebalanceFailureException, "REBALANCE_FAILURE_EXCEPTION", "rebalance failed", false, false, "0.9"},
	{CodeNoRebalanceInProgressException, "NO_REBALANCE_IN_PROGRESS_EXCEPTION", "no rebalance in progress", false, false, "0.9"},
	{CodeInvalidProducerIDException, "INVALID_PRODUCER_ID_EXCEPTION", "invalid producer id", false, false, "0.9"},
	{CodeConfigException, "CONFIG_EXCEPTION", "configuration error", false, false, "1.0"},
	{CodeNotCoordinatorLeaderException, "NOT_COORDINATOR_LEADER_EXCEPTION", "server is not the coordinator leader", false, false, "1.0"},
	{CodeScannerExpired, "SCANNER_EXPIRED", "scanner expired", false, false, "1.0"},
	{CodeUnknownScannerID, "UNKNOWN_SCANNER_ID", "unknown scanner id", false, false, "1.0"},
	{CodeInvalidScanRequest, "INVALID_SCAN_REQUEST", "invalid scan request", false, false, "1.0"},
	{CodeTooManyScanners, "TOO_MANY_SCANNERS", "too many scanners", false, false, "1.0"},
	{CodeDiskWriteLocked, "DISK_WRITE_LOCKED", "writes are locked: data disk usage limit reached", true, false, "1.0"},
	{CodeInsufficientKvLeaderReplicaCapacity, "INSUFFICIENT_KV_LEADER_REPLICA_CAPACITY", "insufficient kv leader replica capacity", false, false, "1.0"},
	{CodeStorageBackpressureException, "STORAGE_BACKPRESSURE_EXCEPTION", "kv storage backpressure", true, false, "1.0"},
	{CodeHistoricalPartitionThrottled, "HISTORICAL_PARTITION_THROTTLED", "historical partition lookup throttled", true, false, "1.0"},
}

// Lookup returns the description of code; ok is false for codes no known Fluss
// version defines (the Java client treats those as UNKNOWN_SERVER_ERROR).
func Lookup(code ErrorCode) (ErrorInfo, bool) {
	i := int(code) + 1
	if i < 0 || i >= len(errorTable) {
		return ErrorInfo{}, false
	}
	return errorTable[i], true
}

// KnownErrorCodes returns every code in the table, ascending.
func KnownErrorCodes() []ErrorCode {
	out := make([]ErrorCode, len(errorTable))
	for i, e := range errorTable {
		out[i] = e.Code
	}
	return out
}

// String returns the Fluss name of the code, or "ERROR_<n>" for an unknown one.
func (c ErrorCode) String() string {
	if e, ok := Lookup(c); ok {
		return e.Name
	}
	return "ERROR_" + strconv.Itoa(int(c))
}

// Retriable reports whether the Java client would retry after this code.
// Unknown codes are not retriable.
func (c ErrorCode) Retriable() bool {
	e, _ := Lookup(c)
	return e.Retriable
}

// InvalidatesMetadata reports whether cached leader/bucket metadata must be
// refreshed after this code (NETWORK_EXCEPTION, NOT_LEADER_OR_FOLLOWER,
// UNKNOWN_TABLE_OR_BUCKET_EXCEPTION, LEADER_NOT_AVAILABLE_EXCEPTION).
func (c ErrorCode) InvalidatesMetadata() bool {
	e, _ := Lookup(c)
	return e.InvalidatesMetadata
}

// Description returns the short description of the code ("" when unknown).
func (c ErrorCode) Description() string {
	e, _ := Lookup(c)
	return e.Description
}

// ServerError is an error the server reported with a Fluss error code: the
// body of an ERROR_RESPONSE or SERVER_FAILURE frame, or a per-bucket
// error_code/error_message pair.
type ServerError struct {
	Code ErrorCode
	// Message is the server's message, or the code's description when the
	// server left it out. For UNKNOWN_SERVER_ERROR it may hold a Java stack
	// trace (at most 2048 characters).
	Message string
}

// NewServerError builds a ServerError, filling in the code's description when
// msg is empty.
func NewServerError(code ErrorCode, msg string) *ServerError {
	if msg == "" {
		msg = code.Description()
	}
	return &ServerError{Code: code, Message: msg}
}

// Error renders "NAME (code n): message".
func (e *ServerError) Error() string {
	return fmt.Sprintf("%s (code %d): %s", e.Code, int32(e.Code), e.Message)
}

// Is matches another *ServerError with the same code, so callers can write
// errors.Is(err, &wire.ServerError{Code: wire.CodeTableNotExist}).
func (e *ServerError) Is(target error) bool {
	t, ok := target.(*ServerError)
	return ok && t.Code == e.Code
}

// CausedBy reports whether the server message names the Java exception class
// simpleName (for example "TableNotExistException") as the thrown exception or
// a "Caused by:" cause. Fluss sends UNKNOWN_SERVER_ERROR with a stack trace
// when it wraps a mapped exception in an unmapped one; for instance a
// GetMetadata request for a missing table answers -1 with a FlussRuntimeException
// caused by TableNotExistException (apache/fluss MetadataManager#getTables,
// v0.9.1-incubating and main).
func (e *ServerError) CausedBy(simpleName string) bool {
	for rest := e.Message; rest != ""; {
		i := strings.Index(rest, simpleName)
		if i < 0 {
			return false
		}
		before, after := rest[:i], rest[i+len(simpleName):]
		if (i == 0 || before[len(before)-1] == '.' || before[len(before)-1] == ' ') &&
			(after == "" || after[0] == ':' || after[0] == '\n' || after[0] == '\r') {
			return true
		}
		rest = after
	}
	return false
}

// wrappedCauses are the Java exception classes whose code EffectiveCode
// recovers from an UNKNOWN_SERVER_ERROR stack trace.
var wrappedCauses = []struct {
	class string
	code  ErrorCode
}{
	{"DatabaseNotExistException", CodeDatabaseNotExist},
	{"DatabaseAlreadyExistException", CodeDatabaseAlreadyExist},
	{"TableNotExistException", CodeTableNotExist},
	{"TableAlreadyExistException", CodeTableAlreadyExist},
	{"SchemaNotExistException", CodeSchemaNotExist},
	{"PartitionNotExistException", CodePartitionNotExists},
	{"PartitionAlreadyExistsException", CodePartitionAlreadyExists},
}

// EffectiveCode returns Code, except that for UNKNOWN_SERVER_ERROR whose
// stack trace shows a wrapped not-found/already-exists exception (see
// CausedBy) it returns that exception's code. The wire code stays in Code.
func (e *ServerError) EffectiveCode() ErrorCode {
	if e.Code != CodeUnknownServerError {
		return e.Code
	}
	for _, w := range wrappedCauses {
		if e.CausedBy(w.class) {
			return w.code
		}
	}
	return e.Code
}

// Summary returns the message without a Java stack trace: its first line,
// plus the innermost "Caused by:" line when there is one.
func (e *ServerError) Summary() string {
	lines := strings.Split(e.Message, "\n")
	first := strings.TrimSpace(lines[0])
	cause := ""
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "Caused by: ") {
			cause = strings.TrimPrefix(l, "Caused by: ")
		}
	}
	if cause != "" && cause != first {
		return first + " (caused by " + cause + ")"
	}
	return first
}

// DecodeErrorResponse parses an ErrorResponse body. A body without error_code
// decodes as an error (the field is required).
func DecodeErrorResponse(body []byte) (*ServerError, error) {
	var m flusspb.ErrorResponse
	if err := proto.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("wire: decode ErrorResponse: %w", err)
	}
	return NewServerError(ErrorCode(m.GetErrorCode()), m.GetErrorMessage()), nil
}

// AppendErrorResponse appends an encoded ErrorResponse for e to dst. The
// message is left out when it is empty, as the server does for default texts.
func AppendErrorResponse(dst []byte, code ErrorCode, msg string) []byte {
	m := &flusspb.ErrorResponse{ErrorCode: proto.Int32(int32(code))}
	if msg != "" {
		m.ErrorMessage = proto.String(msg)
	}
	out, err := proto.MarshalOptions{}.MarshalAppend(dst, m)
	if err != nil {
		// Unreachable: the only required field is always set.
		panic(err)
	}
	return out
}
