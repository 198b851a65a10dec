package http

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
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
