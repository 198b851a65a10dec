package http

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestOfficialEntryCode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code, msg string
		retryable bool
		want      string
		wantMsg   string
	}{
		{"timeout", "late", true, "timeout", "late"},
		{"storage_backpressure", "slow down", true, "storage_backpressure", "slow down"},
		{"table_not_found", "gone", false, "table_not_found", "gone"},
		{"not_enough_replicas", "2 of 3", true, "unavailable", "not_enough_replicas: 2 of 3"},
		{"invalid_record", "bad", false, "invalid_argument", "invalid_record: bad"},
		{"record_too_large", "big", false, "limit_exceeded", "record_too_large: big"},
		{"deletion_disabled", "no", false, "failed_precondition", "deletion_disabled: no"},
		{"out_of_order_sequence", "seq", true, "unavailable", "out_of_order_sequence: seq"},
		{"some_future_error", "?", false, "backend", "some_future_error: ?"},
		{"some_future_error", "", false, "backend", "some_future_error"},
	}
	for _, tc := range cases {
		code, msg := officialEntryCode(tc.code, tc.msg, tc.retryable)
		assert.Equal(t, tc.want, code, tc.code)
		assert.Equal(t, tc.wantMsg, msg, tc.code)
	}
	for fine, official := range entryCodes {
		assert.True(t, domain.IsErrorCode(official), "%s maps to the official %s", fine, official)
		assert.False(t, domain.IsErrorCode(fine), "%s is not official already", fine)
	}
}
