//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Streamed write bodies (issue 25) against a real cluster, read back with the
// peer client: NDJSON (a 1,000,000-line body in one request, gzip, a line that
// is not JSON) and Arrow IPC streams (every type of the Arrow-to-Fluss
// mapping, 200,000 rows, schema mismatches, a truncated stream).

// ingestPost sends body with the content type and extra header pairs and
// returns the status and the raw answer.
func ingestPost(t *testing.T, url, contentType string, body io.Reader, headers ...string) (int, []byte) {
	t.Helper()
	return httpRaw(t, "POST", url, contentType, body, headers...)
}

// ingestCounts decodes the counts of a write answer.
func ingestCounts(t *testing.T, raw []byte) (rows, ok, failed int) {
	t.Helper()
	var a struct {
		RowCount     int `json:"row_count"`
		SuccessCount int `json:"success_count"`
		ErrorCount   int `json:"error_count"`
	}
	require.NoError(t, json.Unmarshal(raw, &a), "%.500s", raw)
	return a.RowCount, a.SuccessCount, a.ErrorCount
}

// ingestLogRows sums the peer's log end offsets of every bucket.
func ingestLogRows(t *testing.T, path domain.TablePath) int64 {
	t.Helper()
	var off struct {
		Buckets []struct{ Bucket, Earliest, Latest int64 } `json:"buckets"`
	}
	require.NoError(t, json.Unmarshal(wrPeer(t, nil, "offsets", path.Database, path.Table), &off))
	total := int64(0)
	for _, b := range off.Buckets {
		total += b.Latest - b.Earliest
	}
	return total
}

// vmHWM is the peak resident set size of process pid (Linux /proc), in
// bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skip("no /proc status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Skip("no VmHWM")
	return 0
}

// gatewayProcess builds the gateway binary (or takes GATEWAY_BIN) and runs
// it against FLUSS_BOOTSTRAP with default settings and extra FLUSS_GATEWAY__
// variables; it returns the process and the base URL of cluster `default`.
func gatewayProcess(t *testing.T, extraEnv ...string) (*exec.Cmd, string) {
	t.Helper()
	bin := os.Getenv("GATEWAY_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "fluss-gateway")
		build := exec.Command("go", "build", "-o", bin, "./bootstrap/cmd/gateway")
		build.Dir = filepath.Join("..", "..")
		out, err := build.CombinedOutput()
		require.NoError(t, err, "go build:\n%s", out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLUSS_GATEWAY") && !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	env = append(env, "FLUSS_GATEWAY__REST__LISTEN="+addr, "FLUSS_GATEWAY__METRICS__ENABLED=false",
		"FLUSS_GATEWAY__CLUSTERS=default", "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS="+wrBootstrap(t))
	cmd := exec.Command(bin)
	cmd.Env = append(env, extraEnv...)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("gateway log (tail): %s", tail(logs.String(), 3000))
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "the gateway did not become ready: %s", tail(logs.String(), 3000))
		time.Sleep(200 * time.Millisecond)
	}
	return cmd, base + "/v1/clusters/default"
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

var ingestLogCols = [][2]string{{"id", "bigint NOT NULL"}, {"s", "string"}, {"v", "double"}}

func ingestLine(i int) string {
	return fmt.Sprintf(`{"id":"e%d","append":{"id":%d,"s":"row %d","v":%d.5}}`, i, i, i, i)
}

// TestGatewayNDJSONMillionLines streams 1,000,000 NDJSON lines in one
// chunked request (generated while it is sent) to the gateway binary run as
// its own process with default settings, checks the answer and the rows in
// Fluss (peer), and the gateway's peak RSS (VmHWM) against 256 MiB.
func TestGatewayNDJSONMillionLines(t *testing.T) {
	gw, base := gatewayProcess(t, "FLUSS_GATEWAY__REST__WRITE__REQUEST_TIMEOUT=300s")
	db := wrDatabase(t)
	path := wrCreateTable(t, db, "ndjson_million", ingestLogCols, "--buckets", "3")
	const n = 1_000_000
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 64<<10)
		for i := range n {
			_, _ = w.WriteString(ingestLine(i))
			_ = w.WriteByte('\n')
		}
		_ = pw.CloseWithError(w.Flush())
	}()
	before := vmHWM(t, gw.Process.Pid)
	start := time.Now()
	req, err := http.NewRequest("POST", base+"/databases/"+db+"/tables/ndjson_million/records", pr)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var ans struct {
		RowCount     int `json:"row_count"`
		SuccessCount int `json:"success_count"`
		ErrorCount   int `json:"error_count"`
	}
	require.Equal(t, 200, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ans)) // the answer is not held whole here
	_ = resp.Body.Close()
	elapsed := time.Since(start)
	assert.Equal(t, n, ans.RowCount)
	assert.Equal(t, n, ans.SuccessCount)
	assert.Zero(t, ans.ErrorCount)
	hwm := vmHWM(t, gw.Process.Pid)
	t.Logf("1,000,000 NDJSON lines in %s (%.0f rows/s); gateway peak RSS %d MiB (%d MiB before the request)",
		elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), hwm>>20, before>>20)
	assert.LessOrEqual(t, hwm, int64(256<<20), "gateway peak RSS within 256 MiB")
	assert.Equal(t, int64(n), ingestLogRows(t, path), "rows in Fluss (peer: log end offsets)")
}

// TestGatewayNDJSONGzipAndBadLine writes a gzip NDJSON body and reads it
// back, then a body with a line that is not JSON: the lines before it are
// written, the rest is not, and the 400 says so.
func TestGatewayNDJSONGzipAndBadLine(t *testing.T) {
	g := startGateway(t)
	db := wrDatabase(t)
	path := wrCreateTable(t, db, "ndjson_gzip", ingestLogCols, "--buckets", "2")
	url := g.base + "/databases/" + db + "/tables/ndjson_gzip/records"
	const n = 5000
	var plain, gz bytes.Buffer
	for i := range n {
		plain.WriteString(ingestLine(i) + "\n")
	}
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(plain.Bytes())
	require.NoError(t, zw.Close())
	status, raw := ingestPost(t, url, "application/x-ndjson", bytes.NewReader(gz.Bytes()), "Content-Encoding", "gzip")
	require.Equal(t, 200, status, "%.1000s", raw)
	rows, ok, _ := ingestCounts(t, raw)
	require.Equal(t, n, rows)
	require.Equal(t, n, ok)
	got := wrScan(t, path)
	require.Len(t, got, n)
	seen := map[int64]bool{}
	for _, r := range got {
		id := int64(r.Row["id"].(float64))
		seen[id] = true
		assert.Equal(t, fmt.Sprintf("row %d", id), r.Row["s"])
		assert.Equal(t, float64(id)+0.5, r.Row["v"])
	}
	assert.Len(t, seen, n)

	// An invalid entry is answered on its own line; a line that is not JSON
	// ends the request.
	body := ingestLine(n) + "\n" + `{"id":"bad","append":{"id":"x"}}` + "\n" + ingestLine(n+1) + "\n{not json\n" + ingestLine(n+2) + "\n"
	status, raw = ingestPost(t, url, "application/x-ndjson", strings.NewReader(body))
	require.Equal(t, 400, status, "%s", raw)
	msg := string(raw)
	assert.Contains(t, msg, "line 4: not valid JSON")
	assert.Contains(t, msg, "3 other entries had already been handed to the writer: 2 written, 1 failed")
	assert.Equal(t, int64(n+2), ingestLogRows(t, path))

	// Verdict lines.
	status, raw = ingestPost(t, url, "application/x-ndjson", strings.NewReader(ingestLine(n+3)+"\n"+`{"id":"bad","append":{"nope":1}}`),
		"Accept", "application/x-ndjson")
	require.Equal(t, 200, status, "%s", raw)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	require.Len(t, lines, 2)
	assert.JSONEq(t, fmt.Sprintf(`{"line":1,"id":"e%d","ok":true}`, n+3), lines[0])
	assert.Contains(t, lines[1], `"line":2,"id":"bad","ok":false,"error_code":"invalid_argument","message":"line 2: `)
}

// ingestTypes is the Arrow schema of wrAllTypes, one field per claimed
// mapping.
var ingestTypes = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "ti", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	{Name: "si", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
	{Name: "bigdec", Type: &arrow.Decimal128Type{Precision: 30, Scale: 4}, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	{Name: "by", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "bin", Type: &arrow.FixedSizeBinaryType{ByteWidth: 4}, Nullable: true},
	{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "tm", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "ts6", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "ltz", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
}, nil)

// ingestTypesBatch builds rows from..to-1 of wrAllTypesRow as a record
// batch, every seventh row with null non-key columns.
func ingestTypesBatch(t *testing.T, from, to int64) (arrow.RecordBatch, map[int64]map[string]any) {
	t.Helper()
	rb := array.NewRecordBuilder(memory.DefaultAllocator, ingestTypes)
	defer rb.Release()
	wants := map[int64]map[string]any{}
	for i := from; i < to; i++ {
		row, want := wrAllTypesRow(i)
		null := i%7 == 3
		for c := range row {
			fb := rb.Field(c)
			if null && c > 0 {
				fb.AppendNull()
				want[wrAllTypes[c][0]] = nil
				continue
			}
			d := row[c]
			switch b := fb.(type) {
			case *array.Int64Builder:
				b.Append(d.I64)
			case *array.BooleanBuilder:
				b.Append(d.I64 == 1)
			case *array.Int8Builder:
				b.Append(int8(d.I64))
			case *array.Int16Builder:
				b.Append(int16(d.I64))
			case *array.Int32Builder:
				b.Append(int32(d.I64))
			case *array.Float32Builder:
				b.Append(float32(d.F64))
			case *array.Float64Builder:
				b.Append(d.F64)
			case *array.Decimal128Builder:
				if d.Bytes != nil {
					b.Append(decimal128.FromBigInt(new(big.Int).SetBytes(d.Bytes)))
				} else {
					b.Append(decimal128.FromI64(d.I64))
				}
			case *array.LargeStringBuilder:
				b.Append(string(d.Bytes))
			case *array.BinaryBuilder:
				b.Append(d.Bytes)
			case *array.FixedSizeBinaryBuilder:
				b.Append(d.Bytes)
			case *array.Date32Builder:
				b.Append(arrow.Date32(d.I64))
			case *array.Time32Builder:
				b.Append(arrow.Time32(d.I64))
			case *array.TimestampBuilder:
				if c == 15 { // ts6: microseconds
					b.Append(arrow.Timestamp(d.I64*1000 + int64(d.Nanos)/1000))
				} else {
					b.Append(arrow.Timestamp(d.I64))
				}
			default:
				t.Fatalf("column %d: builder %T", c, fb)
			}
		}
		wants[i] = want
	}
	return rb.NewRecordBatch(), wants
}

func ingestStream(t *testing.T, s *arrow.Schema, recs ...arrow.RecordBatch) []byte {
	t.Helper()
	var out bytes.Buffer
	w := ipc.NewWriter(&out, ipc.WithSchema(s))
	for _, r := range recs {
		require.NoError(t, w.Write(r))
		r.Release()
	}
	require.NoError(t, w.Close())
	return out.Bytes()
}

// TestGatewayArrowAllTypes appends every type of the Arrow-to-Fluss mapping
// to a log table and upserts them into a primary-key table, and reads both
// back with the peer.
func TestGatewayArrowAllTypes(t *testing.T) {
	g := startGateway(t)
	db := wrDatabase(t)
	logPath := wrCreateTable(t, db, "arrow_types_log", wrAllTypes, "--buckets", "2")
	pkPath := wrCreateTable(t, db, "arrow_types_pk", wrAllTypes, "--primary-key", "id", "--buckets", "2")
	r1, w1 := ingestTypesBatch(t, 0, 60)
	r2, w2 := ingestTypesBatch(t, 60, 100)
	for k, v := range w2 {
		w1[k] = v
	}
	body := ingestStream(t, ingestTypes, r1, r2)
	for _, path := range []domain.TablePath{logPath, pkPath} {
		status, raw := ingestPost(t, g.base+"/databases/"+db+"/tables/"+path.Table+"/records", "application/vnd.apache.arrow.stream", bytes.NewReader(body))
		require.Equal(t, 200, status, "%s", raw)
		var ans struct {
			RowCount int `json:"row_count"`
			Batches  []struct {
				Batch    int   `json:"batch"`
				RowCount int   `json:"row_count"`
				Failures []any `json:"failures"`
			} `json:"batches"`
		}
		require.NoError(t, json.Unmarshal(raw, &ans))
		require.Len(t, ans.Batches, 2, "%s", raw)
		assert.Equal(t, 100, ans.RowCount)
		assert.Equal(t, 60, ans.Batches[0].RowCount)
		assert.Empty(t, ans.Batches[0].Failures)
		assert.Equal(t, 40, ans.Batches[1].RowCount)
	}
	for _, path := range []domain.TablePath{logPath, pkPath} {
		rows := wrScan(t, path)
		require.Len(t, rows, 100, path.Table)
		for _, r := range rows {
			id := int64(r.Row["id"].(float64))
			for k, v := range w1[id] {
				assert.Equal(t, v, r.Row[k], "%s id %d column %s", path.Table, id, k)
			}
		}
	}
	row := wrLookup(t, pkPath, `{"id": 5}`)
	require.NotNil(t, row)
	assert.Equal(t, w1[5]["s"], row["s"])
}

// TestGatewayArrowLargeStream appends 200,000 rows in 20 record batches.
func TestGatewayArrowLargeStream(t *testing.T) {
	g := startGateway(t, "FLUSS_GATEWAY__REST__WRITE__REQUEST_TIMEOUT=120s")
	db := wrDatabase(t)
	path := wrCreateTable(t, db, "arrow_large", ingestLogCols, "--buckets", "3")
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	const n, per = 200_000, 10_000
	var recs []arrow.RecordBatch
	for b := 0; b < n/per; b++ {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, s)
		for i := b * per; i < (b+1)*per; i++ {
			rb.Field(0).(*array.Int64Builder).Append(int64(i))
			rb.Field(1).(*array.StringBuilder).Append("row " + strconv.Itoa(i))
			rb.Field(2).(*array.Float64Builder).Append(float64(i) + 0.5)
		}
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	body := ingestStream(t, s, recs...)
	start := time.Now()
	status, raw := ingestPost(t, g.base+"/databases/"+db+"/tables/arrow_large/records", "application/vnd.apache.arrow.stream", bytes.NewReader(body))
	elapsed := time.Since(start)
	require.Equal(t, 200, status, "%.1000s", raw)
	rows, ok, _ := ingestCounts(t, raw)
	require.Equal(t, n, rows)
	require.Equal(t, n, ok)
	t.Logf("200,000 Arrow rows (%d bytes) in %s (%.0f rows/s)", len(body), elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds())
	got := wrScan(t, path)
	require.Len(t, got, n)
	seen := make([]bool, n)
	for _, r := range got {
		id := int(r.Row["id"].(float64))
		require.False(t, seen[id], "row %d twice", id)
		seen[id] = true
		if id%9973 == 0 {
			assert.Equal(t, "row "+strconv.Itoa(id), r.Row["s"])
			assert.Equal(t, float64(id)+0.5, r.Row["v"])
		}
	}
}

// TestGatewayArrowRefusals: schema mismatches name the column and write
// nothing; a truncated stream keeps the batches before the cut and says so.
func TestGatewayArrowRefusals(t *testing.T) {
	g := startGateway(t)
	db := wrDatabase(t)
	path := wrCreateTable(t, db, "arrow_refusals", ingestLogCols, "--buckets", "1")
	url := g.base + "/databases/" + db + "/tables/arrow_refusals/records"
	one := func(s *arrow.Schema, fill func(rb *array.RecordBuilder)) []byte {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, s)
		defer rb.Release()
		fill(rb)
		return ingestStream(t, s, rb.NewRecordBatch())
	}
	cases := []struct {
		name string
		body []byte
		msg  string
	}{
		{"wrong type", one(arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String}}, nil),
			func(rb *array.RecordBuilder) {
				rb.Field(0).(*array.Int64Builder).Append(1)
				rb.Field(1).(*array.StringBuilder).Append("x")
			}), "column `v`: Arrow type utf8 does not match Fluss type DOUBLE"},
		{"unknown field", one(arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "zzz", Type: arrow.PrimitiveTypes.Int64}}, nil),
			func(rb *array.RecordBuilder) {
				rb.Field(0).(*array.Int64Builder).Append(1)
				rb.Field(1).(*array.Int64Builder).Append(1)
			}), "Arrow field `zzz`: the table has no such column"},
		{"NOT NULL column missing", one(arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil),
			func(rb *array.RecordBuilder) { rb.Field(0).(*array.StringBuilder).Append("x") }), "column `id`: NOT NULL"},
	}
	for _, c := range cases {
		status, raw := ingestPost(t, url, "application/vnd.apache.arrow.stream", bytes.NewReader(c.body))
		assert.Equal(t, 400, status, "%s: %s", c.name, raw)
		assert.Contains(t, string(raw), c.msg, c.name)
	}
	assert.Zero(t, ingestLogRows(t, path))

	s := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var recs []arrow.RecordBatch
	for b := range 3 {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, s)
		for i := range 100 {
			rb.Field(0).(*array.Int64Builder).Append(int64(b*100 + i))
		}
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	full := ingestStream(t, s, recs...)
	cut := full[:len(full)-8-400] // into the last batch's body (end-of-stream marker is 8 bytes)
	status, raw := ingestPost(t, url, "application/vnd.apache.arrow.stream", bytes.NewReader(cut))
	require.Equal(t, 400, status, "%s", raw)
	assert.Contains(t, string(raw), "record batch 2: the Arrow stream cannot be read")
	assert.Contains(t, string(raw), "200 rows of other record batches had already been handed to the writer: 200 written")
	assert.Equal(t, int64(200), ingestLogRows(t, path))
}
