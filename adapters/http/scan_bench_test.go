package http

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// scanBenchColumns are the columns of the scan benchmark's table
// (tests/bench-native/BenchNative.java).
var scanBenchColumns = []domain.Column{
	{Name: "k", Type: domain.DataType{Root: domain.TypeBigInt}},
	{Name: "name", Type: domain.DataType{Root: domain.TypeString, Nullable: true}},
	{Name: "amount", Type: domain.DataType{Root: domain.TypeDecimal, Precision: 18, Scale: 2, Nullable: true}},
	{Name: "qty", Type: domain.DataType{Root: domain.TypeInteger, Nullable: true}},
	{Name: "price", Type: domain.DataType{Root: domain.TypeDouble, Nullable: true}},
	{Name: "flag", Type: domain.DataType{Root: domain.TypeBoolean, Nullable: true}},
	{Name: "day", Type: domain.DataType{Root: domain.TypeDate, Nullable: true}},
	{Name: "ts", Type: domain.DataType{Root: domain.TypeTimestampLTZ, Precision: 3, Nullable: true}},
	{Name: "note", Type: domain.DataType{Root: domain.TypeString, Nullable: true}},
	{Name: "raw", Type: domain.DataType{Root: domain.TypeBytes, Nullable: true}},
}

func scanBenchRecords(n int) []application.ScanRecord {
	out := make([]application.ScanRecord, n)
	for i := range out {
		v := int64(i)
		raw := make([]byte, 16)
		binary.BigEndian.PutUint64(raw, uint64(v))
		binary.BigEndian.PutUint64(raw[8:], uint64(v))
		out[i] = application.ScanRecord{Bucket: int32(i % 4), LogRecord: domain.LogRecord{Offset: v,
			Timestamp: 1_764_583_200_123 + v/2000, ChangeType: "+A", Row: []domain.Datum{{I64: v},
				{Bytes: []byte(fmt.Sprintf("user-%d", v))}, {I64: (v * 37) % 1_000_000_000}, {I64: v % 100000},
				{F64: float64(v) * 0.25}, {I64: (v + 1) % 2}, {I64: 19000 + v%1000}, {I64: 1_700_000_000_000 + v},
				{Bytes: []byte(fmt.Sprintf("payload-%d-0123456789abcdef0123456789abcdef", v))}, {Bytes: raw}}}}
	}
	return out
}

// BenchmarkRenderScanRecords renders 10,000 records of the scan benchmark's
// table as POST .../records/scan answers them; ns/op / 10,000 is the cost
// per record.
func BenchmarkRenderScanRecords(b *testing.B) {
	recs := scanBenchRecords(10_000)
	b.ReportAllocs()
	var out []byte
	for b.Loop() {
		out = out[:0]
		r := newScanRenderer(scanBenchColumns)
		for i := range recs {
			out = r.appendRecord(out, &recs[i])
		}
	}
	b.SetBytes(int64(len(out)))
}

// BenchmarkRenderScanAnswer renders a whole 9,000-record JSON answer of the
// scan benchmark's table (tests/bench-native/scan.sh's requests): one record
// after the other into a doubling buffer (one-by-one, the render before
// chunks), in chunks on one goroutine (chunks-1) and on GOMAXPROCS
// (chunks-N). ns/op is the answer's wall time, cpu-ns/row the process's CPU
// per record (GC included).
func BenchmarkRenderScanAnswer(b *testing.B) {
	res := &application.ScanResult{Columns: scanBenchColumns, Records: scanBenchRecords(9000), Cursor: "c", CaughtUp: true}
	for _, mode := range []struct {
		name    string
		workers int
		render  func(*answerBudget, *application.ScanResult, bool) ([]byte, int, error)
	}{{"one-by-one", 1, renderScanOneByOne}, {"chunks-1", 1, renderScanAnswer}, {"chunks-N", 0, renderScanAnswer}} {
		b.Run(mode.name, func(b *testing.B) {
			withScanRenderWorkers(b, mode.workers)
			budget := membudget.New(1<<30, time.Second)
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				ch := budget.NewCharge()
				out, n, err := mode.render(&answerBudget{ctx: context.Background(), ch: ch, limit: 16 << 20}, res, false)
				if err != nil || n != 9000 {
					b.Fatal(err, n)
				}
				b.SetBytes(int64(len(out)))
				ch.Release()
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(9000*b.N), "cpu-ns/row")
		})
	}
}
