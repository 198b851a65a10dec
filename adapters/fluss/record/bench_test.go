package record

import (
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Benchmarks of the write path on a 10-column row (strings, integers, a
// decimal, a timestamp, bytes). One op is one row, so ns/op is ns/row and
// allocs/op is allocs/row. Run with:
//
//	go test ./adapters/fluss/record -run '^$' -bench . -benchmem -count 5

func benchSchema() ([]domain.DataType, []domain.Datum) {
	tys := types(
		notNull(typ(domain.TypeBigInt)), // id, the primary key
		typ(domain.TypeString),          // name
		typ(domain.TypeString),          // email
		typ(domain.TypeInteger),         // age
		typ(domain.TypeDouble),          // score
		decimalT(10, 2),                 // amount
		ltzT(6),                         // created_at
		typ(domain.TypeBytes),           // payload
		typ(domain.TypeString),          // city
		typ(domain.TypeBoolean),         // active
	)
	payload := make([]byte, 32)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	vals := row(
		i64(1234567890123),
		str("Ada Lovelace"),
		str("ada.lovelace@example.com"),
		i64(36),
		f64(98.25),
		i64(1234599),
		ts(1748662955428, 99000),
		domain.Datum{Bytes: payload},
		str("London"),
		i64(1),
	)
	return tys, vals
}

const benchBatchLimit = 2 << 20 // client.writer.batch-size default

// BenchmarkKvBatchEncode measures what the writer does per upserted row:
// encode the key, pick the bucket, encode the value into the batch; the
// batch is built (header + CRC) and reset every 2 MB, so that cost is
// amortised into the per-row figure.
func BenchmarkKvBatchEncode(b *testing.B) {
	tys, vals := benchSchema()
	keyEnc, err := NewCompactedKeyEncoder(tys, []int{0})
	if err != nil {
		b.Fatal(err)
	}
	valEnc, err := NewCompactedRowEncoder(tys)
	if err != nil {
		b.Fatal(err)
	}
	batch, err := NewKvBatchBuilder(1, make([]byte, 0, benchBatchLimit+1024))
	if err != nil {
		b.Fatal(err)
	}
	bucketing := FlussBucketing{}
	key := make([]byte, 0, 64)
	var seq int32
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		vals[0].I64 = int64(i)
		if key, err = keyEnc.AppendKey(key[:0], vals); err != nil {
			b.Fatal(err)
		}
		if _, err = bucketing.Bucket(key, 16); err != nil {
			b.Fatal(err)
		}
		if err = batch.Upsert(key, valEnc, vals); err != nil {
			b.Fatal(err)
		}
		if batch.SizeInBytes() >= benchBatchLimit {
			_ = batch.Build(42, seq)
			seq++
			if err = batch.Reset(1); err != nil {
				b.Fatal(err)
			}
		}
	}
	_ = batch.Build(42, seq)
}

// BenchmarkCompactedRowEncode measures the value row encoding alone.
func BenchmarkCompactedRowEncode(b *testing.B) {
	tys, vals := benchSchema()
	enc, err := NewCompactedRowEncoder(tys)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if buf, err = enc.AppendRow(buf[:0], vals); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkKeyAndBucket measures key encoding plus the Fluss bucketing hash.
func BenchmarkKeyAndBucket(b *testing.B) {
	tys, vals := benchSchema()
	enc, err := NewCompactedKeyEncoder(tys, []int{0, 1})
	if err != nil {
		b.Fatal(err)
	}
	key := make([]byte, 0, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		vals[0].I64 = int64(i)
		if key, err = enc.AppendKey(key[:0], vals); err != nil {
			b.Fatal(err)
		}
		if _, err = (FlussBucketing{}).Bucket(key, 16); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompactedRowDecode measures decoding a lookup value row into a
// reused Datum slice.
func BenchmarkCompactedRowDecode(b *testing.B) {
	tys, vals := benchSchema()
	enc, _ := NewCompactedRowEncoder(tys)
	src, err := enc.AppendRow(nil, vals)
	if err != nil {
		b.Fatal(err)
	}
	dec, _ := NewCompactedRowDecoder(tys)
	out := make([]domain.Datum, len(tys))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if out, err = dec.DecodeRow(out, src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexedLogBatchEncode measures appending a row to an INDEXED log batch.
func BenchmarkIndexedLogBatchEncode(b *testing.B) {
	tys, vals := benchSchema()
	tys[7] = binaryT(32) // fixed-width in IndexedRow, like the rest
	enc, err := NewIndexedRowEncoder(tys)
	if err != nil {
		b.Fatal(err)
	}
	batch, err := NewRowLogBatchBuilder(enc, 1, true, make([]byte, 0, benchBatchLimit+1024))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err = batch.Append(ChangeAppendOnly, vals); err != nil {
			b.Fatal(err)
		}
		if batch.SizeInBytes() >= benchBatchLimit {
			_ = batch.Build(42, 0)
			if err = batch.Reset(1); err != nil {
				b.Fatal(err)
			}
		}
	}
}
