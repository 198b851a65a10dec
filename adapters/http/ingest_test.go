package http

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	nethttp "net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

func appendLine(id string, ts int, msg string) string {
	return fmt.Sprintf(`{"id":%q,"append":{"ts":%d,"msg":%q}}`, id, ts, msg)
}

// postRaw sends body with the given headers (Content-Type included).
func (g *gateway) postRaw(path string, body []byte, headers ...string) response {
	g.t.Helper()
	return g.send("POST", path, bytes.NewReader(body), headers...)
}

func TestWriteNDJSON(t *testing.T) {
	t.Parallel()
	ndjson := "Content-Type"
	tests := []struct {
		name    string
		body    string
		headers []string
		opts    []gatewayOption
		status  int
		want    string // JSON answer (JSONEq) or NDJSON lines (exact) or a message fragment
		rows    int    // rows the writer saw
	}{
		{
			name:   "entries line by line, blank lines skipped",
			body:   appendLine("a", 1, "x") + "\n\n" + appendLine("b", 2, "y") + "\r\n" + appendLine("c", 3, "z"),
			status: 200,
			want:   `{"row_count":3,"success_count":3,"error_count":0,"successes":[{"id":"a"},{"id":"b"},{"id":"c"}],"failures":[]}`,
			rows:   3,
		},
		{
			name:   "an invalid entry gets its verdict with its line",
			body:   appendLine("a", 1, "x") + "\n" + `{"id":"b","append":{"ts":"no","msg":"y"}}` + "\n" + `{"append":{"ts":1}}` + "\n" + appendLine("c", 3, "z") + "\n",
			status: 200,
			want: `{"row_count":4,"success_count":2,"error_count":2,"successes":[{"id":"a"},{"id":"c"}],"failures":[` +
				`{"id":"b","error_code":"invalid_argument","message":"line 2: entry ` + "`b`" + `: column ` + "`ts`" + `: BIGINT value \"no\" is not an integer","retryable":false,"applied":"no"},` +
				`{"id":"","error_code":"invalid_argument","message":"line 3: missing ` + "`id`" + `","retryable":false,"applied":"no"}]}`,
			rows: 2,
		},
		{
			name:    "verdict lines with Accept: application/x-ndjson",
			body:    appendLine("a", 1, "x") + "\n" + `{"id":"b","append":{"nope":1}}`,
			headers: []string{"Accept", MIMEApplicationNDJSON},
			status:  200,
			want:    `{"line":1,"id":"a","ok":true}` + "\n" + `{"line":2,"id":"b","ok":false,"error_code":"invalid_argument","message":"line 2: entry ` + "`b`" + `: column ` + "`nope`" + `: no such column","retryable":false,"applied":"no"}` + "\n",
			rows:    1,
		},
		{
			name:   "a line that is not JSON ends the request naming it and what was written",
			body:   appendLine("a", 1, "x") + "\n" + appendLine("b", 2, "y") + "\n{oops\n" + appendLine("c", 3, "z"),
			status: 400,
			want:   "line 3: not valid JSON",
			rows:   2,
		},
		{
			name:   "two lines that are not JSON do not join into one entry",
			body:   `{"id":"a","append":{"msg":"` + "\n" + `","ts":1}}`,
			status: 400,
			want:   "line 1: not valid JSON",
		},
		{
			name:   "nor do they when the join gives as many entries as lines",
			body:   `{"id":"a","append":{"msg":"` + "\n" + `","ts":1}},{"id":"b","append":{}}`,
			status: 400,
			want:   "line 1: not valid JSON",
		},
		{
			name:   "a line holding two entries",
			body:   appendLine("a", 1, "x") + "," + appendLine("b", 2, "y"),
			status: 400,
			want:   "line 1: not valid JSON",
		},
		{
			name:   "row cap",
			body:   appendLine("a", 1, "x") + "\n" + appendLine("b", 2, "y") + "\n" + appendLine("c", 3, "z"),
			opts:   []gatewayOption{func(o *Options, _ *Deps) { o.StreamMaxRows = 2 }},
			status: 413,
			want:   "line 3: the body has more than 2 entries",
			rows:   2,
		},
		{
			name:   "a line longer than the body limit",
			body:   appendLine("a", 1, strings.Repeat("x", testMaxBody)),
			status: 413,
			want:   "line 1: longer than the limit",
		},
		{
			name:   "the lines before a line longer than the limit are written",
			body:   appendLine("a", 1, "x") + "\n" + appendLine("b", 2, strings.Repeat("x", testMaxBody)) + "\n",
			status: 413,
			want:   "line 2: longer than the limit",
			rows:   1,
		},
		{
			name:   "an upsert on a log table is an entry verdict",
			body:   `{"id":"u","upsert":{"ts":1}}`,
			status: 200,
			rows:   0,
			want:   `"error_count":1`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, tc.opts...).withTables()
			r := g.postRaw(eventsWrite, []byte(tc.body), append([]string{ndjson, MIMEApplicationNDJSON}, tc.headers...)...)
			require.Equal(t, tc.status, r.status, string(r.body))
			switch {
			case tc.status != 200:
				assert.Contains(t, r.message(t), tc.want)
			case strings.HasPrefix(tc.want, `{"row_count"`):
				assert.JSONEq(t, tc.want, string(r.body))
			case strings.HasPrefix(tc.want, `{"line"`):
				assert.Equal(t, MIMEApplicationNDJSON, r.header.Get("Content-Type"))
				assert.Equal(t, tc.want, string(r.body))
			default:
				assert.Contains(t, string(r.body), tc.want)
			}
			rows := 0
			for range g.writer.calls() {
				// counted below
			}
			g.writer.mu.Lock()
			for _, b := range g.writer.batches {
				rows += b.Len()
			}
			g.writer.mu.Unlock()
			assert.Equal(t, tc.rows, rows)
		})
	}
}

func TestWriteNDJSONNotJSONStatesWrittenEntries(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	r := g.postRaw(eventsWrite, []byte(appendLine("a", 1, "x")+"\n"+appendLine("b", 2, "y")+"\n[1,\n"), "Content-Type", MIMEApplicationNDJSON)
	require.Equal(t, 400, r.status)
	assert.Equal(t, "invalid_argument", r.errorCode(t))
	assert.Contains(t, r.message(t), "line 3: not valid JSON")
	assert.Contains(t, r.message(t), "2 other entries had already been handed to the writer: 2 written, 0 failed")
	assert.Contains(t, r.message(t), "nothing from there on was written")
}

func TestWriteNDJSONChunksAndGzip(t *testing.T) {
	t.Parallel()
	const n = 10_000
	var body bytes.Buffer
	for i := range n {
		body.WriteString(appendLine(fmt.Sprintf("e%d", i), i, "m"))
		body.WriteByte('\n')
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(body.Bytes())
	require.NoError(t, zw.Close())
	for _, tc := range []struct {
		name    string
		body    []byte
		headers []string
	}{
		{"identity", body.Bytes(), nil},
		{"gzip", gz.Bytes(), []string{"Content-Encoding", "gzip"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t).withTables()
			r := g.postRaw(eventsWrite, tc.body, append([]string{"Content-Type", MIMEApplicationNDJSON}, tc.headers...)...)
			require.Equal(t, 200, r.status, string(r.body))
			var ans writeResponse
			require.NoError(t, json.Unmarshal(r.body, &ans))
			assert.Equal(t, n, ans.RowCount)
			assert.Equal(t, n, ans.SuccessCount)
			require.Len(t, ans.Successes, n)
			assert.Equal(t, "e9999", ans.Successes[n-1].ID)
			// More than one chunk, each within the write cap.
			assert.Equal(t, (n+ndjsonChunkRows-1)/ndjsonChunkRows, g.writer.calls())
			assert.Contains(t, g.logs.String(), fmt.Sprintf(`"bytes_in":%d`, body.Len()), "bytes counted as decoded")
		})
	}
}

func TestWriteNDJSONChunkErrorStopsTheRequest(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	var calls atomic.Int32
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		if calls.Add(1) == 2 {
			return nil, &domain.Error{Kind: domain.KindUnavailable, Retryable: true, Message: "no leader"}
		}
		return make([]domain.EntryResult, b.Len()), nil
	})
	var body bytes.Buffer
	for i := range 3 * ndjsonChunkRows {
		body.WriteString(appendLine(fmt.Sprintf("e%d", i), i, "m") + "\n")
	}
	r := g.postRaw(eventsWrite, body.Bytes(), "Content-Type", MIMEApplicationNDJSON)
	require.Equal(t, 503, r.status, string(r.body))
	assert.Contains(t, r.message(t), "were not written: no leader")
	assert.Contains(t, r.message(t), "had already been handed to the writer")
}

func TestBoundBodyRefusesChunkedJSONOverTheLimit(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	base := serveOnListener(t, g)
	big := entries(appendLine("a", 1, strings.Repeat("x", 2*testMaxBody)))
	// A reader of unknown length: net/http sends it chunked.
	resp, err := nethttp.Post(base+eventsWrite, "application/json", io.MultiReader(strings.NewReader(big)))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, 413, resp.StatusCode)
	assert.Zero(t, g.writer.calls())
}

// arrowStream writes record batches of schema s as an Arrow IPC stream.
func arrowStream(t testing.TB, s *arrow.Schema, batches ...[]func(b array.Builder)) []byte {
	t.Helper()
	return arrowStreamWith(t, s, nil, batches...)
}

// arrowStreamWith is arrowStream with more writer options (compression).
func arrowStreamWith(t testing.TB, s *arrow.Schema, opts []ipc.Option, batches ...[]func(b array.Builder)) []byte {
	t.Helper()
	var out bytes.Buffer
	w := ipc.NewWriter(&out, append([]ipc.Option{ipc.WithSchema(s)}, opts...)...)
	for _, cols := range batches {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, s)
		for i, fill := range cols {
			fill(rb.Field(i))
		}
		rec := rb.NewRecordBatch()
		require.NoError(t, w.Write(rec))
		rec.Release()
		rb.Release()
	}
	require.NoError(t, w.Close())
	return out.Bytes()
}

func int64s(vs ...int64) func(array.Builder) {
	return func(b array.Builder) { b.(*array.Int64Builder).AppendValues(vs, nil) }
}

func strs(vs ...string) func(array.Builder) {
	return func(b array.Builder) {
		for _, v := range vs {
			if v == "<null>" {
				b.AppendNull()
				continue
			}
			b.(*array.StringBuilder).Append(v)
		}
	}
}

var eventsArrow = arrow.NewSchema([]arrow.Field{
	{Name: "ts", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "msg", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func TestWriteArrow(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	g.writer.set(func(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
		out := make([]domain.EntryResult, b.Len())
		if b.Len() == 3 {
			out[1] = domain.EntryResult{Code: "timeout", Message: "late", Retryable: true, Applied: domain.AppliedUnknown}
			out[2] = out[1]
		}
		return out, nil
	})
	body := arrowStream(t, eventsArrow,
		[]func(array.Builder){int64s(1, 2), strs("a", "<null>")},
		[]func(array.Builder){int64s(3, 4, 5), strs("c", "d", "e")},
	)
	r := g.postRaw(eventsWrite, body, "Content-Type", MIMEArrowStream)
	require.Equal(t, 200, r.status, string(r.body))
	assert.JSONEq(t, `{"row_count":5,"success_count":3,"error_count":2,"batches":[
		{"batch":0,"row_count":2,"success_count":2,"error_count":0,"failures":[]},
		{"batch":1,"row_count":3,"success_count":1,"error_count":2,"failures":[
			{"first_row":1,"last_row":2,"error_code":"timeout","message":"late","retryable":true,"applied":"unknown"}]}]}`, string(r.body))
	g.writer.mu.Lock()
	defer g.writer.mu.Unlock()
	require.Len(t, g.writer.batches, 2)
	first := g.writer.batches[0] // batches are written concurrently
	if first.Len() != 2 {
		first = g.writer.batches[1]
	}
	// A log table without bucket key: the columns go as they are (the
	// fast path, arrowcolumns.go), no entries.
	require.NotNil(t, first.Columns)
	assert.Empty(t, first.Entries)
	ts, msg := first.Columns.Columns[0], first.Columns.Columns[1]
	assert.Equal(t, uint64(2), binary.LittleEndian.Uint64(ts.Values[8:]))
	assert.Nil(t, ts.Validity, "no null: no bitmap")
	assert.Equal(t, byte(0b01), msg.Validity[0]&0b11, "row 1 is null")
	assert.Equal(t, "a", string(msg.Data[binary.LittleEndian.Uint32(msg.Offsets):binary.LittleEndian.Uint32(msg.Offsets[4:])]))
}

func TestWriteArrowUpsertsIntoPrimaryKeyTables(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	s := arrow.NewSchema([]arrow.Field{
		{Name: "region", Type: arrow.BinaryTypes.String},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "score", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	body := arrowStream(t, s, []func(array.Builder){strs("eu", "us"), int64s(1, 2),
		func(b array.Builder) { b.(*array.Int32Builder).AppendValues([]int32{7, 0}, []bool{true, false}) }})
	r := g.postRaw(usersWrite, body, "Content-Type", MIMEArrowStream)
	require.Equal(t, 200, r.status, string(r.body))
	b, _ := g.writer.last()
	require.Len(t, b.Entries, 2)
	assert.Equal(t, domain.OpUpsert, b.Entries[0].Op)
	row := b.Entries[0].Row
	assert.Equal(t, "eu", string(row[0].Bytes))
	assert.Equal(t, int64(7), row[3].I64)
	assert.True(t, row[2].Null, "a column the stream lacks is null")
	assert.True(t, b.Entries[1].Row[3].Null)
}

func TestWriteArrowRefusals(t *testing.T) {
	t.Parallel()
	good := arrowStream(t, eventsArrow, []func(array.Builder){int64s(1, 2), strs("a", "b")}, []func(array.Builder){int64s(3), strs("c")})
	tests := []struct {
		name   string
		body   []byte
		status int
		msg    string
		rows   int
	}{
		{
			name: "type mismatch names the column",
			body: arrowStream(t, arrow.NewSchema([]arrow.Field{{Name: "ts", Type: arrow.PrimitiveTypes.Int32}}, nil),
				[]func(array.Builder){func(b array.Builder) { b.(*array.Int32Builder).Append(1) }}),
			status: 400, msg: "column `ts`: Arrow type int32 does not match Fluss type BIGINT",
		},
		{
			name: "unknown field",
			body: arrowStream(t, arrow.NewSchema([]arrow.Field{{Name: "nope", Type: arrow.PrimitiveTypes.Int64}}, nil),
				[]func(array.Builder){int64s(1)}),
			status: 400, msg: "Arrow field `nope`: the table has no such column",
		},
		{name: "not Arrow", body: []byte("hello, world"), status: 400, msg: "Arrow"},
		{
			name: "truncated after the first batch", body: good[:len(good)-150], status: 400,
			msg: "cannot be read (truncated or malformed)", rows: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t).withTables()
			r := g.postRaw(eventsWrite, tc.body, "Content-Type", MIMEArrowStream)
			require.Equal(t, tc.status, r.status, string(r.body))
			assert.Contains(t, r.message(t), tc.msg)
			rows := 0
			g.writer.mu.Lock()
			for _, b := range g.writer.batches {
				rows += b.Len()
			}
			g.writer.mu.Unlock()
			assert.Equal(t, tc.rows, rows)
		})
	}
}

// countingWriter accepts every row and keeps nothing.
type countingWriter struct{ rows atomic.Int64 }

func (w *countingWriter) Write(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
	w.rows.Add(int64(b.Len()))
	return make([]domain.EntryResult, b.Len()), nil
}

func fuzzGateway(t *testing.T) *gateway {
	g := newDataGateway(t, application.RecordOptions{}, func(o *Options, _ *Deps) { o.StreamMaxRows = 50 }).withTables()
	g.data.writer = &countingWriter{}
	return g
}

// FuzzNDJSONBody: any body answers 200 (one verdict per non-blank line),
// 400 or 413, never anything else, and never panics.
func FuzzNDJSONBody(f *testing.F) {
	f.Add([]byte(appendLine("a", 1, "x") + "\n" + appendLine("b", 2, "y")))
	f.Add([]byte(`{"id":"b","append":{"ts":"no"}}` + "\n\n{oops"))
	f.Add([]byte("[1]\n2\n\"x\"\nnull\n"))
	f.Add([]byte(`{"id":"a","append":{"ts":1}}` + "\n" + `{"id":"a","append":{"ts":1}}`))
	g := fuzzGateway(&testing.T{})
	f.Fuzz(func(t *testing.T, body []byte) {
		g.t = t
		r := g.postRaw(eventsWrite, body, "Content-Type", MIMEApplicationNDJSON)
		switch r.status {
		case 200:
			var ans writeResponse
			require.NoError(t, json.Unmarshal(r.body, &ans), string(r.body))
			lines := 0
			for _, l := range bytes.Split(body, []byte("\n")) {
				if len(bytes.TrimSpace(l)) > 0 {
					lines++
					// Answered per entry: every line is one JSON value.
					assert.True(t, json.Valid(l), "line %q is not JSON but the request was answered 200", l)
				}
			}
			assert.Equal(t, lines, ans.RowCount)
			assert.Equal(t, ans.RowCount, len(ans.Successes)+len(ans.Failures))
		case 400, 413:
		default:
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})
}

// FuzzArrowStream: any body answers 200, 400 or 413 and never panics.
func FuzzArrowStream(f *testing.F) {
	good := arrowStream(f, eventsArrow, []func(array.Builder){int64s(1, 2), strs("a", "<null>")})
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("ARROW1"))
	zstd := zstdStream(f, ipc.WithZstd(), []func(array.Builder){int64s(1, 2, 3), strs("a", "<null>", "ccc")})
	f.Add(zstd)
	f.Add(zstd[:len(zstd)-20])
	g := fuzzGateway(&testing.T{})
	f.Fuzz(func(t *testing.T, body []byte) {
		g.t = t
		r := g.postRaw(eventsWrite, body, "Content-Type", MIMEArrowStream)
		switch r.status {
		case 200, 400, 413:
		default:
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})
}

func TestStreamedWritesLeaveNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"))
	g := newGateway(t).withTables()
	var body bytes.Buffer
	for i := range 2*ndjsonChunkRows + 5 {
		body.WriteString(appendLine(fmt.Sprintf("e%d", i), i, "m") + "\n")
	}
	body.WriteString("{bad\n")
	r := g.postRaw(eventsWrite, body.Bytes(), "Content-Type", MIMEApplicationNDJSON)
	require.Equal(t, 400, r.status)
	r = g.postRaw(eventsWrite, arrowStream(t, eventsArrow, []func(array.Builder){int64s(1), strs("a")}), "Content-Type", MIMEArrowStream)
	require.Equal(t, 200, r.status)
	r = g.postRaw(eventsWrite, zstdStream(t, ipc.WithZstd(), []func(array.Builder){int64s(1), strs("a")}), "Content-Type", MIMEArrowStream)
	require.Equal(t, 200, r.status) // pooled zstd decoders start no goroutine
	require.NoError(t, g.app.Shutdown())
}

// concurrencyWriter accepts every row and records the most Write calls in
// progress at once.
type concurrencyWriter struct {
	now, peak atomic.Int32
	rows      atomic.Int64
}

func (w *concurrencyWriter) Write(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
	n := w.now.Add(1)
	defer w.now.Add(-1)
	for {
		p := w.peak.Load()
		if n <= p || w.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(5 * time.Millisecond)
	w.rows.Add(int64(b.Len()))
	return make([]domain.EntryResult, b.Len()), nil
}

// TestStreamedBodiesDrawFromTheMemoryBudget: a budget smaller than one
// chunk lets one chunk at a time through (each takes the whole budget and
// returns it when written); every row is still written and the budget is
// whole again afterwards. With room for several, chunks overlap.
func TestStreamedBodiesDrawFromTheMemoryBudget(t *testing.T) {
	t.Parallel()
	var body bytes.Buffer
	for i := range 4 * ndjsonChunkRows {
		body.WriteString(appendLine(fmt.Sprintf("e%d", i), i, "m") + "\n")
	}
	for _, tc := range []struct {
		name     string
		capacity int64
		maxPeak  int32
	}{
		{"smaller than a chunk", 1 << 10, 1},
		{"room for every chunk", 1 << 30, ndjsonInFlight},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			budget := membudget.New(tc.capacity, 5*time.Second)
			g := newGateway(t, func(o *Options, _ *Deps) { o.MemoryBudget = budget }).withTables()
			w := &concurrencyWriter{}
			g.data.writer = w
			r := g.postRaw(eventsWrite, body.Bytes(), "Content-Type", MIMEApplicationNDJSON)
			require.Equal(t, 200, r.status, "%.300s", r.body)
			assert.Equal(t, int64(4*ndjsonChunkRows), w.rows.Load())
			assert.LessOrEqual(t, w.peak.Load(), tc.maxPeak)
			assert.Zero(t, budget.Stats().InUse, "every chunk and the answer returned their bytes")
		})
	}
}

// TestStreamedBytesCountAgainstTheByteQuota: a streamed body pays for its
// decoded bytes chunk by chunk; when the quota cannot pay before the
// deadline the request ends with 429, stating what was written.
func TestStreamedBytesCountAgainstTheByteQuota(t *testing.T) {
	t.Parallel()
	var body bytes.Buffer
	for i := range 2 * ndjsonChunkRows {
		body.WriteString(appendLine(fmt.Sprintf("e%d", i), i, "m") + "\n")
	}
	g := newGateway(t, withTimeout(time.Second), func(o *Options, _ *Deps) {
		o.Quota = Quota{BytesPerSecond: int64(body.Len() / 20)}
	}).withTables()
	r := g.postRaw(eventsWrite, body.Bytes(), "Content-Type", MIMEApplicationNDJSON)
	require.Equal(t, 429, r.status, "%.300s", r.body)
	assert.Contains(t, r.message(t), "byte quota reached while reading the streamed body")
}

// ingestObserver records ObserveIngest calls.
type ingestObserver struct {
	mu    sync.Mutex
	calls []string
}

func (o *ingestObserver) ObserveRequestDetail(context.Context, string, string, int, string, domain.TablePath, time.Duration) {
}

func (o *ingestObserver) ObserveIngest(_ context.Context, contentType string, table domain.TablePath, rows, bytes int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, fmt.Sprintf("%s %s rows=%d bytes=%d", contentType, table, rows, bytes))
}

func TestWriteBodiesAreCountedByContentType(t *testing.T) {
	t.Parallel()
	obs := &ingestObserver{}
	g := newGateway(t, func(o *Options, _ *Deps) { o.Observer = obs }).withTables()
	json1 := entries(appendLine("a", 1, "x"), appendLine("b", 2, "y"))
	require.Equal(t, 200, g.call("POST", eventsWrite, json1).status)
	nd := appendLine("a", 1, "x") + "\n" + appendLine("b", 2, "y") + "\n" + appendLine("c", 3, "z") + "\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(nd))
	require.NoError(t, zw.Close())
	require.Equal(t, 200, g.postRaw(eventsWrite, gz.Bytes(), "Content-Type", MIMEApplicationNDJSON, "Content-Encoding", "gzip").status)
	arrowBody := arrowStream(t, eventsArrow, []func(array.Builder){int64s(1), strs("a")})
	require.Equal(t, 200, g.postRaw(eventsWrite, arrowBody, "Content-Type", MIMEArrowStream).status)
	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Equal(t, []string{
		fmt.Sprintf("application/json d.events rows=2 bytes=%d", len(json1)),
		fmt.Sprintf("application/x-ndjson d.events rows=3 bytes=%d", len(nd)), // decoded bytes, not the gzip bytes
		fmt.Sprintf("application/vnd.apache.arrow.stream d.events rows=1 bytes=%d", len(arrowBody)),
	}, obs.calls)
}

// zstdStream is an Arrow IPC stream of the record batches (eventsArrow)
// with bodies compressed by arrow-go's writer (opt: ipc.WithZstd or
// ipc.WithLZ4).
func zstdStream(t testing.TB, opt ipc.Option, cols ...[]func(array.Builder)) []byte {
	t.Helper()
	return arrowStreamWith(t, eventsArrow, []ipc.Option{opt}, cols...)
}

// recordBatchBuffers returns, for the first record batch message of an IPC
// stream, the positions in the stream of its buffers vector's entries
// (offset, length) and of its body.
func recordBatchBuffers(t *testing.T, stream []byte) (entries []int, body int) {
	t.Helper()
	at := 0
	for {
		metaLen := int(binary.LittleEndian.Uint32(stream[at+4:]))
		meta := stream[at+8 : at+8+metaLen]
		b := fb(meta)
		m, err := b.table(0)
		require.NoError(t, err)
		kind, err := b.field(m, 1)
		require.NoError(t, err)
		blen := 0
		if pos, _ := b.field(m, 3); pos != 0 {
			blen = int(binary.LittleEndian.Uint64(meta[pos:]))
		}
		if meta[kind] == 3 {
			hpos, err := b.field(m, 2)
			require.NoError(t, err)
			h, err := b.table(hpos)
			require.NoError(t, err)
			start, n, err := b.vector(h, 2, 16)
			require.NoError(t, err)
			for i := range n {
				entries = append(entries, at+8+start+16*i)
			}
			return entries, at + 8 + metaLen
		}
		at += 8 + metaLen + blen
	}
}

// TestWriteArrowZstd: a stream whose record batch bodies are compressed
// with ZSTD is decompressed for arrow-go (the same columns as the
// uncompressed stream), and, the table's layout being the stream's, its
// compressed buffers are offered to the writer as they are
// (domain.ColumnarRows.Packed), a column without nulls without its
// validity bitmap.
func TestWriteArrowZstd(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	body := zstdStream(t, ipc.WithZstd(), []func(array.Builder){int64s(1, 2, 3), strs("a", "<null>", "ccc")})
	r := g.postRaw(eventsWrite, body, "Content-Type", MIMEArrowStream)
	require.Equal(t, 200, r.status, string(r.body))
	b, _ := g.writer.last()
	require.NotNil(t, b.Columns)
	ts, msg := b.Columns.Columns[0], b.Columns.Columns[1]
	assert.Equal(t, uint64(3), binary.LittleEndian.Uint64(ts.Values[16:]))
	assert.Equal(t, byte(0b101), msg.Validity[0]&0b111, "row 1 is null")
	assert.Equal(t, "ccc", string(msg.Data[binary.LittleEndian.Uint32(msg.Offsets[8:]):binary.LittleEndian.Uint32(msg.Offsets[12:])]))
	p := b.Columns.Packed
	require.NotNil(t, p)
	assert.Equal(t, "ZSTD", p.Codec)
	assert.Equal(t, []int64{0, 1}, p.NullCounts)
	require.Len(t, p.Buffers, 5) // ts: validity, values; msg: validity, offsets, data
	assert.Empty(t, p.Buffers[0], "no null: no bitmap (the writer puts Java's)")
	for _, i := range []int{1, 2, 3, 4} {
		require.GreaterOrEqual(t, len(p.Buffers[i]), 8, "buffer %d", i)
	}
	entries, at := recordBatchBuffers(t, body)
	off := func(i int) int { return at + int(binary.LittleEndian.Uint64(body[entries[i]:])) }
	assert.Equal(t, body[off(1):off(1)+len(p.Buffers[1])], p.Buffers[1], "the client's bytes")
}

// TestArrowGuardRefusesWhatArrowGoWouldTrust: metadata that claims more
// than it holds, dictionaries, LZ4_FRAME bodies and ZSTD buffers that
// claim another length than they hold are refused before arrow-go
// allocates for them.
func TestArrowGuardRefusesWhatArrowGoWouldTrust(t *testing.T) {
	t.Parallel()
	good := arrowStream(t, eventsArrow, []func(array.Builder){int64s(1, 2), strs("a", "b")})
	// The schema message's fields vector: find its length (2) and claim 2^30.
	claim := bytes.Clone(good)
	meta := claim[8 : 8+int(binary.LittleEndian.Uint32(claim[4:8]))]
	b := fb(meta)
	m, err := b.table(0)
	require.NoError(t, err)
	hpos, err := b.field(m, 2)
	require.NoError(t, err)
	h, err := b.table(hpos)
	require.NoError(t, err)
	start, n, err := b.vector(h, 1, 4)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	binary.LittleEndian.PutUint32(meta[start-4:], 1<<30)

	zstd := zstdStream(t, ipc.WithZstd(), []func(array.Builder){int64s(1, 2), strs("a", "b")})
	entries, at := recordBatchBuffers(t, zstd)
	// Buffer 1 (ts values): its uncompressed length prefix.
	prefix := at + int(binary.LittleEndian.Uint64(zstd[entries[1]:]))
	withPrefix := func(v uint64) []byte {
		out := bytes.Clone(zstd)
		binary.LittleEndian.PutUint64(out[prefix:], v)
		return out
	}
	outside := bytes.Clone(zstd)
	binary.LittleEndian.PutUint64(outside[entries[1]:], 1<<20)
	for _, tc := range []struct {
		name string
		body []byte
		msg  string
	}{
		{"a fields vector longer than the metadata", claim, "does not fit in"},
		{"an LZ4_FRAME body", zstdStream(t, ipc.WithLZ4(), []func(array.Builder){int64s(1), strs("a")}), "compressed with LZ4_FRAME are not supported"},
		{"a ZSTD buffer claiming 1 TiB", withPrefix(1 << 40), "takes the record batch past"},
		{"a ZSTD buffer claiming a byte more", withPrefix(17), "does not decompress to its stated 17 bytes"},
		{"a ZSTD buffer claiming a byte less", withPrefix(15), "does not decompress to its stated 15 bytes"},
		{"a buffer outside the body", outside, "lies outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t).withTables()
			r := g.postRaw(eventsWrite, tc.body, "Content-Type", MIMEArrowStream)
			require.Equal(t, 400, r.status, "%s", r.body)
			assert.Contains(t, r.message(t), tc.msg)
			assert.Zero(t, g.writer.calls())
		})
	}
}
