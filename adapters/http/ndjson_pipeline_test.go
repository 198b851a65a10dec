package http

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/http/rowjson"
	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// overlapWriter holds the verdicts of its first Write until a second Write
// has started (or a second passed), and records which happened: the second
// call can only start while the first waits if the chunk after it was read
// and decoded meanwhile.
type overlapWriter struct {
	mu         sync.Mutex
	calls      int
	second     chan struct{}
	overlapped bool
	rows       int
}

func (w *overlapWriter) Write(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
	w.mu.Lock()
	w.calls++
	n := w.calls
	w.rows += b.Len()
	w.mu.Unlock()
	switch n {
	case 1:
		select {
		case <-w.second:
			w.mu.Lock()
			w.overlapped = true
			w.mu.Unlock()
		case <-time.After(time.Second):
		}
	case 2:
		close(w.second)
	}
	return make([]domain.EntryResult, b.Len()), nil
}

// TestNDJSONChunksOverlapTheWriter: while the writer holds the verdicts of
// one chunk, the next chunk is read, decoded and handed to the writer; the
// verdicts still come back in line order.
func TestNDJSONChunksOverlapTheWriter(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"))
	var body bytes.Buffer
	n := 3 * ndjsonChunkRows
	for i := range n {
		body.WriteString(appendLine(fmt.Sprintf("e%d", i), i, "m") + "\n")
	}
	for _, accept := range []string{"application/json", MIMEApplicationNDJSON} {
		t.Run(accept, func(t *testing.T) {
			g := newGateway(t).withTables()
			w := &overlapWriter{second: make(chan struct{})}
			g.data.writer = w
			r := g.postRaw(eventsWrite, body.Bytes(), "Content-Type", MIMEApplicationNDJSON, "Accept", accept)
			require.Equal(t, 200, r.status, "%.300s", r.body)
			assert.True(t, w.overlapped, "the second chunk reached the writer while the first waited for its verdicts")
			assert.Equal(t, n, w.rows)
			if accept == MIMEApplicationNDJSON {
				lines := bytes.Split(bytes.TrimSuffix(r.body, []byte("\n")), []byte("\n"))
				require.Len(t, lines, n)
				for i, l := range lines {
					require.Equal(t, fmt.Sprintf(`{"line":%d,"id":"e%d","ok":true}`, i+1, i), string(l))
				}
			} else {
				assert.Contains(t, string(r.body), `"row_count":`+fmt.Sprint(n))
			}
			require.NoError(t, g.app.Shutdown())
		})
	}
}

// TestNDJSONBadLineStopsLaterChunks: chunks after the one holding a line
// that is not JSON are read and decoded meanwhile, but none of their lines
// reaches the writer, with either answer; the lines before it do.
func TestNDJSONBadLineStopsLaterChunks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"))
	const bad = ndjsonChunkRows + 100 // in the second chunk
	var body bytes.Buffer
	for i := range 4 * ndjsonChunkRows {
		if i == bad {
			body.WriteString("{oops\n")
			continue
		}
		body.WriteString(appendLine(fmt.Sprintf("e%d", i), i, "m") + "\n")
	}
	for _, accept := range []string{"application/json", MIMEApplicationNDJSON} {
		t.Run(accept, func(t *testing.T) {
			g := newGateway(t).withTables()
			w := &countingWriter{}
			g.data.writer = w
			r := g.postRaw(eventsWrite, body.Bytes(), "Content-Type", MIMEApplicationNDJSON, "Accept", accept)
			assert.Equal(t, int64(bad), w.rows.Load(), "exactly the lines before the bad one were written")
			want := fmt.Sprintf("line %d: not valid JSON", bad+1)
			if accept == MIMEApplicationNDJSON {
				require.Equal(t, 200, r.status)
				lines := bytes.Split(bytes.TrimSuffix(r.body, []byte("\n")), []byte("\n"))
				require.Len(t, lines, bad+1, "a verdict per written line, then the error line")
				assert.Contains(t, string(lines[bad]), want)
			} else {
				require.Equal(t, 400, r.status, "%.300s", r.body)
				assert.Contains(t, r.message(t), want)
				assert.Contains(t, r.message(t), fmt.Sprintf("%d written, 0 failed", bad))
			}
			require.NoError(t, g.app.Shutdown())
		})
	}
}

// TestNDJSONDecoderWaitsForThePreviousChunk: a chunk is decoded whatever
// the chunk before it is doing, but its rows go to the writer only once
// that chunk is decoded, not at all when it holds a line that is not JSON
// (or was itself skipped), and the wait ends with the request's context.
func TestNDJSONDecoderWaitsForThePreviousChunk(t *testing.T) {
	t.Parallel()
	tbl := application.NewTable(domain.TableInfo{Descriptor: domain.TableDescriptor{Schema: domain.Schema{Columns: []domain.Column{
		{Name: "ts", Type: domain.DataType{Root: domain.TypeBigInt, Nullable: true}},
		{Name: "msg", Type: domain.DataType{Root: domain.TypeString, Nullable: true}},
	}}}})
	chunk := func() *ndjsonChunk {
		ch := newNDJSONChunk()
		ch.add([]byte(appendLine("a", 1, "x")), 1, 10)
		return ch
	}
	decode := func(ctx context.Context, prev *ndjsonChunk) (*ndjsonChunk, <-chan error) {
		ch := chunk()
		out := make(chan error, 1)
		go func() {
			dw, err := (&ndjsonDecoder{ch: ch, prev: prev, ctx: ctx, buf: buffers.Get()}).DecodeWrite(tbl, 100)
			if err == nil && len(dw.IDs) != 1 {
				err = fmt.Errorf("%d ids", len(dw.IDs))
			}
			out <- err
		}()
		return ch, out
	}

	prev := chunk()
	_, out := decode(context.Background(), prev)
	select {
	case err := <-out:
		t.Fatalf("handed to the writer before the previous chunk was decoded: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	prev.markDecoded()
	require.NoError(t, <-out)

	bad := chunk()
	bad.badLine = 0
	bad.markDecoded()
	ch, out := decode(context.Background(), bad)
	require.ErrorIs(t, <-out, errChunkSkipped)
	assert.True(t, ch.skipped)
	_, out = decode(context.Background(), ch)
	require.ErrorIs(t, <-out, errChunkSkipped, "a chunk after a skipped one is skipped too")

	ctx, cancel := context.WithCancel(context.Background())
	_, out = decode(ctx, chunk())
	cancel()
	assert.Equal(t, domain.KindTimeout, domain.KindOf(<-out))
}

// TestStreamStopMessage: the error that ends a streamed write joins its
// cause (without the cause's full stop) to what was written before it, in
// the grammatical number of the count.
func TestStreamStopMessage(t *testing.T) {
	notFound := &domain.Error{Kind: domain.KindNotFound, Message: "Table 'shop.nope' does not exist."}
	for _, tc := range []struct {
		name string
		sink verdictSink
		want string
	}{
		{"nothing before", verdictSink{},
			"lines 1-2: Table 'shop.nope' does not exist; no earlier entry had been written; nothing from there on was written"},
		{"one before", verdictSink{rows: 1, ok: 1},
			"lines 1-2: Table 'shop.nope' does not exist; 1 other entry had already been handed to the writer: 1 written, 0 failed; nothing from there on was written"},
		{"several before, one failed", verdictSink{rows: 3, ok: 2, firstFail: []string{"e2"}},
			"lines 1-2: Table 'shop.nope' does not exist; 3 other entries had already been handed to the writer: 2 written, 1 failed (failed: e2); nothing from there on was written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := streamStop(notFound, &tc.sink, "lines 1-2")
			de := domain.AsError(err)
			require.NotNil(t, de)
			assert.Equal(t, tc.want, de.Message)
			assert.Equal(t, domain.KindNotFound, de.Kind)
		})
	}
}

// TestVerdictSinkReservesTail: the successes of a JSON answer to an NDJSON
// body are appended into the room reserve made, with room left for what
// send appends after them, so the answer is never copied into a new array;
// also when the body came in several chunks.
func TestVerdictSinkReservesTail(t *testing.T) {
	for _, chunks := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d chunks", chunks), func(t *testing.T) {
			var s verdictSink
			line := 0
			for range chunks {
				ids := make([]string, 500)
				for i := range ids {
					ids[i] = fmt.Sprintf("e%d", line+i)
				}
				s.reserve(ids)
				for _, id := range ids {
					line++
					s.add(line, id, domain.EntryResult{})
				}
			}
			require.Equal(t, 500*chunks, s.ok)
			assert.GreaterOrEqual(t, cap(s.succ)-len(s.succ), sinkTail)
		})
	}
}

// TestNDJSONIdleBuffersAreCharged: a chunk's row buffer kept for the
// body's next chunk holds its bytes in the memory budget while it waits,
// returned when the next chunk takes it or the body ends; with no room in
// the budget it goes to the shared pool instead of waiting uncounted.
func TestNDJSONIdleBuffersAreCharged(t *testing.T) {
	codec, err := rowjson.NewCodec(rowjson.TableSpec{Columns: []domain.Column{
		{Name: "ts", Type: domain.DataType{Root: domain.TypeBigInt, Nullable: true}},
		{Name: "msg", Type: domain.DataType{Root: domain.TypeString, Nullable: true}},
	}})
	require.NoError(t, err)
	var lines []string
	for i := range 8000 {
		lines = append(lines, appendLine(fmt.Sprint("e", i), i, "m"))
	}
	doc := []byte(entries(lines...))
	used := func() *rowjson.Buffer {
		b := new(rowjson.Buffer)
		_, _, err := codec.DecodeWriteTo(b, doc, rowjson.Limits{})
		require.NoError(t, err)
		return b
	}
	budget := membudget.New(64<<20, 10*time.Millisecond)
	p := &ndjsonPipeline{a: &api{budget: budget}}

	b := used()
	p.recycleBuffer(b)
	retained := int64(b.Retained())
	require.Greater(t, retained, int64(1<<20), "a buffer past the shared pool's bound")
	assert.Equal(t, retained, budget.Stats().InUse, "the idle buffer's bytes are held")
	assert.Same(t, b, p.rowBuffer(), "the next chunk gets it back")
	assert.Zero(t, budget.Stats().InUse, "and its own charge covers it")

	p.recycleBuffer(b)
	p.releaseBuffers()
	assert.Zero(t, budget.Stats().InUse, "returned when the body ends")
	assert.Empty(t, p.free)

	hold := budget.NewCharge()
	require.NoError(t, hold.Acquire(context.Background(), 64<<20))
	p.recycleBuffer(used())
	assert.Empty(t, p.free, "no room: not kept")
	assert.Equal(t, int64(64<<20), budget.Stats().InUse)
	hold.Release()
}
