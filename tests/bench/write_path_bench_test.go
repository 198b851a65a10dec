// Package bench holds benchmarks that span adapters: the whole write path from
// an HTTP/JSON body to the bytes of Fluss record batches, exactly as the
// gateway runs it (rowjson decoder → key encoder → bucketing → CompactedRow →
// KV batch, or → Arrow log batch).
//
//	go test -run '^$' -bench . -benchmem ./tests/bench/
package bench

import (
	"encoding/base64"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record/arrowlog"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/http/rowjson"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

const rowsPerRequest = 10_000

func dt(root domain.TypeRoot, nullable bool) domain.DataType {
	return domain.DataType{Root: root, Nullable: nullable}
}

// columns is a 10-column table: strings, integers, a decimal, a timestamp and
// bytes.
func columns() []domain.Column {
	dec := dt(domain.TypeDecimal, true)
	dec.Precision, dec.Scale = 12, 2
	ts := dt(domain.TypeTimestampNTZ, true)
	ts.Precision = 3
	char2 := dt(domain.TypeChar, true)
	char2.Length = 2
	return []domain.Column{
		{Name: "id", Type: dt(domain.TypeBigInt, false), ID: 0},
		{Name: "user", Type: dt(domain.TypeString, false), ID: 1},
		{Name: "email", Type: dt(domain.TypeString, true), ID: 2},
		{Name: "country", Type: char2, ID: 3},
		{Name: "age", Type: dt(domain.TypeInteger, true), ID: 4},
		{Name: "visits", Type: dt(domain.TypeBigInt, true), ID: 5},
		{Name: "level", Type: dt(domain.TypeSmallInt, true), ID: 6},
		{Name: "amount", Type: dec, ID: 7},
		{Name: "created", Type: ts, ID: 8},
		{Name: "payload", Type: dt(domain.TypeBytes, true), ID: 9},
	}
}

func body(op string, rows int) []byte {
	payload := base64.StdEncoding.EncodeToString([]byte("some opaque payload bytes, 48 bytes long......."))
	b := []byte(`{"entries":[`)
	for i := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":"e%d","%s":{"id":%d,"user":"user-%d","email":"user%d@example.com","country":"FR",`+
			`"age":%d,"visits":"%d","level":%d,"amount":"%d.%02d","created":"2024-05-%02dT12:34:56.%03d","payload":"%s"}}`,
			i, op, 1_000_000+i, i, i, 18+i%60, 10_000+i*7, i%100, i*13%100000, i%100, 1+i%28, i%1000, payload)
	}
	return append(b, "]}"...)
}

func types(cols []domain.Column) []domain.DataType {
	out := domain.ColumnTypes(cols)
	return out
}

// BenchmarkJSONToKvBatch: a 10,000-entry upsert body → decoded rows →
// primary key + bucket + CompactedRow value → KV record batches of at most
// 2 MiB (CRC included). Reported per row.
func BenchmarkJSONToKvBatch(b *testing.B) {
	cols := columns()
	codec, err := rowjson.NewCodec(rowjson.TableSpec{Columns: cols, PrimaryKey: []string{"id"}})
	if err != nil {
		b.Fatal(err)
	}
	tys := types(cols)
	keyEnc, err := record.NewPrimaryKeyEncoder(tys, []int{0}, record.LakeNone, 2, true)
	if err != nil {
		b.Fatal(err)
	}
	valEnc, err := record.NewCompactedRowEncoder(tys)
	if err != nil {
		b.Fatal(err)
	}
	bucketing := record.FlussBucketing{}
	kv, err := record.NewKvBatchBuilder(1, make([]byte, 0, 4<<20))
	if err != nil {
		b.Fatal(err)
	}
	in := body("upsert", rowsPerRequest)
	var buf rowjson.Buffer
	key := make([]byte, 0, 64)
	lim := rowjson.Limits{MaxEntries: rowsPerRequest}
	warmUp(b, codec, &buf, in, lim)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for n := 0; n < b.N; n++ {
		buf.Reset()
		batch, _, err := codec.DecodeWriteTo(&buf, in, lim)
		if err != nil {
			b.Fatal(err)
		}
		for i := range batch.Entries {
			row := batch.Entries[i].Row
			key, err = keyEnc.AppendKey(key[:0], row)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := bucketing.Bucket(key, 16); err != nil {
				b.Fatal(err)
			}
			if err := kv.Upsert(key, valEnc, row); err != nil {
				b.Fatal(err)
			}
			if kv.SizeInBytes() >= 2<<20 {
				_ = kv.Build(1, 0)
				_ = kv.Reset(1)
			}
		}
		_ = kv.Build(1, 0)
		_ = kv.Reset(1)
	}
	b.StopTimer()
	reportPerRow(b, cpu0)
}

// BenchmarkJSONToArrowBatch: a 10,000-entry append body → decoded rows →
// each row checked and encoded into the request's arena in the Arrow
// builder's row form (what the writer keeps per queued row) → ZSTD-compressed
// Arrow log batches of 1,000 rows built from those encoded rows, as the
// writer's sender builds them. Reported per row.
func BenchmarkJSONToArrowBatch(b *testing.B) {
	cols := columns()
	codec, err := rowjson.NewCodec(rowjson.TableSpec{Columns: cols})
	if err != nil {
		b.Fatal(err)
	}
	ab, err := arrowlog.NewBuilder(cols, arrowlog.CompressionZstd, 3)
	if err != nil {
		b.Fatal(err)
	}
	enc := ab.RowEncoder()
	if enc == nil {
		b.Fatal("no row encoder for a flat schema")
	}
	in := body("append", rowsPerRequest)
	var buf rowjson.Buffer
	out := make([]byte, 0, 1<<20)
	arena := make([]byte, 0, 4<<20)
	ends := make([]int, 0, rowsPerRequest)
	lim := rowjson.Limits{MaxEntries: rowsPerRequest}
	warmUp(b, codec, &buf, in, lim)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for n := 0; n < b.N; n++ {
		buf.Reset()
		batch, _, err := codec.DecodeWriteTo(&buf, in, lim)
		if err != nil {
			b.Fatal(err)
		}
		arena, ends = arena[:0], ends[:0]
		for i := range batch.Entries {
			if arena, err = enc.AppendRow(arena, batch.Entries[i].Row); err != nil {
				b.Fatal(err)
			}
			ends = append(ends, len(arena))
		}
		start := 0
		for _, end := range ends {
			if err := ab.AppendEncoded(arena[start:end]); err != nil {
				b.Fatal(err)
			}
			start = end
			if ab.RecordCount() == 1000 {
				if out, _, err = ab.BuildLogBatch(out[:0], 1, -1, -1); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.StopTimer()
	reportPerRow(b, cpu0)
}

// warmUp decodes in once into buf, so that the timed loop measures a pooled
// Buffer at its working size (as the gateway's Buffer pool keeps them), not
// the one-time growth of its chunks (about 10 MB for 10,000 rows).
func warmUp(b *testing.B, codec *rowjson.Codec, buf *rowjson.Buffer, in []byte, lim rowjson.Limits) {
	buf.Reset()
	if _, _, err := codec.DecodeWriteTo(buf, in, lim); err != nil {
		b.Fatal(err)
	}
	buf.Reset()
}

// reportPerRow adds ns/row next to the per-request (10,000-row) ns/op, and
// cpu-ns/row: the process's CPU time (user + system, GC included) per row
// since cpu0, which other load on the machine disturbs far less than the
// wall time. allocs/row is allocs/op divided by 10,000.
func reportPerRow(b *testing.B, cpu0 time.Duration) {
	rows := float64(b.N * rowsPerRequest)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/rows, "ns/row")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/rows, "cpu-ns/row")
	b.ReportMetric(rowsPerRequest, "rows/op")
}

// cpuTime is the process's user + system CPU time (getrusage).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
