package wire

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorTableIsDenseAndOrdered(t *testing.T) {
	t.Parallel()
	codes := KnownErrorCodes()
	require.Len(t, codes, 75, "-1..73")
	for i, c := range codes {
		assert.Equal(t, ErrorCode(i-1), c, "table index %d", i)
		info, ok := Lookup(c)
		require.True(t, ok)
		assert.NotEmpty(t, info.Name)
		assert.NotEmpty(t, info.Description)
		if c <= CodeInvalidProducerIDException {
			assert.Equal(t, "0.9", info.Since, "%s", c)
		} else {
			assert.Equal(t, "1.0", info.Since, "%s", c)
		}
	}
}

func TestErrorCodeClassification(t *testing.T) {
	t.Parallel()
	// Retriable = Java exception extends RetriableException; refresh =
	// extends InvalidMetadataException (apache/fluss fluss-common/.../exception/
	// at v0.9.1-incubating; docs/fluss-rpc.md#error-codes).
	retriable := map[ErrorCode]bool{
		1: true, 3: true, 9: true, 10: true, 11: true, 12: true, 14: true, 21: true,
		25: true, 26: true, 28: true, 29: true, 44: true, 70: true, 72: true, 73: true,
	}
	refresh := map[ErrorCode]bool{1: true, 12: true, 21: true, 44: true}
	for _, c := range KnownErrorCodes() {
		assert.Equal(t, retriable[c], c.Retriable(), "Retriable(%s)", c)
		assert.Equal(t, refresh[c], c.InvalidatesMetadata(), "InvalidatesMetadata(%s)", c)
	}
}

func TestErrorCodeNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code ErrorCode
		name string
	}{
		{-1, "UNKNOWN_SERVER_ERROR"},
		{0, "NONE"},
		{4, "DATABASE_NOT_EXIST"},
		{5, "DATABASE_NOT_EMPTY"},
		{6, "DATABASE_ALREADY_EXIST"},
		{46, "AUTHENTICATE_EXCEPTION"},
		{59, "SEVER_TAG_ALREADY_EXIST_EXCEPTION"},
		{63, "INVALID_PRODUCER_ID_EXCEPTION"},
		{72, "STORAGE_BACKPRESSURE_EXCEPTION"},
		{74, "ERROR_74"},
		{-2, "ERROR_-2"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.name, tc.code.String())
	}
	_, ok := Lookup(74)
	assert.False(t, ok)
	assert.False(t, ErrorCode(500).Retriable())
}

func TestServerError(t *testing.T) {
	t.Parallel()
	e := NewServerError(CodeDatabaseNotExist, "")
	assert.Equal(t, "DATABASE_NOT_EXIST (code 4): database does not exist", e.Error())
	wrapped := fmt.Errorf("op: %w", e)
	assert.True(t, errors.Is(wrapped, &ServerError{Code: CodeDatabaseNotExist}))
	assert.False(t, errors.Is(wrapped, &ServerError{Code: CodeTableNotExist}))

	_, err := DecodeErrorResponse([]byte{0x12, 0x01, 'x'}) // message only, code missing
	require.Error(t, err)
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "PUT_KV", KeyPutKv.String())
	assert.Equal(t, "API_2000", APIKey(2000).String())

	assert.Equal(t, "SCAN_KV", KeyScanKv.String())

	r, ok := ClientVersions(KeyPutKv)
	require.True(t, ok)
	assert.Equal(t, VersionRange{0, 2}, r, "PUT_KV v2: error 72 and pressure understood")
	v, ok := Negotiate(r, VersionRange{0, 1})
	assert.True(t, ok)
	assert.Equal(t, int16(1), v, "0.9.1 server")
	v, ok = Negotiate(r, VersionRange{0, 2})
	assert.True(t, ok)
	assert.Equal(t, int16(2), v, "1.0 server")
	_, ok = ClientVersions(KeyUpdateMetadata)
	assert.False(t, ok, "private keys are never sent")

	keys := ClientAPIs()
	require.NotEmpty(t, keys)
	assert.Equal(t, KeyAPIVersions, keys[0])
	for i := 1; i < len(keys); i++ {
		assert.Less(t, keys[i-1], keys[i])
	}

	s, ok := Server091Versions(KeyLookup)
	require.True(t, ok)
	assert.Equal(t, VersionRange{0, 1}, s)
	s, ok = Server091Versions(KeyGetTableStats)
	require.True(t, ok)
	assert.Equal(t, VersionRange{0, 0}, s)
	_, ok = Server091Versions(1060) // ALTER_DATABASE is 1.0 only
	assert.False(t, ok)
}

func TestNegotiate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		client, server VersionRange
		want           int16
		ok             bool
	}{
		{"same", VersionRange{0, 0}, VersionRange{0, 0}, 0, true},
		{"server newer", VersionRange{0, 1}, VersionRange{0, 2}, 1, true},
		{"server older", VersionRange{0, 2}, VersionRange{0, 1}, 1, true},
		{"no overlap above", VersionRange{0, 1}, VersionRange{2, 3}, 0, false},
		{"no overlap below", VersionRange{2, 3}, VersionRange{0, 1}, 0, false},
		{"touching", VersionRange{1, 3}, VersionRange{0, 1}, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, ok := Negotiate(tc.client, tc.server)
			assert.Equal(t, tc.ok, ok)
			if ok {
				assert.Equal(t, tc.want, v)
			}
		})
	}
}

func TestServerErrorStackTraceHelpers(t *testing.T) {
	t.Parallel()
	// Shape of the UNKNOWN_SERVER_ERROR a Fluss 0.9.1 tablet server returned
	// for GetMetadata of a missing table (observed against the real cluster,
	// tests/integration/fluss_catalog_test.go).
	trace := "org.apache.fluss.exception.FlussRuntimeException: Failed to get tables '[db.t]'.\n" +
		"\tat org.apache.fluss.server.coordinator.MetadataManager.getTables(MetadataManager.java:624)\n" +
		"\tat java.base/java.lang.Thread.run(Thread.java:840)\n" +
		"Caused by: org.apache.fluss.exception.TableNotExistException: Table 'db.t' does not exist.\n"
	tests := []struct {
		name      string
		err       *ServerError
		causedBy  string
		want      bool
		effective ErrorCode
		summary   string
	}{
		{"wrapped", &ServerError{Code: CodeUnknownServerError, Message: trace}, "TableNotExistException", true, CodeTableNotExist,
			"org.apache.fluss.exception.FlussRuntimeException: Failed to get tables '[db.t]'. (caused by org.apache.fluss.exception.TableNotExistException: Table 'db.t' does not exist.)"},
		{"other class", &ServerError{Code: CodeUnknownServerError, Message: trace}, "NotExistException", false, CodeTableNotExist, ""},
		{"plain message", &ServerError{Code: CodeUnknownServerError, Message: "boom"}, "TableNotExistException", false, CodeUnknownServerError, "boom"},
		{"mentioned in text only", &ServerError{Code: CodeUnknownServerError, Message: "no TableNotExistException here"}, "TableNotExistException", false, CodeUnknownServerError, ""},
		{"mapped code kept", &ServerError{Code: CodeDatabaseNotExist, Message: "x"}, "DatabaseNotExistException", false, CodeDatabaseNotExist, "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, tc.err.CausedBy(tc.causedBy))
			assert.Equal(t, tc.effective, tc.err.EffectiveCode())
			if tc.summary != "" {
				assert.Equal(t, tc.summary, tc.err.Summary())
			}
		})
	}
}
