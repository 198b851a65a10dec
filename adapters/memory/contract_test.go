package memory_test

import (
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/memory"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/tests/contract"
)

func TestCatalogContract(t *testing.T) {
	contract.RunCatalog(t, func(*testing.T) domain.Catalog { return memory.NewCatalog() })
}
