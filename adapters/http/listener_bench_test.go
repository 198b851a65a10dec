package http

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/bench10"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// bench10Table is the primary-key table of make bench-native
// (tests/bench-native/BenchNative.java, tools/load -schema bench10).
const bench10Table = `{"table_name":"bench10","columns":` + bench10.ColumnsJSON + `,
 "primary_key":["k"],"distribution":{"bucket_count":4,"bucket_keys":["k"]}}`

// verdictWriter answers every entry with a success, as the Fluss writer
// does (one domain.EntryResult per entry, allocated per call), and keeps
// nothing.
type verdictWriter struct{}

func (verdictWriter) Write(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
	return make([]domain.EntryResult, b.Len()), nil
}

// BenchmarkWriteListener measures the gateway's HTTP side of a PK upsert
// (fasthttp over a real TCP listener, the middleware chain, the body
// decode, the use case and the answer) with a writer that answers at once:
// what is left of make bench-native's gateway CPU per row once the Fluss
// writer is taken out. 16 keep-alive connections each send 500-entry
// bench10 bodies, as tools/load does at 500 × 16. cpu-ns/row counts the
// whole process (the clients' reads and writes of pre-built bytes too);
// allocs/row and B/row are the process's heap allocations per row.
//
//	go test ./adapters/http/ -run '^$' -bench BenchmarkWriteListener -benchtime 200x
func BenchmarkWriteListener(b *testing.B) {
	const entries, conns = 500, 16
	t := &testing.T{}
	g := newGateway(t, func(o *Options, _ *Deps) {
		o.MaxRequestBytes = 8 << 20
		o.MemoryBudget = membudget.New(64<<20, time.Second)
	})
	g.t = t
	g.mustCreateDatabase("d")
	g.mustCreateTable("d", bench10Table)
	g.data.writer = verdictWriter{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	go func() { _ = g.app.Listener(ln) }()
	defer func() { _ = g.app.Shutdown() }()

	// One request per connection and round, each with its own keys.
	reqs := make([][]byte, conns)
	for c := range reqs {
		body := []byte(`{"entries":[`)
		for i := range entries {
			if i > 0 {
				body = append(body, ',')
			}
			body = bench10.AppendUpsert(body, int64(c*entries+i))
		}
		body = append(body, "]}"...)
		reqs[c] = fmt.Appendf(nil, "POST %s/d/tables/bench10/records HTTP/1.1\r\nHost: bench\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", db, len(body), body)
	}
	clients := make([]*listenerClient, conns)
	for c := range clients {
		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(b, err)
		defer conn.Close()
		clients[c] = &listenerClient{conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}
		// One warm-up request per connection, checked in full.
		body, err := clients[c].do(reqs[c])
		require.NoError(b, err)
		require.Contains(b, string(body), fmt.Sprintf(`"success_count":%d,`, entries))
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make([]error, conns)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < b.N; i += conns {
				if _, err := clients[c].do(reqs[c]); err != nil {
					errs[c] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&ms1)
	for _, err := range errs {
		require.NoError(b, err)
	}
	rows := float64(b.N * entries)
	b.ReportMetric(float64(cpu.Nanoseconds())/rows, "cpu-ns/row")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/rows, "allocs/row")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/rows, "B/row")
	b.ReportMetric(float64(ms1.NumGC-ms0.NumGC), "gcs")
}

// listenerClient is one keep-alive HTTP/1.1 connection that sends pre-built
// requests and reads their answers.
type listenerClient struct {
	conn net.Conn
	r    *bufio.Reader
	body []byte
}

// do sends req and returns the answer's body; an answer other than 200 is
// an error.
func (l *listenerClient) do(req []byte) ([]byte, error) {
	if _, err := l.conn.Write(req); err != nil {
		return nil, err
	}
	status, err := l.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	ok := bytes.HasPrefix(status, []byte("HTTP/1.1 200 "))
	n := -1
	for {
		line, err := l.r.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if len(line) <= 2 {
			break
		}
		if k, v, found := bytes.Cut(line, []byte(":")); found && bytes.EqualFold(k, []byte("Content-Length")) {
			if n, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return nil, err
			}
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("answer without Content-Length: %q", status)
	}
	if cap(l.body) < n {
		l.body = make([]byte, n)
	}
	l.body = l.body[:n]
	if _, err := io.ReadFull(l.r, l.body); err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("answer %q: %.300s", bytes.TrimSpace(status), l.body)
	}
	return l.body, nil
}
