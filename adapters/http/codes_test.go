package http

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The HTTP adapter renders the verdict it gets: the official kind the
// backend adapter set (or the generic rule without one), the finer reason
// kept in front of the message. The Fluss mapping itself is tested in
// adapters/fluss/writer (TestEntryKinds) with the same table.
func TestRenderEntryVerdict(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code, msg string
		kind      domain.EntryKind // as the Fluss adapter sets it
		retryable bool
		want      string
		wantMsg   string
	}{
		{"timeout", "late", "", true, "timeout", "late"},
		{"storage_backpressure", "slow down", "", true, "storage_backpressure", "slow down"},
		{"table_not_found", "gone", "", false, "table_not_found", "gone"},
		{"not_enough_replicas", "2 of 3", "unavailable", true, "unavailable", "not_enough_replicas: 2 of 3"},
		{"invalid_record", "bad", "invalid_argument", false, "invalid_argument", "invalid_record: bad"},
		{"record_too_large", "big", "limit_exceeded", false, "limit_exceeded", "record_too_large: big"},
		{"deletion_disabled", "no", "failed_precondition", false, "failed_precondition", "deletion_disabled: no"},
		{"out_of_order_sequence", "seq", "", true, "unavailable", "out_of_order_sequence: seq"},
		{"some_future_error", "?", "", false, "backend", "some_future_error: ?"},
		{"some_future_error", "", "", false, "backend", "some_future_error"},
	}
	for _, tc := range cases {
		code, msg := renderEntryVerdict(domain.EntryResult{Code: tc.code, Kind: tc.kind, Message: tc.msg, Retryable: tc.retryable})
		assert.Equal(t, tc.want, code, tc.code)
		assert.Equal(t, tc.wantMsg, msg, tc.code)
		assert.True(t, domain.IsErrorCode(code), "%s renders as the official %s", tc.code, code)
	}
}
