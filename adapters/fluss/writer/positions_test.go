package writer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Each success carries where its row landed: a log row its own offset (the
// batch's base offset plus its index in the batch), a primary-key row the
// changelog's end offset after its batch.
func TestWrittenAtPositions(t *testing.T) {
	t.Parallel()
	arrow := func([]domain.DataType, string, int) (ArrowBuilder, error) { return &fakeArrow{}, nil }
	tb := logTable(40, 1)
	e := newEnv(t, Options{Linger: time.Millisecond, Arrow: arrow}, tb)
	app := func(i int64) domain.WriteEntry {
		return domain.WriteEntry{Op: domain.OpAppend, Row: []domain.Datum{{I64: i}, {Bytes: []byte("x")}}}
	}
	var next int64
	for round := range 3 {
		entries := []domain.WriteEntry{app(1), app(2), upsert(1, "a", 1), app(3)}
		res := e.write(t, ctxTimeout(t, 5*time.Second), tb.Path, entries...)
		assert.Equal(t, "invalid_argument", res[2].Code)
		assert.False(t, res[2].At.Known, "a failure has no position")
		for _, i := range []int{0, 1, 3} {
			require.True(t, res[i].OK(), "round %d entry %d: %+v", round, i, res[i])
			assert.Equal(t, domain.WrittenAt{Known: true, Bucket: 0, Offset: next, Exact: true}, res[i].At, "round %d entry %d", round, i)
			next++
		}
	}

	pk := newEnv(t, Options{Linger: time.Millisecond}, pkTable(41, 1))
	res := pk.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1, "a", 1), upsert(2, "b", 2))
	for i, r := range res {
		require.True(t, r.OK(), "%d: %+v", i, r)
		assert.True(t, r.At.Known)
		assert.False(t, r.At.Exact, "a primary-key row's position is the batch's log end offset")
		assert.Equal(t, int64(2), r.At.Offset)
	}
}

// TestWrittenAtPositionsColumnar: rows of columnar writes (chunks of many
// rows, each one record of a batch) and entries sharing batches each get
// their own offset: in every bucket the answered offsets are distinct and
// run from 0 without a gap.
func TestWrittenAtPositionsColumnar(t *testing.T) {
	t.Parallel()
	tb := logTable(42, 2)
	e := newEnv(t, Options{Linger: time.Millisecond, BatchSize: 4 << 10}, tb)
	ctx := ctxTimeout(t, 10*time.Second)
	var all []domain.EntryResult
	for k := range 3 {
		res, err := e.w.Write(ctx, &domain.WriteBatch{Table: tb.Path, Columns: logColumns(k*1000, 1000)})
		require.NoError(t, err)
		all = append(all, res...)
		all = append(all, e.write(t, ctx, tb.Path,
			domain.WriteEntry{Op: domain.OpAppend, Row: []domain.Datum{{I64: int64(-k)}, {Bytes: []byte("e")}}})...)
	}
	perBucket := map[int32]map[int64]bool{}
	for i, r := range all {
		require.True(t, r.OK(), "row %d: %+v", i, r)
		require.True(t, r.At.Known && r.At.Exact, "row %d: %+v", i, r.At)
		if perBucket[r.At.Bucket] == nil {
			perBucket[r.At.Bucket] = map[int64]bool{}
		}
		assert.False(t, perBucket[r.At.Bucket][r.At.Offset], "row %d: bucket %d offset %d answered twice", i, r.At.Bucket, r.At.Offset)
		perBucket[r.At.Bucket][r.At.Offset] = true
	}
	for b, offs := range perBucket {
		for o := range int64(len(offs)) {
			assert.True(t, offs[o], "bucket %d: offset %d missing", b, o)
		}
	}
}
