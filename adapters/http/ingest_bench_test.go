package http

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/stretchr/testify/require"
)

// benchTable is a 10-column log table (the columns of the integration
// throughput tests).
const benchTable = `{
  "table_name": "bench",
  "columns": [
    {"name": "id", "data_type": {"type": "BIGINT"}, "nullable": false},
    {"name": "name", "data_type": {"type": "STRING"}},
    {"name": "city", "data_type": {"type": "STRING"}},
    {"name": "age", "data_type": {"type": "INTEGER"}},
    {"name": "score", "data_type": {"type": "DOUBLE"}},
    {"name": "amount", "data_type": {"type": "DECIMAL", "precision": 12, "scale": 2}},
    {"name": "ts", "data_type": {"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 3}},
    {"name": "flag", "data_type": {"type": "BOOLEAN"}},
    {"name": "payload", "data_type": {"type": "BYTES"}},
    {"name": "n", "data_type": {"type": "BIGINT"}}
  ]
}`

func benchEntry(i int) string {
	amount := 1234567 + i
	return fmt.Sprintf(`{"id":"e%d","append":{"id":%d,"name":"user-%08d","city":"Zürich","age":%d,"score":%g,"amount":"%d.%02d","ts":"%s","flag":%t,"payload":%q,"n":%d}}`,
		i, i, i, i%100, float64(i)/3, amount/100, amount%100,
		time.UnixMilli(1767225600000+int64(i)).UTC().Format("2006-01-02T15:04:05.000Z"), i%2 == 1,
		base64.StdEncoding.EncodeToString([]byte("aGVsbG8gd29ybGQ=")), i*7)
}

func benchArrow(tb testing.TB, rows, per int) []byte {
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
	var batches [][]func(array.Builder)
	for start := 0; start < rows; start += per {
		n := min(per, rows-start)
		batches = append(batches, []func(array.Builder){
			func(b array.Builder) {
				for i := start; i < start+n; i++ {
					b.(*array.Int64Builder).Append(int64(i))
				}
			},
			func(b array.Builder) {
				for i := start; i < start+n; i++ {
					b.(*array.StringBuilder).Append(fmt.Sprintf("user-%08d", i))
				}
			},
			func(b array.Builder) {
				for range n {
					b.(*array.StringBuilder).Append("Zürich")
				}
			},
			func(b array.Builder) {
				for i := start; i < start+n; i++ {
					b.(*array.Int32Builder).Append(int32(i % 100))
				}
			},
			func(b array.Builder) {
				for i := start; i < start+n; i++ {
					b.(*array.Float64Builder).Append(float64(i) / 3)
				}
			},
			func(b array.Builder) {
				for i := start; i < start+n; i++ {
					b.(*array.Decimal128Builder).Append(decimal128.FromI64(int64(1234567 + i)))
				}
			},
			func(b array.Builder) {
				for i := start; i < start+n; i++ {
					b.(*array.TimestampBuilder).Append(arrow.Timestamp(1767225600000 + int64(i)))
				}
			},
			func(b array.Builder) {
				for i := start; i < start+n; i++ {
					b.(*array.BooleanBuilder).Append(i%2 == 1)
				}
			},
			func(b array.Builder) {
				for range n {
					b.(*array.BinaryBuilder).Append([]byte("aGVsbG8gd29ybGQ="))
				}
			},
			func(b array.Builder) {
				for i := start; i < start+n; i++ {
					b.(*array.Int64Builder).Append(int64(i * 7))
				}
			},
		})
	}
	return arrowStream(tb, s, batches...)
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
