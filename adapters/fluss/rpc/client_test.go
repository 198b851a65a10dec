package rpc_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func newCluster(t *testing.T, cfg flussfake.ClusterConfig) *flussfake.Cluster {
	t.Helper()
	c, err := flussfake.NewCluster(cfg)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func newClient(t *testing.T, cfg rpc.Config) *rpc.Client {
	t.Helper()
	c, err := rpc.NewClient(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestNewClientValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  rpc.Config
		ok   bool
	}{
		{"empty", rpc.Config{}, false},
		{"blank entries", rpc.Config{BootstrapServers: []string{" , "}}, false},
		{"no port", rpc.Config{BootstrapServers: []string{"localhost"}}, false},
		{"comma list", rpc.Config{BootstrapServers: []string{"a:1, b:2"}}, true},
		{"bad sasl", rpc.Config{BootstrapServers: []string{"a:1"}, SASL: &rpc.SASLConfig{Username: "u"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := rpc.NewClient(tc.cfg)
			if tc.ok {
				require.NoError(t, err)
				_ = c.Close()
			} else {
				require.Error(t, err)
			}
		})
	}
}

func TestClusterDiscovery(t *testing.T) {
	t.Parallel()
	fc := newCluster(t, flussfake.ClusterConfig{TabletServers: 3})
	c := newClient(t, rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()}})

	cl, err := c.Cluster(context.Background())
	require.NoError(t, err)
	require.NotNil(t, cl.Coordinator)
	assert.Equal(t, fc.Coordinator.Addr(), cl.Coordinator.Addr())
	assert.Equal(t, rpc.ServerCoordinator, cl.Coordinator.Type)
	require.Len(t, cl.TabletServers, 3)
	for i, n := range cl.TabletServers {
		assert.Equal(t, int32(i), n.ID)
		assert.Equal(t, fc.TabletServers[i].Addr(), n.Addr())
		assert.Equal(t, rpc.ServerTablet, n.Type)
	}
	n, ok := cl.TabletServer(2)
	assert.True(t, ok)
	assert.Equal(t, "tablet server 2 ("+fc.TabletServers[2].Addr()+")", n.String())

	// Cached: no second metadata request.
	before := fc.Coordinator.Requests(wire.KeyGetMetadata)
	_, err = c.Cluster(context.Background())
	require.NoError(t, err)
	assert.Equal(t, before, fc.Coordinator.Requests(wire.KeyGetMetadata))
}

func TestBootstrapSkipsDeadAddress(t *testing.T) {
	t.Parallel()
	fc := newCluster(t, flussfake.ClusterConfig{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := ln.Addr().String()
	require.NoError(t, ln.Close())

	c := newClient(t, rpc.Config{BootstrapServers: []string{dead, fc.BootstrapAddr()}, DialTimeout: time.Second})
	cl, err := c.Cluster(context.Background())
	require.NoError(t, err)
	assert.Len(t, cl.TabletServers, 1)
}

func TestBootstrapUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := ln.Addr().String()
	require.NoError(t, ln.Close())

	c := newClient(t, rpc.Config{BootstrapServers: []string{dead}, MetadataBackoff: time.Millisecond})
	_, err = c.Cluster(context.Background())
	e := rpcErr(t, err)
	assert.True(t, e.NotSent())
	assert.True(t, e.Retriable())
	assert.Equal(t, wire.CodeNetworkException, e.Code)
	assert.Equal(t, wire.KeyGetMetadata, e.API)
}

func TestMetadataWithoutTabletServersIsStale(t *testing.T) {
	t.Parallel()
	s := newServer(t, flussfake.ServerConfig{Type: flussfake.TypeCoordinator})
	s.Handle(wire.KeyGetMetadata, func(context.Context, *flussfake.Request) (proto.Message, error) {
		return &flusspb.MetadataResponse{}, nil
	})
	c := newClient(t, rpc.Config{BootstrapServers: []string{s.Addr()}, MetadataAttempts: 3, MetadataBackoff: time.Millisecond})
	_, err := c.Cluster(context.Background())
	e := rpcErr(t, err)
	assert.ErrorIs(t, err, rpc.ErrNoNode)
	assert.True(t, e.Retriable())
	assert.Equal(t, 3, s.Requests(wire.KeyGetMetadata))
}

func TestRouting(t *testing.T) {
	t.Parallel()
	fc := newCluster(t, flussfake.ClusterConfig{TabletServers: 2})
	c := newClient(t, rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()}})
	ctx := context.Background()

	require.NoError(t, c.CallCoordinator(ctx, wire.KeyCreateDatabase, &flusspb.CreateDatabaseRequest{
		DatabaseName: proto.String("db"), IgnoreIfExists: proto.Bool(false),
	}, &flusspb.CreateDatabaseResponse{}))
	assert.Equal(t, 1, fc.Coordinator.Requests(wire.KeyCreateDatabase))

	var ex flusspb.DatabaseExistsResponse
	require.NoError(t, c.CallAnyTabletServer(ctx, wire.KeyDatabaseExists,
		&flusspb.DatabaseExistsRequest{DatabaseName: proto.String("db")}, &ex))
	assert.True(t, ex.GetExists())
	assert.Equal(t, 1, fc.TabletServers[0].Requests(wire.KeyDatabaseExists)+fc.TabletServers[1].Requests(wire.KeyDatabaseExists))

	require.NoError(t, c.CallTabletServer(ctx, 1, wire.KeyDatabaseExists,
		&flusspb.DatabaseExistsRequest{DatabaseName: proto.String("db")}, &ex))
	assert.GreaterOrEqual(t, fc.TabletServers[1].Requests(wire.KeyDatabaseExists), 1)

	err := c.CallTabletServer(ctx, 7, wire.KeyDatabaseExists,
		&flusspb.DatabaseExistsRequest{DatabaseName: proto.String("db")}, &ex)
	e := rpcErr(t, err)
	assert.ErrorIs(t, err, rpc.ErrNoNode)
	assert.True(t, e.NotSent())

	// DDL sent to a tablet server: the tablet server does not list it, so
	// the client refuses instead of waiting for a timeout.
	err = c.CallTabletServer(ctx, 0, wire.KeyCreateDatabase, &flusspb.CreateDatabaseRequest{
		DatabaseName: proto.String("db2"), IgnoreIfExists: proto.Bool(false),
	}, &flusspb.CreateDatabaseResponse{})
	assert.ErrorIs(t, err, rpc.ErrUnsupportedAPI)

	conn, err := c.NodeConn(ctx, rpc.Node{ID: 0, Host: "127.0.0.1", Port: mustPort(t, fc.TabletServers[0].Addr()), Type: rpc.ServerTablet})
	require.NoError(t, err)
	v, ok := conn.Version(wire.KeyPutKv)
	assert.False(t, ok, "the fake tablet server has no PutKv handler")
	assert.Zero(t, v)
}

func mustPort(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	n, err := net.LookupPort("tcp", p)
	require.NoError(t, err)
	return n
}

func TestAnyTabletServerSkipsUnreachable(t *testing.T) {
	t.Parallel()
	fc := newCluster(t, flussfake.ClusterConfig{TabletServers: 2})
	c := newClient(t, rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()}, DialTimeout: time.Second})
	ctx := context.Background()
	_, err := c.Cluster(ctx)
	require.NoError(t, err)

	fc.TabletServers[0].Close() // listener gone: dials fail (not sent)
	for range 5 {
		var ex flusspb.DatabaseExistsResponse
		require.NoError(t, c.CallAnyTabletServer(ctx, wire.KeyDatabaseExists,
			&flusspb.DatabaseExistsRequest{DatabaseName: proto.String("x")}, &ex))
	}
}

func TestReconnectAfterConnectionLoss(t *testing.T) {
	t.Parallel()
	fc := newCluster(t, flussfake.ClusterConfig{})
	c := newClient(t, rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()}})
	ctx := context.Background()
	call := func() error {
		return c.CallCoordinator(ctx, wire.KeyListDatabases, &flusspb.ListDatabasesRequest{}, &flusspb.ListDatabasesResponse{})
	}
	require.NoError(t, call())
	fc.Coordinator.CloseConnections()
	// The next calls may see the dying connection (ambiguous) once; after
	// that a fresh connection is dialed.
	require.Eventually(t, func() bool { return call() == nil }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, call())
}

func TestConcurrentCallsShareOneDial(t *testing.T) {
	t.Parallel()
	fc := newCluster(t, flussfake.ClusterConfig{})
	rec := &recorder{}
	c := newClient(t, rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()}, Hooks: []any{rec}})
	ctx := context.Background()
	_, err := c.Cluster(ctx)
	require.NoError(t, err)
	errs := make(chan error, 20)
	for range 20 {
		go func() {
			errs <- c.CallAnyTabletServer(ctx, wire.KeyListDatabases, &flusspb.ListDatabasesRequest{}, &flusspb.ListDatabasesResponse{})
		}()
	}
	for range 20 {
		require.NoError(t, <-errs)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Len(t, rec.connects, 2, "one bootstrap/coordinator connection, one tablet server connection")
	assert.Equal(t, 1, fc.TabletServers[0].Connections())
}

func TestClientSASL(t *testing.T) {
	t.Parallel()
	fc := newCluster(t, flussfake.ClusterConfig{SASLUsers: map[string]string{"admin": "admin-secret"}})

	ok := newClient(t, rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()},
		SASL: &rpc.SASLConfig{Username: "admin", Password: "admin-secret"}})
	require.NoError(t, ok.CallCoordinator(context.Background(), wire.KeyListDatabases,
		&flusspb.ListDatabasesRequest{}, &flusspb.ListDatabasesResponse{}))

	bad := newClient(t, rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()},
		SASL: &rpc.SASLConfig{Username: "admin", Password: "wrong"}, MetadataBackoff: time.Millisecond})
	err := bad.CallCoordinator(context.Background(), wire.KeyListDatabases,
		&flusspb.ListDatabasesRequest{}, &flusspb.ListDatabasesResponse{})
	e := rpcErr(t, err)
	assert.True(t, rpc.IsAuthentication(err))
	assert.True(t, e.NotSent())
	assert.False(t, e.Retriable())
	assert.Contains(t, err.Error(), "authentication failed")
}

func TestClientClose(t *testing.T) {
	t.Parallel()
	fc := newCluster(t, flussfake.ClusterConfig{})
	c, err := rpc.NewClient(rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()}})
	require.NoError(t, err)
	_, err = c.Cluster(context.Background())
	require.NoError(t, err)
	require.NoError(t, c.Close())
	err = c.CallCoordinator(context.Background(), wire.KeyListDatabases, &flusspb.ListDatabasesRequest{}, &flusspb.ListDatabasesResponse{})
	e := rpcErr(t, err)
	assert.True(t, e.NotSent())
	assert.ErrorIs(t, err, rpc.ErrClosed)
}
