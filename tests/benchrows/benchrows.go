// Package benchrows holds the rows of the ingest throughput measurements
// (adapters/http's BenchmarkIngest* and tests/integration's
// TestGatewayIngestRelativeThroughput): one 10-column log table whose row i
// is a function of i, as official JSON append entries and as Arrow IPC
// streams, so that every body format carries the same values.
package benchrows

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TableJSON is the official create-table body of the table (`bench`).
const TableJSON = `{
  "table_name": "bench",
  "columns": [
    {"name": "id", "data_type": {"type": "BIGINT"}, "nullable": false},
    {"name": "name", "data_type": {"type": "STRING"}},
    {"name": "city", "data_type": {"type": "STRING"}},
    {"name": "age", "data_type": {"type": "INTEGER"}},
    {"name": "score", "data_type": {"type": "DOUBLE"}},
    {"name": "amount", "data_type": {"type": "DECIMAL", "precision": 12, "scale": 2}},
    {"name": "ts", "data_type": {"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 3}},
    {"name": "flag", "data_type": {"type": "BOOLEAN"}},
    {"name": "payload", "data_type": {"type": "BYTES"}},
    {"name": "n", "data_type": {"type": "BIGINT"}}
  ]
}`

// The values of row i.
const (
	amountBase = 1234567       // amount is (amountBase + i) / 100
	tsBase     = 1767225600000 // ts is tsBase + i milliseconds since the epoch
	payload    = "aGVsbG8gd29ybGQ="
	city       = "Zürich"
)

// Entry is row i as an official JSON append entry with entry id "e<i>".
func Entry(i int) string {
	amount := amountBase + i
	return fmt.Sprintf(`{"id":"e%d","append":{"id":%d,"name":"user-%08d","city":%q,"age":%d,"score":%g,"amount":"%d.%02d","ts":"%s","flag":%t,"payload":%q,"n":%d}}`,
		i, i, i, city, i%100, float64(i)/3, amount/100, amount%100,
		time.UnixMilli(tsBase+int64(i)).UTC().Format("2006-01-02T15:04:05.000Z"), i%2 == 1,
		base64.StdEncoding.EncodeToString([]byte(payload)), i*7)
}

// Schema is the table's Arrow schema, as an Arrow IPC body declares it.
var Schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "age", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "amount", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "payload", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// ArrowStream is rows 0..rows-1 as one Arrow IPC stream of record batches of
// per rows (the last one shorter).
func ArrowStream(rows, per int) ([]byte, error) {
	var out bytes.Buffer
	w := ipc.NewWriter(&out, ipc.WithSchema(Schema))
	for start := 0; start < rows; start += per {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, Schema)
		for i := start; i < min(start+per, rows); i++ {
			rb.Field(0).(*array.Int64Builder).Append(int64(i))
			rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("user-%08d", i))
			rb.Field(2).(*array.StringBuilder).Append(city)
			rb.Field(3).(*array.Int32Builder).Append(int32(i % 100))
			rb.Field(4).(*array.Float64Builder).Append(float64(i) / 3)
			rb.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(amountBase + i)))
			rb.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(tsBase + int64(i)))
			rb.Field(7).(*array.BooleanBuilder).Append(i%2 == 1)
			rb.Field(8).(*array.BinaryBuilder).Append([]byte(payload))
			rb.Field(9).(*array.Int64Builder).Append(int64(i * 7))
		}
		rec := rb.NewRecordBatch()
		err := w.Write(rec)
		rec.Release()
		rb.Release()
		if err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
