// Backpressure and deadline tests against the protocol-level fake
// (adapters/fluss/flussfake): the whole client stack of adapters/fluss.Open
// (rpc connections, metadata cache, writer) talks to loopback fake servers
// whose PutKv answers the tests script. No build tag: these run in
// `go test ./...` (make test) and need no cluster.
package faults

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"math"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/writer"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// lateSlack is how far past its deadline an answer may come (issue 28: no
// answer later than deadline + 250 ms in the fault runs, kills and freezes).
const lateSlack = 250 * time.Millisecond

// fakeSlack is lateSlack of the tests against the in-process fake, which
// run inside `make test` beside the race detector on a loaded CI machine.
const fakeSlack = 500 * time.Millisecond

var bpPath = domain.TablePath{Database: "db", Table: "kv"}

// kvAttempt is one bucket batch a fake tablet server received.
type kvAttempt struct {
	at     time.Time
	bucket int32
	seq    int32
	rows   int
	code   int32 // what the fake answered
}

// kvFake is a flussfake cluster whose tablet servers serve InitWriter and
// PutKv. answer decides the per-bucket error code of each attempt (0 =
// success; the batch is then applied) and may add unknown protobuf bytes to
// the bucket's answer.
type kvFake struct {
	fc *flussfake.Cluster

	mu       sync.Mutex
	attempts []kvAttempt
	applied  map[int64]int // primary key -> times applied
	answer   func(a kvAttempt, n int) (code int32, extra []byte)
	perBkt   map[int32]int // attempts per bucket
	// afterAppend, when set, is asked after a batch was appended: a
	// non-zero code is answered instead of success (the 0.9.1 DelayedWrite
	// answers NOT_LEADER_OR_FOLLOWER, REQUEST_TIME_OUT or
	// NOT_ENOUGH_REPLICAS_AFTER_APPEND for batches already in the log).
	afterAppend func(a kvAttempt) int32
	// hold, when set, runs before a PutKv is processed (without the lock):
	// a slow server.
	hold func()
	// Idempotence as the 0.9.1 leader applies it per bucket and writer
	// (WriterStateEntry): a batch whose sequence is one of the last five
	// appended is answered as a success and not appended again; otherwise
	// it must follow the last one (the first must be 0).
	seqs map[int32]map[int64][]int32
}

func newKVFake(t *testing.T, buckets int) *kvFake {
	t.Helper()
	fc, err := flussfake.NewCluster(flussfake.ClusterConfig{TabletServers: 1})
	require.NoError(t, err)
	t.Cleanup(fc.Close)
	f := &kvFake{fc: fc, applied: map[int64]int{}, perBkt: map[int32]int{}, seqs: map[int32]map[int64][]int32{}}
	keyDec, err := record.NewCompactedKeyDecoder([]domain.DataType{{Root: domain.TypeBigInt}})
	require.NoError(t, err)
	var nextWriter int64 = 100
	for _, ts := range fc.TabletServers {
		ts.Handle(wire.KeyInitWriter, flussfake.Typed(func(_ context.Context, _ *flussfake.Request, _ *flusspb.InitWriterRequest) (proto.Message, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			nextWriter++
			return &flusspb.InitWriterResponse{WriterId: proto.Int64(nextWriter)}, nil
		}))
		ts.Handle(wire.KeyPutKv, flussfake.Typed(func(_ context.Context, _ *flussfake.Request, req *flusspb.PutKvRequest) (proto.Message, error) {
			resp := &flusspb.PutKvResponse{}
			f.mu.Lock()
			hold := f.hold
			f.mu.Unlock()
			if hold != nil {
				hold()
			}
			for _, b := range req.GetBucketsReq() {
				kb, _, err := record.ReadKvBatch(b.GetRecords())
				if err != nil {
					return nil, err
				}
				recs, err := kb.ReadRecords()
				if err != nil {
					return nil, err
				}
				a := kvAttempt{at: time.Now(), bucket: b.GetBucketId(), seq: kb.BatchSequence, rows: len(recs)}
				f.mu.Lock()
				f.perBkt[a.bucket]++
				n := f.perBkt[a.bucket]
				var extra []byte
				if f.answer != nil {
					a.code, extra = f.answer(a, n)
				}
				appendIt := a.code == 0
				if appendIt && kb.WriterID >= 0 {
					a.code, appendIt = f.sequenceLocked(a.bucket, kb.WriterID, kb.BatchSequence)
				}
				if appendIt {
					for _, r := range recs {
						d, err := keyDec.DecodeKey(nil, r.Key)
						if err == nil {
							f.applied[d[0].I64]++
						}
					}
					if f.afterAppend != nil {
						a.code = f.afterAppend(a)
					}
				}
				f.attempts = append(f.attempts, a)
				f.mu.Unlock()
				br := &flusspb.PbPutKvRespForBucket{BucketId: proto.Int32(a.bucket)}
				if a.code != 0 {
					br.ErrorCode = proto.Int32(a.code)
					br.ErrorMessage = proto.String("injected by the test")
				} else {
					br.LogEndOffset = proto.Int64(int64(n))
				}
				if len(extra) > 0 {
					br.ProtoReflect().SetUnknown(extra)
				}
				resp.BucketsResp = append(resp.BucketsResp, br)
			}
			return resp, nil
		}))
	}
	return f
}

// sequenceLocked applies the leader's idempotence rule: it returns the
// answer code and whether the batch is to be appended.
func (f *kvFake) sequenceLocked(bucket int32, writerID int64, seq int32) (int32, bool) {
	ws := f.seqs[bucket]
	if ws == nil {
		ws = map[int64][]int32{}
		f.seqs[bucket] = ws
	}
	last := ws[writerID]
	for _, s := range last {
		if s == seq {
			return 0, false // duplicate of a recent batch: success, not appended again
		}
	}
	want := int32(0)
	if len(last) > 0 {
		want = last[len(last)-1] + 1
	}
	if seq != want {
		return int32(wire.CodeOutOfOrderSequenceException), false
	}
	last = append(last, seq)
	if len(last) > 5 {
		last = last[1:]
	}
	ws[writerID] = last
	return 0, true
}

func (f *kvFake) setAnswer(fn func(a kvAttempt, n int) (int32, []byte)) {
	f.mu.Lock()
	f.answer = fn
	f.mu.Unlock()
}

func (f *kvFake) snapshot() ([]kvAttempt, map[int64]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	applied := make(map[int64]int, len(f.applied))
	for k, v := range f.applied {
		applied[k] = v
	}
	return append([]kvAttempt(nil), f.attempts...), applied
}

// pressureLog records the writer's PressureObserver calls.
type pressureLog struct {
	mu    sync.Mutex
	calls []pressureCall
}

type pressureCall struct {
	bucket   int32
	pressure float64
	throttle time.Duration
}

func (*pressureLog) BatchesSent(domain.TablePath, int, int, int)       {}
func (*pressureLog) Retried(domain.TablePath, int, string)             {}
func (*pressureLog) EntriesDone(domain.TablePath, int, map[string]int) {}
func (*pressureLog) BufferUsage(int64, int64)                          {}
func (p *pressureLog) KvPressure(_ domain.TablePath, bucket int32, pressure float64, throttle time.Duration) {
	p.mu.Lock()
	p.calls = append(p.calls, pressureCall{bucket, pressure, throttle})
	p.mu.Unlock()
}

func (p *pressureLog) get() []pressureCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]pressureCall(nil), p.calls...)
}

// openFake opens the real client stack against the fake and creates the
// table db.kv (id BIGINT primary key, v STRING) with the given buckets.
func openFake(t *testing.T, f *kvFake, buckets int, opts writer.Options) domain.RowWriter {
	t.Helper()
	cl, err := fluss.Open(context.Background(), fluss.Config{
		ID: "fake", BootstrapServers: []string{f.fc.BootstrapAddr()}, RequestTimeout: 10 * time.Second, Writer: opts,
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = cl.Close(ctx)
	})
	sess, err := cl.Session(context.Background(), domain.Principal{Name: "test"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, sess.Catalog().CreateDatabase(ctx, bpPath.Database, domain.DatabaseDescriptor{}, true))
	require.NoError(t, sess.Catalog().CreateTable(ctx, bpPath, domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			{Name: "id", Type: domain.DataType{Root: domain.TypeBigInt}, ID: 0},
			{Name: "v", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: 1},
		}, PrimaryKey: []string{"id"}, HighestFieldID: 1},
		BucketCount: buckets, Properties: map[string]string{}, CustomProperties: map[string]string{},
	}, false))
	return sess.Writer()
}

func kvRows(from, n int) *domain.WriteBatch {
	wb := &domain.WriteBatch{Table: bpPath}
	for i := from; i < from+n; i++ {
		wb.Entries = append(wb.Entries, domain.WriteEntry{Op: domain.OpUpsert,
			Row: []domain.Datum{{I64: int64(i)}, {Bytes: []byte("v")}}})
	}
	return wb
}

func writeWithin(t *testing.T, w domain.RowWriter, wb *domain.WriteBatch, deadline time.Duration) ([]domain.EntryResult, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	res, err := w.Write(ctx, wb)
	took := time.Since(start)
	require.NoError(t, err)
	require.Len(t, res, len(wb.Entries))
	assert.LessOrEqual(t, took, deadline+fakeSlack, "the write must return by its deadline")
	return res, took
}

// TestBackpressureRetriedWithinDeadline: a bucket answers
// STORAGE_BACKPRESSURE (72) three times, then accepts. The writer throttles
// the bucket (MaxThrottle for code 72, i.e. pressure 1), resends the same
// batch (same writer id and sequence) after each throttle, and the entries
// succeed within their deadline, applied exactly once.
func TestBackpressureRetriedWithinDeadline(t *testing.T) {
	t.Parallel()
	f := newKVFake(t, 1)
	f.setAnswer(func(a kvAttempt, n int) (int32, []byte) {
		if n <= 3 {
			return int32(wire.CodeStorageBackpressureException), nil
		}
		return 0, nil
	})
	obs := &pressureLog{}
	const throttle = 300 * time.Millisecond
	w := openFake(t, f, 1, writer.Options{MaxThrottle: throttle, Pressure: obs})
	res, took := writeWithin(t, w, kvRows(1, 10), 5*time.Second)
	for i, r := range res {
		assert.True(t, r.OK(), "entry %d: %+v", i, r)
	}
	attempts, applied := f.snapshot()
	require.Len(t, attempts, 4)
	for i := 1; i < len(attempts); i++ {
		gap := attempts[i].at.Sub(attempts[i-1].at)
		assert.GreaterOrEqual(t, gap, throttle-20*time.Millisecond, "attempt %d came %s after a backpressure answer", i, gap)
		assert.Equal(t, attempts[0].seq, attempts[i].seq, "a resend keeps its batch sequence")
	}
	assert.Len(t, applied, 10)
	for k, n := range applied {
		assert.Equal(t, 1, n, "key %d", k)
	}
	calls := obs.get()
	require.Len(t, calls, 3, "one throttle per backpressure answer")
	for _, c := range calls {
		assert.Equal(t, 1.0, c.pressure)
		assert.Equal(t, throttle, c.throttle)
	}
	t.Logf("3 × code 72 then success: 4 attempts, write took %s (throttle %s each)", took.Round(time.Millisecond), throttle)
}

// TestBackpressurePersistentEndsAppliedNo: the bucket answers 72 on every
// attempt. With the default writer options (MaxThrottle 3 s) and a 5 s
// deadline the write returns by the deadline with every entry
// `storage_backpressure`, retryable, applied "no" — nothing was applied,
// and nothing is sent for them after the deadline.
func TestBackpressurePersistentEndsAppliedNo(t *testing.T) {
	t.Parallel()
	f := newKVFake(t, 1)
	f.setAnswer(func(kvAttempt, int) (int32, []byte) { return int32(wire.CodeStorageBackpressureException), nil })
	w := openFake(t, f, 1, writer.Options{})
	res, took := writeWithin(t, w, kvRows(1, 20), 5*time.Second)
	for i, r := range res {
		assert.Equal(t, "storage_backpressure", r.Code, "entry %d: %+v", i, r)
		assert.True(t, r.Retryable, "entry %d", i)
		assert.Equal(t, domain.AppliedNo, r.Applied, "entry %d", i)
	}
	attempts, _ := f.snapshot()
	// Default MaxThrottle is 3 s: the first answer blocks the bucket for 3 s,
	// so a 5 s deadline sees exactly two attempts.
	assert.Len(t, attempts, 2, "attempts: first send + one after the 3 s throttle")
	time.Sleep(3500 * time.Millisecond)
	after, applied := f.snapshot()
	assert.Len(t, after, len(attempts), "no resend after the deadline dropped the batch")
	assert.Empty(t, applied)
	t.Logf("persistent code 72: %d attempts, write returned after %s with storage_backpressure/retryable/no: %q",
		len(attempts), took.Round(time.Millisecond), res[0].Message)
}

// TestBackpressureIsPerBucket: only bucket 0 is under backpressure; rows of
// the other buckets of the same request succeed, rows of bucket 0 end
// `storage_backpressure` applied "no".
func TestBackpressureIsPerBucket(t *testing.T) {
	t.Parallel()
	f := newKVFake(t, 4)
	f.setAnswer(func(a kvAttempt, _ int) (int32, []byte) {
		if a.bucket == 0 {
			return int32(wire.CodeStorageBackpressureException), nil
		}
		return 0, nil
	})
	w := openFake(t, f, 4, writer.Options{MaxThrottle: time.Second})
	wb := kvRows(1, 200)
	res, _ := writeWithin(t, w, wb, 2500*time.Millisecond)
	_, applied := f.snapshot()
	okN, bp := 0, 0
	for i, r := range res {
		id := wb.Entries[i].Row[0].I64
		if r.OK() {
			okN++
			assert.Equal(t, 1, applied[id], "key %d succeeded: applied once", id)
			continue
		}
		bp++
		assert.Equal(t, "storage_backpressure", r.Code, "entry %d: %+v", i, r)
		assert.Equal(t, domain.AppliedNo, r.Applied)
		assert.Zero(t, applied[id], "key %d reported applied no", id)
	}
	assert.Positive(t, okN)
	assert.Positive(t, bp)
	t.Logf("4 buckets, bucket 0 under backpressure: %d ok, %d storage_backpressure/no", okN, bp)
}

// TestBackpressureThrottlesLaterWrites: after a 72 the bucket stays blocked
// for MaxThrottle; a new request for the same bucket is not sent before the
// block ends even though the server would accept it.
func TestBackpressureThrottlesLaterWrites(t *testing.T) {
	t.Parallel()
	f := newKVFake(t, 1)
	var once sync.Once
	f.setAnswer(func(kvAttempt, int) (int32, []byte) {
		code := int32(0)
		once.Do(func() { code = int32(wire.CodeStorageBackpressureException) })
		return code, nil
	})
	const throttle = 800 * time.Millisecond
	w := openFake(t, f, 1, writer.Options{MaxThrottle: throttle})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, _ := writeWithin(t, w, kvRows(1, 5), 5*time.Second)
		for _, r := range res {
			assert.True(t, r.OK(), "%+v", r)
		}
	}()
	require.Eventually(t, func() bool { a, _ := f.snapshot(); return len(a) >= 1 }, 3*time.Second, 5*time.Millisecond)
	first, _ := f.snapshot()
	res, _ := writeWithin(t, w, kvRows(100, 5), 5*time.Second)
	wg.Wait()
	for _, r := range res {
		assert.True(t, r.OK(), "%+v", r)
	}
	attempts, _ := f.snapshot()
	for _, a := range attempts[1:] {
		assert.GreaterOrEqual(t, a.at.Sub(first[0].at), throttle-20*time.Millisecond,
			"no batch of the throttled bucket is sent before the throttle ends")
	}
}

// TestPressureFieldThrottles: Fluss 1.0 adds an optional float `pressure`
// (field 6) to PbPutKvRespForBucket; a pressure p in (0, 1) throttles the
// bucket for MaxThrottle × p² (Fluss 1.0 client rule), so the next write to
// the bucket waits 2 s × 0.81 = 1.62 s. The fake sends the field as raw
// bytes, as a 1.0 server does.
func TestPressureFieldThrottles(t *testing.T) {
	t.Parallel()
	f := newKVFake(t, 1)
	pressure := protowire.AppendTag(nil, 6, protowire.Fixed32Type)
	pressure = binary.LittleEndian.AppendUint32(pressure, math.Float32bits(0.9))
	f.setAnswer(func(kvAttempt, int) (int32, []byte) { return 0, pressure })
	obs := &pressureLog{}
	w := openFake(t, f, 1, writer.Options{MaxThrottle: 2 * time.Second, Pressure: obs})
	_, took1 := writeWithin(t, w, kvRows(1, 5), 5*time.Second)
	res, took2 := writeWithin(t, w, kvRows(10, 5), 5*time.Second)
	for _, r := range res {
		assert.True(t, r.OK(), "%+v", r)
	}
	calls := obs.get()
	require.NotEmpty(t, calls)
	assert.InDelta(t, 0.9, calls[0].pressure, 1e-6)
	assert.Equal(t, 1620*time.Millisecond, calls[0].throttle)
	assert.GreaterOrEqual(t, took2, 1500*time.Millisecond, "the second write waited for the 1.62 s throttle")
	t.Logf("success answers with pressure=0.9: writes took %s and %s (throttle %s)",
		took1.Round(time.Millisecond), took2.Round(time.Millisecond), calls[0].throttle)
}

// TestDeadlineUnreachableCluster: a fresh client whose bootstrap address
// refuses connections, or accepts them and never answers (a frozen server),
// returns from Write by the deadline: either a request-level error (nothing
// attempted) or per-entry verdicts that are all applied "no".
func TestDeadlineUnreachableCluster(t *testing.T) {
	t.Parallel()
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refusedAddr := refused.Addr().String()
	require.NoError(t, refused.Close())

	hole, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hole.Close() })
	go func() {
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c) }() // read, never answer
		}
	}()

	for name, addr := range map[string]string{"connection_refused": refusedAddr, "black_hole": hole.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cl, err := fluss.Open(context.Background(), fluss.Config{ID: "x", BootstrapServers: []string{addr},
				ConnectTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second},
				slog.New(slog.NewTextHandler(io.Discard, nil)))
			require.NoError(t, err)
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				_ = cl.Close(ctx)
			}()
			sess, err := cl.Session(context.Background(), domain.Principal{})
			require.NoError(t, err)
			const deadline = 3 * time.Second
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			start := time.Now()
			res, err := sess.Writer().Write(ctx, kvRows(1, 10))
			took := time.Since(start)
			assert.LessOrEqual(t, took, deadline+fakeSlack, "returned after %s", took)
			if err != nil {
				t.Logf("%s: request-level error after %s: code %s: %v", name, took.Round(time.Millisecond), domain.AsError(err).Code(), err)
				return
			}
			for i, r := range res {
				assert.False(t, r.OK(), "entry %d", i)
				assert.Equal(t, domain.AppliedNo, r.Applied, "entry %d: %+v", i, r)
			}
			t.Logf("%s: %d verdicts after %s: %+v", name, len(res), took.Round(time.Millisecond), res[0])
		})
	}
}
