package application

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestMergeRejected(t *testing.T) {
	t.Parallel()
	ok := domain.EntryResult{}
	ids, res := mergeRejected([]string{"b", "d"}, []domain.EntryResult{ok, ok},
		[]RejectedEntry{{Index: 0, ID: "a", Message: "entry `a`: x"}, {Index: 2, ID: "c", Message: "entry `c`: y"}, {Index: 4, ID: "e", Message: "z"}})
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, ids)
	assert.Equal(t, "invalid_argument", res[0].Code)
	assert.Equal(t, domain.AppliedNo, res[0].Applied)
	assert.True(t, res[1].OK())
	assert.Equal(t, "entry `c`: y", res[2].Message)
	assert.True(t, res[3].OK())
	assert.Equal(t, "invalid_argument", res[4].Code)

	ids, res = mergeRejected([]string{"x"}, []domain.EntryResult{ok}, nil)
	assert.Equal(t, []string{"x"}, ids)
	assert.Len(t, res, 1)
}
