package metatest_test

import (
	"sync/atomic"
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestContract holds the writer's fake to the server contract that
// flussfake and the real cluster are held to as well.
func TestContract(t *testing.T) {
	t.Parallel()
	fake := metatest.New(2)
	var ids atomic.Int64
	metatest.Contract{
		Caller: fake,
		CreateTable: func(t *testing.T, name string, pk bool) domain.TablePath {
			path := domain.TablePath{Database: "contract", Table: name}
			desc := metatest.ContractDescriptor(pk)
			fake.AddTable(&metatest.Table{ID: 100 + ids.Add(1), Path: path, Desc: desc, Leaders: []int32{2}})
			return path
		},
	}.Run(t)
}
