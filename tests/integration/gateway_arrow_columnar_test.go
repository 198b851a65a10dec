//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// columnarTypes are columns whose Arrow stream types differ from the Fluss
// Arrow layout (the fast path converts them column by column) or that the
// stream lacks (null).
var columnarTypes = [][2]string{
	{"id", "bigint NOT NULL"},
	{"ts0", "timestamp(0)"},      // from timestamp[ns]
	{"ts3", "timestamp(3)"},      // from timestamp[us]
	{"ts6", "timestamp(6)"},      // from timestamp[ms]
	{"ts9", "timestamp(9)"},      // from timestamp[s]
	{"ltz6", "timestamp_ltz(6)"}, // from timestamp[ns, UTC]
	{"tm0", "time(0)"},           // from time32[ms]
	{"tm3", "time(3)"},           // from time32[s]
	{"bin", "binary(3)"},         // from binary
	{"by", "bytes"},              // from fixed_size_binary(2)
	{"lb", "bytes"},              // from large_binary
	{"ch", "char(4)"},            // from utf8
	{"b", "boolean"},             // from bool, at a bit offset (a sliced batch)
	{"gone", "string"},           // not in the stream: null
}

var columnarArrow = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "ts0", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
	{Name: "ts3", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "ts6", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "ts9", Type: &arrow.TimestampType{Unit: arrow.Second}, Nullable: true},
	{Name: "ltz6", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "tm0", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
	{Name: "tm3", Type: arrow.FixedWidthTypes.Time32s, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "by", Type: &arrow.FixedSizeBinaryType{ByteWidth: 2}, Nullable: true},
	{Name: "lb", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
	{Name: "ch", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
}, nil)

// columnarBatch is rows from..to-1, every fifth with null non-key columns,
// built with 3 leading rows then sliced off so that every column starts at an
// array offset (and its offsets and bitmaps past their start).
func columnarBatch(from, to int64) arrow.RecordBatch {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, columnarArrow)
	defer rb.Release()
	for i := from - 3; i < to; i++ {
		if i >= from && i%5 == 2 {
			rb.Field(0).(*array.Int64Builder).Append(i)
			for c := 1; c < len(columnarArrow.Fields()); c++ {
				rb.Field(c).AppendNull()
			}
			continue
		}
		v := i // the leading rows (sliced off) hold values too: offsets and bits start past 0
		if i < from {
			v = 1_000_000 + i
		}
		ns := 1_700_000_000_123_456_789 + v*1_000_003_007 // spans sub-second digits
		rb.Field(0).(*array.Int64Builder).Append(i)
		rb.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(ns))
		rb.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(ns / 1000))
		rb.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(ns / 1_000_000))
		rb.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(ns / 1_000_000_000))
		rb.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(-ns / 7)) // before 1970
		rb.Field(6).(*array.Time32Builder).Append(arrow.Time32((v * 3_600_123) % 86_400_000))
		rb.Field(7).(*array.Time32Builder).Append(arrow.Time32((v * 3_607) % 86_400))
		rb.Field(8).(*array.BinaryBuilder).Append([]byte{1, 2, byte(v)})
		rb.Field(9).(*array.FixedSizeBinaryBuilder).Append([]byte{byte(v >> 8), byte(v)})
		rb.Field(10).(*array.BinaryBuilder).Append(bytes.Repeat([]byte{byte(v)}, int(v%4)+1))
		rb.Field(11).(*array.StringBuilder).Append(fmt.Sprintf("é%d", v%1000)) // up to 4 characters
		rb.Field(12).(*array.BooleanBuilder).Append(v%3 == 0)
	}
	full := rb.NewRecordBatch()
	defer full.Release()
	return full.NewSlice(3, full.NumRows())
}

// TestGatewayArrowColumnarMatchesRowPath writes the same Arrow stream to a
// log table the columnar fast path takes (no bucket key) and to its twin
// with a bucket key (the Datum path), for each Arrow compression codec, and
// reads both back with the peer: every row lands once and the two tables
// hold the same values, so every conversion of the fast path agrees with
// the row path.
func TestGatewayArrowColumnarMatchesRowPath(t *testing.T) {
	g := startGateway(t)
	db := wrDatabase(t)
	const n = 3000
	body := ingestStream(t, columnarArrow, columnarBatch(0, 1000), columnarBatch(1000, n))
	for _, codec := range []string{"ZSTD", "LZ4_FRAME", "NONE"} {
		props := fmt.Sprintf(`{"table.log.arrow.compression.type":%q}`, codec)
		fast := wrCreateTable(t, db, "columnar_"+codec, columnarTypes, "--buckets", "3", "--properties", props)
		rows := wrCreateTable(t, db, "rowpath_"+codec, columnarTypes, "--buckets", "3", "--bucket-key", "id", "--properties", props)
		for _, p := range []string{fast.Table, rows.Table} {
			status, raw := ingestPost(t, g.base+"/databases/"+db+"/tables/"+p+"/records", "application/vnd.apache.arrow.stream", bytes.NewReader(body))
			require.Equal(t, 200, status, "%s: %.500s", p, raw)
			got, ok, _ := ingestCounts(t, raw)
			require.Equal(t, n, got)
			require.Equal(t, n, ok, "%.500s", raw)
		}
		byID := func(path domain.TablePath) map[int64]string {
			out := map[int64]string{}
			for _, r := range wrScan(t, path) {
				id := int64(r.Row["id"].(float64))
				b, err := json.Marshal(r.Row)
				require.NoError(t, err)
				_, dup := out[id]
				require.False(t, dup, "%s: id %d twice", path.Table, id)
				out[id] = string(b)
			}
			return out
		}
		a, b := byID(fast), byID(rows)
		require.Len(t, a, n, codec)
		require.Len(t, b, n, codec)
		for id, want := range b {
			require.Equal(t, want, a[id], "%s: id %d: fast path vs row path", codec, id)
		}
		assert.Contains(t, a[7], `"gone":null`)
		assert.Contains(t, a[7], `"bin":`)
	}
}
