package rowjson

import (
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/bench10"
)

// bench10Codec is the primary-key table of make bench-native
// (tests/bench-native/BenchNative.java, tools/load -schema bench10).
func bench10Codec(b testing.TB) *Codec {
	return mustCodec(b, TableSpec{Columns: []domain.Column{
		col("k", notNull(typ_(domain.TypeBigInt))),
		col("name", typ_(domain.TypeString)),
		col("amount", decimalT(18, 2)),
		col("qty", typ_(domain.TypeInteger)),
		col("price", typ_(domain.TypeDouble)),
		col("flag", typ_(domain.TypeBoolean)),
		col("day", typ_(domain.TypeDate)),
		col("ts", precT(domain.TypeTimestampLTZ, 3)),
		col("note", typ_(domain.TypeString)),
		col("raw", typ_(domain.TypeBytes)),
	}, PrimaryKey: []string{"k"}})
}

// bench10Body is a write body of rows upserts as tools/load -schema bench10
// sends them (tools/load benchRow), keys from first.
func bench10Body(first int64, rows int) []byte {
	b := []byte(`{"entries":[`)
	for i := first; i < first+int64(rows); i++ {
		if i > first {
			b = append(b, ',')
		}
		b = bench10.AppendUpsert(b, i)
	}
	return append(b, "]}"...)
}

// BenchmarkDecodeBench10 decodes make bench-native's 500-entry PK bodies
// into a pooled Buffer, as the gateway's write route does.
//
//	go test ./adapters/http/rowjson/ -run '^$' -bench BenchmarkDecodeBench10
func BenchmarkDecodeBench10(b *testing.B) {
	const rows = 500
	c := bench10Codec(b)
	body := bench10Body(1_000_000, rows)
	lim := Limits{MaxEntries: rows}
	var buf Buffer
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		buf.Reset()
		batch, _, err := c.DecodeWriteTo(&buf, body, lim)
		if err != nil || len(batch.Entries) != rows {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*rows), "cpu-ns/row")
}

// BenchmarkDecodeBench10Rotating is BenchmarkDecodeBench10 with 16 bodies
// and 16 Buffers used in turn, as 16 concurrent requests use the gateway's
// pooled buffers: the rows' memory is no longer in the CPU's caches when a
// body is decoded into it.
func BenchmarkDecodeBench10Rotating(b *testing.B) {
	const rows, n = 500, 16
	c := bench10Codec(b)
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = bench10Body(int64(i*rows), rows)
	}
	bufs := make([]Buffer, n)
	lim := Limits{MaxEntries: rows}
	b.SetBytes(int64(len(bodies[0])))
	b.ReportAllocs()
	cpu0 := cpuTime()
	i := 0
	for b.Loop() {
		buf := &bufs[i%n]
		buf.Reset()
		batch, _, err := c.DecodeWriteTo(buf, bodies[i%n], lim)
		if err != nil || len(batch.Entries) != rows {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*rows), "cpu-ns/row")
}
