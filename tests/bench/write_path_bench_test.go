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
	"testing"

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
	out := make([]domain.DataType, len(cols))
	for i, c := range cols {
		out[i] = c.Type
	}
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
	reportPerRow(b)
}

// BenchmarkJSONToArrowBatch: a 10,000-entry append body → decoded rows →
// ZSTD-compressed Arrow log batches of 1,000 rows. Reported per row.
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
	in := body("append", rowsPerRequest)
	var buf rowjson.Buffer
	out := make([]byte, 0, 1<<20)
	lim := rowjson.Limits{MaxEntries: rowsPerRequest}
	warmUp(b, codec, &buf, in, lim)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		buf.Reset()
		batch, _, err := codec.DecodeWriteTo(&buf, in, lim)
		if err != nil {
			b.Fatal(err)
		}
		for i := range batch.Entries {
			if err := ab.Append(batch.Entries[i].Row); err != nil {
				b.Fatal(err)
			}
			if ab.RecordCount() == 1000 {
				if out, _, err = ab.BuildLogBatch(out[:0], 1, -1, -1); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.StopTimer()
	reportPerRow(b)
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

// reportPerRow adds ns/row next to the per-request (10,000-row) ns/op;
// allocs/row is allocs/op divided by 10,000.
func reportPerRow(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rowsPerRequest), "ns/row")
	b.ReportMetric(rowsPerRequest, "rows/op")
}
