package writer

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record/arrowlog"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/tests/contract"
)

// logColumns returns n rows of logTable's columns (id BIGINT, s STRING) as
// columnar rows: id = base+i, s = "s<id>", every seventh s null.
func logColumns(base, n int) *domain.ColumnarRows {
	return contract.IDStringColumns(base, n, 7, "s")
}

// appendedLogRows decodes the ARROW batches the fake applied: id -> s
// ("<null>" for null) and how often each id landed.
func appendedLogRows(t *testing.T, fake *metatest.Cluster, tb *metatest.Table) (map[int64]string, map[int64]int) {
	t.Helper()
	rd, err := arrowlog.NewReader(tb.Desc.Schema.Columns)
	require.NoError(t, err)
	vals, seen := map[int64]string{}, map[int64]int{}
	for _, b := range fake.Batches() {
		if !b.Appended {
			continue
		}
		_, rows, err := rd.ReadRecords(b.Log.Records)
		require.NoError(t, err)
		require.Len(t, rows, int(b.Log.RecordCount))
		for _, r := range rows {
			id := r[0].I64
			seen[id]++
			if r[1].Null {
				vals[id] = "<null>"
			} else {
				vals[id] = string(r[1].Bytes)
			}
		}
	}
	return vals, seen
}

// requireColumnsLanded checks that the writes logColumns(k*rows, rows),
// k < writes, and extra other rows landed once each, with their values; it
// returns id -> value.
func requireColumnsLanded(t *testing.T, fake *metatest.Cluster, tb *metatest.Table, writes, rows, extra int) map[int64]string {
	t.Helper()
	vals, seen := appendedLogRows(t, fake, tb)
	require.Len(t, seen, writes*rows+extra)
	for id, n := range seen {
		require.Equal(t, 1, n, "id %d landed %d times", id, n)
	}
	for i := range writes * rows {
		want := fmt.Sprintf("s%d", i)
		if (i%rows)%7 == 6 {
			want = "<null>"
		}
		require.Equal(t, want, vals[int64(i)], "id %d", i)
	}
	return vals
}

// TestColumnarAppends: columnar rows cut into chunks (a small batch size),
// written concurrently with row entries to the same table, all land once
// with their values, in sticky buckets, with one verdict per row.
func TestColumnarAppends(t *testing.T) {
	t.Parallel()
	tb := logTable(30, 3)
	e := newEnv(t, Options{Linger: time.Millisecond, BatchSize: 4 << 10}, tb)
	ctx := ctxTimeout(t, 10*time.Second)
	var wg sync.WaitGroup
	const writes, rows = 4, 3000
	for k := range writes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.w.Write(ctx, &domain.WriteBatch{Table: tb.Path, Columns: logColumns(k*rows, rows)})
			assert.NoError(t, err)
			assert.Len(t, res, rows)
			for i, r := range res {
				assert.True(t, r.OK(), "write %d row %d: %+v", k, i, r)
			}
		}()
	}
	var entries []domain.WriteEntry
	for i := range 50 {
		entries = append(entries, domain.WriteEntry{Op: domain.OpAppend, Row: []domain.Datum{{I64: int64(1_000_000 + i)}, {Bytes: []byte("e")}}})
	}
	for _, r := range e.write(t, ctx, tb.Path, entries...) {
		assert.True(t, r.OK(), "%+v", r)
	}
	wg.Wait()
	vals := requireColumnsLanded(t, e.fake, tb, writes, rows, 50)
	assert.Equal(t, "e", vals[1_000_000])
	assert.Greater(t, len(e.fake.Batches()), writes, "the batch size cut the writes into chunks")
}

// TestColumnarAppendVerdicts: deadline and refusal verdicts reach every row
// of a columnar write, as for entries.
func TestColumnarAppendVerdicts(t *testing.T) {
	t.Parallel()
	t.Run("no leader: every row times out, never sent", func(t *testing.T) {
		t.Parallel()
		tb := logTable(31, 2)
		tb.Leaders = []int32{meta.NoLeader, meta.NoLeader}
		e := newEnv(t, Options{Linger: time.Millisecond, BatchSize: 1 << 10}, tb)
		res, err := e.w.Write(ctxTimeout(t, 100*time.Millisecond), &domain.WriteBatch{Table: tb.Path, Columns: logColumns(0, 500)})
		require.NoError(t, err)
		require.Len(t, res, 500)
		for _, r := range res {
			assert.Equal(t, CodeTimeout, r.Code)
			assert.Equal(t, domain.AppliedNo, r.Applied)
		}
		e.fake.SetLeaders(tb.Path, 1, 1)
		res, err = e.w.Write(ctxTimeout(t, 5*time.Second), &domain.WriteBatch{Table: tb.Path, Columns: logColumns(1000, 10)})
		require.NoError(t, err)
		assert.True(t, res[9].OK(), "%+v", res[9])
		time.Sleep(50 * time.Millisecond)
		_, seen := appendedLogRows(t, e.fake, tb)
		assert.Len(t, seen, 10, "the expired rows were never sent")
	})
	t.Run("sent, unanswered: every row unknown", func(t *testing.T) {
		t.Parallel()
		tb := logTable(32, 1)
		e := newEnv(t, Options{Linger: time.Millisecond}, tb)
		release := make(chan struct{})
		e.fake.AfterWrite = func(ctx context.Context, _ int32) error {
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return &metatest.Error{Outcome: "ambiguous", Retry: true, Message: "timeout", Wrapped: ctx.Err()}
			}
		}
		res, err := e.w.Write(ctxTimeout(t, 150*time.Millisecond), &domain.WriteBatch{Table: tb.Path, Columns: logColumns(0, 20)})
		require.NoError(t, err)
		for _, r := range res {
			assert.Equal(t, CodeTimeout, r.Code)
			assert.Equal(t, domain.AppliedUnknown, r.Applied)
		}
		close(release)
	})
	for _, tc := range []struct {
		name string
		tb   *metatest.Table
		cols *domain.ColumnarRows
		kind domain.Kind
		msg  string
	}{
		{"a bucket key", logTable(33, 2, "id"), logColumns(0, 3), domain.KindUnsupported, "has a bucket key"},
		{"a primary key", pkTable(34, 1), logColumns(0, 3), domain.KindUnsupported, "has a primary key"},
		{"short buffers", logTable(35, 1), &domain.ColumnarRows{Rows: 3, Columns: logColumns(0, 2).Columns}, domain.KindInvalidArgument, "column 0: 16 value bytes for 3 rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Options{Linger: time.Millisecond}, tc.tb)
			_, err := e.w.Write(ctxTimeout(t, 5*time.Second), &domain.WriteBatch{Table: tc.tb.Path, Columns: tc.cols})
			de := domain.AsError(err)
			require.NotNil(t, de, "%v", err)
			assert.Equal(t, tc.kind, de.Kind)
			assert.Contains(t, de.Message, tc.msg)
			assert.Empty(t, e.fake.Batches())
		})
	}
}

// packColumns compresses the buffers of logColumns' rows as a client's
// ZSTD-compressed Arrow record batch holds them (an int64 uncompressed
// length, then the frame; no validity bitmap for id, which has no null).
func packColumns(t *testing.T, cr *domain.ColumnarRows) *domain.PackedColumns {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	require.NoError(t, err)
	defer enc.Close()
	pack := func(raw []byte) []byte {
		return enc.EncodeAll(raw, binary.LittleEndian.AppendUint64(nil, uint64(len(raw))))
	}
	id, s := cr.Columns[0], cr.Columns[1]
	nulls := int64(cr.Rows - countOnes(s.Validity, cr.Rows))
	p := &domain.PackedColumns{Codec: "ZSTD", NullCounts: []int64{0, nulls},
		Buffers: [][]byte{nil, pack(id.Values), pack(s.Validity), pack(s.Offsets), pack(s.Data)}}
	for _, b := range p.Buffers {
		p.Size += len(b)
	}
	return p
}

func countOnes(b []byte, n int) int {
	c := 0
	for i := range n {
		if b[i/8]&(1<<(i%8)) != 0 {
			c++
		}
	}
	return c
}

// TestPackedColumnarAppends: a columnar write with packed rows (a client's
// compressed record batch) goes to a ZSTD table as a batch of its own built
// from the client's frames (no other rows in it), beside row entries, and
// every row lands once with its value; to an LZ4_FRAME table, or when the
// packed rows exceed the batch size, the columns are compressed again.
func TestPackedColumnarAppends(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		codec      string
		batchSize  int
		wantPacked bool
	}{
		{"ZSTD table", "ZSTD", 0, true},
		{"LZ4_FRAME table", "LZ4_FRAME", 0, false},
		{"larger than a batch", "ZSTD", 2 << 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tb := logTable(32, 3)
			tb.Desc.Properties["table.log.arrow.compression.type"] = tc.codec
			e := newEnv(t, Options{Linger: time.Millisecond, BatchSize: tc.batchSize}, tb)
			ctx := ctxTimeout(t, 10*time.Second)
			const writes, rows = 3, 2000
			packs := make([]*domain.PackedColumns, writes)
			var wg sync.WaitGroup
			for k := range writes {
				cr := logColumns(k*rows, rows)
				cr.Packed = packColumns(t, cr)
				packs[k] = cr.Packed
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := e.w.Write(ctx, &domain.WriteBatch{Table: tb.Path, Columns: cr})
					assert.NoError(t, err)
					require.Len(t, res, rows)
					for i, r := range res {
						assert.True(t, r.OK(), "write %d row %d: %+v", k, i, r)
					}
				}()
			}
			for _, r := range e.write(t, ctx, tb.Path, domain.WriteEntry{Op: domain.OpAppend, Row: []domain.Datum{{I64: 1_000_000}, {Bytes: []byte("e")}}}) {
				assert.True(t, r.OK(), "%+v", r)
			}
			wg.Wait()
			requireColumnsLanded(t, e.fake, tb, writes, rows, 1)
			// A packed batch holds exactly one write's rows and its frames.
			packedBatches := 0
			for _, b := range e.fake.Batches() {
				for _, p := range packs {
					if bytes.Contains(b.Log.Records, p.Buffers[4]) {
						packedBatches++
						assert.Equal(t, int32(rows), b.Log.RecordCount)
					}
				}
			}
			if tc.wantPacked {
				assert.Equal(t, writes, packedBatches)
			} else {
				assert.Zero(t, packedBatches)
			}
		})
	}
}

// TestWriteColumnRuns: a columnar write answered run by run has a run per
// chunk, covering the rows in order, each at the log offsets its rows
// landed at (expanded, the same verdicts Write gives row by row); the
// writer's entry metrics count every row.
func TestWriteColumnRuns(t *testing.T) {
	t.Parallel()
	tb := logTable(36, 1)
	m := &countingMetrics{failed: map[string]int{}, retried: map[string]int{}}
	e := newEnv(t, Options{Linger: time.Millisecond, BatchSize: 4 << 10, Metrics: m}, tb)
	const rows = 3000
	runs, err := e.w.WriteColumnRuns(ctxTimeout(t, 10*time.Second), &domain.WriteBatch{Table: tb.Path, Columns: logColumns(0, rows)})
	require.NoError(t, err)
	require.Greater(t, len(runs), 1, "the batch size cut the write into chunks")
	assert.Less(t, len(runs), rows/10)
	assert.Equal(t, rows, domain.RunRows(runs))
	for _, run := range runs {
		assert.True(t, run.Result.OK(), "%+v", run.Result)
		assert.True(t, run.Result.At.Known && run.Result.At.Exact, "%+v", run.Result.At)
	}
	vals, seen := appendedLogRows(t, e.fake, tb)
	require.Len(t, vals, rows)
	// One bucket: every row's expanded offset is where the fake put it.
	offsets := map[int64]bool{}
	for _, r := range domain.ExpandRuns(nil, runs) {
		assert.False(t, offsets[r.At.Offset], "offset %d twice", r.At.Offset)
		offsets[r.At.Offset] = true
	}
	assert.Len(t, offsets, rows)
	assert.True(t, offsets[0] && offsets[rows-1], "one bucket's log: offsets 0 to %d", rows-1)
	for id, n := range seen {
		assert.Equal(t, 1, n, "row %d", id)
	}
	m.mu.Lock()
	assert.Equal(t, rows, m.okN, "every row counted once")
	m.mu.Unlock()

	_, err = e.w.WriteColumnRuns(ctxTimeout(t, time.Second), &domain.WriteBatch{Table: tb.Path})
	assert.Equal(t, domain.KindInvalidArgument, domain.AsError(err).Kind, "entries are not columnar rows")
}
