//go:build integration

package integration

import (
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/admin"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/tests/contract"
)

// TestCatalogContract runs the domain.Catalog contract against the Fluss
// catalog adapter on the real cluster (the suites' reference).
func TestCatalogContract(t *testing.T) {
	c := flussClient(t, bootstrap(t, "FLUSS_BOOTSTRAP"), nil)
	cat := admin.New(c)
	contract.RunCatalog(t, func(*testing.T) domain.Catalog { return cat })
}
