package writer

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// benchTable is a 10-column primary-key table: strings, integers, a
// decimal, a timestamp and bytes, like the HTTP JSON benchmark row.
func benchTable() *metatest.Table {
	cols := []domain.Column{
		{Name: "id", Type: domain.DataType{Root: domain.TypeBigInt}},
		{Name: "name", Type: domain.DataType{Root: domain.TypeString, Nullable: true}},
		{Name: "city", Type: domain.DataType{Root: domain.TypeString, Nullable: true}},
		{Name: "age", Type: domain.DataType{Root: domain.TypeInteger, Nullable: true}},
		{Name: "score", Type: domain.DataType{Root: domain.TypeDouble, Nullable: true}},
		{Name: "amount", Type: domain.DataType{Root: domain.TypeDecimal, Precision: 12, Scale: 2, Nullable: true}},
		{Name: "ts", Type: domain.DataType{Root: domain.TypeTimestampLTZ, Precision: 3, Nullable: true}},
		{Name: "flag", Type: domain.DataType{Root: domain.TypeBoolean, Nullable: true}},
		{Name: "payload", Type: domain.DataType{Root: domain.TypeBytes, Nullable: true}},
		{Name: "n", Type: domain.DataType{Root: domain.TypeBigInt, Nullable: true}},
	}
	for i := range cols {
		cols[i].ID = int32(i)
	}
	return &metatest.Table{ID: 42, Path: domain.TablePath{Database: "db", Table: "bench"}, Desc: domain.TableDescriptor{
		Schema:      domain.Schema{Columns: cols, PrimaryKey: []string{"id"}, HighestFieldID: 9},
		BucketCount: 8, Properties: map[string]string{}, CustomProperties: map[string]string{},
	}}
}

func benchRow(i int64) []domain.Datum {
	return []domain.Datum{
		{I64: i}, {Bytes: []byte("Alice Example")}, {Bytes: []byte("Zürich")}, {I64: 42}, {F64: 98.25},
		{I64: 1234567}, {I64: 1767225600000 + i}, {I64: 1}, {Bytes: []byte("aGVsbG8gd29ybGQ=")}, {I64: i * 7},
	}
}

// BenchmarkEncodeRowToBatch measures the per-row cost of the write path
// without I/O: primary key, bucket and CompactedRow value into the request
// arena (Writer.Write's encode step), then the record appended to a KV batch
// (the drain step).
func BenchmarkEncodeRowToBatch(b *testing.B) {
	fake := metatest.New(1)
	fake.AddTable(benchTable())
	cache := meta.New(fake, meta.Options{})
	tb, err := cache.Table(context.Background(), domain.TablePath{Database: "db", Table: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	c, err := newCodec(tb, tb.Info.SchemaID, tb.Info.Descriptor.Schema, nil)
	if err != nil {
		b.Fatal(err)
	}
	const rows = 1000
	entries := make([]domain.WriteEntry, rows)
	for i := range entries {
		entries[i] = domain.WriteEntry{Op: domain.OpUpsert, Row: benchRow(int64(i))}
	}
	arena := make([]byte, 0, 1<<20)
	kvb, _ := record.NewKvBatchBuilder(1, make([]byte, 0, 1<<20))
	encs := make([]encoded, rows)
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		arena = arena[:0]
		for i := range entries {
			var e encoded
			arena, e, _, err = c.encode(arena, &entries[i], nil)
			if err != nil {
				b.Fatal(err)
			}
			encs[i] = e
		}
		_ = kvb.Reset(1)
		for i := range encs {
			e := &encs[i]
			_ = kvb.UpsertEncoded(arena[e.keyOff:e.keyOff+e.keyLen], arena[e.valOff:e.valOff+e.valLen])
		}
		_ = kvb.Build(7, int32(it))
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
	b.ReportMetric(float64(testing.AllocsPerRun(1, func() {
		arena = arena[:0]
		for i := range entries {
			arena, encs[i], _, _ = c.encode(arena, &entries[i], nil)
		}
	}))/rows, "allocs/row")
}

// BenchmarkWriteFake runs whole Write calls (encode, enqueue, drain, batch,
// PutKv to an in-memory fake, verdicts) of 1,000 rows.
func BenchmarkWriteFake(b *testing.B) {
	fake := metatest.New(1)
	fake.AddTable(benchTable())
	cache := meta.New(fake, meta.Options{})
	w := New(fake, cache, Options{Linger: time.Millisecond})
	defer w.Close(context.Background())
	const rows = 1000
	entries := make([]domain.WriteEntry, rows)
	for i := range entries {
		entries[i] = domain.WriteEntry{Op: domain.OpUpsert, Row: benchRow(int64(i))}
	}
	wb := &domain.WriteBatch{Table: domain.TablePath{Database: "db", Table: "bench"}, Entries: entries}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		res, err := w.Write(ctx, wb)
		if err != nil || !res[rows-1].OK() {
			b.Fatal(err, fmt.Sprint(res[rows-1]))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
}
