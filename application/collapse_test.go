package application

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestCollapseKeys(t *testing.T) {
	k := func(region string, id int64) []domain.Datum {
		return []domain.Datum{{Bytes: []byte(region)}, {I64: id}}
	}
	tests := []struct {
		name      string
		keys      [][]domain.Datum
		wantUniq  int
		wantIndex []int
	}{
		{name: "one key", keys: [][]domain.Datum{k("eu", 1)}, wantUniq: 1},
		{name: "distinct", keys: [][]domain.Datum{k("eu", 1), k("eu", 2), k("us", 1)}, wantUniq: 3},
		{name: "copies", keys: [][]domain.Datum{k("eu", 1), k("eu", 2), k("eu", 1), k("eu", 1)}, wantUniq: 2, wantIndex: []int{0, 1, 0, 0}},
		{name: "null differs from empty", keys: [][]domain.Datum{{{Null: true}}, {{Bytes: []byte{}}}}, wantUniq: 2},
		{name: "bytes boundaries are kept", keys: [][]domain.Datum{
			{{Bytes: []byte("ab")}, {Bytes: []byte("c")}}, {{Bytes: []byte("a")}, {Bytes: []byte("bc")}}}, wantUniq: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uniq, index := collapseKeys(tt.keys)
			assert.Len(t, uniq, tt.wantUniq)
			assert.Equal(t, tt.wantIndex, index)
			for i, j := range index {
				assert.Equal(t, tt.keys[i], uniq[j])
			}
		})
	}
}
