//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
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

// scanByID reads a table back with the peer: its rows by their id column,
// each as JSON; a row twice fails the test.
func scanByID(t *testing.T, path domain.TablePath) map[int64]string {
	t.Helper()
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
		a, b := scanByID(t, fast), scanByID(t, rows)
		require.Len(t, a, n, codec)
		require.Len(t, b, n, codec)
		for id, want := range b {
			require.Equal(t, want, a[id], "%s: id %d: fast path vs row path", codec, id)
		}
		assert.Contains(t, a[7], `"gone":null`)
		assert.Contains(t, a[7], `"bin":`)
	}
}

// packedTypes are columns whose Arrow stream type is exactly their Fluss
// Arrow layout, so that a ZSTD-compressed record batch can go to Fluss as
// the client compressed it.
var packedTypes = [][2]string{
	{"id", "bigint NOT NULL"},
	{"s", "string"},
	{"ch", "char(3)"},
	{"by", "bytes"},
	{"bin", "binary(2)"},
	{"b", "boolean"},
	{"i8", "tinyint"},
	{"i16", "smallint"},
	{"i32", "int"},
	{"f", "float"},
	{"d", "double"},
	{"dec", "decimal(10, 2)"},
	{"big", "decimal(30, 4)"},
	{"dt", "date"},
	{"tm", "time(3)"},
	{"ts", "timestamp(6)"},
	{"ltz", "timestamp_ltz(3)"},
	{"none", "string"},          // every row null
	{"full", "string NOT NULL"}, // no row null
}

var packedArrow = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ch", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "by", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "bin", Type: &arrow.FixedSizeBinaryType{ByteWidth: 2}, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
	{Name: "big", Type: &arrow.Decimal128Type{Precision: 30, Scale: 4}, Nullable: true},
	{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "tm", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "ltz", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "none", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "full", Type: arrow.BinaryTypes.String},
}, nil)

// packedBatch is rows from..to-1 of packedArrow, every seventh with null
// nullable columns.
func packedBatch(from, to int64) arrow.RecordBatch {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, packedArrow)
	defer rb.Release()
	for i := from; i < to; i++ {
		rb.Field(0).(*array.Int64Builder).Append(i)
		rb.Field(17).AppendNull()
		rb.Field(18).(*array.StringBuilder).Append(fmt.Sprintf("full-%d", i))
		if i%7 == 3 {
			for c := 1; c < 17; c++ {
				rb.Field(c).AppendNull()
			}
			continue
		}
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%d-ß", i))
		rb.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("é%d", i%100))
		rb.Field(3).(*array.BinaryBuilder).Append(bytes.Repeat([]byte{byte(i)}, int(i%5)))
		rb.Field(4).(*array.FixedSizeBinaryBuilder).Append([]byte{byte(i >> 8), byte(i)})
		rb.Field(5).(*array.BooleanBuilder).Append(i%3 == 0)
		rb.Field(6).(*array.Int8Builder).Append(int8(i))
		rb.Field(7).(*array.Int16Builder).Append(int16(i * 3))
		rb.Field(8).(*array.Int32Builder).Append(int32(i * 1_000_003))
		rb.Field(9).(*array.Float32Builder).Append(float32(i) / 8)
		rb.Field(10).(*array.Float64Builder).Append(float64(i) * -0.125)
		rb.Field(11).(*array.Decimal128Builder).Append(decimal128.FromI64(i*101 - 50_000))
		rb.Field(12).(*array.Decimal128Builder).Append(decimal128.New(i, uint64(i)*7))
		rb.Field(13).(*array.Date32Builder).Append(arrow.Date32(18000 + i%3000))
		rb.Field(14).(*array.Time32Builder).Append(arrow.Time32((i * 3_600_123) % 86_400_000))
		rb.Field(15).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_123_456 + i*1_000_003))
		rb.Field(16).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_123 - i*997))
	}
	return rb.NewRecordBatch()
}

// TestGatewayArrowZstdPassThrough sends a ZSTD-compressed Arrow IPC stream
// (as pyarrow's IpcWriteOptions(compression="zstd") does) whose record
// batches have exactly the tables' Fluss Arrow layout to a ZSTD log table
// (the batches go to Fluss as the client compressed them:
// fluss_client_writer_arrow_packed_total counts their rows), to the same
// table in LZ4_FRAME (decompressed and compressed again) and to a twin with
// a bucket key (the Datum path), and reads all three back with the peer:
// every row lands once, with the same values everywhere.
func TestGatewayArrowZstdPassThrough(t *testing.T) {
	base, metrics := startMetricsGateway(t)
	db := wrDatabase(t)
	const n = 5000
	var body bytes.Buffer
	w := ipc.NewWriter(&body, ipc.WithSchema(packedArrow), ipc.WithZstd())
	for _, r := range [][2]int64{{0, 1500}, {1500, 1501}, {1501, n}} {
		rec := packedBatch(r[0], r[1])
		require.NoError(t, w.Write(rec))
		rec.Release()
	}
	require.NoError(t, w.Close())

	zstdT := wrCreateTable(t, db, "packed_zstd", packedTypes, "--buckets", "3")
	lz4T := wrCreateTable(t, db, "packed_lz4", packedTypes, "--buckets", "3", "--properties", `{"table.log.arrow.compression.type":"LZ4_FRAME"}`)
	rowT := wrCreateTable(t, db, "packed_rows", packedTypes, "--buckets", "3", "--bucket-key", "id")
	byID := map[string]map[int64]string{}
	for _, p := range []domain.TablePath{zstdT, lz4T, rowT} {
		status, raw := ingestPost(t, base+"/databases/"+db+"/tables/"+p.Table+"/records", "application/vnd.apache.arrow.stream", bytes.NewReader(body.Bytes()))
		require.Equal(t, 200, status, "%s: %.500s", p.Table, raw)
		got, ok, _ := ingestCounts(t, raw)
		require.Equal(t, n, got)
		require.Equal(t, n, ok, "%.500s", raw)
		rows := scanByID(t, p)
		require.Len(t, rows, n, p.Table)
		byID[p.Table] = rows
	}
	for id, want := range byID[rowT.Table] {
		require.Equal(t, want, byID[zstdT.Table][id], "id %d: ZSTD pass-through vs row path", id)
		require.Equal(t, want, byID[lz4T.Table][id], "id %d: LZ4_FRAME vs row path", id)
	}
	assert.Contains(t, byID[zstdT.Table][3], `"s":null`)
	assert.Contains(t, byID[zstdT.Table][4], `"s":"name-4-ß"`)
	assert.Contains(t, byID[zstdT.Table][4], `"none":null`)

	packed := map[string]float64{}
	resp, err := http.Get(metrics + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	re := regexp.MustCompile(`^fluss_client_writer_arrow_packed_total\{.*table="([^"]*)".*\} (\S+)$`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			v, err := strconv.ParseFloat(m[2], 64)
			require.NoError(t, err)
			packed[m[1]] += v
		}
	}
	assert.Equal(t, map[string]float64{db + "." + zstdT.Table: n}, packed, "only the ZSTD table's batches go as the client compressed them")
}
