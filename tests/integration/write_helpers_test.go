//go:build integration

// Helpers of the writer integration tests (write_*_test.go): they write
// through adapters/fluss/writer into a real Fluss cluster and read back with
// the independent peer client (tests/peer, pyfluss).
//
//	bash deployments/local/fluss-cluster.sh start
//	bash tests/peer/setup.sh
//	FLUSS_BOOTSTRAP=127.0.0.1:19123 go test -tags integration ./tests/integration/ -run Write -v
//
// Without FLUSS_BOOTSTRAP the tests skip, or fail when
// FLUSS_INTEGRATION_REQUIRED=1 (tests/run.sh sets it).
package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/tests/contract"
)

// wrBootstrap returns FLUSS_BOOTSTRAP, skipping the test when it is unset,
// or failing it when FLUSS_INTEGRATION_REQUIRED=1.
func wrBootstrap(t testing.TB) string {
	t.Helper()
	addr := os.Getenv("FLUSS_BOOTSTRAP")
	if addr == "" {
		if os.Getenv("FLUSS_INTEGRATION_REQUIRED") == "1" {
			t.Fatal("FLUSS_INTEGRATION_REQUIRED=1 but FLUSS_BOOTSTRAP is not set")
		}
		t.Skip("FLUSS_BOOTSTRAP is not set; start a cluster with deployments/local/fluss-cluster.sh")
	}
	return addr
}

// wrPeerPath returns the peer client script (FLUSS_PEER or tests/peer/peer.sh).
func wrPeerPath(t testing.TB) string {
	if p := os.Getenv("FLUSS_PEER"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "peer", "peer.sh")
}

// wrPeer runs the peer client and returns its stdout; it fails the test on
// a non-zero exit.
func wrPeer(t testing.TB, stdin []byte, args ...string) []byte {
	t.Helper()
	out, err := wrPeerTry(t, stdin, args...)
	require.NoError(t, err, "peer %v: %s", args, out)
	return out
}

func wrPeerTry(t testing.TB, stdin []byte, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{wrPeerPath(t), "--bootstrap", wrBootstrap(t)}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return append(out, stderr.Bytes()...), err
	}
	return out, nil
}

// wrDatabase creates a fresh database with the peer and drops it after the test.
func wrDatabase(t testing.TB) string { return peerDatabase(t, "gw_write") }

// peerDatabase creates a fresh database named after prefix with the peer and
// drops it after the test.
func peerDatabase(t testing.TB, prefix string) string {
	t.Helper()
	name := contract.UniqueName(prefix)
	wrPeer(t, nil, "create-database", name)
	t.Cleanup(func() { _, _ = wrPeerTry(t, nil, "drop-database", name) })
	return name
}

// wrCreateTable creates a table with the peer and waits for its bucket
// leaders (peerCreateTable). schema is `{"col":"type"}` JSON in column order
// (Go maps are unordered, so it is given as pairs).
func wrCreateTable(t testing.TB, db, table string, cols [][2]string, extra ...string) domain.TablePath {
	t.Helper()
	var parts []string
	for _, c := range cols {
		n, _ := json.Marshal(c[0])
		ty, _ := json.Marshal(c[1])
		parts = append(parts, `{"name":`+string(n)+`,"type":`+string(ty)+`}`)
	}
	args := append([]string{"create-table", db, table, "--schema", "[" + strings.Join(parts, ",") + "]"}, extra...)
	path := domain.TablePath{Database: db, Table: table}
	peerCreateTable(t, path, args)
	return path
}

type wrEnv struct {
	client *rpc.Client
	cache  *meta.Cache
	w      *writer.Writer
}

// wrNewWriter connects a writer (and its metadata cache) to the cluster.
func wrNewWriter(t testing.TB, opts writer.Options) *wrEnv {
	t.Helper()
	c, err := rpc.NewClient(rpc.Config{BootstrapServers: []string{wrBootstrap(t)}, RequestTimeout: 30 * time.Second})
	require.NoError(t, err)
	cache := meta.New(meta.RPCCaller{Client: c}, meta.Options{})
	w := writer.New(meta.RPCCaller{Client: c}, cache, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Close(ctx)
		_ = c.Close()
	})
	return &wrEnv{client: c, cache: cache, w: w}
}

func (e *wrEnv) write(t testing.TB, ctx context.Context, wb *domain.WriteBatch) []domain.EntryResult {
	t.Helper()
	if wb.TableID == 0 {
		tb, err := e.cache.Table(ctx, wb.Table)
		require.NoError(t, err)
		wb.TableID, wb.SchemaID = tb.ID(), tb.Info.SchemaID
	}
	res, err := e.w.Write(ctx, wb)
	require.NoError(t, err)
	require.Len(t, res, len(wb.Entries))
	return res
}

func wrRequireOK(t testing.TB, res []domain.EntryResult) {
	t.Helper()
	for i, r := range res {
		require.True(t, r.OK(), "entry %d: %+v", i, r)
	}
}

// wrLookup looks a key up with the peer; it returns nil when not found.
func wrLookup(t testing.TB, path domain.TablePath, key string) map[string]any {
	t.Helper()
	out := wrPeer(t, nil, "lookup", path.Database, path.Table, "--key", key)
	var r struct {
		Found bool           `json:"found"`
		Row   map[string]any `json:"row"`
	}
	require.NoError(t, json.Unmarshal(out, &r), "%s", out)
	if !r.Found {
		return nil
	}
	return r.Row
}

type wrScanRow struct {
	Bucket     int            `json:"bucket"`
	Offset     int64          `json:"offset"`
	ChangeType string         `json:"change_type"`
	Row        map[string]any `json:"row"`
}

// wrScan reads a non-partitioned table's log (or changelog) with the peer.
func wrScan(t testing.TB, path domain.TablePath) []wrScanRow {
	t.Helper()
	out := wrPeer(t, nil, "scan", path.Database, path.Table, "--scan-timeout", "60")
	var rows []wrScanRow
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r wrScanRow
		require.NoError(t, json.Unmarshal(line, &r), "%s", line)
		rows = append(rows, r)
	}
	return rows
}

func wrCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
