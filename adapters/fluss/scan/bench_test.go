package scan

import (
	"context"
	"encoding/binary"
	"fmt"
	"syscall"
	"testing"
	"time"

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
		require.NoError(b, s.decodeBucket(context.Background(), tb, p, fb, data, -1, nil))
		if len(fb.Records) != 10_000 {
			b.Fatal(len(fb.Records))
		}
	}
}

// BenchmarkFetch reads 10,000 rows of the benchmark table from four
// buckets (2,500 each, batches of 2,000 rows) through Fetch, as one scan
// request of tests/bench-native/scan.sh does, decoding in order (in-order)
// and ahead on GOMAXPROCS goroutines (ahead); ns/op / 10,000 is the cost
// per row.
func BenchmarkFetch(b *testing.B) {
	records := map[int32][]byte{}
	for i := range int32(4) {
		records[i] = bench10Bucket(b, 2500)
	}
	for _, mode := range []struct {
		name    string
		workers int
	}{{"in-order", 1}, {"ahead", 0}} {
		b.Run(mode.name, func(b *testing.B) {
			withAheadWorkers(b, mode.workers)
			md := fourBucketMD()
			md.t.Info.Descriptor.Schema.Columns = bench10Columns
			s := New(&fakeCaller{records: records}, md, Options{})
			var pos []domain.BucketOffset
			for i := range int32(4) {
				pos = append(pos, domain.BucketOffset{LogBucket: domain.LogBucket{PartitionID: -1, Bucket: i}})
			}
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				resp, err := s.Fetch(context.Background(), &domain.FetchLogRequest{Table: md.t.Path(), TableID: 7, Positions: pos, MaxRecords: 10_000})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for _, fb := range resp.Buckets {
					n += len(fb.Records)
				}
				if n != 10_000 {
					b.Fatal(n)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(10_000*b.N), "cpu-ns/row")
		})
	}
}

// cpuTime is the process's CPU time (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
