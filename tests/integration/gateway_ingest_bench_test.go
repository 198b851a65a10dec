//go:build integration

package integration

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/tests/benchrows"
)

// TestGatewayIngestRelativeThroughput compares the rows/s of the same rows
// (wrBenchCols, 10 columns) appended to identical 4-bucket log tables as
// JSON documents (10,000 entries per request, sequentially and 4 at a time),
// as one NDJSON body and as one Arrow IPC stream (10,000-row batches). It is
// a measurement, not a CI test: it runs only with FLUSS_INGEST_BENCH=1, for
// the lead's quiet runs:
//
//	FLUSS_INGEST_BENCH=1 [FLUSS_INGEST_BENCH_ROWS=200000] [FLUSS_INGEST_BENCH_RUNS=3] \
//	  [FLUSS_INGEST_BENCH_ASSERT=1] FLUSS_BOOTSTRAP=… FLUSS_PEER=… \
//	  go test -tags integration -run TestGatewayIngestRelativeThroughput -v ./tests/integration/
//
// Bodies are encoded before timing; each way runs RUNS times into a fresh
// table and the best run counts. With FLUSS_INGEST_BENCH_ASSERT=1 it fails
// below the targets (Arrow >= 3x JSON, NDJSON >= 1x JSON, against
// sequential JSON requests).
func TestGatewayIngestRelativeThroughput(t *testing.T) {
	if os.Getenv("FLUSS_INGEST_BENCH") != "1" {
		t.Skip("set FLUSS_INGEST_BENCH=1 to measure")
	}
	rows := envInt("FLUSS_INGEST_BENCH_ROWS", 200_000)
	runs := envInt("FLUSS_INGEST_BENCH_RUNS", 3)
	const per = 10_000
	g := startGateway(t, "FLUSS_GATEWAY__REST__WRITE__REQUEST_TIMEOUT=300s")
	db := wrDatabase(t)

	// The same rows three ways.
	var docs [][]byte
	var nd bytes.Buffer
	for start := 0; start < rows; start += per {
		var doc bytes.Buffer
		doc.WriteString(`{"entries":[`)
		for i := start; i < min(start+per, rows); i++ {
			line := benchrows.Entry(i)
			if i > start {
				doc.WriteByte(',')
			}
			doc.WriteString(line)
			nd.WriteString(line)
			nd.WriteByte('\n')
		}
		doc.WriteString("]}")
		docs = append(docs, doc.Bytes())
	}
	arrowBody, err := benchrows.ArrowStream(rows, per)
	require.NoError(t, err)
	t.Logf("%d rows: JSON %d bytes in %d requests, NDJSON %d bytes, Arrow %d bytes", rows, sumLen(docs), len(docs), nd.Len(), len(arrowBody))

	table := 0
	newTable := func() string {
		table++
		name := fmt.Sprintf("bench_%d", table)
		wrCreateTable(t, db, name, wrBenchCols, "--buckets", "4")
		return g.base + "/databases/" + db + "/tables/" + name + "/records"
	}
	best := map[string]float64{}
	measure := func(way string, send func(url string)) {
		for range runs {
			url := newTable()
			start := time.Now()
			send(url)
			rps := float64(rows) / time.Since(start).Seconds()
			best[way] = max(best[way], rps)
		}
	}
	measure("json", func(url string) {
		for _, d := range docs {
			status, raw := ingestPost(t, url, "application/json", bytes.NewReader(d))
			require.Equal(t, 200, status, "%.300s", raw)
		}
	})
	measure("json4", func(url string) {
		var wg sync.WaitGroup
		next := make(chan []byte)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for d := range next {
					status, raw := ingestPost(t, url, "application/json", bytes.NewReader(d))
					assert.Equal(t, 200, status, "%.300s", raw)
				}
			}()
		}
		for _, d := range docs {
			next <- d
		}
		close(next)
		wg.Wait()
	})
	measure("ndjson", func(url string) {
		status, raw := ingestPost(t, url, "application/x-ndjson", bytes.NewReader(nd.Bytes()))
		require.Equal(t, 200, status, "%.300s", raw)
		_, ok, _ := ingestCounts(t, raw)
		require.Equal(t, rows, ok)
	})
	measure("arrow", func(url string) {
		status, raw := ingestPost(t, url, "application/vnd.apache.arrow.stream", bytes.NewReader(arrowBody))
		require.Equal(t, 200, status, "%.300s", raw)
		_, ok, _ := ingestCounts(t, raw)
		require.Equal(t, rows, ok)
	})
	for _, way := range []string{"json", "json4", "ndjson", "arrow"} {
		t.Logf("%-6s %9.0f rows/s  (%.2fx sequential JSON)", way, best[way], best[way]/best["json"])
	}
	if os.Getenv("FLUSS_INGEST_BENCH_ASSERT") == "1" {
		assert.GreaterOrEqual(t, best["arrow"]/best["json"], 3.0, "Arrow IPC >= 3x JSON appends")
		assert.GreaterOrEqual(t, best["ndjson"]/best["json"], 1.0, "NDJSON >= 1x JSON")
	}
}

func envInt(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil && v > 0 {
		return v
	}
	return def
}

func sumLen(bs [][]byte) int {
	n := 0
	for _, b := range bs {
		n += len(b)
	}
	return n
}
