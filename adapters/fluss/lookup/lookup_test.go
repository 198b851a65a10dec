package lookup_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/lookup"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// kvDesc: PK (id, name), 8 buckets.
func kvDesc() domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema: domain.Schema{
			Columns: []domain.Column{
				col("id", domain.TypeBigInt, false),
				col("name", domain.TypeString, false),
				col("score", domain.TypeDouble, true),
				col("note", domain.TypeString, true),
			},
			PrimaryKey: []string{"id", "name"},
		},
		BucketCount: 8,
	}
}

func kvRow(i int64) []domain.Datum {
	note := str(fmt.Sprintf("note %d", i))
	if i%3 == 0 {
		note = null()
	}
	return row(i64(i), str(fmt.Sprintf("n%d", i)), f64(float64(i)*1.5), note)
}

func fastOpts() lookup.Options {
	return lookup.Options{RetryBackoff: time.Millisecond, MaxRetryBackoff: 5 * time.Millisecond}
}

func requireRow(t *testing.T, want, got []domain.Datum, msg ...any) {
	t.Helper()
	require.Len(t, got, len(want), msg...)
	for i := range want {
		if want[i].Null {
			assert.True(t, got[i].Null, msg...)
			continue
		}
		assert.False(t, got[i].Null, msg...)
		assert.Equal(t, want[i].I64, got[i].I64, msg...)
		assert.Equal(t, want[i].F64, got[i].F64, msg...)
		assert.Equal(t, string(want[i].Bytes), string(got[i].Bytes), msg...)
	}
}

// TestLookupGroupsByLeader checks one request per tablet server covering all
// its buckets, input order, found rows and not-found keys.
func TestLookupGroupsByLeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3, fastOpts())
	kt := e.createTable(t, "kv", kvDesc())
	for i := int64(0); i < 100; i++ {
		e.kv.put(t, kt, kt.schemaID, kt.schema, kvRow(i))
	}

	ids := rand.New(rand.NewPCG(1, 2)).Perm(128)
	keys := make([][]domain.Datum, len(ids))
	for k, id := range ids {
		keys[k] = row(i64(int64(id)), str(fmt.Sprintf("n%d", id)))
	}
	keys[5] = row(i64(7), str("wrong name")) // same id, other key
	resp, err := e.lk.Lookup(ctx(t), &domain.LookupRequest{Table: kt.path, TableID: kt.id, SchemaID: kt.schemaID, Keys: keys})
	require.NoError(t, err)
	require.Len(t, resp.Results, 128)
	assert.Equal(t, kt.schemaID, resp.SchemaID)
	for k, id := range ids {
		r := resp.Results[k]
		require.Nil(t, r.Err, "key %d", k)
		if id >= 100 || k == 5 {
			assert.Nil(t, r.Row, "key %d (id %d) must not be found", k, id)
			continue
		}
		requireRow(t, kvRow(int64(id)), r.Row, "key %d (id %d)", k, id)
	}

	reqs := e.kv.requests(wire.KeyLookup)
	require.Len(t, reqs, 3, "one request per tablet server")
	seen := map[int32]bool{}
	total := 0
	for _, r := range reqs {
		assert.False(t, seen[r.node], "two requests to node %d", r.node)
		seen[r.node] = true
		assert.Greater(t, len(r.buckets), 1, "a request covers many buckets")
		buckets := map[int32]bool{}
		for _, b := range r.buckets {
			assert.Equal(t, r.node, b.bucket%3, "bucket %d sent to node %d", b.bucket, r.node)
			assert.False(t, buckets[b.bucket], "bucket %d twice in one request", b.bucket)
			buckets[b.bucket] = true
		}
		total += r.keys
	}
	assert.Equal(t, 128, total)
}

func partDesc() domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema: domain.Schema{
			Columns: []domain.Column{
				col("dt", domain.TypeString, false),
				col("id", domain.TypeInteger, false),
				col("v", domain.TypeString, true),
			},
			PrimaryKey: []string{"dt", "id"},
		},
		PartitionKeys: []string{"dt"},
		BucketCount:   4,
	}
}

// TestLookupPartitioned checks keys across partitions, including a partition
// that does not exist (not found, not an error, nothing sent for it).
func TestLookupPartitioned(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, fastOpts())
	days := []string{"2024-01-01", "2024-01-02"}
	kt := e.createTable(t, "pt", partDesc(), days...)
	for _, d := range days {
		for i := int64(0); i < 20; i++ {
			e.kv.put(t, kt, kt.schemaID, kt.schema, row(str(d), i64(i), str(d+"/"+fmt.Sprint(i))))
		}
	}
	var keys [][]domain.Datum
	for i := int64(0); i < 25; i++ {
		for _, d := range []string{"2024-01-02", "2024-01-03", "2024-01-01"} {
			keys = append(keys, row(str(d), i64(i)))
		}
	}
	resp, err := e.lk.Lookup(ctx(t), &domain.LookupRequest{Table: kt.path, Keys: keys})
	require.NoError(t, err)
	require.Len(t, resp.Results, len(keys))
	for k, key := range keys {
		r := resp.Results[k]
		require.Nil(t, r.Err, "key %d", k)
		d, i := string(key[0].Bytes), key[1].I64
		if d == "2024-01-03" || i >= 20 {
			assert.Nil(t, r.Row, "key %d", k)
			continue
		}
		requireRow(t, row(str(d), i64(i), str(d+"/"+fmt.Sprint(i))), r.Row, "key %d", k)
	}
	reqs := e.kv.requests(wire.KeyLookup)
	require.Len(t, reqs, 2, "one request per node, covering both partitions")
	for _, r := range reqs {
		parts := map[int64]bool{}
		for _, b := range r.buckets {
			parts[b.part] = true
			assert.NotEqual(t, int64(-1), b.part)
		}
		assert.Len(t, parts, 2)
	}
}

// TestLookupPerKeyErrors checks that a non-retriable bucket error fails only
// the keys of that bucket, and that a key that cannot be encoded fails alone.
func TestLookupPerKeyErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, fastOpts())
	kt := e.createTable(t, "kv", kvDesc())
	for i := int64(0); i < 40; i++ {
		e.kv.put(t, kt, kt.schemaID, kt.schema, kvRow(i))
	}
	const bad = 2
	e.kv.bucketErr = func(_ int32, b bucketRef) wire.ErrorCode {
		if b.bucket == bad {
			return wire.CodeAuthorizationException
		}
		return 0
	}
	var keys [][]domain.Datum
	for i := int64(0); i < 40; i++ {
		keys = append(keys, kvRow(i)[:2])
	}
	keys = append(keys, row(null(), str("x")), row(i64(1))) // null key column, short key
	resp, err := e.lk.Lookup(ctx(t), &domain.LookupRequest{Table: kt.path, Keys: keys})
	require.NoError(t, err)
	failed := 0
	for i := int64(0); i < 40; i++ {
		r := resp.Results[i]
		if kt.bucketOf(t, kvRow(i)) == bad {
			failed++
			require.NotNil(t, r.Err, "key %d", i)
			assert.Equal(t, "unauthorized", r.Err.Code())
			assert.Contains(t, r.Err.Message, "bucket 2 of table `db.kv`")
			assert.False(t, r.Err.Retryable)
			continue
		}
		require.Nil(t, r.Err, "key %d", i)
		requireRow(t, kvRow(i), r.Row)
	}
	assert.Positive(t, failed)
	for _, k := range []int{40, 41} {
		require.NotNil(t, resp.Results[k].Err, "key %d", k)
		assert.Equal(t, "invalid_argument", resp.Results[k].Err.Code())
		assert.Contains(t, resp.Results[k].Err.Message, fmt.Sprintf("key %d:", k))
	}
}

// TestLookupRetryNotLeader checks that NOT_LEADER_OR_FOLLOWER refreshes the
// bucket leaders and retries.
func TestLookupRetryNotLeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, fastOpts())
	kt := e.createTable(t, "kv", kvDesc())
	for i := int64(0); i < 30; i++ {
		e.kv.put(t, kt, kt.schemaID, kt.schema, kvRow(i))
	}
	keys := make([][]domain.Datum, 30)
	for i := range keys {
		keys[i] = kvRow(int64(i))[:2]
	}
	// Warm the cache, then make server 1 answer NOT_LEADER once.
	_, err := e.lk.Lookup(ctx(t), &domain.LookupRequest{Table: kt.path, Keys: keys})
	require.NoError(t, err)
	e.kv.resetRequests()
	before := e.metadataRequests()
	e.fc.TabletServers[1].ControlOnce(wire.KeyLookup, func(_ context.Context, r *flussfake.Request) (proto.Message, error, bool) {
		var req flusspb.LookupRequest
		require.NoError(t, proto.Unmarshal(r.Body, &req))
		resp := &flusspb.LookupResponse{}
		for _, b := range req.GetBucketsReq() {
			resp.BucketsResp = append(resp.BucketsResp, &flusspb.PbLookupRespForBucket{
				PartitionId: b.PartitionId, BucketId: b.BucketId,
				ErrorCode: proto.Int32(int32(wire.CodeNotLeaderOrFollower)), ErrorMessage: proto.String("moved"),
			})
		}
		return resp, nil, true
	})
	resp, err := e.lk.Lookup(ctx(t), &domain.LookupRequest{Table: kt.path, Keys: keys})
	require.NoError(t, err)
	for i, r := range resp.Results {
		require.Nil(t, r.Err, "key %d", i)
		requireRow(t, kvRow(int64(i)), r.Row)
	}
	assert.Greater(t, e.metadataRequests(), before, "leaders were refreshed")
	// The handler saw node 0 once and node 1 once (after the control's
	// NOT_LEADER); node 1 received three requests over both calls.
	reqs := e.kv.requests(wire.KeyLookup)
	require.Len(t, reqs, 2)
	assert.Equal(t, 3, e.fc.TabletServers[1].Requests(wire.KeyLookup))
}

// TestLookupRetryConnectionLoss checks a retry after a request-level failure.
func TestLookupRetryConnectionLoss(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, fastOpts())
	kt := e.createTable(t, "kv", kvDesc())
	for i := int64(0); i < 10; i++ {
		e.kv.put(t, kt, kt.schemaID, kt.schema, kvRow(i))
	}
	e.fc.TabletServers[0].ControlOnce(wire.KeyLookup, func(context.Context, *flussfake.Request) (proto.Message, error, bool) {
		return nil, flussfake.ErrCloseConn, true
	})
	keys := make([][]domain.Datum, 10)
	for i := range keys {
		keys[i] = kvRow(int64(i))[:2]
	}
	resp, err := e.lk.Lookup(ctx(t), &domain.LookupRequest{Table: kt.path, Keys: keys})
	require.NoError(t, err)
	for i, r := range resp.Results {
		require.Nil(t, r.Err, "key %d", i)
		requireRow(t, kvRow(int64(i)), r.Row)
	}
}

// TestLookupWholeFailures checks the whole-request errors: every key failing
// retriably, and the caller's deadline.
func TestLookupWholeFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, lookup.Options{MaxAttempts: 3, RetryBackoff: time.Millisecond})
	kt := e.createTable(t, "kv", kvDesc())
	keys := [][]domain.Datum{kvRow(1)[:2], kvRow(2)[:2], kvRow(3)[:2]}
	nodes := map[int32]bool{}
	for i := int64(1); i <= 3; i++ {
		nodes[kt.bucketOf(t, kvRow(i))%2] = true
	}

	e.kv.bucketErr = func(int32, bucketRef) wire.ErrorCode { return wire.CodeLeaderNotAvailableException }
	_, err := e.lk.Lookup(ctx(t), &domain.LookupRequest{Table: kt.path, Keys: keys})
	de := domain.AsError(err)
	require.NotNil(t, de, "%v", err)
	assert.Equal(t, domain.KindUnavailable, de.Kind)
	assert.True(t, de.Retryable)
	assert.Contains(t, de.Message, "failed for all 3 keys")
	assert.Len(t, e.kv.requests(wire.KeyLookup), 3*len(nodes), "3 attempts per node")

	// A server that does not answer in time: the deadline fails the call.
	e.kv.bucketErr = nil
	for _, s := range e.fc.TabletServers {
		s.Control(wire.KeyLookup, func(c context.Context, _ *flussfake.Request) (proto.Message, error, bool) {
			select {
			case <-c.Done():
			case <-time.After(2 * time.Second):
			}
			return nil, flussfake.ErrDrop, true
		})
	}
	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = e.lk.Lookup(short, &domain.LookupRequest{Table: kt.path, Keys: keys})
	assert.Less(t, time.Since(start), time.Second)
	assert.Equal(t, domain.KindTimeout, domain.KindOf(err), "%v", err)
}

// TestLookupTableChecks checks whole-request validation.
func TestLookupTableChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, fastOpts())
	kt := e.createTable(t, "kv", kvDesc())
	logDesc := domain.TableDescriptor{Schema: domain.Schema{Columns: []domain.Column{col("a", domain.TypeInteger, true)}}, BucketCount: 1}
	log := e.createTable(t, "log", logDesc)

	_, err := e.lk.Lookup(ctx(t), &domain.LookupRequest{Table: log.path, Keys: [][]domain.Datum{{i64(1)}}})
	assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err), "%v", err)

	_, err = e.lk.Lookup(ctx(t), &domain.LookupRequest{Table: domain.TablePath{Database: "db", Table: "nope"}, Keys: [][]domain.Datum{{i64(1)}}})
	assert.Equal(t, "table_not_found", domain.AsError(err).Code(), "%v", err)

	_, err = e.lk.Lookup(ctx(t), &domain.LookupRequest{Table: kt.path, TableID: kt.id + 100, Keys: [][]domain.Datum{kvRow(1)[:2]}})
	assert.Equal(t, domain.KindFailedPrecondition, domain.KindOf(err), "%v", err)
	assert.True(t, domain.IsStaleDefinition(err), "%v", err)

	resp, err := e.lk.Lookup(ctx(t), &domain.LookupRequest{Table: kt.path})
	require.NoError(t, err)
	assert.Empty(t, resp.Results)
}
