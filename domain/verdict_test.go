package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEntryKindsAreOfficial(t *testing.T) {
	t.Parallel()
	for _, k := range []EntryKind{EntryUnavailable, EntryBackend, EntryInvalidArgument, EntryLimitExceeded,
		EntryFailedPrecondition, EntryTimeout, EntryResourceExhausted} {
		assert.True(t, k.Valid(), string(k))
	}
	assert.False(t, EntryKind("not_enough_replicas").Valid(), "a Fluss reason is not a kind")
	assert.Equal(t, EntryUnavailable, EntryResult{Code: "not_enough_replicas", Retryable: true}.Official())
	assert.Equal(t, EntryBackend, EntryResult{Code: "some_future_error"}.Official())
	assert.Equal(t, EntryKind(""), EntryResult{}.Official(), "a success has none")
}
