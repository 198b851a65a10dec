//go:build integration

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// leaderWait bounds the wait for the bucket leaders of a table a test just
// created with the peer (or any client other than the gateway). A healthy
// Fluss elects them in well under a second, even under CI load.
const leaderWait = 15 * time.Second

// lostCreationBug names the upstream bug for failure messages.
const lostCreationBug = "the Fluss 0.9.1 coordinator lost the table's creation event " +
	"(TableChangeWatcher's CuratorCache reads the new table znode after its setData and reports " +
	"NODE_CREATED, which 0.9.1 ignores; fixed upstream by apache/fluss ab618ea6d, PR #2710; " +
	"reproduce with FLUSS_RECREATE_RAW=1 -run TestFlussRecreateRaceRaw)"

// awaitLeaders waits, within d, until every bucket of the non-partitioned
// table at path has a leader in the coordinator's metadata (the gateway's
// own meta.Cache.AwaitLeaders, on a connection of its own). Partitioned
// tables return at once: their buckets come with their partitions.
func awaitLeaders(t testing.TB, path domain.TablePath, d time.Duration) error {
	t.Helper()
	c, err := rpc.NewClient(rpc.Config{BootstrapServers: []string{wrBootstrap(t)}, RequestTimeout: 10 * time.Second})
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	cache := meta.New(meta.RPCCaller{Client: c}, meta.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), d+10*time.Second)
	defer cancel()
	return cache.AwaitLeaders(ctx, path, time.Now().Add(d))
}

// peerCreateTable creates the table at path with the peer (args are the
// whole peer command line, `create-table DB T ...`) and waits for its bucket
// leaders, so that a test never hangs on a table Fluss will never serve.
// When they do not come within leaderWait the empty table is dropped and
// created again, once (nothing can have been written to a bucket without a
// leader); when they still do not come the test fails naming the bug.
func peerCreateTable(t testing.TB, path domain.TablePath, args []string) {
	t.Helper()
	wrPeer(t, nil, args...)
	err := awaitLeaders(t, path, leaderWait)
	if err == nil {
		return
	}
	if domain.KindOf(err) != domain.KindUnavailable {
		t.Fatalf("waiting for the bucket leaders of %s: %v", path, err)
	}
	t.Logf("%s: %v; %s; dropping it and creating it again once", path, err, lostCreationBug)
	wrPeer(t, nil, "drop-table", path.Database, path.Table)
	wrPeer(t, nil, args...)
	if err := awaitLeaders(t, path, leaderWait); err != nil {
		t.Fatalf("%s got no bucket leaders twice in a row (%v): %s", path, err, lostCreationBug)
	}
}
