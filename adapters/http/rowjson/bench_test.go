package rowjson

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// benchColumns are the columns of a 10-column table: strings, integers, a
// decimal, a timestamp and bytes.
func benchColumns() []domain.Column {
	return []domain.Column{
		col("id", notNull(typ_(domain.TypeBigInt))),
		col("user", notNull(typ_(domain.TypeString))),
		col("email", typ_(domain.TypeString)),
		col("country", charT(2)),
		col("age", typ_(domain.TypeInteger)),
		col("visits", typ_(domain.TypeBigInt)),
		col("level", typ_(domain.TypeSmallInt)),
		col("amount", decimalT(12, 2)),
		col("created", precT(domain.TypeTimestampNTZ, 3)),
		col("payload", typ_(domain.TypeBytes)),
	}
}

// benchCodec is the primary-key table (id) of benchColumns.
func benchCodec(b testing.TB) *Codec {
	return mustCodec(b, TableSpec{Columns: benchColumns(), PrimaryKey: []string{"id"}})
}

func benchBody(rows int) []byte {
	payload := base64.StdEncoding.EncodeToString([]byte("some opaque payload bytes, 48 bytes long......."))
	b := []byte(`{"entries":[`)
	for i := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":"e%d","upsert":{"id":%d,"user":"user-%d","email":"user%d@example.com","country":"FR",`+
			`"age":%d,"visits":"%d","level":%d,"amount":"%d.%02d","created":"2024-05-%02dT12:34:56.%03d","payload":"%s"}}`,
			i, 1_000_000+i, i, i, 18+i%60, 10_000+i*7, i%100, i*13%100000, i%100, 1+i%28, i%1000, payload)
	}
	return append(b, "]}"...)
}

// BenchmarkDecodeWrite decodes a 10,000-entry body of 10-column rows and
// reports the cost per row. "fresh" allocates the rows' memory per request
// (DecodeWrite); "pooled" reuses it through Buffer.Reset (DecodeWriteTo), as a
// server pooling Buffers would. "pooled-general" is "pooled" without the fast
// path (fast.go): the general jsontext decoder, which every body the fast
// path gives up on goes through.
func BenchmarkDecodeWrite(b *testing.B) {
	const rows = 10_000
	c := benchCodec(b)
	body := benchBody(rows)
	lim := Limits{MaxEntries: rows}
	for _, mode := range []string{"fresh", "pooled", "pooled-general"} {
		pooled := mode != "fresh"
		b.Run(mode, func(b *testing.B) {
			var buf Buffer
			decode := func() {
				var (
					batch domain.WriteBatch
					ids   []string
					err   error
				)
				if pooled {
					buf.Reset()
					batch, ids, err = c.decodeWriteTo(&buf, body, lim, mode == "pooled")
				} else {
					batch, ids, err = c.DecodeWrite(body, lim)
				}
				if err != nil || len(batch.Entries) != rows || len(ids) != rows {
					b.Fatal(err)
				}
			}
			decode()
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu0 := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				decode()
			}
			b.StopTimer()
			cpu := cpuTime() - cpu0
			runtime.ReadMemStats(&after)
			n := float64(b.N) * rows
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/row")
			// CPU time (user+system, all threads, GC included) is reported
			// next to wall time because shared machines make the latter noisy.
			b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/row")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/row")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/row")
		})
	}
}

// BenchmarkTokenizeBaseline only tokenizes the same body with jsontext, in the
// general decoder's call pattern (PeekKind, then ReadValue or ReadToken) and
// options: the floor under BenchmarkDecodeWrite/pooled-general, for reading
// its numbers on a busy machine. The fast path does not tokenize with
// jsontext and decodes below this floor.
func BenchmarkTokenizeBaseline(b *testing.B) {
	const rows = 10_000
	body := benchBody(rows)
	var d jsontext.Decoder
	var rd bytes.Buffer
	for b.Loop() {
		rd = *bytes.NewBuffer(body)
		d.Reset(&rd, decodeOptions...)
		for {
			k := d.PeekKind()
			if k == 0 {
				break
			}
			var err error
			if k == '{' || k == '}' || k == '[' || k == ']' {
				_, err = d.ReadToken()
			} else {
				_, err = d.ReadValue()
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAppendRow encodes one row of the same table.
func BenchmarkAppendRow(b *testing.B) {
	c := benchCodec(b)
	batch, _, err := c.DecodeWrite(benchBody(1), Limits{})
	if err != nil {
		b.Fatal(err)
	}
	cols := benchColumns()
	row := batch.Entries[0].Row
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendRow(buf[:0], cols, row)
	}
}
