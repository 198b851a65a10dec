//go:build integration

// Helpers of the lookup integration tests (lookup_*_test.go): rows are
// written with the independent peer client (tests/peer, pyfluss) and read
// back through adapters/fluss/lookup.
//
//	bash deployments/local/fluss-cluster.sh start
//	bash tests/peer/setup.sh
//	FLUSS_BOOTSTRAP=127.0.0.1:19123 go test -tags integration ./tests/integration/ -run Lookup -v
//
// Without FLUSS_BOOTSTRAP the tests skip, or fail when
// FLUSS_INTEGRATION_REQUIRED=1 (tests/run.sh sets it).
package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/admin"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/lookup"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// lkCreateTable is the writer helpers' wrCreateTable under the name the
// lookup tests use.
var lkCreateTable = wrCreateTable

// lkDatabase creates a fresh database with the peer and drops it after the test.
func lkDatabase(t testing.TB) string { return peerDatabase(t, "gw_lookup") }

// lkUpsert writes rows (JSON objects) with the peer in one call.
func lkUpsert(t testing.TB, path domain.TablePath, rows []map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	for _, r := range rows {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		buf.Write(b)
		buf.WriteByte('\n')
	}
	wrPeer(t, buf.Bytes(), "upsert", path.Database, path.Table, "--rows-stdin")
}

type lkEnv struct {
	client *rpc.Client
	cache  *meta.Cache
	lk     *lookup.Lookuper
	cat    *admin.Catalog
	calls  *lkCounter
}

// lkCounter is a meta.Caller that records the Lookup and PrefixLookup
// requests it forwards: destination node and number of buckets and keys.
type lkCounter struct {
	next meta.Caller
	mu   sync.Mutex
	reqs []lkReq
}

type lkReq struct {
	api     wire.APIKey
	node    int32
	buckets int
	keys    int
}

func (c *lkCounter) Call(ctx context.Context, to meta.Dest, key wire.APIKey, req, resp proto.Message) error {
	r := lkReq{api: key, node: to.Node}
	switch m := req.(type) {
	case *flusspb.LookupRequest:
		for _, b := range m.GetBucketsReq() {
			r.buckets, r.keys = r.buckets+1, r.keys+len(b.GetKeys())
		}
	case *flusspb.PrefixLookupRequest:
		for _, b := range m.GetBucketsReq() {
			r.buckets, r.keys = r.buckets+1, r.keys+len(b.GetKeys())
		}
	}
	if r.buckets > 0 {
		c.mu.Lock()
		c.reqs = append(c.reqs, r)
		c.mu.Unlock()
	}
	return c.next.Call(ctx, to, key, req, resp)
}

// take returns and forgets the recorded requests.
func (c *lkCounter) take() []lkReq {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.reqs
	c.reqs = nil
	return out
}

func lkNewEnv(t testing.TB) *lkEnv {
	t.Helper()
	c, err := rpc.NewClient(rpc.Config{BootstrapServers: []string{wrBootstrap(t)}, RequestTimeout: 30 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	cache := meta.New(meta.RPCCaller{Client: c}, meta.Options{})
	calls := &lkCounter{next: meta.RPCCaller{Client: c}}
	return &lkEnv{client: c, cache: cache, lk: lookup.New(calls, cache, lookup.Options{}), cat: admin.New(c), calls: calls}
}

func lkCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
