package writer

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The Fluss adapter maps its finer entry codes to the official kinds once
// (withKinds); the HTTP adapter only renders them (TestRenderEntryVerdict
// there, with the same table).
func TestEntryKinds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code      string
		retryable bool
		want      domain.EntryKind
	}{
		{"timeout", true, "timeout"},
		{"storage_backpressure", true, "storage_backpressure"},
		{"table_not_found", false, "table_not_found"},
		{"not_enough_replicas", true, "unavailable"},
		{"invalid_record", false, "invalid_argument"},
		{"record_too_large", false, "limit_exceeded"},
		{"deletion_disabled", false, "failed_precondition"},
		{"out_of_order_sequence", true, "unavailable"},
		{"some_future_error", false, "backend"},
	}
	results := make([]domain.EntryResult, 0, len(cases)+1)
	for _, tc := range cases {
		results = append(results, domain.EntryResult{Code: tc.code, Message: "m", Retryable: tc.retryable})
	}
	results = append(results, domain.EntryResult{}) // a success keeps no kind
	withKinds(results)
	for i, tc := range cases {
		assert.Equal(t, tc.want, results[i].Kind, tc.code)
		assert.Equal(t, tc.code, results[i].Code, "the finer reason stays")
	}
	assert.Empty(t, results[len(cases)].Kind)
	for fine, official := range entryKinds {
		assert.True(t, domain.IsErrorCode(string(official)), "%s maps to the official %s", fine, official)
		assert.False(t, domain.IsErrorCode(fine), "%s is not official already", fine)
	}
}
