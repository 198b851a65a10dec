//go:build integration

package integration

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/admin"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/tests/contract"
)

// TestFakesContractOnRealCluster runs the suite that holds the writer's fake
// (metatest) and the protocol fake (flussfake) to the server's behaviour
// against the real cluster, so that the expectations the fakes are held to
// are the server's own: metadata, writer ids, batch sequences and resends,
// bucket checks (the not-leader check needs two tablet servers).
func TestFakesContractOnRealCluster(t *testing.T) {
	c := flussClient(t, bootstrap(t, "FLUSS_BOOTSTRAP"), nil)
	ctx := contract.Ctx(t)
	cat := admin.New(c)
	db := contract.UniqueName("contract")
	require.NoError(t, cat.CreateDatabase(ctx, db, domain.DatabaseDescriptor{}, false))
	dropDatabaseLater(t, cat, db)
	metatest.Contract{
		Caller: meta.RPCCaller{Client: c},
		CreateTable: func(t *testing.T, name string, pk bool) domain.TablePath {
			path := domain.TablePath{Database: db, Table: name}
			desc := metatest.ContractDescriptor(pk)
			require.NoError(t, cat.CreateTable(ctx, path, desc, false))
			require.NoError(t, awaitLeaders(t, path, leaderWait), "bucket leaders of %s", path)
			return path
		},
	}.Run(t)
}
