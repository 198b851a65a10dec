package http

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/http/rowjson"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// Issue 21 regression tests: the memory budget at the HTTP edge.

func withBudget(b *membudget.Budget) gatewayOption {
	return func(o *Options, _ *Deps) { o.MemoryBudget = b }
}

// rawRequest sends head (and body) on a fresh connection and returns the
// status line of the answer, read within wait.
func rawRequest(t *testing.T, base, head string, body []byte, wait time.Duration) string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write(append([]byte(head), body...))
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(wait)))
	line, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err, "no answer within %v", wait)
	return strings.TrimSpace(line)
}

// bodyStart is the first 16 KiB of a large body: fasthttp reads at most
// 8 KiB of a body before the handler chain runs.
func bodyStart() []byte {
	return append([]byte(`{"entries":[`), bytes.Repeat([]byte(" "), 16<<10)...)
}

// Finding "unauthenticated requests sending only headers with
// Content-Length: 33554432": the body buffer was reserved and read before
// authentication (only Expect: 100-continue was checked first), so each such
// connection cost up to 32 MiB and got no answer until the body arrived. The
// body is now read only after authentication: the 401 comes at once and
// nothing of the body is held.
func TestUnauthenticatedBigContentLengthIsAnsweredUnread(t *testing.T) {
	g := newGateway(t, withIdentity(denyAll{}), withMaxBody(32<<20))
	base := serveOnListener(t, g)
	head := "POST " + db + "/d/tables/t/records HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n" +
		"Content-Length: 33554432\r\n\r\n"
	assert.Equal(t, "HTTP/1.1 401 Unauthorized", rawRequest(t, base, head, bodyStart(), 2*time.Second))
}

// A body over the limit is refused by its Content-Length, unread, after
// authentication.
func TestOversizedContentLengthIs413Unread(t *testing.T) {
	g := newGateway(t, withMaxBody(1<<20))
	base := serveOnListener(t, g)
	head := "POST " + usersWrite + " HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 33554432\r\n\r\n"
	assert.Equal(t, "HTTP/1.1 413 Request Entity Too Large", rawRequest(t, base, head, bodyStart(), 2*time.Second))
}

func TestMemoryBudgetRefusesBodiesWith429AndReleases(t *testing.T) {
	budget := membudget.New(64<<10, 50*time.Millisecond)
	g := newGateway(t, withBudget(budget), withMaxBody(1<<20)).withTables()
	hold := budget.NewCharge()
	require.NoError(t, hold.Acquire(context.Background(), 60<<10))

	var items []string
	for i := range 100 {
		items = append(items, upsert(fmt.Sprint("e", i), "eu", i))
	}
	body := entries(items...)
	require.Greater(t, len(body), 4<<10)
	r := g.call("POST", usersWrite, body)
	require.Equal(t, 429, r.status, string(r.body))
	assert.Equal(t, "resource_exhausted", r.errorCode(t))
	assert.Contains(t, r.message(t), "memory budget")
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	assert.Zero(t, g.writer.calls(), "nothing was sent")
	assert.Equal(t, int64(1), budget.Stats().Refused)

	hold.Release()
	r = g.call("POST", usersWrite, body)
	require.Equal(t, 200, r.status, string(r.body))
	assert.Eventually(t, func() bool { return budget.Stats().InUse == 0 }, 2*time.Second, 10*time.Millisecond,
		"released once the answer is written: %d bytes held", budget.Stats().InUse)
}

func TestMemoryBudgetChargesDecompressedBytes(t *testing.T) {
	budget := membudget.New(256<<10, 50*time.Millisecond)
	g := newGateway(t, withBudget(budget), withMaxBody(1<<20)).withTables()
	var items []string
	for i := range 2000 {
		items = append(items, upsert(fmt.Sprint("e", i), "eu", i))
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(entries(items...)))
	require.NoError(t, zw.Close())
	require.Less(t, gz.Len(), 32<<10)

	hold := budget.NewCharge()
	require.NoError(t, hold.Acquire(context.Background(), 200<<10))
	r := g.call("POST", usersWrite, gz.String(), "Content-Encoding", "gzip")
	require.Equal(t, 429, r.status, string(r.body))
	assert.Contains(t, r.message(t), "decompressed request body")
	hold.Release()
	assert.Eventually(t, func() bool { return budget.Stats().InUse == 0 }, 2*time.Second, 10*time.Millisecond)

	r = g.call("POST", usersWrite, gz.String(), "Content-Encoding", "gzip")
	require.Equal(t, 200, r.status, string(r.body))
}

// Finding "one lookup of 128 keys on a table with one 256 KiB row": a
// 1,418-byte request produced a 201 MB answer. Duplicate keys are now
// fetched once, and the answer is held to the answer-size cap.
func TestLookupDuplicateKeysAndAnswerCap(t *testing.T) {
	budget := membudget.New(64<<20, 50*time.Millisecond)
	g := newGateway(t, withBudget(budget), func(o *Options, _ *Deps) { o.MaxLookupResponseBytes = 1 << 20 }).withTables()
	big := bytes.Repeat([]byte{7}, 64<<10)
	g.lookup.setLookup(func(_ context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
		out := &domain.LookupResponse{SchemaID: req.SchemaID}
		for range req.Keys {
			out.Results = append(out.Results, domain.LookupResult{Row: []domain.Datum{
				{Bytes: []byte("eu")}, {I64: 1}, {Bytes: []byte("ann")}, {I64: 7}, {Bytes: big}, {Null: true},
			}})
		}
		return out, nil
	})
	keys := strings.TrimSuffix(strings.Repeat(`{"region":"eu","id":1},`, 128), ",")
	r := g.call("POST", usersLookup, `{"keys":[`+keys+`]}`)
	require.Len(t, g.lookup.lastLookup().Keys, 1, "128 copies of one key are fetched once")
	require.Equal(t, 413, r.status, "128 × 87 KB rendered exceeds the 1 MiB cap")
	assert.Equal(t, "limit_exceeded", r.errorCode(t))
	assert.Contains(t, r.message(t), "max-response-bytes")
	assert.Less(t, len(r.body), 1024)

	r = g.call("POST", usersLookup, `{"keys":[{"region":"eu","id":1},{"region":"eu","id":2},{"region":"eu","id":1}]}`)
	require.Equal(t, 200, r.status)
	require.Len(t, g.lookup.lastLookup().Keys, 2)
	res := r.json(t)["results"].([]any)
	require.Len(t, res, 3, "one answer per key asked, duplicates included")
	for i, x := range res {
		assert.Equal(t, float64(i), x.(map[string]any)["input_index"])
		assert.Equal(t, true, x.(map[string]any)["found"])
	}
	assert.Eventually(t, func() bool { return budget.Stats().InUse == 0 }, 2*time.Second, 10*time.Millisecond)
}

// An answer the budget cannot hold is refused with 429 rather than rendered.
func TestLookupAnswerChargedToBudget(t *testing.T) {
	budget := membudget.New(512<<10, 50*time.Millisecond)
	g := newGateway(t, withBudget(budget)).withTables()
	big := bytes.Repeat([]byte{7}, 64<<10)
	g.lookup.setLookup(func(_ context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
		out := &domain.LookupResponse{SchemaID: req.SchemaID}
		for range req.Keys {
			out.Results = append(out.Results, domain.LookupResult{Row: []domain.Datum{
				{Bytes: []byte("eu")}, {I64: 1}, {Bytes: []byte("ann")}, {I64: 7}, {Bytes: big}, {Null: true},
			}})
		}
		return out, nil
	})
	hold := budget.NewCharge()
	require.NoError(t, hold.Acquire(context.Background(), 400<<10))
	defer hold.Release()
	var keys []string
	for i := range 8 {
		keys = append(keys, fmt.Sprintf(`{"region":"eu","id":%d}`, i))
	}
	r := g.call("POST", usersLookup, `{"keys":[`+strings.Join(keys, ",")+`]}`)
	require.Equal(t, 429, r.status, string(r.body))
	assert.Contains(t, r.message(t), "memory budget")
}

// A streamed body that was never read (a 404) is not read by the tracing
// middleware or the access log after the chain either.
func TestUnreadBodyOfUnknownRouteIsNotRead(t *testing.T) {
	g := newGateway(t, withMaxBody(32<<20))
	base := serveOnListener(t, g)
	head := "POST /v1/nowhere HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 33554432\r\n\r\n"
	assert.Equal(t, "HTTP/1.1 404 Not Found", rawRequest(t, base, head, bodyStart(), 2*time.Second))
	// The server is still healthy.
	resp, err := nethttp.Get(base + "/health")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
}

// Finding "a write naming a 30 MiB unknown column": a 31 MB 400 answer and a
// 31 MB access-log line. Quoted names are now cut short.
func TestHugeUnknownColumnNameIsQuotedShort(t *testing.T) {
	g := newGateway(t, withMaxBody(8<<20)).withTables()
	name := strings.Repeat("c", 4<<20)
	tests := []struct{ path, body string }{
		{usersWrite, `{"entries":[{"id":"e1","upsert":{"region":"eu","id":1,"` + name + `":1}}]}`},
		{usersWrite, `{"` + name + `":[]}`},
		{usersWrite, `{"entries":[{"id":"e1","` + name + `":{}}]}`},
		{usersLookup, `{"keys":[{"region":"eu","id":1}],"columns":["` + name + `"]}`},
		{usersPrefix, `{"prefix_columns":["` + name + `"],"prefixes":[["eu"]]}`},
	}
	for i, tt := range tests {
		r := g.call("POST", tt.path, tt.body)
		require.Contains(t, []int{400, 413}, r.status, "case %d", i)
		assert.Less(t, len(r.body), 4<<10, "case %d: answer of %d bytes", i, len(r.body))
		if r.status == 400 {
			assert.Contains(t, r.message(t), "ccc…", "case %d", i)
		}
	}
	assert.Less(t, len(g.logs.String()), 64<<10, "the access lines quote the name cut short")
}

// Finding of the resource benchmark (10,000-row writes × 64): decoded rows
// were charged after the decode, so 64 requests held their decoded rows
// (about four times their bodies) at once while waiting for the budget, and
// RSS passed 400 MiB with a 64 MiB budget. An uncompressed JSON write is
// now charged for its body and an estimate of its rows at once, before the
// body is read; rows are charged chunk by chunk before they are allocated
// beyond that (a compressed body has no estimate); the writer's copy before
// the rows are handed over. What does not fit is refused with 429 before
// anything is sent.
func TestMemoryBudgetChargesDecodedRowsBeforeTheyExist(t *testing.T) {
	var items []string
	for i := range 400 {
		items = append(items, upsert(fmt.Sprint("e", i), "eu", i))
	}
	body := entries(items...)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(body))
	require.NoError(t, zw.Close())
	tests := []struct {
		name     string
		gzip     bool
		capacity int64
		status   int
		message  string
	}{
		// The rows of 400 users entries take ~300 KiB of Buffer chunks
		// (chunk sizes are deterministic), the writer's copy ~150 KiB more.
		{name: "room for the body only: refused before it is read", capacity: int64(len(body)) + 4<<10, status: 429,
			message: "the request body and its rows"},
		{name: "compressed, room for the decompressed body only", gzip: true, capacity: 96 << 10, status: 429,
			message: "the decoded rows"},
		{name: "room for the rows, not the writer's copy", capacity: int64(len(body)) + 384<<10, status: 429,
			message: "the writer's copy"},
		{name: "room for all", capacity: 4 << 20, status: 200},
		{name: "compressed, room for all", gzip: true, capacity: 4 << 20, status: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			budget := membudget.New(tc.capacity, 20*time.Millisecond)
			g := newGateway(t, withBudget(budget), withMaxBody(1<<20)).withTables()
			// Another request holds a little, so that this one is not
			// alone in the budget (a lone request is never refused).
			hold := budget.NewCharge()
			require.NoError(t, hold.Acquire(context.Background(), 1))
			defer hold.Release()
			var r response
			if tc.gzip {
				r = g.call("POST", usersWrite, gz.String(), "Content-Encoding", "gzip")
			} else {
				r = g.call("POST", usersWrite, body)
			}
			require.Equal(t, tc.status, r.status, string(r.body))
			if tc.status == 429 {
				assert.Contains(t, r.message(t), tc.message)
				assert.Zero(t, g.writer.calls(), "nothing was sent")
			}
			assert.Eventually(t, func() bool { return budget.Stats().InUse == 1 }, 2*time.Second, 10*time.Millisecond,
				"released once the answer is written: %d bytes held", budget.Stats().InUse)
		})
	}
}

// The estimate acquired with a JSON write's body is returned once its rows
// are decoded and charged: the request holds what its rows take, not the
// estimate, while the writer delivers them.
func TestMemoryBudgetReturnsTheUnusedRowsEstimate(t *testing.T) {
	budget := membudget.New(64<<20, 20*time.Millisecond)
	g := newGateway(t, withBudget(budget), withMaxBody(1<<20)).withTables()
	// Long strings: the rows take about three times the body, much less
	// than the estimate.
	var items []string
	for i := range 50 {
		items = append(items, upsert(fmt.Sprint("e", i), strings.Repeat("x", 2000), i))
	}
	body := entries(items...)
	held := make(chan int64, 1)
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		held <- budget.Stats().InUse
		return make([]domain.EntryResult, len(b.Entries)), nil
	})
	r := g.call("POST", usersWrite, body)
	require.Equal(t, 200, r.status, string(r.body))
	inUse := <-held
	assert.Less(t, inUse, int64(rowsPerBodyByte+1)*int64(len(body)), "the estimate was returned")
	assert.Greater(t, inUse, int64(len(body)), "the body and rows are held")
	assert.Eventually(t, func() bool { return budget.Stats().InUse == 0 }, 2*time.Second, 10*time.Millisecond)
}

// Issue 21: after a burst of concurrent writes, the idle row buffers kept
// for reuse are bounded in number (a sync.Pool kept one per request of the
// burst), and each keeps at most its retained chunks.
func TestRowBuffersKeepABoundedNumber(t *testing.T) {
	tests := []struct {
		name      string
		capacity  int
		burst     int
		wantKept  int
		wantReuse bool
	}{
		{name: "burst larger than the list", capacity: 4, burst: 64, wantKept: 4, wantReuse: true},
		{name: "burst smaller than the list", capacity: 16, burst: 3, wantKept: 3, wantReuse: true},
		{name: "no list", capacity: 0, burst: 8, wantKept: 0, wantReuse: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newRowBuffers(tc.capacity)
			var held []*rowjson.Buffer
			for range tc.burst {
				held = append(held, p.Get())
			}
			for _, b := range held {
				p.Put(b)
			}
			assert.Len(t, p.free, tc.wantKept)
			got := p.Get()
			assert.Equal(t, tc.wantReuse, slices.Contains(held, got), "an idle buffer is reused")
		})
	}
}

// Finding of the resource benchmark (128-key lookups of 256 KiB rows × 64):
// each lookup fetched its rows (32 MiB) before they were charged. A lookup
// is now charged for the rows it is about to fetch, by the table's recent
// lookups (the most a lookup may take for a table not looked up yet),
// before it asks the cluster; what does not fit is refused with 429 and
// nothing is fetched.
func TestLookupRowsChargedBeforeTheFetch(t *testing.T) {
	budget := membudget.New(1<<20, 20*time.Millisecond)
	g := newGateway(t, withBudget(budget)).withTables()
	big := bytes.Repeat([]byte{7}, 64<<10)
	var fetches atomic.Int64
	g.lookup.setLookup(func(_ context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
		fetches.Add(1)
		out := &domain.LookupResponse{SchemaID: req.SchemaID}
		for range req.Keys {
			out.Results = append(out.Results, domain.LookupResult{Row: []domain.Datum{
				{Bytes: []byte("eu")}, {I64: 1}, {Bytes: []byte("ann")}, {I64: 7}, {Bytes: big}, {Null: true},
			}})
		}
		return out, nil
	})
	lookup := func(n int) response {
		var keys []string
		for i := range n {
			keys = append(keys, fmt.Sprintf(`{"region":"eu","id":%d}`, i))
		}
		return g.call("POST", usersLookup, `{"keys":[`+strings.Join(keys, ",")+`]}`)
	}
	// The first lookup learns the table's cost: 64 KiB per key.
	require.Equal(t, 200, lookup(2).status)
	require.Equal(t, int64(1), fetches.Load())
	assert.Eventually(t, func() bool { return budget.Stats().InUse == 0 }, 2*time.Second, 10*time.Millisecond)

	tests := []struct {
		name      string
		held      int64
		keys      int
		status    int
		wantFetch bool
	}{
		{name: "fits", held: 0, keys: 4, status: 200, wantFetch: true},
		{name: "the estimate does not fit: nothing fetched", held: 800 << 10, keys: 8, status: 429, wantFetch: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hold := budget.NewCharge()
			require.NoError(t, hold.Acquire(context.Background(), tc.held+1))
			defer hold.Release()
			before := fetches.Load()
			r := lookup(tc.keys)
			require.Equal(t, tc.status, r.status, string(r.body))
			assert.Equal(t, tc.wantFetch, fetches.Load() > before)
			if tc.status == 429 {
				assert.Contains(t, r.message(t), "the rows to fetch")
			}
			assert.Eventually(t, func() bool { return budget.Stats().InUse == tc.held+1 }, 2*time.Second, 10*time.Millisecond)
		})
	}
}

func TestLookupCostsEstimate(t *testing.T) {
	var l lookupCosts
	assert.Equal(t, int64(1<<20), l.estimate("t", 10, 1<<20), "never looked up: the limit")
	l.observe("t", 4, 4000)
	assert.Equal(t, int64(10_000), l.estimate("t", 10, 1<<30))
	assert.Equal(t, int64(5_000), l.estimate("t", 10, 5_000), "capped")
	l.observe("t", 0, 1) // no keys: ignored
	l.observe("t", 1, 2000)
	assert.Equal(t, int64(1300*10), l.estimate("t", 10, 1<<30), "moving average")
	assert.Equal(t, int64(1<<30), l.estimate("other", 10, 1<<30))
}

// Issue 21: a charge of at least half the budget is released only after a
// garbage collection, so that the next large request is not admitted while
// the last one's memory is still in the heap; smaller charges are released
// at once.
func TestLargeChargeReleasedAfterACollection(t *testing.T) {
	tests := []struct {
		name        string
		capacity    int64
		held        int64
		state       fasthttp.ConnState
		collections int64
	}{
		{name: "half the budget, answer written", capacity: 1000, held: 500, state: fasthttp.StateIdle, collections: 1},
		{name: "the whole budget, connection closed", capacity: 1000, held: 1000, state: fasthttp.StateClosed, collections: 1},
		{name: "less than half", capacity: 1000, held: 499, state: fasthttp.StateIdle, collections: 0},
		{name: "still writing: nothing released", capacity: 1000, held: 800, state: fasthttp.StateActive, collections: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			budget := membudget.New(tc.capacity, 10*time.Millisecond)
			p := &pendingCharges{collectAt: collectAt(budget)}
			ch := budget.NewCharge()
			require.NoError(t, ch.Acquire(context.Background(), tc.held))
			conn, peer := net.Pipe()
			defer conn.Close()
			defer peer.Close()
			p.hold(conn, ch, nil)
			p.connState(conn, tc.state)
			assert.Equal(t, tc.collections, p.collections.Load())
			if tc.state == fasthttp.StateActive {
				assert.Equal(t, tc.held, budget.Stats().InUse)
				return
			}
			assert.Zero(t, budget.Stats().InUse, "released")
		})
	}
	assert.Zero(t, collectAt(nil), "no budget: never")
	assert.Equal(t, int64(32<<20), collectAt(membudget.New(64<<20, 0)))
}

// A table not looked up yet is charged the most a lookup may take before
// the fetch, so a first burst of lookups cannot fetch all at once.
func TestFirstLookupOfATableChargedTheLimit(t *testing.T) {
	budget := membudget.New(1<<20, 20*time.Millisecond)
	g := newGateway(t, withBudget(budget)).withTables()
	var fetches atomic.Int64
	g.lookup.setLookup(func(_ context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
		fetches.Add(1)
		return &domain.LookupResponse{SchemaID: req.SchemaID, Results: make([]domain.LookupResult, len(req.Keys))}, nil
	})
	hold := budget.NewCharge()
	require.NoError(t, hold.Acquire(context.Background(), 1))
	r := g.call("POST", usersLookup, `{"keys":[{"region":"eu","id":1}]}`)
	require.Equal(t, 429, r.status, string(r.body))
	assert.Contains(t, r.message(t), "the rows to fetch")
	assert.Zero(t, fetches.Load(), "nothing fetched")
	hold.Release()
	r = g.call("POST", usersLookup, `{"keys":[{"region":"eu","id":1}]}`)
	require.Equal(t, 200, r.status, string(r.body))
	assert.Equal(t, int64(1), fetches.Load())
}

// TestBodyBufferClasses: bodies of 16 KiB to 1 MiB are read into pooled
// buffers of the next power of two, others are not pooled, and only a
// buffer of a pool's exact size goes back to it.
func TestBodyBufferClasses(t *testing.T) {
	tests := []struct {
		n     int
		class int
	}{
		{0, -1}, {minPooledBody - 1, -1}, {minPooledBody, 0}, {minPooledBody + 1, 1},
		{120 << 10, 3}, {128 << 10, 3}, {128<<10 + 1, 4}, {maxPooledBody, bodyClasses - 1}, {maxPooledBody + 1, -1},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			assert.Equal(t, tc.class, bodyClass(tc.n))
			b := getBodyBuffer(tc.n)
			if tc.class < 0 {
				assert.Nil(t, b)
				return
			}
			require.NotNil(t, b)
			assert.GreaterOrEqual(t, len(*b), tc.n)
			assert.Equal(t, minPooledBody<<tc.class, cap(*b))
			putBodyBuffer(b)
		})
	}
	odd := make([]byte, 100<<10) // not a pool's size: dropped, not pooled
	putBodyBuffer(&odd)
	putBodyBuffer(nil)
}

// TestPendingBodyBuffer: a request's pooled body buffer is held with its
// charge until its connection turns idle or closes (the answer is written),
// never while the connection is still active.
func TestPendingBodyBuffer(t *testing.T) {
	for _, state := range []fasthttp.ConnState{fasthttp.StateActive, fasthttp.StateIdle, fasthttp.StateClosed, fasthttp.StateHijacked} {
		t.Run(state.String(), func(t *testing.T) {
			budget := membudget.New(1<<20, 10*time.Millisecond)
			p := &pendingCharges{}
			ch := budget.NewCharge()
			require.NoError(t, ch.Acquire(context.Background(), 64<<10))
			body := getBodyBuffer(64 << 10)
			conn, peer := net.Pipe()
			defer conn.Close()
			defer peer.Close()
			p.hold(conn, ch, body)
			p.connState(conn, state)
			p.mu.Lock()
			pc, held := p.m[conn]
			p.mu.Unlock()
			if state == fasthttp.StateActive {
				require.True(t, held, "still writing: held")
				assert.Same(t, body, pc.body)
				assert.Equal(t, int64(64<<10), budget.Stats().InUse)
				return
			}
			assert.False(t, held, "released")
			assert.Zero(t, budget.Stats().InUse)
		})
	}
}

// TestPooledBodiesKeepAlive: write bodies read into pooled buffers over
// keep-alive connections (where the buffers go back to the pool when the
// connection turns idle) are each decoded as sent. Buffers are overwritten
// as they go back to the pool (poisonBodyBuffers): a body returned before
// its rows were decoded would answer 400.
func TestPooledBodiesKeepAlive(t *testing.T) {
	poisonBodyBuffers.Store(true)
	t.Cleanup(func() { poisonBodyBuffers.Store(false) })
	g := newGateway(t, func(o *Options, _ *Deps) { o.MaxRequestBytes = 1 << 20 })
	g.mustCreateDatabase("d")
	g.mustCreateTable("d", benchTable)
	w := &benchRowsWriter{}
	g.data.writer = w
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = g.app.Listener(ln) }()
	t.Cleanup(func() { _ = g.app.Shutdown() })
	client := &nethttp.Client{Transport: &nethttp.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	url := "http://" + ln.Addr().String() + db + "/d/tables/bench/records"
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 5 {
				rows := 100 + 50*c + 10*r // bodies of 20-60 KiB, several pools
				parts := make([]string, rows)
				for i := range parts {
					parts[i] = benchEntry(i)
				}
				resp, err := client.Post(url, "application/json", strings.NewReader(entries(parts...)))
				if !assert.NoError(t, err) {
					return
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				assert.Equal(t, 200, resp.StatusCode, "%.300s", out)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(4*5), w.batches.Load())
	assert.Zero(t, w.wrong.Load(), "rows that differ from what was sent")
}

// benchRowsWriter checks that entry j of every batch is benchEntry(j)'s row
// (its id and name).
type benchRowsWriter struct{ batches, wrong atomic.Int64 }

func (w *benchRowsWriter) Write(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
	w.batches.Add(1)
	for j, e := range b.Entries {
		if e.Row[0].I64 != int64(j) || string(e.Row[1].Bytes) != fmt.Sprintf("user-%08d", j) {
			w.wrong.Add(1)
		}
	}
	return make([]domain.EntryResult, b.Len()), nil
}

// TestFirstLookupReturnsItsUnusedEstimate: a table's first lookup is
// charged the most a lookup may take (twice the answer cap) and gives back
// what its rows did not use once they are fetched, so its answer can grow
// while another request holds the rest of the budget; before, it kept the
// whole estimate while waiting for room for its answer (two first lookups
// of a table filled the default budget and waited for each other until
// 429).
func TestFirstLookupReturnsItsUnusedEstimate(t *testing.T) {
	budget := membudget.New(4<<20, 300*time.Millisecond)
	g := newGateway(t, withBudget(budget), func(o *Options, _ *Deps) { o.MaxLookupResponseBytes = 1 << 20 }).withTables()
	g.lookup.setLookup(func(_ context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
		out := &domain.LookupResponse{SchemaID: req.SchemaID}
		for range req.Keys {
			out.Results = append(out.Results, domain.LookupResult{Row: []domain.Datum{
				{Bytes: []byte("eu")}, {I64: 1}, {Bytes: []byte("ann")}, {I64: 7}, {Bytes: bytes.Repeat([]byte{7}, 64<<10)}, {Null: true},
			}})
		}
		return out, nil
	})
	other := budget.NewCharge() // another request's share: the estimate fits exactly
	require.NoError(t, other.Acquire(context.Background(), 2<<20-64<<10))
	defer other.Release()
	keys := make([]string, 8)
	for i := range keys {
		keys[i] = fmt.Sprintf(`{"region":"eu","id":%d}`, i)
	}
	r := g.call("POST", usersLookup, `{"keys":[`+strings.Join(keys, ",")+`]}`)
	assert.Equal(t, 200, r.status, string(r.body))
}

// TestMemoryBudgetChargesDecompressedArrow: a ZSTD-compressed Arrow record
// batch (a few KB on the wire) whose buffers decompress to 4 MiB is charged
// before anything is decompressed: 429 with a 1 MiB budget, nothing
// written, nothing held after; it goes through with room.
func TestMemoryBudgetChargesDecompressedArrow(t *testing.T) {
	budget := membudget.New(1<<20, 50*time.Millisecond)
	g := newGateway(t, withBudget(budget)).withTables()
	const n = 10_000
	long := strings.Repeat("a", 400)
	strs := make([]string, n)
	for i := range strs {
		strs[i] = long
	}
	body := zstdStream(t, ipc.WithZstd(), []func(array.Builder){
		func(b array.Builder) { b.(*array.Int64Builder).AppendValues(make([]int64, n), nil) },
		func(b array.Builder) { b.(*array.StringBuilder).AppendValues(strs, nil) },
	})
	require.Less(t, len(body), 64<<10)
	r := g.postRaw(eventsWrite, body, "Content-Type", MIMEArrowStream)
	require.Equal(t, 429, r.status, "%.300s", r.body)
	assert.Contains(t, r.message(t), "memory budget is exhausted (a ZSTD-compressed record batch decompressed needs")
	assert.Zero(t, g.writer.calls())
	assert.Eventually(t, func() bool { return budget.Stats().InUse == 0 }, 2*time.Second, 10*time.Millisecond,
		"%d bytes held", budget.Stats().InUse)

	roomy := membudget.New(256<<20, 50*time.Millisecond)
	g = newGateway(t, withBudget(roomy)).withTables()
	r = g.postRaw(eventsWrite, body, "Content-Type", MIMEArrowStream)
	require.Equal(t, 200, r.status, "%.300s", r.body)
	assert.Eventually(t, func() bool { return roomy.Stats().InUse == 0 }, 2*time.Second, 10*time.Millisecond,
		"%d bytes held", roomy.Stats().InUse)
}
