//go:build integration

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss"
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

// clusterPorts opens the whole Fluss adapter (service identity mode) on the
// real cluster, once per test.
func clusterPorts(t *testing.T) contract.NewPorts {
	addr := bootstrap(t, "FLUSS_BOOTSTRAP")
	c, err := fluss.Open(context.Background(), fluss.Config{
		ID: "it", BootstrapServers: []string{addr}, RequestTimeout: 20 * time.Second,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	})
	s, err := c.Session(context.Background(), domain.Principal{Name: "it"})
	require.NoError(t, err)
	return func(*testing.T) contract.Ports {
		return contract.Ports{Catalog: s.Catalog(), Writer: s.Writer(), Lookup: s.Lookup()}
	}
}

// TestRowWriterContract runs the domain.RowWriter contract against the Fluss
// adapter on the real cluster.
func TestRowWriterContract(t *testing.T) { contract.RunRowWriter(t, clusterPorts(t)) }

// TestLookupContract runs the domain.Lookup contract against the Fluss
// adapter on the real cluster.
func TestLookupContract(t *testing.T) { contract.RunLookup(t, clusterPorts(t)) }
