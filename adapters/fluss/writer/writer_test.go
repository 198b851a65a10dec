package writer

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

var pkPath = domain.TablePath{Database: "db", Table: "pk"}

func col(name string, root domain.TypeRoot, nullable bool, id int) domain.Column {
	return domain.Column{Name: name, Type: domain.DataType{Root: root, Nullable: nullable}, ID: int32(id)}
}

func pkTable(id int64, buckets int) *metatest.Table {
	return &metatest.Table{ID: id, Path: pkPath, Desc: domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			col("id", domain.TypeBigInt, false, 0), col("name", domain.TypeString, true, 1), col("v", domain.TypeInteger, true, 2),
		}, PrimaryKey: []string{"id"}, HighestFieldID: 2},
		BucketCount: buckets, Properties: map[string]string{}, CustomProperties: map[string]string{},
	}}
}

func upsert(id int64, name string, v int64) domain.WriteEntry {
	return domain.WriteEntry{Op: domain.OpUpsert, Row: []domain.Datum{{I64: id}, {Bytes: []byte(name)}, {I64: v}}}
}

func del(id int64) domain.WriteEntry {
	return domain.WriteEntry{Op: domain.OpDelete, Row: []domain.Datum{{I64: id}, {Null: true}, {Null: true}}}
}

type env struct {
	fake  *metatest.Cluster
	cache *meta.Cache
	w     *Writer
}

func newEnv(t *testing.T, opts Options, tables ...*metatest.Table) *env {
	t.Helper()
	fake := metatest.New(2)
	for _, tb := range tables {
		fake.AddTable(tb)
	}
	cache := meta.New(fake, meta.Options{})
	w := New(fake, cache, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = w.Close(ctx)
	})
	return &env{fake: fake, cache: cache, w: w}
}

func (e *env) write(t *testing.T, ctx context.Context, path domain.TablePath, entries ...domain.WriteEntry) []domain.EntryResult {
	t.Helper()
	res, err := e.w.Write(ctx, &domain.WriteBatch{Table: path, Entries: entries})
	require.NoError(t, err)
	require.Len(t, res, len(entries))
	return res
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// keyOf decodes the BIGINT primary key of a KV record.
func keyOf(t *testing.T, k []byte) int64 {
	dec, err := record.NewCompactedKeyDecoder([]domain.DataType{{Root: domain.TypeBigInt}})
	require.NoError(t, err)
	d, err := dec.DecodeKey(nil, k)
	require.NoError(t, err)
	return d[0].I64
}

func appliedKeys(t *testing.T, fake *metatest.Cluster) map[int64]int {
	out := make(map[int64]int)
	for _, b := range fake.Batches() {
		if b.Appended {
			for _, r := range b.KV {
				out[keyOf(t, r.Key)]++
			}
		}
	}
	return out
}

func TestWritePerEntryResultsInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond}, pkTable(10, 4))
	var entries []domain.WriteEntry
	for i := range 100 {
		entries = append(entries, upsert(int64(i), fmt.Sprint("n", i), int64(i)))
	}
	// Entry 7: a null primary key fails alone; entry 9 is an append on a
	// primary-key table.
	entries[7].Row[0] = domain.Datum{Null: true}
	entries[9].Op = domain.OpAppend
	entries = append(entries, del(3))
	res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, entries...)
	for i, r := range res {
		switch i {
		case 7, 9:
			assert.Equal(t, "invalid_argument", r.Code, i)
			assert.Equal(t, domain.AppliedNo, r.Applied)
		default:
			assert.True(t, r.OK(), "entry %d: %+v", i, r)
		}
	}
	keys := appliedKeys(t, e.fake)
	assert.Len(t, keys, 98) // 100 - 2 invalid (key 3 twice: upsert and delete)
	assert.Equal(t, 2, keys[3])
	// One PutKv per (node, table) per round: many buckets in one request.
	assert.LessOrEqual(t, e.fake.Calls(wire.KeyPutKv), 4)
	// Buckets follow Fluss bucketing of the compacted key.
	enc, _ := record.NewCompactedKeyEncoder([]domain.DataType{{Root: domain.TypeBigInt}}, nil)
	for _, b := range e.fake.Batches() {
		for _, r := range b.KV {
			k, _ := enc.AppendKey(nil, []domain.Datum{{I64: keyOf(t, r.Key)}})
			want, _ := record.FlussBucketing{}.Bucket(k, 4)
			assert.Equal(t, int32(want), b.Bucket)
		}
	}
}

func TestSizeTriggerWithoutLinger(t *testing.T) {
	t.Parallel()
	// Linger of an hour: only the size trigger can send.
	e := newEnv(t, Options{Linger: time.Hour, BatchSize: 256, LingerAfterInFlight: -1}, pkTable(10, 1))
	var entries []domain.WriteEntry
	for i := range 50 {
		entries = append(entries, upsert(int64(i), "xxxxxxxxxxxxxxxxxxxxxxxx", 1))
	}
	ctx := ctxTimeout(t, 2*time.Second)
	res, err := e.w.Write(ctx, &domain.WriteBatch{Table: pkPath, Entries: entries})
	require.NoError(t, err)
	sent := 0
	for _, r := range res {
		if r.OK() {
			sent++
		}
	}
	// Full batches went out; the last partial batch waited for the linger
	// and timed out unsent.
	assert.Greater(t, sent, 30)
	assert.Less(t, sent, 50)
	assert.Equal(t, domain.AppliedNo, res[49].Applied)
	for _, b := range e.fake.Batches() {
		assert.LessOrEqual(t, len(b.Bytes), 256+record.KvBatchHeaderSize+64)
	}
}

func TestLingerTrigger(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: 80 * time.Millisecond, LingerAfterInFlight: -1}, pkTable(10, 1))
	start := time.Now()
	res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1, "a", 1))
	assert.True(t, res[0].OK())
	assert.GreaterOrEqual(t, time.Since(start), 80*time.Millisecond)
	// Concurrent small requests within the linger share one PutKv.
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(int64(10+i), "b", 1))
			assert.True(t, r[0].OK())
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, e.fake.Calls(wire.KeyPutKv), 3)
}

func TestRetriableErrorThenSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond, RetryBackoff: 5 * time.Millisecond}, pkTable(10, 1))
	var n atomic.Int32
	e.fake.BucketError = func(node int32, b metatest.BucketRef, seq int32) wire.ErrorCode {
		if n.Add(1) <= 2 {
			return wire.CodeNotEnoughReplicasException
		}
		return 0
	}
	res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1, "a", 1), upsert(2, "b", 2))
	assert.True(t, res[0].OK() && res[1].OK(), "%+v", res)
	bs := e.fake.Batches()
	require.Len(t, bs, 3)
	// The resend is the same batch: same bytes, writer id and sequence.
	assert.Equal(t, bs[0].Bytes, bs[2].Bytes)
	assert.Equal(t, int32(0), bs[2].Seq)
}

func TestLeadershipErrorRefreshesMetadata(t *testing.T) {
	t.Parallel()
	tb := pkTable(10, 2)
	tb.Leaders = []int32{1, 1}
	e := newEnv(t, Options{Linger: time.Millisecond, RetryBackoff: 5 * time.Millisecond}, tb)
	res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1, "a", 1))
	require.True(t, res[0].OK())
	metaCalls := e.fake.Calls(wire.KeyGetMetadata)
	// Leadership moves to node 2; node 1 answers NOT_LEADER_OR_FOLLOWER.
	e.fake.SetLeaders(pkPath, 2, 2)
	var entries []domain.WriteEntry
	for i := range 20 {
		entries = append(entries, upsert(int64(i), "x", 1))
	}
	res = e.write(t, ctxTimeout(t, 5*time.Second), pkPath, entries...)
	for i, r := range res {
		assert.True(t, r.OK(), "%d %+v", i, r)
	}
	assert.Greater(t, e.fake.Calls(wire.KeyGetMetadata), metaCalls)
	var toNode2 bool
	for _, b := range e.fake.Batches() {
		if b.Node == 2 && b.Appended {
			toNode2 = true
		}
		if b.Node == 1 && len(b.KV) > 0 && b.Outcome != 0 {
			assert.Equal(t, wire.CodeNotLeaderOrFollower, b.Outcome)
		}
	}
	assert.True(t, toNode2)
}

func TestFatalErrorFailsOnlyThatBucket(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond}, pkTable(10, 4))
	e.fake.BucketError = func(node int32, b metatest.BucketRef, seq int32) wire.ErrorCode {
		if b.Bucket == 0 {
			return wire.CodeRecordTooLargeException
		}
		return 0
	}
	var entries []domain.WriteEntry
	for i := range 40 {
		entries = append(entries, upsert(int64(i), "x", 1))
	}
	res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, entries...)
	enc, _ := record.NewCompactedKeyEncoder([]domain.DataType{{Root: domain.TypeBigInt}}, nil)
	failed := 0
	for i, r := range res {
		k, _ := enc.AppendKey(nil, []domain.Datum{{I64: int64(i)}})
		bucket, _ := record.FlussBucketing{}.Bucket(k, 4)
		if bucket == 0 {
			failed++
			assert.Equal(t, "record_too_large", r.Code)
			assert.Equal(t, domain.AppliedNo, r.Applied)
			assert.False(t, r.Retryable)
		} else {
			assert.True(t, r.OK(), "%d %+v", i, r)
		}
	}
	assert.Positive(t, failed)
	// The bucket's sequence was given back: the next batch there is seq 0
	// again... and accepted.
	e.fake.BucketError = nil
	res = e.write(t, ctxTimeout(t, 5*time.Second), pkPath, entries...)
	for i, r := range res {
		assert.True(t, r.OK(), "%d %+v", i, r)
	}
}

func TestDeadlineQueuedRowsAreNeverSent(t *testing.T) {
	t.Parallel()
	tb := pkTable(10, 1)
	tb.Leaders = []int32{meta.NoLeader}
	e := newEnv(t, Options{Linger: time.Millisecond}, tb)
	res := e.write(t, ctxTimeout(t, 100*time.Millisecond), pkPath, upsert(1, "a", 1), upsert(2, "b", 2))
	for _, r := range res {
		assert.Equal(t, CodeTimeout, r.Code)
		assert.Equal(t, domain.AppliedNo, r.Applied)
		assert.True(t, r.Retryable)
	}
	// The leader appears; the expired rows must never be sent.
	e.fake.SetLeaders(pkPath, 1)
	res = e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(3, "c", 3))
	assert.True(t, res[0].OK())
	time.Sleep(50 * time.Millisecond)
	keys := appliedKeys(t, e.fake)
	assert.Equal(t, map[int64]int{3: 1}, keys)
}

func TestDeadlineSentButUnanswered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond}, pkTable(10, 1))
	release := make(chan struct{})
	e.fake.AfterWrite = func(ctx context.Context, node int32) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return &metatest.Error{Outcome: "ambiguous", Retry: true, Message: "timeout", Wrapped: ctx.Err()}
		}
	}
	res := e.write(t, ctxTimeout(t, 150*time.Millisecond), pkPath, upsert(1, "a", 1))
	assert.Equal(t, CodeTimeout, res[0].Code)
	assert.Equal(t, domain.AppliedUnknown, res[0].Applied)
	close(release)
}

func TestDeadlineWhileWaitingForRetryIsAppliedNo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond, RetryBackoff: 20 * time.Millisecond}, pkTable(10, 1))
	e.fake.BucketError = func(int32, metatest.BucketRef, int32) wire.ErrorCode {
		return wire.CodeStorageBackpressureException // always pushed back (Fluss 1.0 code 72)
	}
	res := e.write(t, ctxTimeout(t, 200*time.Millisecond), pkPath, upsert(1, "a", 1))
	assert.Equal(t, "storage_backpressure", res[0].Code)
	assert.Equal(t, domain.AppliedNo, res[0].Applied)
	assert.True(t, res[0].Retryable)
	// The bucket was throttled: one attempt only within the deadline.
	assert.Equal(t, 1, len(e.fake.Batches()))
	// The dropped batch gave its sequence back: the next write uses seq 0.
	e.fake.BucketError = nil
	e.w.mu.Lock()
	for _, b := range e.w.buckets {
		b.blockedUntil = time.Time{}
	}
	e.w.mu.Unlock()
	res = e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(2, "b", 2))
	require.True(t, res[0].OK(), "%+v", res[0])
	bs := e.fake.Batches()
	assert.Equal(t, int32(0), bs[len(bs)-1].Seq)
}

func TestDuplicateSequenceIsSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond}, pkTable(10, 1))
	e.fake.BucketError = func(int32, metatest.BucketRef, int32) wire.ErrorCode {
		return wire.CodeDuplicateSequenceException
	}
	res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1, "a", 1))
	assert.True(t, res[0].OK(), "%+v", res[0])
}

func TestLostResponseResendIsDeduplicated(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond, RetryBackoff: 5 * time.Millisecond}, pkTable(10, 1))
	var lost atomic.Bool
	lost.Store(true)
	e.fake.AfterWrite = func(ctx context.Context, node int32) error {
		if lost.CompareAndSwap(true, false) {
			return &metatest.Error{Outcome: "ambiguous", Retry: true, Code: wire.CodeNetworkException, Message: "connection lost"}
		}
		return nil
	}
	res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1, "a", 1))
	assert.True(t, res[0].OK(), "%+v", res[0])
	// Applied once, answered twice (the resend was a duplicate).
	assert.Equal(t, map[int64]int{1: 1}, appliedKeys(t, e.fake))
	assert.Len(t, e.fake.Batches(), 2)
}

func TestSequencesPerBucket(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond}, pkTable(10, 2))
	for i := range 6 {
		res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(int64(i), "a", 1), upsert(int64(i+100), "a", 1))
		require.True(t, res[0].OK() && res[1].OK())
	}
	seqs := make(map[int32][]int32)
	var writer int64
	for _, b := range e.fake.Batches() {
		seqs[b.Bucket] = append(seqs[b.Bucket], b.Seq)
		if writer == 0 {
			writer = b.WriterID
		}
		assert.Equal(t, writer, b.WriterID)
		assert.True(t, b.Appended)
	}
	for bucket, s := range seqs {
		for i, v := range s {
			assert.Equal(t, int32(i), v, "bucket %d: %v", bucket, s)
		}
	}
	assert.Equal(t, 1, e.fake.Calls(wire.KeyInitWriter))
}

func TestMaxInFlightPerBucket(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond, BatchSize: 64}, pkTable(10, 1))
	gate := make(chan struct{})
	e.fake.BeforeWrite = func(ctx context.Context, node int32, api wire.APIKey, tableID int64) error {
		select {
		case <-gate:
		case <-time.After(100 * time.Millisecond):
		}
		return nil
	}
	var entries []domain.WriteEntry
	for i := range 60 {
		entries = append(entries, upsert(int64(i), "xxxxxxxxxxxxxxxxxxxx", 1))
	}
	res := e.write(t, ctxTimeout(t, 10*time.Second), pkPath, entries...)
	close(gate)
	for _, r := range res {
		assert.True(t, r.OK(), "%+v", r)
	}
	assert.Equal(t, 5, e.fake.MaxInFlight(metatest.BucketRef{Table: 10, Partition: meta.NoPartition, Bucket: 0}))
}

func TestBufferBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond, BufferMemory: 8192}, pkTable(10, 1))
	// Larger than the whole buffer: fails at once.
	var big []domain.WriteEntry
	for i := range 100 {
		big = append(big, upsert(int64(i), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 1))
	}
	res := e.write(t, ctxTimeout(t, time.Second), pkPath, big...)
	for _, r := range res {
		assert.Equal(t, CodeResourceExhausted, r.Code)
		assert.Equal(t, domain.AppliedNo, r.Applied)
		assert.False(t, r.Retryable, "can never fit")
	}
	// A request holding most of the buffer blocks a second one, which fails
	// at its deadline without being sent.
	stuck := make(chan struct{})
	e.fake.BeforeWrite = func(ctx context.Context, node int32, api wire.APIKey, tableID int64) error {
		<-stuck
		return nil
	}
	done := make(chan []domain.EntryResult)
	go func() {
		r, _ := e.w.Write(ctxTimeout(t, 5*time.Second), &domain.WriteBatch{Table: pkPath, Entries: big[:40]})
		done <- r
	}()
	time.Sleep(50 * time.Millisecond)
	res = e.write(t, ctxTimeout(t, 100*time.Millisecond), pkPath, big[40:80]...)
	for _, r := range res {
		assert.Equal(t, CodeResourceExhausted, r.Code)
		assert.Equal(t, domain.AppliedNo, r.Applied)
		assert.True(t, r.Retryable)
	}
	close(stuck)
	for _, r := range <-done {
		assert.True(t, r.OK(), "%+v", r)
	}
	used, _ := e.w.buf.stats()
	assert.Zero(t, used)
}

func TestPartialUpdateTargetColumns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: 20 * time.Millisecond}, pkTable(10, 1))
	var wg sync.WaitGroup
	for _, cols := range [][]int{{0, 1}, {0, 2}, nil} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.w.Write(ctxTimeout(t, 5*time.Second), &domain.WriteBatch{Table: pkPath, PartialUpdateColumns: cols,
				Entries: []domain.WriteEntry{upsert(1, "a", 1), upsert(2, "b", 2)}})
			require.NoError(t, err)
			assert.True(t, res[0].OK() && res[1].OK(), "%v: %+v", cols, res)
		}()
	}
	wg.Wait()
	seen := make(map[string]bool)
	for _, b := range e.fake.Batches() {
		seen[fmt.Sprint(b.TargetCols)] = true
		assert.Len(t, b.KV, 2) // records with different target columns never share a batch
	}
	assert.Equal(t, map[string]bool{"[0 1]": true, "[0 2]": true, "[]": true}, seen)
}

func TestOutOfOrderResetsWriterID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond}, pkTable(10, 1))
	var once atomic.Bool
	e.fake.BucketError = func(int32, metatest.BucketRef, int32) wire.ErrorCode {
		if once.CompareAndSwap(false, true) {
			return wire.CodeOutOfOrderSequenceException
		}
		return 0
	}
	res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1, "a", 1))
	assert.Equal(t, "out_of_order_sequence", res[0].Code)
	assert.Equal(t, domain.AppliedNo, res[0].Applied)
	res = e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(2, "b", 1))
	assert.True(t, res[0].OK(), "%+v", res[0])
	assert.Equal(t, 2, e.fake.Calls(wire.KeyInitWriter))
	bs := e.fake.Batches()
	assert.NotEqual(t, bs[0].WriterID, bs[len(bs)-1].WriterID)
	assert.Equal(t, int32(0), bs[len(bs)-1].Seq)
}

func TestTableDroppedFailsRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond, RetryBackoff: 5 * time.Millisecond}, pkTable(10, 1))
	res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1, "a", 1))
	require.True(t, res[0].OK())
	e.fake.DropTable(pkPath)
	res = e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(2, "a", 1))
	assert.Equal(t, "table_not_found", res[0].Code, "%+v", res[0])
	_, err := e.w.Write(ctxTimeout(t, 5*time.Second), &domain.WriteBatch{Table: pkPath, Entries: []domain.WriteEntry{upsert(3, "a", 1)}})
	require.Error(t, err)
	assert.Equal(t, domain.KindNotFound, domain.KindOf(err))
}

func TestTableIDMismatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond}, pkTable(10, 1))
	_, err := e.w.Write(ctxTimeout(t, 5*time.Second), &domain.WriteBatch{Table: pkPath, TableID: 9, SchemaID: 1,
		Entries: []domain.WriteEntry{upsert(3, "a", 1)}})
	require.Error(t, err)
	assert.Equal(t, domain.KindFailedPrecondition, domain.KindOf(err))
	assert.True(t, domain.IsStaleDefinition(err), "%v", err)
}

func TestThrottleHook(t *testing.T) {
	t.Parallel()
	w := &Writer{opts: Options{MaxThrottle: 3 * time.Second}.withDefaults()}
	b := &bucket{}
	now := time.Unix(100, 0)
	w.throttleLocked(b, 0.5, now)
	assert.Equal(t, now.Add(750*time.Millisecond), b.blockedUntil)
	w.throttleLocked(b, 0.1, now) // shorter: keeps the longer block
	assert.Equal(t, now.Add(750*time.Millisecond), b.blockedUntil)
	w.throttleLocked(b, 1, now)
	assert.Equal(t, now.Add(3*time.Second), b.blockedUntil)
}

func TestSeqWrap(t *testing.T) {
	t.Parallel()
	assert.Equal(t, int32(0), nextSeq(2147483647))
	assert.Equal(t, int32(2147483647), prevSeq(0))
	assert.True(t, seqAfter(0, 2147483647))
	assert.True(t, seqAfter(5, 4))
	assert.False(t, seqAfter(4, 5))
	assert.False(t, seqAfter(3, 3))
}

func TestEntryCodes(t *testing.T) {
	t.Parallel()
	for code, want := range map[wire.ErrorCode]string{
		wire.CodeRecordTooLargeException:       "record_too_large",
		wire.CodeInvalidTargetColumn:           "invalid_target_column",
		wire.CodeAuthorizationException:        "unauthorized",
		wire.CodePartitionNotExists:            "partition_not_found",
		wire.CodeNotEnoughReplicasException:    "not_enough_replicas",
		wire.CodeStorageBackpressureException:  "storage_backpressure",
		wire.CodeKvStorageException:            "kv_storage",
		wire.CodeUnknownTableOrBucketException: "unknown_table_or_bucket",
	} {
		assert.Equal(t, want, entryCode(code, ""))
	}
	assert.Equal(t, "invalid_record", entryCode(wire.CodeUnknownServerError, "org.apache.fluss.exception.InvalidRecordException: bad"))
	assert.Equal(t, "backend", entryCode(wire.CodeUnknownServerError, "NPE"))
}

type fakeArrow struct{ rows int }

func (f *fakeArrow) Append(row []domain.Datum) error { f.rows++; return nil }
func (f *fakeArrow) AppendTo(dst []byte) ([]byte, error) {
	return append(dst, []byte(fmt.Sprintf("ARROW:%d", f.rows))...), nil
}
func (f *fakeArrow) Reset() { f.rows = 0 }

func logTable(id int64, buckets int, bucketKey ...string) *metatest.Table {
	return &metatest.Table{ID: id, Path: domain.TablePath{Database: "db", Table: "log"}, Desc: domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			col("id", domain.TypeBigInt, true, 0), col("s", domain.TypeString, true, 1),
		}, HighestFieldID: 1},
		BucketCount: buckets, BucketKeys: bucketKey, Properties: map[string]string{}, CustomProperties: map[string]string{},
	}}
}

func TestLogAppendStickyAndHashed(t *testing.T) {
	t.Parallel()
	arrow := func([]domain.DataType, string, int) (ArrowBuilder, error) { return &fakeArrow{}, nil }
	for _, hashed := range []bool{false, true} {
		tb := logTable(20, 3)
		if hashed {
			tb.Desc.BucketKeys = []string{"id"}
		}
		e := newEnv(t, Options{Linger: time.Millisecond, Arrow: arrow}, tb)
		var entries []domain.WriteEntry
		for i := range 60 {
			entries = append(entries, domain.WriteEntry{Op: domain.OpAppend, Row: []domain.Datum{{I64: int64(i)}, {Bytes: []byte("x")}}})
		}
		entries = append(entries, upsert(1, "a", 1)) // wrong op for a log table
		res := e.write(t, ctxTimeout(t, 5*time.Second), tb.Path, entries...)
		for i, r := range res[:60] {
			assert.True(t, r.OK(), "%d %+v", i, r)
		}
		assert.Equal(t, "invalid_argument", res[60].Code)
		buckets := map[int32]int32{}
		for _, b := range e.fake.Batches() {
			assert.Equal(t, wire.KeyProduceLog, b.API)
			assert.True(t, b.Log.AppendOnly())
			assert.Equal(t, fmt.Sprintf("ARROW:%d", b.Log.RecordCount), string(b.Log.Records))
			buckets[b.Bucket] += b.Log.RecordCount
		}
		if hashed {
			assert.Len(t, buckets, 3, "%v", buckets)
		} else {
			assert.Len(t, buckets, 1, "sticky: small rows stay in one bucket: %v", buckets)
		}
	}
}

func TestPartitionedWrites(t *testing.T) {
	t.Parallel()
	tb := &metatest.Table{ID: 30, Path: domain.TablePath{Database: "db", Table: "parts"}, Desc: domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			col("id", domain.TypeBigInt, false, 0), col("region", domain.TypeString, false, 1), col("v", domain.TypeString, true, 2),
		}, PrimaryKey: []string{"id", "region"}, HighestFieldID: 2},
		PartitionKeys: []string{"region"}, BucketCount: 2, Properties: map[string]string{}, CustomProperties: map[string]string{},
	}}
	row := func(id int64, region string) domain.WriteEntry {
		return domain.WriteEntry{Op: domain.OpUpsert, Row: []domain.Datum{{I64: id}, {Bytes: []byte(region)}, {Bytes: []byte("v")}}}
	}
	e := newEnv(t, Options{Linger: time.Millisecond}, tb)
	res := e.write(t, ctxTimeout(t, 5*time.Second), tb.Path, row(1, "eu"), row(2, "us"), row(3, "eu"))
	for _, r := range res {
		assert.True(t, r.OK(), "%+v", r)
	}
	assert.Equal(t, 2, e.fake.Calls(wire.KeyCreatePartition))
	parts := map[int64]int{}
	for _, b := range e.fake.Batches() {
		assert.NotEqual(t, meta.NoPartition, b.Partition)
		parts[b.Partition] += len(b.KV)
	}
	assert.Len(t, parts, 2)

	e2 := newEnv(t, Options{Linger: time.Millisecond, DisableDynamicPartitions: true}, tb)
	e2.fake.AddPartition(tb.Path, "eu")
	res = e2.write(t, ctxTimeout(t, 5*time.Second), tb.Path, row(1, "eu"), row(2, "apac"))
	assert.True(t, res[0].OK(), "%+v", res[0])
	assert.Equal(t, "partition_not_found", res[1].Code)
	assert.Equal(t, domain.AppliedNo, res[1].Applied)
	assert.Zero(t, e2.fake.Calls(wire.KeyCreatePartition))
}

type countingMetrics struct {
	mu                        sync.Mutex
	batches, rows, bytes, okN int
	failed                    map[string]int
	retried                   map[string]int
	maxUsed                   int64
}

func (m *countingMetrics) BatchesSent(_ domain.TablePath, batches, rows, bytes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.batches, m.rows, m.bytes = m.batches+batches, m.rows+rows, m.bytes+bytes
}
func (m *countingMetrics) Retried(_ domain.TablePath, n int, code string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.retried[code] += n
}
func (m *countingMetrics) EntriesDone(_ domain.TablePath, ok int, failed map[string]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.okN += ok
	for k, v := range failed {
		m.failed[k] += v
	}
}
func (m *countingMetrics) BufferUsage(used, _ int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.maxUsed = max(m.maxUsed, used)
}

func TestMetricsHooks(t *testing.T) {
	t.Parallel()
	m := &countingMetrics{failed: map[string]int{}, retried: map[string]int{}}
	e := newEnv(t, Options{Linger: time.Millisecond, RetryBackoff: time.Millisecond, Metrics: m}, pkTable(10, 1))
	var first atomic.Bool
	e.fake.BucketError = func(int32, metatest.BucketRef, int32) wire.ErrorCode {
		if first.CompareAndSwap(false, true) {
			return wire.CodeLeaderNotAvailableException
		}
		return 0
	}
	bad := upsert(3, "c", 3)
	bad.Row[0] = domain.Datum{Null: true}
	e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1, "a", 1), upsert(2, "b", 2), bad)
	m.mu.Lock()
	defer m.mu.Unlock()
	assert.Equal(t, 2, m.okN)
	assert.Equal(t, map[string]int{"invalid_argument": 1}, m.failed)
	assert.Equal(t, map[string]int{"leader_not_available": 1}, m.retried)
	assert.Equal(t, 2, m.batches)
	assert.Equal(t, 4, m.rows)
	assert.Positive(t, m.bytes)
	assert.Positive(t, m.maxUsed)
}

func TestClose(t *testing.T) {
	t.Parallel()
	tb := pkTable(10, 1)
	tb.Leaders = []int32{meta.NoLeader}
	e := newEnv(t, Options{Linger: time.Millisecond}, tb)
	done := make(chan []domain.EntryResult)
	go func() {
		r, _ := e.w.Write(ctxTimeout(t, 10*time.Second), &domain.WriteBatch{Table: pkPath, Entries: []domain.WriteEntry{upsert(1, "a", 1)}})
		done <- r
	}()
	time.Sleep(30 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_ = e.w.Close(ctx)
	res := <-done
	assert.Equal(t, CodeClosed, res[0].Code)
	assert.Equal(t, domain.AppliedNo, res[0].Applied)
	_, err := e.w.Write(ctxTimeout(t, time.Second), &domain.WriteBatch{Table: pkPath, Entries: []domain.WriteEntry{upsert(1, "a", 1)}})
	assert.Equal(t, domain.KindUnavailable, domain.KindOf(err))
}

type tracingMetrics struct {
	countingMetrics
	started, finished atomic.Int32
	links             atomic.Int32
	pressure          atomic.Int32
	mu2               sync.Mutex
	outcomes          []BackendOutcome
}

func (m *tracingMetrics) StartBackendRequest(ctx context.Context, api string, node int32, buckets, rows int,
	links []context.Context) (context.Context, func(BackendOutcome)) {
	m.started.Add(1)
	m.links.Add(int32(len(links)))
	return ctx, func(o BackendOutcome) {
		m.finished.Add(1)
		m.mu2.Lock()
		m.outcomes = append(m.outcomes, o)
		m.mu2.Unlock()
	}
}

func (m *tracingMetrics) KvPressure(domain.TablePath, int32, float64, time.Duration) {
	m.pressure.Add(1)
}

func TestOptionalHooks(t *testing.T) {
	t.Parallel()
	m := &tracingMetrics{countingMetrics: countingMetrics{failed: map[string]int{}, retried: map[string]int{}}}
	e := newEnv(t, Options{Linger: time.Millisecond, MaxThrottle: 10 * time.Millisecond, RetryBackoff: time.Millisecond,
		Metrics: m, Pressure: m, Tracer: m}, pkTable(10, 1))
	var first atomic.Bool
	e.fake.BucketError = func(int32, metatest.BucketRef, int32) wire.ErrorCode {
		if first.CompareAndSwap(false, true) {
			return wire.CodeStorageBackpressureException
		}
		return 0
	}
	res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1, "a", 1))
	require.True(t, res[0].OK(), "%+v", res[0])
	assert.Equal(t, int32(2), m.started.Load())
	// The tracer's finish runs when send returns, just after the answer
	// resolved the row (and so after Write may have returned).
	require.Eventually(t, func() bool { return m.finished.Load() == 2 }, 2*time.Second, time.Millisecond)
	assert.Equal(t, int32(2), m.links.Load())
	assert.Equal(t, int32(1), m.pressure.Load())
	m.mu2.Lock()
	defer m.mu2.Unlock()
	require.Len(t, m.outcomes, 2)
	assert.Equal(t, BackendOutcome{FailedBuckets: 1, Pressure: 1, Throttle: 10 * time.Millisecond}, m.outcomes[0])
	assert.Equal(t, BackendOutcome{}, m.outcomes[1])
}

// TestPressureThrottles: a successful PutKv answer whose bucket carries the
// Fluss 1.0 `pressure` p blocks the bucket for MaxThrottle × p²; the next
// write to it waits for the block, and the hooks see p and the throttle.
func TestPressureThrottles(t *testing.T) {
	t.Parallel()
	m := &tracingMetrics{countingMetrics: countingMetrics{failed: map[string]int{}, retried: map[string]int{}}}
	e := newEnv(t, Options{Linger: time.Millisecond, MaxThrottle: time.Second, Metrics: m, Pressure: m, Tracer: m}, pkTable(10, 1))
	e.fake.BucketPressure = func(int32, metatest.BucketRef) float32 { return 0.5 }
	res := e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(1, "a", 1))
	require.True(t, res[0].OK(), "%+v", res[0])
	start := time.Now()
	res = e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(2, "b", 2))
	took := time.Since(start)
	require.True(t, res[0].OK(), "%+v", res[0])
	assert.GreaterOrEqual(t, took, 230*time.Millisecond, "1 s × 0.5² = 250 ms throttle")
	assert.Less(t, took, 900*time.Millisecond)
	// The second answer's pressure is recorded on the sender goroutine,
	// which may do so after the Write it answered returned.
	require.Eventually(t, func() bool {
		m.mu2.Lock()
		defer m.mu2.Unlock()
		return m.pressure.Load() == 2 && len(m.outcomes) == 2
	}, 5*time.Second, 5*time.Millisecond, "two answers' pressure recorded")
	m.mu2.Lock()
	defer m.mu2.Unlock()
	assert.InDelta(t, 0.5, m.outcomes[0].Pressure, 1e-6)
	assert.Equal(t, 250*time.Millisecond, m.outcomes[0].Throttle)
}

// TestThrottlePastDeadlineFailsAtOnce: a bucket blocked for longer than a
// request's remaining time does not make the request wait until its
// deadline: its rows fail at once with storage_backpressure, retryable,
// applied "no", RetryAfter the remaining block, and are never sent.
func TestThrottlePastDeadlineFailsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond, MaxThrottle: 3 * time.Second}, pkTable(10, 1))
	var first atomic.Bool
	e.fake.BucketError = func(int32, metatest.BucketRef, int32) wire.ErrorCode {
		if first.CompareAndSwap(false, true) {
			return wire.CodeStorageBackpressureException
		}
		return 0
	}
	// The first write (1 s deadline) is rejected with 72: the 3 s throttle
	// ends after its deadline, so it fails at once instead of at 1 s.
	start := time.Now()
	res := e.write(t, ctxTimeout(t, time.Second), pkPath, upsert(1, "a", 1))
	assert.Less(t, time.Since(start), 500*time.Millisecond)
	assert.Equal(t, "storage_backpressure", res[0].Code, "%+v", res[0])
	assert.True(t, res[0].Retryable)
	assert.Equal(t, domain.AppliedNo, res[0].Applied)
	assert.Greater(t, res[0].RetryAfter, 2*time.Second)
	assert.LessOrEqual(t, res[0].RetryAfter, 3*time.Second)
	// A second write with 1 s left is refused at enqueue, without a send.
	sends := e.fake.Calls(wire.KeyPutKv)
	res = e.write(t, ctxTimeout(t, time.Second), pkPath, upsert(2, "b", 2), upsert(3, "c", 3))
	for _, r := range res {
		assert.Equal(t, "storage_backpressure", r.Code, "%+v", r)
		assert.Equal(t, domain.AppliedNo, r.Applied)
		assert.Positive(t, r.RetryAfter)
	}
	assert.Equal(t, sends, e.fake.Calls(wire.KeyPutKv), "nothing sent for rows that cannot make their deadline")
	// A write with a deadline past the throttle waits for it and succeeds.
	res = e.write(t, ctxTimeout(t, 5*time.Second), pkPath, upsert(4, "d", 4))
	assert.True(t, res[0].OK(), "%+v", res[0])
	for _, b := range e.fake.Batches() {
		for _, kv := range b.KV {
			if b.Appended {
				assert.Equal(t, int64(4), keyOf(t, kv.Key), "only the last write is applied")
			}
		}
	}
}

// TestPipelinedOutOfOrderAtDeadlineIsTimeout: a batch sent while its
// predecessor is still in the air is answered OUT_OF_ORDER_SEQUENCE (the
// server had not appended the predecessor yet) and waits to be resent after
// it; when its request's deadline passes first, its rows are `timeout`,
// applied "no" (never appended), not `out_of_order_sequence`, which is the
// writer's own sequencing and nothing a caller can act on.
func TestPipelinedOutOfOrderAtDeadlineIsTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Linger: time.Millisecond}, pkTable(10, 1))
	var calls atomic.Int32
	release := make(chan struct{})
	e.fake.BeforeWrite = func(ctx context.Context, _ int32, _ wire.APIKey, _ int64) error {
		if calls.Add(1) == 1 {
			<-release // the first batch (seq 0) is slow
		}
		return nil
	}
	e.fake.BucketError = func(_ int32, _ metatest.BucketRef, seq int32) wire.ErrorCode {
		if seq == 1 {
			return wire.CodeOutOfOrderSequenceException // pipelined ahead of seq 0
		}
		return 0
	}
	first := make(chan []domain.EntryResult)
	go func() {
		res, _ := e.w.Write(ctxTimeout(t, 5*time.Second), &domain.WriteBatch{Table: pkPath, Entries: []domain.WriteEntry{upsert(1, "a", 1)}})
		first <- res
	}()
	require.Eventually(t, func() bool { return calls.Load() == 1 }, 2*time.Second, time.Millisecond)
	res := e.write(t, ctxTimeout(t, 300*time.Millisecond), pkPath, upsert(2, "b", 2))
	close(release)
	assert.Equal(t, CodeTimeout, res[0].Code, "%+v", res[0])
	assert.Equal(t, domain.AppliedNo, res[0].Applied)
	assert.Contains(t, res[0].Message, "OUT_OF_ORDER_SEQUENCE")
	r1 := <-first
	assert.True(t, r1[0].OK(), "%+v", r1[0])
}

func TestAutoPartitionedWrites(t *testing.T) {
	t.Parallel()
	tb := &metatest.Table{ID: 31, Path: domain.TablePath{Database: "db", Table: "orders"}, Desc: domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			col("id", domain.TypeBigInt, false, 0), col("dt", domain.TypeString, false, 1), col("v", domain.TypeString, true, 2),
		}, PrimaryKey: []string{"id", "dt"}, HighestFieldID: 2},
		PartitionKeys: []string{"dt"}, BucketCount: 1, CustomProperties: map[string]string{},
		Properties: map[string]string{"table.auto-partition.enabled": "true", "table.auto-partition.time-unit": "DAY",
			"table.auto-partition.num-retention": "30"},
	}}
	now := time.Now().UTC()
	day := func(offset int) string { return now.AddDate(0, 0, offset).Format("20060102") }
	row := func(op domain.WriteOp, id int64, dt string) domain.WriteEntry {
		return domain.WriteEntry{Op: op, Row: []domain.Datum{{I64: id}, {Bytes: []byte(dt)}, {Bytes: []byte("v")}}}
	}
	e := newEnv(t, Options{Linger: time.Millisecond}, tb)
	res := e.write(t, ctxTimeout(t, 5*time.Second), tb.Path,
		row(domain.OpUpsert, 1, day(0)),                   // today: written
		row(domain.OpUpsert, 2, day(-31)),                 // older than 30 days
		row(domain.OpDelete, 3, day(-31)),                 // delete in a missing partition: success
		row(domain.OpUpsert, 4, now.Format("2006-01-02")), // not Fluss's format
		row(domain.OpDelete, 5, day(-15)),                 // delete in a missing, retained partition: success
		row(domain.OpUpsert, 6, day(-29)),                 // the earliest retained day
	)
	assert.True(t, res[0].OK(), "%+v", res[0])
	assert.Equal(t, CodeInvalidArgument, res[1].Code)
	assert.Equal(t, domain.AppliedNo, res[1].Applied)
	assert.Contains(t, res[1].Message, "`"+day(-31)+"`")
	assert.Contains(t, res[1].Message, "num-retention 30")
	assert.True(t, res[2].OK(), "%+v", res[2])
	assert.Equal(t, CodeInvalidArgument, res[3].Code)
	assert.Equal(t, domain.AppliedNo, res[3].Applied)
	assert.Contains(t, res[3].Message, "yyyyMMdd")
	assert.True(t, res[4].OK(), "%+v", res[4])
	assert.True(t, res[5].OK(), "%+v", res[5])
	assert.Equal(t, 2, e.fake.Calls(wire.KeyCreatePartition), "only today and 29 days ago are created")
	var kv int
	for _, b := range e.fake.Batches() {
		kv += len(b.KV)
	}
	assert.Equal(t, 2, kv, "no record for the refused entries or the deletes in missing partitions")

	// A delete in an existing partition is written.
	e.fake.AddPartition(tb.Path, day(-10))
	res = e.write(t, ctxTimeout(t, 5*time.Second), tb.Path, row(domain.OpDelete, 7, day(-10)))
	assert.True(t, res[0].OK(), "%+v", res[0])
	assert.Equal(t, 2, e.fake.Calls(wire.KeyCreatePartition))
}

// stuckWrites is a cluster with one table, pkTable(10, 1), whose writes are
// never answered: each waits for its context to end and fails ambiguously;
// entered receives when the first one is in the air.
func stuckWrites() (*metatest.Cluster, <-chan struct{}) {
	fake := metatest.New(2)
	fake.AddTable(pkTable(10, 1))
	entered := make(chan struct{}, 1)
	fake.AfterWrite = func(ctx context.Context, node int32) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return &metatest.Error{Outcome: "ambiguous", Retry: true, Message: "canceled", Wrapped: ctx.Err()}
	}
	return fake, entered
}

// Close cancels the requests still in the air and returns only when their
// goroutines have ended: none is left waiting for its request timeout.
// Not parallel, so that the leak check sees only this test's goroutines.
func TestCloseEndsRequestsInTheAir(t *testing.T) {
	before := goleak.IgnoreCurrent()
	fake, entered := stuckWrites()
	w := New(fake, meta.New(fake, meta.Options{}), Options{Linger: time.Millisecond, RequestTimeout: time.Hour})
	done := make(chan []domain.EntryResult, 1)
	go func() {
		r, _ := w.Write(ctxTimeout(t, 10*time.Second), &domain.WriteBatch{Table: pkPath, Entries: []domain.WriteEntry{upsert(1, "a", 1)}})
		done <- r
	}()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	require.ErrorIs(t, w.Close(ctx), context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
	res := <-done
	assert.Equal(t, CodeClosed, res[0].Code)
	assert.Equal(t, domain.AppliedUnknown, res[0].Applied)
	goleak.VerifyNone(t, before)
}

// TestCloseKeepsQueueCountsTrue: a Close whose context ends before the
// queues drain resolves the queued rows itself; it must take them out of
// their buckets' counts too, or a sender round that runs before the stop is
// seen finds a bucket counting live rows with none queued (it dereferenced
// the missing first row: a nil-pointer panic seen once in a loaded test run).
func TestCloseKeepsQueueCountsTrue(t *testing.T) {
	fake, entered := stuckWrites()
	w := New(fake, meta.New(fake, meta.Options{}), Options{Linger: time.Millisecond, MaxInFlightPerBucket: 1, RequestTimeout: time.Hour})
	done := make(chan struct{}, 2)
	for i := range 2 {
		go func() {
			_, _ = w.Write(ctxTimeout(t, 10*time.Second), &domain.WriteBatch{Table: pkPath, Entries: []domain.WriteEntry{upsert(int64(i), "a", 1)}})
			done <- struct{}{}
		}()
		if i == 0 {
			<-entered // the first row's batch is in the air: the bucket's one slot is taken
		}
	}
	require.Eventually(t, func() bool { // the second row waits in the queue
		w.mu.Lock()
		defer w.mu.Unlock()
		for b := range w.active {
			if b.live == 1 {
				return true
			}
		}
		return false
	}, 5*time.Second, time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, w.Close(ctx), context.DeadlineExceeded)
	<-done
	<-done
	w.mu.Lock()
	defer w.mu.Unlock()
	for b := range w.active {
		queued, bytes := 0, 0
		for _, r := range b.queue[b.head:] {
			if r.state == recQueued {
				queued++
				bytes += int(r.size)
			}
		}
		assert.Equal(t, queued, b.live, "live rows of bucket %v", b.key)
		assert.Equal(t, bytes, b.liveBytes, "live bytes of bucket %v", b.key)
	}
}

// The Fluss adapter maps its finer entry codes to the official kinds once
// (withKinds); the HTTP adapter only renders them (TestRenderEntryVerdict
// there, with the same table).
func TestEntryKinds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code      string
		retryable bool
		want      domain.EntryKind
	}{
		{"timeout", true, "timeout"},
		{"storage_backpressure", true, "storage_backpressure"},
		{"table_not_found", false, "table_not_found"},
		{"not_enough_replicas", true, "unavailable"},
		{"invalid_record", false, "invalid_argument"},
		{"record_too_large", false, "limit_exceeded"},
		{"deletion_disabled", false, "failed_precondition"},
		{"out_of_order_sequence", true, "unavailable"},
		{"some_future_error", false, "backend"},
	}
	results := make([]domain.EntryResult, 0, len(cases)+1)
	for _, tc := range cases {
		results = append(results, domain.EntryResult{Code: tc.code, Message: "m", Retryable: tc.retryable})
	}
	results = append(results, domain.EntryResult{}) // a success keeps no kind
	withKinds(results)
	for i, tc := range cases {
		assert.Equal(t, tc.want, results[i].Kind, tc.code)
		assert.Equal(t, tc.code, results[i].Code, "the finer reason stays")
	}
	assert.Empty(t, results[len(cases)].Kind)
	for fine, official := range entryKinds {
		assert.True(t, domain.IsErrorCode(string(official)), "%s maps to the official %s", fine, official)
		assert.False(t, domain.IsErrorCode(fine), "%s is not official already", fine)
	}
}

// Issue 21: the rows of a request whose deadline passed before they were
// sent leave the bucket queues at once, so that nothing in the writer keeps
// the request's arena and records alive after its answer (whose memory
// budget charge is released then). Before, up to 2×live+64 dead records
// stayed queued until the next compaction, each pinning its request.
func TestDeadlineDropsQueuedRowsFromTheQueues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		waiting int // rows of a request that keeps waiting in the same bucket
		expired int // rows of the request whose deadline passes
	}{
		{name: "alone", waiting: 0, expired: 5},
		{name: "beside a waiting request", waiting: 1, expired: 10},
		{name: "beside a larger waiting request", waiting: 40, expired: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tb := pkTable(10, 1)
			tb.Leaders = []int32{meta.NoLeader} // nothing can be sent
			e := newEnv(t, Options{Linger: time.Millisecond}, tb)
			waitCtx, cancelWait := context.WithCancel(context.Background())
			waited := make(chan struct{})
			if tc.waiting > 0 {
				var rows []domain.WriteEntry
				for i := range tc.waiting {
					rows = append(rows, upsert(int64(1000+i), "w", 1))
				}
				go func() {
					defer close(waited)
					_, _ = e.w.Write(waitCtx, &domain.WriteBatch{Table: pkPath, Entries: rows})
				}()
				require.Eventually(t, func() bool { return queuedRows(e.w) == tc.waiting }, 2*time.Second, time.Millisecond)
			} else {
				close(waited)
			}
			var rows []domain.WriteEntry
			for i := range tc.expired {
				rows = append(rows, upsert(int64(i), "x", 1))
			}
			for _, r := range e.write(t, ctxTimeout(t, 50*time.Millisecond), pkPath, rows...) {
				assert.Equal(t, CodeTimeout, r.Code)
				assert.Equal(t, domain.AppliedNo, r.Applied)
			}
			e.w.mu.Lock()
			for k, b := range e.w.buckets {
				assert.Equal(t, b.live, len(b.queue)-b.head, "bucket %v: only live records stay queued", k)
				for _, r := range b.queue {
					assert.Equal(t, recQueued, r.state, "bucket %v: no expired record is referenced", k)
				}
			}
			e.w.mu.Unlock()
			used, _ := e.w.buf.stats()
			assert.Equal(t, tc.waiting > 0, used > 0, "only the waiting request holds buffer")
			cancelWait()
			<-waited
		})
	}
}

// Issue 21: once its writes are answered, an idle writer references none of
// their batches or records, so that their requests' arenas are garbage: the
// in-flight list of each bucket cleared only its visible part, and every
// bucket kept its last finished batch (with its records and their requests)
// in the slot past the list's end, 200 MiB for an idle gateway after the
// resource benchmark.
func TestIdleWriterKeepsNoFinishedBatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		requests int
		rows     int
		buckets  int
	}{
		{name: "one request", requests: 1, rows: 10, buckets: 1},
		{name: "several requests, one bucket", requests: 5, rows: 50, buckets: 1},
		{name: "several requests, several buckets", requests: 5, rows: 200, buckets: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Options{Linger: time.Millisecond}, pkTable(10, tc.buckets))
			var wg sync.WaitGroup
			for r := range tc.requests {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var rows []domain.WriteEntry
					for i := range tc.rows {
						rows = append(rows, upsert(int64(r*tc.rows+i), "x", 1))
					}
					res, err := e.w.Write(ctxTimeout(t, 5*time.Second), &domain.WriteBatch{Table: pkPath, Entries: rows})
					assert.NoError(t, err)
					for _, x := range res {
						assert.True(t, x.OK(), "%+v", x)
					}
				}()
			}
			wg.Wait()
			require.Eventually(t, func() bool {
				e.w.mu.Lock()
				defer e.w.mu.Unlock()
				for _, b := range e.w.buckets {
					if !b.idle() {
						return false
					}
				}
				return true
			}, 2*time.Second, time.Millisecond)
			e.w.mu.Lock()
			defer e.w.mu.Unlock()
			for k, b := range e.w.buckets {
				for i, bt := range b.inflight[:cap(b.inflight)] {
					assert.Nil(t, bt, "bucket %v: in-flight slot %d still holds a finished batch", k, i)
				}
				for i, r := range b.queue[:cap(b.queue)] {
					assert.Nil(t, r, "bucket %v: queue slot %d still holds a sent record", k, i)
				}
			}
		})
	}
}
