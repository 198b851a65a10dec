package rpc_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
)

// TestLanes: CallTabletServerLane opens one connection per lane to the
// server (lane 0 is the connection CallTabletServer uses), reuses it, and
// runs the WithWritten function once per call — not for the metadata
// look-up or the dial before the first request of a lane — after the frame
// was written, and also when the call never wrote anything.
func TestLanes(t *testing.T) {
	t.Parallel()
	fc := newCluster(t, flussfake.ClusterConfig{TabletServers: 1})
	c := newClient(t, rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()}})
	ts := fc.TabletServers[0]
	id := ts.NodeID()
	exists := func(ctx context.Context, lane int) error {
		req := &flusspb.DatabaseExistsRequest{DatabaseName: proto.String("db")}
		return c.CallTabletServerLane(ctx, id, lane, wire.KeyDatabaseExists, req, &flusspb.DatabaseExistsResponse{})
	}
	for _, lane := range []int{0, 1, 2, 1, 0, 3} {
		var written atomic.Int32
		require.NoError(t, exists(rpc.WithWritten(context.Background(), func() { written.Add(1) }), lane))
		assert.Equal(t, int32(1), written.Load(), "lane %d", lane)
	}
	require.NoError(t, c.CallTabletServer(context.Background(), id, wire.KeyDatabaseExists,
		&flusspb.DatabaseExistsRequest{DatabaseName: proto.String("db")}, &flusspb.DatabaseExistsResponse{}))
	assert.Equal(t, 4, ts.Connections(), "lanes 0..3, one connection each; CallTabletServer uses lane 0's")

	// A call that ends before writing still runs it, once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var written atomic.Int32
	err := exists(rpc.WithWritten(ctx, func() { written.Add(1) }), 2)
	require.Error(t, err)
	assert.True(t, rpcErr(t, err).NotSent())
	assert.Equal(t, int32(1), written.Load())
}
