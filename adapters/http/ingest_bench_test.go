package http

import (
	"bytes"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/tests/benchrows"
)

// benchTable, benchEntry and benchArrow are the rows of the integration
// throughput tests (tests/benchrows): the table, row i as a JSON entry, and
// rows as an Arrow IPC stream.
const benchTable = benchrows.TableJSON

var benchEntry = benchrows.Entry

func benchArrow(tb testing.TB, rows, per int) []byte {
	body, err := benchrows.ArrowStream(rows, per)
	require.NoError(tb, err)
	return body
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWriteBodies compares the gateway-side cost (HTTP, decoding, the
// use case; the writer is a fake that keeps nothing) of the same 10-column
// rows as JSON documents (10,000 entries each, and 500 each: json-500), one
// NDJSON body and one Arrow IPC stream (10,000-row batches). End-to-end figures against a
// cluster: tests/integration TestGatewayIngestRelativeThroughput.
//
//	go test ./adapters/http/ -run '^$' -bench BenchmarkWriteBodies -benchtime 5x
func BenchmarkWriteBodies(b *testing.B) {
	const rows, per = 50_000, 10_000
	var docs [][]byte
	var nd bytes.Buffer
	for start := 0; start < rows; start += per {
		var parts []string
		for i := start; i < start+per; i++ {
			parts = append(parts, benchEntry(i))
			nd.WriteString(benchEntry(i) + "\n")
		}
		docs = append(docs, []byte(entries(parts...)))
	}
	// The benchmark's everyday request: 500 entries (about 120 KiB).
	var small [][]byte
	for start := 0; start < rows; start += 500 {
		var parts []string
		for i := start; i < start+500; i++ {
			parts = append(parts, benchEntry(i))
		}
		small = append(small, []byte(entries(parts...)))
	}
	arrowBody := benchArrow(b, rows, per)
	path := db + "/d/tables/bench/records"
	for _, tc := range []struct {
		name string
		send func(g *gateway)
	}{
		{"json", func(g *gateway) {
			for _, d := range docs {
				r := g.postRaw(path, d, "Content-Type", "application/json")
				require.Equal(b, 200, r.status, "%.300s", r.body)
			}
		}},
		{"json-500", func(g *gateway) {
			for _, d := range small {
				r := g.postRaw(path, d, "Content-Type", "application/json")
				require.Equal(b, 200, r.status, "%.300s", r.body)
			}
		}},
		{"ndjson", func(g *gateway) {
			r := g.postRaw(path, nd.Bytes(), "Content-Type", MIMEApplicationNDJSON)
			require.Equal(b, 200, r.status, "%.300s", r.body)
		}},
		{"arrow", func(g *gateway) {
			r := g.postRaw(path, arrowBody, "Content-Type", MIMEArrowStream)
			require.Equal(b, 200, r.status, "%.300s", r.body)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			t := &testing.T{}
			g := newGateway(t, func(o *Options, _ *Deps) { o.MaxRequestBytes = 64 << 20 })
			g.t = t
			g.mustCreateDatabase("d")
			g.mustCreateTable("d", benchTable)
			g.data.writer = &countingWriter{}
			cpu0 := cpuTime()
			b.ResetTimer()
			for range b.N {
				tc.send(g)
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
			// CPU time per row is steadier than wall time on a busy machine.
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(rows*b.N), "cpu-ns/row")
		})
	}
}
