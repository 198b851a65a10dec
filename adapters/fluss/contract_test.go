package fluss_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/tests/contract"
)

// fakeSession opens the Fluss adapter in service mode over a fresh
// protocol fake with two tablet servers.
func fakeSession(t *testing.T) domain.Session {
	t.Helper()
	fc, err := flussfake.NewCluster(flussfake.ClusterConfig{TabletServers: 2, DataPlane: true})
	require.NoError(t, err)
	t.Cleanup(fc.Close)
	c, err := fluss.Open(context.Background(), fluss.Config{
		ID: "fake", BootstrapServers: []string{fc.BootstrapAddr()},
		ConnectTimeout: 2 * time.Second, RequestTimeout: 5 * time.Second,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	})
	s, err := c.Session(context.Background(), domain.Principal{Name: "test"})
	require.NoError(t, err)
	return s
}

func TestCatalogContract(t *testing.T) {
	contract.RunCatalog(t, func(t *testing.T) domain.Catalog { return fakeSession(t).Catalog() })
}

func fakePorts(t *testing.T) contract.Ports {
	s := fakeSession(t)
	return contract.Ports{Catalog: s.Catalog(), Writer: s.Writer(), Lookup: s.Lookup()}
}

func TestRowWriterContract(t *testing.T) { contract.RunRowWriter(t, fakePorts) }

func TestLookupContract(t *testing.T) { contract.RunLookup(t, fakePorts) }
