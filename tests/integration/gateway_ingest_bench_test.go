//go:build integration

package integration

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			line := benchJSONEntry(i)
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
	arrowBody := benchArrowBody(t, rows, per)
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

// benchJSONEntry is row i of wrBenchRow as a JSON append entry.
func benchJSONEntry(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"id":"e%d","append":{"id":%d,"name":"user-%08d","city":"Zürich","age":%d,"score":%g,`, i, i, i, i%100, float64(i)/3)
	amount := 1234567 + i
	fmt.Fprintf(&b, `"amount":"%d.%02d","ts":"%s","flag":%t,"payload":%q,"n":%d}}`,
		amount/100, amount%100, time.UnixMilli(1767225600000+int64(i)).UTC().Format("2006-01-02T15:04:05.000Z"),
		i%2 == 1, base64.StdEncoding.EncodeToString([]byte("aGVsbG8gd29ybGQ=")), i*7)
	return b.String()
}

// benchArrowBody is the same rows as an Arrow IPC stream.
func benchArrowBody(t *testing.T, rows, per int) []byte {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "age", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "payload", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	var recs []arrow.RecordBatch
	for start := 0; start < rows; start += per {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, s)
		for i := start; i < min(start+per, rows); i++ {
			rb.Field(0).(*array.Int64Builder).Append(int64(i))
			rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("user-%08d", i))
			rb.Field(2).(*array.StringBuilder).Append("Zürich")
			rb.Field(3).(*array.Int32Builder).Append(int32(i % 100))
			rb.Field(4).(*array.Float64Builder).Append(float64(i) / 3)
			rb.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(1234567 + i)))
			rb.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(1767225600000 + int64(i)))
			rb.Field(7).(*array.BooleanBuilder).Append(i%2 == 1)
			rb.Field(8).(*array.BinaryBuilder).Append([]byte("aGVsbG8gd29ybGQ="))
			rb.Field(9).(*array.Int64Builder).Append(int64(i * 7))
		}
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	return ingestStream(t, s, recs...)
}
