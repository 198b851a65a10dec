package application

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/testclock"
)

// firstRowCluster is a fake cluster for the keyed-write use case: the
// ledger table keeps the first row of each primary key (what Fluss's
// first_row merge engine does), the user table counts the rows written.
type firstRowCluster struct {
	mu      sync.Mutex
	tables  map[domain.TablePath]domain.TableInfo
	ledger  map[string][]domain.Datum // key_hash|kind|p -> first row
	written int                       // user-table rows
	failAll bool                      // the user-table writer answers every entry failed
}

var idemUsers = domain.TablePath{Database: "d", Table: "events"}

func newFirstRowCluster() *firstRowCluster {
	f := &firstRowCluster{tables: map[domain.TablePath]domain.TableInfo{}, ledger: map[string][]domain.Datum{}}
	f.tables[idemUsers] = domain.TableInfo{Path: idemUsers, TableID: 1, SchemaID: 1, Descriptor: domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{intColumn("id", false)}}}}
	return f
}

func (f *firstRowCluster) clusters() *dataClusters {
	cat := &fakeCatalog{
		getTable: func(p domain.TablePath) (domain.TableInfo, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if info, ok := f.tables[p]; ok {
				return info, nil
			}
			return domain.TableInfo{}, domain.NotFound(domain.ResourceTable, "table `%s` does not exist", p)
		},
		createDatabase: func(string, domain.DatabaseDescriptor, bool) error { return nil },
		createTable: func(p domain.TablePath, d domain.TableDescriptor, _ bool) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			if _, ok := f.tables[p]; !ok {
				f.tables[p] = domain.TableInfo{Path: p, TableID: int64(len(f.tables) + 1), SchemaID: 1, Descriptor: d}
			}
			return nil
		},
	}
	return &dataClusters{catalog: cat, writer: writerFunc(f.write), lookup: firstRowLookup{f}}
}

func ledgerMapKey(row []domain.Datum) string {
	return string(row[0].Bytes) + "|" + string(row[1].Bytes) + "|" + string(row[2].Bytes)
}

func (f *firstRowCluster) write(_ context.Context, b *domain.WriteBatch) ([]domain.EntryResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]domain.EntryResult, len(b.Entries))
	if b.Table == idemUsers {
		for i := range out {
			if f.failAll {
				out[i] = domain.EntryResult{Code: "not_enough_replicas", Retryable: true, Applied: domain.AppliedUnknown}
				continue
			}
			f.written++
		}
		return out, nil
	}
	for _, e := range b.Entries {
		k := ledgerMapKey(e.Row)
		if _, ok := f.ledger[k]; !ok {
			f.ledger[k] = e.Row
		}
	}
	return out, nil
}

func (f *firstRowCluster) rows() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.written
}

type firstRowLookup struct{ f *firstRowCluster }

func (l firstRowLookup) Lookup(_ context.Context, req *domain.LookupRequest) (*domain.LookupResponse, error) {
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	resp := &domain.LookupResponse{Results: make([]domain.LookupResult, len(req.Keys))}
	for i, k := range req.Keys {
		resp.Results[i].Row = l.f.ledger[ledgerMapKey(k)]
	}
	return resp, nil
}

func (firstRowLookup) PrefixLookup(context.Context, *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
	panic("unexpected PrefixLookup")
}

// idemDecoder decodes n rows with ids e0..e<n-1>.
func idemDecoder(n int) WriteDecoder {
	return decoderFunc{write: func(t *Table, _ int) (domain.WriteBatch, []string, error) {
		b := domain.WriteBatch{}
		var ids []string
		for i := range n {
			b.Entries = append(b.Entries, domain.WriteEntry{Op: domain.OpAppend, Row: []domain.Datum{{I64: int64(i)}}})
			ids = append(ids, "e"+string(rune('0'+i)))
		}
		return b, ids, nil
	}}
}

type idemRecorder struct {
	mu       sync.Mutex
	outcomes []string
}

func (r *idemRecorder) RecordIdempotency(_ context.Context, _ domain.TablePath, outcome string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outcomes = append(r.outcomes, outcome)
}

func (r *idemRecorder) StartIdempotencySpan(ctx context.Context, _ string) (context.Context, func(string, error)) {
	return ctx, func(string, error) {}
}

var idemScope = Scope{Cluster: "c1", Principal: domain.Principal{Name: "alice"}}

func newIdem(f *firstRowCluster, opts IdempotencyOptions) *IdempotentWrites {
	return NewIdempotentWrites(NewRecordService(f.clusters(), RecordOptions{}), opts)
}

func TestValidateIdempotencyKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"a", true},
		{"order-42/retry:7", true},
		{strings.Repeat("k", 255), true},
		{"", false},
		{strings.Repeat("k", 256), false},
		{"has space", false},
		{"tab\t", false},
		{"é", false},
		{"del\x7f", false},
	} {
		err := ValidateIdempotencyKey(tc.key)
		if tc.ok {
			assert.NoError(t, err, "%q", tc.key)
			continue
		}
		require.Error(t, err, "%q", tc.key)
		assert.Equal(t, domain.KindInvalidArgument, domain.AsError(err).Kind)
		assert.LessOrEqual(t, len(err.Error()), 160, "the message quotes the key cut short")
	}
}

func TestIdempotentWritesReplayAndReuse(t *testing.T) {
	f := newFirstRowCluster()
	rec := &idemRecorder{}
	w := newIdem(f, IdempotencyOptions{Metrics: rec})
	ctx := context.Background()
	cmd := WriteCommand{Path: idemUsers, Decoder: idemDecoder(3)}
	key := IdempotencyKey{Key: "k1", Fingerprint: "fp-a"}

	first, err := w.Write(ctx, idemScope, cmd, key)
	require.NoError(t, err)
	require.NoError(t, first.Err)
	assert.False(t, first.Replayed)
	assert.Equal(t, 3, f.rows())
	assert.Contains(t, f.tables, DefaultIdempotencyLedger, "the ledger is created on first use")
	props := f.tables[DefaultIdempotencyLedger].Descriptor.Properties
	assert.Equal(t, "first_row", props["table.merge-engine"])
	assert.Equal(t, "DAY", props[domain.OptAutoPartitionTimeUnit])
	assert.Equal(t, "2", props[domain.OptAutoPartitionRetention])

	again, err := w.Write(ctx, idemScope, cmd, key)
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, first.IDs, again.IDs)
	assert.Equal(t, first.Results, again.Results)
	assert.Equal(t, 3, f.rows(), "nothing written again")

	_, err = w.Write(ctx, idemScope, cmd, IdempotencyKey{Key: "k1", Fingerprint: "fp-b"})
	var reused *KeyReusedError
	require.ErrorAs(t, err, &reused)
	assert.Equal(t, 3, f.rows())

	// Another principal, another table: no collision.
	bob := Scope{Cluster: "c1", Principal: domain.Principal{Name: "bob"}}
	other, err := w.Write(ctx, bob, cmd, key)
	require.NoError(t, err)
	assert.False(t, other.Replayed)
	assert.Equal(t, 6, f.rows())
	assert.Equal(t, []string{IdemClaimed, IdemReplayed, IdemReused, IdemClaimed}, rec.outcomes)
}

func TestIdempotentWritesReplaysVerdictsAndErrors(t *testing.T) {
	f := newFirstRowCluster()
	f.failAll = true
	w := newIdem(f, IdempotencyOptions{})
	ctx := context.Background()
	cmd := WriteCommand{Path: idemUsers, Decoder: idemDecoder(2)}
	first, err := w.Write(ctx, idemScope, cmd, IdempotencyKey{Key: "verdicts", Fingerprint: "x"})
	require.NoError(t, err)
	again, err := w.Write(ctx, idemScope, cmd, IdempotencyKey{Key: "verdicts", Fingerprint: "x"})
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, first.Results, again.Results, "failed verdicts replay as they were")

	// A whole-request error (here: an unknown table) is recorded and replayed.
	bad := WriteCommand{Path: domain.TablePath{Database: "d", Table: "missing"}, Decoder: idemDecoder(1)}
	e1, err := w.Write(ctx, idemScope, bad, IdempotencyKey{Key: "err", Fingerprint: "y"})
	require.NoError(t, err)
	require.Error(t, e1.Err)
	e2, err := w.Write(ctx, idemScope, bad, IdempotencyKey{Key: "err", Fingerprint: "y"})
	require.NoError(t, err)
	assert.True(t, e2.Replayed)
	assert.Equal(t, domain.AsError(e1.Err).Kind, domain.AsError(e2.Err).Kind)
	assert.Equal(t, domain.AsError(e1.Err).Error(), domain.AsError(e2.Err).Error())
}

func TestIdempotentWritesDeadAttempt(t *testing.T) {
	f := newFirstRowCluster()
	clock := testclock.New()
	crash := errors.New("crash")
	dying := newIdem(f, IdempotencyOptions{Now: clock.Now, Lease: time.Minute,
		AfterWrite: func(context.Context, IdempotencyKey) error { return crash }})
	w := newIdem(f, IdempotencyOptions{Now: clock.Now, Lease: time.Minute})
	cmd := WriteCommand{Path: idemUsers, Decoder: idemDecoder(2)}
	key := IdempotencyKey{Key: "dead", Fingerprint: "fp"}

	_, err := dying.Write(context.Background(), idemScope, cmd, key)
	require.ErrorIs(t, err, crash)
	assert.Equal(t, 2, f.rows())

	clock.Advance(2 * time.Minute) // past the lease
	res, err := w.Write(context.Background(), idemScope, cmd, key)
	require.NoError(t, err)
	assert.True(t, res.Replayed)
	require.Len(t, res.Results, 2)
	for _, r := range res.Results {
		assert.Equal(t, EntryCodeOutcomeUnknown, r.Code)
		assert.Equal(t, domain.AppliedUnknown, r.Applied)
		assert.False(t, r.Retryable)
	}
	assert.Equal(t, []string{"e0", "e1"}, res.IDs)
	assert.Equal(t, 2, f.rows(), "never written twice")

	// The outcome is recorded: the dying instance replays it too.
	res2, err := dying.Write(context.Background(), idemScope, cmd, key)
	require.NoError(t, err)
	assert.Equal(t, res.Results, res2.Results)
}

func TestIdempotentWritesInFlight(t *testing.T) {
	f := newFirstRowCluster()
	release := make(chan struct{})
	written := make(chan struct{})
	slow := newIdem(f, IdempotencyOptions{AfterWrite: func(context.Context, IdempotencyKey) error {
		close(written)
		<-release
		return nil
	}})
	w := newIdem(f, IdempotencyOptions{})
	cmd := WriteCommand{Path: idemUsers, Decoder: idemDecoder(1)}
	key := IdempotencyKey{Key: "busy", Fingerprint: "fp"}
	done := make(chan IdempotentResult)
	go func() {
		res, _ := slow.Write(context.Background(), idemScope, cmd, key)
		done <- res
	}()
	<-written

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := w.Write(ctx, idemScope, cmd, key)
	var busy *KeyInFlightError
	require.ErrorAs(t, err, &busy)
	assert.GreaterOrEqual(t, busy.RetryAfterSeconds(), int64(1))

	// A request that can wait gets the owner's answer once it is recorded.
	got := make(chan IdempotentResult)
	go func() {
		res, _ := w.Write(context.Background(), idemScope, cmd, key)
		got <- res
	}()
	time.Sleep(50 * time.Millisecond)
	close(release)
	owner := <-done
	follower := <-got
	assert.True(t, follower.Replayed)
	assert.Equal(t, owner.Results, follower.Results)
	assert.Equal(t, 1, f.rows())
}

func TestIdempotencyPartitions(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)
	assert.Equal(t, []string{"20261130", "20261201", "20261202"}, partitions(24*time.Hour, 24*time.Hour, at))
	assert.Equal(t, []string{"2026120109", "2026120110", "2026120111"}, partitions(time.Hour, time.Hour, at))
	assert.Equal(t, []string{"2026120110", "2026120111"}, partitions(time.Hour, time.Minute, at))
	w := NewIdempotentWrites(nil, IdempotencyOptions{Window: 3 * time.Hour})
	assert.Equal(t, time.Hour, w.unit)
	assert.Equal(t, 4, w.retention())
	assert.Equal(t, "HOUR", w.LedgerDescriptor().Properties[domain.OptAutoPartitionTimeUnit])
}

// TestLedgerStateOwner: a key claimed in two partitions (a race across a
// partition boundary) has no owner: every claimant yields.
func TestLedgerStateOwner(t *testing.T) {
	one := ledgerState{claims: []claimRow{{id: "a", part: "p1"}}}
	o, ok := one.owner()
	assert.True(t, ok)
	assert.Equal(t, "a", o.id)
	two := ledgerState{claims: []claimRow{{id: "a", part: "p1"}, {id: "b", part: "p2"}}}
	_, ok = two.owner()
	assert.False(t, ok)
	first, _ := two.first()
	assert.Equal(t, "p1", first.part)
}

// FuzzRecordedAnswer: any answer row the ledger may hold decodes and
// replays without panicking; verdicts and ids that do not pair up are an
// internal error, not a wrong answer.
func FuzzRecordedAnswer(f *testing.F) {
	good, _ := json.Marshal(answerOf(WriteResult{IDs: []string{"a"}, Results: []domain.EntryResult{{Code: "x", Applied: domain.AppliedNo}}}, nil))
	f.Add(good)
	f.Add([]byte(`{"error":{"kind":4,"message":"m"}}`))
	f.Add([]byte(`{"ids":["a","b"],"entries":[{}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var a recordedAnswer
		if json.Unmarshal(b, &a) != nil {
			return
		}
		res, err := a.replay()
		if err != nil {
			return
		}
		require.True(t, res.Replayed)
		if res.Err == nil {
			require.Equal(t, len(res.IDs), len(res.Results))
		}
	})
}
