package main

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-gateway/fluss-gateway-go/internal/bench10"
)

// Arrow IPC bodies (-body arrow): the rows benchRow renders as JSON, as one
// Arrow IPC stream per request (one record batch of -rows rows), with the
// Arrow types the gateway maps to the bench10 columns (docs/streaming.md, "Streamed
// write bodies"): k int64, name utf8, amount decimal128(18, 2), qty int32,
// price float64, flag bool, day date32, ts timestamp[ms, UTC], note utf8,
// raw binary. Appends to log tables only.

var bench10Arrow = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: &arrow.Decimal128Type{Precision: 18, Scale: 2}, Nullable: true},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "raw", Type: arrow.BinaryTypes.Binary, Nullable: true},
}, nil)

// benchArrowBodies returns one Arrow IPC stream per per rows of ids
// from..to-1; with zstd its record batch bodies are compressed with ZSTD
// (IPC BodyCompression, as pyarrow's IpcWriteOptions(compression="zstd")).
func benchArrowBodies(from, to int64, per int, zstd bool) ([][]byte, error) {
	var out [][]byte
	for start := from; start < to; start += int64(per) {
		end := min(start+int64(per), to)
		rb := array.NewRecordBuilder(memory.DefaultAllocator, bench10Arrow)
		for i := start; i < end; i++ {
			rb.Field(0).(*array.Int64Builder).Append(i)
			rb.Field(1).(*array.StringBuilder).Append("user-" + strconv.FormatInt(i, 10))
			rb.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(bench10.FloorMod(i*37, 1_000_000_000)))
			rb.Field(3).(*array.Int32Builder).Append(int32(bench10.FloorMod(i, 100_000)))
			rb.Field(4).(*array.Float64Builder).Append(float64(i) * 0.25)
			rb.Field(5).(*array.BooleanBuilder).Append(i%2 == 0)
			rb.Field(6).(*array.Date32Builder).Append(arrow.Date32(19000 + bench10.FloorMod(i, 1000)))
			rb.Field(7).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000 + i))
			rb.Field(8).(*array.StringBuilder).Append("payload-" + strconv.FormatInt(i, 10) + "-0123456789abcdef0123456789abcdef")
			var raw [16]byte
			for k := range 8 {
				raw[k] = byte(uint64(i) >> (56 - 8*k))
				raw[8+k] = raw[k]
			}
			rb.Field(9).(*array.BinaryBuilder).Append(raw[:])
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		var buf bytes.Buffer
		opts := []ipc.Option{ipc.WithSchema(bench10Arrow)}
		if zstd {
			opts = append(opts, ipc.WithZstd())
		}
		w := ipc.NewWriter(&buf, opts...)
		err := w.Write(rec)
		rec.Release()
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("arrow body: %w", err)
		}
		out = append(out, buf.Bytes())
	}
	return out, nil
}
