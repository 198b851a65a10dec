package meta

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Fluss 0.9.1 answers GetMetadata for a missing table with
// UNKNOWN_SERVER_ERROR (-1) whose stack trace names TableNotExistException
// (MetadataManager#getTables wraps it); the cache must still report
// table_not_found, not `backend`.
func TestWrappedServerErrorsKeepTheirCode(t *testing.T) {
	t.Parallel()
	wrapped := &wire.ServerError{
		Code: wire.CodeUnknownServerError,
		Message: "org.apache.fluss.exception.FlussRuntimeException: failed\n" +
			"Caused by: org.apache.fluss.exception.TableNotExistException: Table 'db.t' does not exist.",
	}
	err := fmt.Errorf("GetMetadata: %w", wrapped)
	assert.Equal(t, wire.CodeTableNotExist, ErrorCode(err))
	de := domain.AsError(DomainError(err, "table `db.t`"))
	if assert.NotNil(t, de) {
		assert.Equal(t, "table_not_found", de.Code())
	}

	plain := &wire.ServerError{Code: wire.CodeUnknownServerError, Message: "java.lang.NullPointerException"}
	assert.Equal(t, wire.CodeUnknownServerError, ErrorCode(plain))
}

// A metadata read answered with a bare UNKNOWN_SERVER_ERROR (the table is
// being created or dropped at that moment by another client) is retryable
// `unavailable` with a Retry-After, and its answer holds no Java text.
func TestUnknownServerErrorOnMetadataIsUnavailable(t *testing.T) {
	t.Parallel()
	plain := &wire.ServerError{Code: wire.CodeUnknownServerError,
		Message: "org.apache.fluss.exception.FlussRuntimeException: Failed to get table 'd.t'.\nCaused by: java.io.IOException: No content to map due to end-of-input."}
	de := domain.AsError(DomainError(fmt.Errorf("GetMetadata: %w", plain), "table `d.t`"))
	if assert.NotNil(t, de) {
		assert.Equal(t, "unavailable", de.Code())
		assert.True(t, de.Retryable)
		assert.Positive(t, de.RetryAfterMillis)
		assert.NotContains(t, de.Message, "Exception")
		assert.Contains(t, de.Message, "table `d.t`")
	}
}
