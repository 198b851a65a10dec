package http

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// renderScanOneByOne is the answer rendered one record after the other,
// grown with answerBudget.add: what renderScanAnswer rendered before its
// records were rendered in parallel chunks, the reference it must match
// byte for byte.
func renderScanOneByOne(ab *answerBudget, res *application.ScanResult, ndjson bool) ([]byte, int, error) {
	tail := len(res.Cursor) + 64
	ab.limit = max(ab.limit-tail, 0)
	var out []byte
	var err error
	if !ndjson {
		if out, err = ab.add(out, []byte(`{"records":[`)); err != nil {
			return nil, 0, err
		}
	}
	n := len(res.Records)
	render := newScanRenderer(res.Columns)
	var part []byte
	for i := range res.Records {
		part = part[:0]
		if i > 0 && !ndjson {
			part = append(part, ',')
		}
		part = render.appendRecord(part, &res.Records[i])
		if ndjson {
			part = append(part, '\n')
		}
		grown, err := ab.add(out, part)
		if err != nil {
			if i > 0 && domain.KindOf(err) == domain.KindLimitExceeded {
				n = i
				break
			}
			return nil, 0, err
		}
		out = grown
	}
	cursor, caughtUp := res.Cursor, res.CaughtUp
	if n < len(res.Records) {
		cursor, caughtUp = "cut-"+strconv.Itoa(n), false
	}
	ab.limit += tail
	if ndjson {
		part = append(appendScanEnd(append(part[:0], '{'), cursor, caughtUp), '\n')
	} else {
		part = appendScanEnd(append(part[:0], "],"...), cursor, caughtUp)
	}
	out, err = ab.add(out, part)
	return out, n, err
}

func withScanRenderWorkers(t testing.TB, n int) {
	old := scanRenderWorkers
	scanRenderWorkers = n
	t.Cleanup(func() { scanRenderWorkers = old })
}

// TestRenderScanInChunks: the answer rendered in parallel chunks is byte
// for byte the answer rendered one record after the other, for any number
// of records and goroutines, in JSON and NDJSON, cut at the answer-size cap
// at the same record (413 when the first record does not fit), and every
// goroutine ends.
func TestRenderScanInChunks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	full := scanBenchRecords(3000)
	tests := []struct {
		name    string
		records int
		limit   int
	}{
		{"none", 0, 1 << 20},
		{"one", 1, 1 << 20},
		{"one chunk less one", scanChunkRecords - 1, 16 << 20},
		{"one chunk", scanChunkRecords, 16 << 20},
		{"one chunk and one", scanChunkRecords + 1, 16 << 20},
		{"many chunks", 3000, 16 << 20},
		{"cut in the first chunk", 3000, 20 << 10},
		{"cut in a later chunk", 3000, 400 << 10},
		{"cut after the first record", 3000, 700},
		{"first record too large", 3000, 300},
	}
	for _, tc := range tests {
		for _, ndjson := range []bool{false, true} {
			res := &application.ScanResult{Columns: scanBenchColumns, Records: full[:tc.records], Cursor: "cursor-of-all", CaughtUp: true}
			budget := func() *answerBudget {
				return &answerBudget{ctx: context.Background(), ch: membudget.New(1<<30, time.Millisecond).NewCharge(), limit: tc.limit}
			}
			want, wantN, wantErr := renderScanOneByOne(budget(), res, ndjson)
			for _, workers := range []int{1, 2, 5} {
				t.Run(tc.name+"/ndjson="+strconv.FormatBool(ndjson)+"/workers="+strconv.Itoa(workers), func(t *testing.T) {
					withScanRenderWorkers(t, workers)
					got, n, err := renderScanAnswer(budget(), res, ndjson)
					if wantErr != nil {
						require.Error(t, err)
						assert.Equal(t, wantErr, err)
						if ndjson {
							out := &streamOut{w: bufio.NewWriter(io.Discard), cancel: func() {}}
							_, err := writeScanLines(context.Background(), membudget.New(1<<30, time.Millisecond).NewCharge(), out, res, tc.limit)
							assert.Equal(t, domain.KindLimitExceeded, domain.KindOf(err))
						}
						return
					}
					require.NoError(t, err)
					assert.Equal(t, wantN, n)
					if n == len(res.Records) {
						assert.Equal(t, string(want), string(got))
					} else {
						// The cut answer's cursor is CursorAfter's (no sealer
						// here: the full cursor); compare the records.
						assert.Equal(t, string(want[:len(want)-len(`],"cursor":"cut-`)-len(strconv.Itoa(n))-len(`","caught_up":false}`)]),
							string(got[:len(got)-len(`],"cursor":"cursor-of-all","caught_up":false}`)]), "ndjson=%v", ndjson)
					}
					assert.Equal(t, len(got), cap(got), "one buffer of the exact size")
					if ndjson {
						// Streamed: the same bytes.
						var buf bytes.Buffer
						out := &streamOut{w: bufio.NewWriterSize(&buf, 4096), cancel: func() {}}
						sn, err := writeScanLines(context.Background(), membudget.New(1<<30, time.Millisecond).NewCharge(), out, res, tc.limit)
						require.NoError(t, err)
						assert.Equal(t, n, sn)
						assert.Equal(t, string(got), buf.String())
					}
				})
			}
		}
	}
}

// TestRenderScanBudget: the records and the chunks' buffers are charged to
// the request's memory budget; a budget that cannot take them is a 429.
func TestRenderScanBudget(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	res := &application.ScanResult{Columns: scanBenchColumns, Records: scanBenchRecords(3000), Cursor: "c", CaughtUp: true}
	for _, workers := range []int{1, 2} {
		withScanRenderWorkers(t, workers)
		// Another request holds all but the records' charge and a little.
		var decoded int64
		for i := range res.Records {
			decoded += datumBytes(res.Records[i].Row) + scanRecordOverhead
		}
		b := membudget.New(64<<20, time.Millisecond)
		other := b.NewCharge()
		require.NoError(t, other.Acquire(context.Background(), 64<<20-decoded-1000))
		ch := b.NewCharge()
		_, _, err := renderScanAnswer(&answerBudget{ctx: context.Background(), ch: ch, limit: 16 << 20}, res, false)
		require.Error(t, err)
		assert.Equal(t, domain.KindResourceExhausted, domain.KindOf(err), "%v", err)
		assert.Contains(t, err.Error(), "memory budget")
		ch.Release()
		other.Release()

		ch = b.NewCharge()
		out, n, err := renderScanAnswer(&answerBudget{ctx: context.Background(), ch: ch, limit: 16 << 20}, res, false)
		require.NoError(t, err)
		assert.Equal(t, 3000, n)
		assert.GreaterOrEqual(t, ch.Held(), decoded+int64(2*len(out)), "the records, the chunks and the answer")
		ch.Release()
	}
}
