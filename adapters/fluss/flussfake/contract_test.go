package flussfake_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/serde"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestContract holds the protocol-level fake to the server contract that
// the writer's fake (metatest) and the real cluster are held to as well.
func TestContract(t *testing.T) {
	t.Parallel()
	fc, err := flussfake.NewCluster(flussfake.ClusterConfig{TabletServers: 2, DataPlane: true})
	require.NoError(t, err)
	defer fc.Close()
	c, err := rpc.NewClient(rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()}, RequestTimeout: 5 * time.Second})
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	require.NoError(t, c.CallCoordinator(ctx, wire.KeyCreateDatabase, &flusspb.CreateDatabaseRequest{
		DatabaseName: proto.String("contract"), IgnoreIfExists: proto.Bool(false)}, &flusspb.CreateDatabaseResponse{}))
	metatest.Contract{
		Caller: meta.RPCCaller{Client: c},
		CreateTable: func(t *testing.T, name string, pk bool) domain.TablePath {
			path := domain.TablePath{Database: "contract", Table: name}
			desc := metatest.ContractDescriptor(pk)
			js, err := serde.MarshalTableDescriptorJSON(desc)
			require.NoError(t, err)
			require.NoError(t, c.CallCoordinator(ctx, wire.KeyCreateTable, &flusspb.CreateTableRequest{
				TablePath: &flusspb.PbTablePath{DatabaseName: proto.String(path.Database), TableName: proto.String(path.Table)},
				TableJson: js, IgnoreIfExists: proto.Bool(false)}, &flusspb.CreateTableResponse{}))
			return path
		},
	}.Run(t)
}
