package arrowlog

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// benchTypes: ten columns of a typical event table: ints, strings, a
// decimal, a timestamp and bytes.
func benchTypes() []domain.DataType {
	return []domain.DataType{
		notNull(typ(domain.TypeBigInt)),   // id
		typ(domain.TypeInteger),           // tenant
		typ(domain.TypeString),            // event type (low cardinality)
		typ(domain.TypeString),            // user agent-ish, ~40 bytes
		typ(domain.TypeInteger),           // status
		decimalT(12, 2),                   // amount
		precT(domain.TypeTimestampLTZ, 3), // event time
		typ(domain.TypeBytes),             // 16-byte id
		typ(domain.TypeString),            // optional note, half null
		typ(domain.TypeBigInt),            // counter
	}
}

func benchRows(n int) [][]domain.Datum {
	kinds := []string{"click", "view", "purchase", "signup"}
	rows := make([][]domain.Datum, n)
	for i := range rows {
		note := null()
		if i%2 == 0 {
			note = str("note " + strconv.Itoa(i))
		}
		id := make([]byte, 16)
		for j := range id {
			id[j] = byte(i*31 + j)
		}
		rows[i] = row(
			i64(int64(1_000_000+i)), i64(int64(i%17)), str(kinds[i%4]),
			str(fmt.Sprintf("Mozilla/5.0 (X11; Linux x86_64) build %06d", i)),
			i64(int64(200+i%3)), i64(int64(i*137%100000)), ts(1_700_000_000_000+int64(i)*13, 0),
			domain.Datum{Bytes: id}, note, i64(int64(i)*7),
		)
	}
	return rows
}

// BenchmarkBuild appends 1000 ten-column rows and builds one batch; one op
// is one batch.
//
//	go test -run '^$' -bench . -benchmem ./adapters/fluss/record/arrowlog/
func BenchmarkBuild(b *testing.B) {
	const n = 1000
	rows := benchRows(n)
	for _, codec := range []Compression{CompressionZstd, CompressionLZ4Frame, CompressionNone} {
		b.Run(codec.String(), func(b *testing.B) {
			bl, err := NewBuilderFromTypes(benchTypes(), codec, DefaultZstdLevel)
			if err != nil {
				b.Fatal(err)
			}
			var buf []byte
			size := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, rw := range rows {
					if err := bl.Append(rw); err != nil {
						b.Fatal(err)
					}
				}
				var cnt int
				buf, cnt, err = bl.BuildLogBatch(buf[:0], 1, 1, int32(i))
				if err != nil || cnt != n {
					b.Fatal(err, cnt)
				}
				size = len(buf)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
			b.ReportMetric(float64(testing.AllocsPerRun(3, func() {
				for _, rw := range rows {
					_ = bl.Append(rw)
				}
				buf, _, _ = bl.BuildLogBatch(buf[:0], 1, 1, 0)
			}))/n, "allocs/row")
			b.ReportMetric(float64(size), "batch-bytes")
		})
	}
}

// BenchmarkRead decodes the ZSTD batch of BenchmarkBuild.
func BenchmarkRead(b *testing.B) {
	bl, err := NewBuilderFromTypes(benchTypes(), CompressionZstd, DefaultZstdLevel)
	if err != nil {
		b.Fatal(err)
	}
	for _, rw := range benchRows(1000) {
		if err := bl.Append(rw); err != nil {
			b.Fatal(err)
		}
	}
	batch, _, err := bl.BuildLogBatch(nil, 1, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewReaderFromTypes(benchTypes())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := r.ReadLogBatch(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/row")
}

// BenchmarkFreshZstdSerializer is what a serializer the pool dropped at a
// collection costs the next batch: a new ZSTD encoder compressing a 1 MiB
// column buffer (its history is allocated on first use).
func BenchmarkFreshZstdSerializer(b *testing.B) {
	raw := make([]byte, 1<<20)
	for i := range raw {
		raw[i] = byte(i*7) ^ byte(i>>9)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		s, err := newSerializer(CompressionZstd, 3)
		if err != nil {
			b.Fatal(err)
		}
		s.begin()
		s.compress(span{b: raw})
	}
}
