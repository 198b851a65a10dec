package scan

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// bench10Columns are the columns of the scan benchmark's table
// (tests/bench-native/BenchNative.java).
var bench10Columns = []domain.Column{
	{Name: "k", Type: domain.DataType{Root: domain.TypeBigInt}, ID: 0},
	{Name: "name", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: 1},
	{Name: "amount", Type: domain.DataType{Root: domain.TypeDecimal, Precision: 18, Scale: 2, Nullable: true}, ID: 2},
	{Name: "qty", Type: domain.DataType{Root: domain.TypeInteger, Nullable: true}, ID: 3},
	{Name: "price", Type: domain.DataType{Root: domain.TypeDouble, Nullable: true}, ID: 4},
	{Name: "flag", Type: domain.DataType{Root: domain.TypeBoolean, Nullable: true}, ID: 5},
	{Name: "day", Type: domain.DataType{Root: domain.TypeDate, Nullable: true}, ID: 6},
	{Name: "ts", Type: domain.DataType{Root: domain.TypeTimestampLTZ, Precision: 3, Nullable: true}, ID: 7},
	{Name: "note", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: 8},
	{Name: "raw", Type: domain.DataType{Root: domain.TypeBytes, Nullable: true}, ID: 9},
}

// Bench10Row is row i of the scan benchmark's table.
func bench10Row(i int64) []domain.Datum {
	raw := make([]byte, 16)
	binary.BigEndian.PutUint64(raw, uint64(i))
	binary.BigEndian.PutUint64(raw[8:], uint64(i))
	return []domain.Datum{{I64: i}, {Bytes: []byte(fmt.Sprintf("user-%d", i))}, {I64: (i * 37) % 1_000_000_000},
		{I64: i % 100000}, {F64: float64(i) * 0.25}, {I64: (i + 1) % 2}, {I64: 19000 + i%1000},
		{I64: 1_700_000_000_000 + i}, {Bytes: []byte(fmt.Sprintf("payload-%d-0123456789abcdef0123456789abcdef", i))}, {Bytes: raw}}
}

// bench10Bucket is one bucket's fetched records: batches of 2,000 rows
// (ARROW, ZSTD), rows in all.
func bench10Bucket(b testing.TB, rows int) []byte {
	var out []byte
	for base := 0; base < rows; base += 2000 {
		var rs [][]domain.Datum
		for i := base; i < min(rows, base+2000); i++ {
			rs = append(rs, bench10Row(int64(i)))
		}
		out = append(out, arrowBatch(b, bench10Columns, int64(base), 1_700_000_000_123, nil, rs...)...)
	}
	return out
}

// BenchmarkDecodeBucket decodes 10,000 rows of the benchmark table (the
// scan's max_rows in tests/bench-native/scan.sh); ns/op / 10,000 is the
// decode cost per row.
func BenchmarkDecodeBucket(b *testing.B) {
	data := bench10Bucket(b, 10_000)
	s := New(nil, nil, Options{})
	tb := &meta.Table{Info: domain.TableInfo{Path: domain.TablePath{Database: "db", Table: "t"}, TableID: 7, SchemaID: 1,
		Descriptor: domain.TableDescriptor{Schema: domain.Schema{Columns: bench10Columns}}}, NumBuckets: 1}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		p := &plan{format: logArrow, current: tb.Info.Descriptor.Schema, want: bench10Columns, decoders: map[int32]*batchDecoder{}}
		fb := &domain.FetchedBucket{NextOffset: 0}
		require.NoError(b, s.decodeBucket(context.Background(), tb, p, fb, data, -1))
		if len(fb.Records) != 10_000 {
			b.Fatal(len(fb.Records))
		}
	}
}
