package http

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkWriteBodiesListener compares what the gateway spends per row on
// the same rows sent as 500-entry JSON documents, as 500-line NDJSON bodies
// and (log table only) as one Arrow IPC stream, through the real handler
// chain on a real loopback listener (fasthttp's connection loop and its
// streamed request bodies, unlike BenchmarkWriteBodies' App.Test, which
// copies every request with httputil.DumpRequest). The writer is a fake
// that keeps nothing (countingWriter). The client is one keep-alive
// connection writing pre-built requests, so its own share of the process's
// CPU (cpu-ns/row is getrusage of the whole process) is the same for every
// body of the same bytes.
//
//	go test ./adapters/http/ -run '^$' -bench BenchmarkWriteBodiesListener -benchtime 20x
func BenchmarkWriteBodiesListener(b *testing.B) {
	const rows, per = 50_000, 500
	for _, table := range []struct{ name, op, create string }{
		{"log", `"append"`, benchTable},
		{"pk", `"upsert"`, strings.Replace(benchTable, `"columns"`, `"primary_key": ["id"], "columns"`, 1)},
	} {
		var docs, lines [][]byte
		for start := 0; start < rows; start += per {
			var doc, nd bytes.Buffer
			doc.WriteString(`{"entries":[`)
			for i := start; i < start+per; i++ {
				e := strings.Replace(benchEntry(i), `"append"`, table.op, 1)
				if i > start {
					doc.WriteByte(',')
				}
				doc.WriteString(e)
				nd.WriteString(e + "\n")
			}
			doc.WriteString(`]}`)
			docs, lines = append(docs, doc.Bytes()), append(lines, nd.Bytes())
		}
		cases := []struct {
			name, contentType string
			bodies            [][]byte
		}{
			{"json-500", "application/json", docs},
			{"ndjson-500", MIMEApplicationNDJSON, lines},
		}
		if table.name == "log" {
			cases = append(cases, struct {
				name, contentType string
				bodies            [][]byte
			}{"arrow-10000", MIMEArrowStream, [][]byte{benchArrow(b, rows, 10_000)}})
		}
		for _, tc := range cases {
			b.Run(table.name+"/"+tc.name, func(b *testing.B) {
				t := &testing.T{}
				g := newGateway(t, func(o *Options, _ *Deps) { o.MaxRequestBytes = 64 << 20 })
				g.mustCreateDatabase("d")
				g.mustCreateTable("d", table.create)
				w := &countingWriter{}
				g.data.writer = w
				cl := newListenerClient(b, g)
				reqs := make([][]byte, len(tc.bodies))
				for i, body := range tc.bodies {
					reqs[i] = benchRequest(db+"/d/tables/bench/records", tc.contentType, body)
				}
				cl.post(b, reqs[0]) // warm-up: the table's codec, the pools
				w.rows.Store(0)
				cpu0 := cpuTime()
				b.ResetTimer()
				for range b.N {
					for _, r := range reqs {
						cl.post(b, r)
					}
				}
				b.StopTimer()
				require.Equal(b, int64(rows*b.N), w.rows.Load())
				b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(rows*b.N), "cpu-ns/row")
			})
		}
	}
}

// rawClient is one keep-alive HTTP/1.1 connection to a gateway served on a
// loopback listener.
type rawClient struct {
	conn net.Conn
	br   *bufio.Reader
}

// newListenerClient serves g's app on a loopback listener until cleanup
// and connects to it.
func newListenerClient(tb testing.TB, g *gateway) *rawClient {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	served := make(chan error, 1)
	go func() { served <- g.app.Listener(ln) }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(tb, err)
	tb.Cleanup(func() {
		_ = conn.Close()
		require.NoError(tb, g.app.ShutdownWithTimeout(5*time.Second))
		require.NoError(tb, <-served)
	})
	return &rawClient{conn: conn, br: bufio.NewReaderSize(conn, 64<<10)}
}

// benchRequest is a POST of body with its Content-Length.
func benchRequest(path, contentType string, body []byte) []byte {
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: gateway\r\nContent-Type: %s\r\nContent-Length: %s\r\n\r\n",
		path, contentType, strconv.Itoa(len(body)))
	return append([]byte(head), body...)
}

// post sends one pre-built request and reads its answer, which must be 200.
func (c *rawClient) post(tb testing.TB, req []byte) {
	_, err := c.conn.Write(req)
	require.NoError(tb, err)
	resp, err := nethttp.ReadResponse(c.br, nil)
	require.NoError(tb, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	require.NoError(tb, resp.Body.Close())
	require.Equal(tb, 200, resp.StatusCode, "%.300s", body)
}
