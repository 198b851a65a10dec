package lookup_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/lookup"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// callFake is a meta.Caller over metatest (metadata, schemas, movable
// leaders) that answers Lookup and PrefixLookup from a fakeKV.
type callFake struct {
	*metatest.Cluster
	kv *fakeKV
}

func (f callFake) Call(ctx context.Context, to meta.Dest, key wire.APIKey, req, resp proto.Message) error {
	switch key {
	case wire.KeyLookup:
		proto.Merge(resp, f.kv.lookup(to.Node, req.(*flusspb.LookupRequest)))
		return nil
	case wire.KeyPrefixLookup:
		proto.Merge(resp, f.kv.prefixLookup(to.Node, req.(*flusspb.PrefixLookupRequest)))
		return nil
	}
	return f.Cluster.Call(ctx, to, key, req, resp)
}

// leaders is the test's view of who leads each bucket (metatest keeps its
// own copy under its lock).
type leaders struct {
	mu sync.Mutex
	l  []int32
}

func (l *leaders) of(b bucketRef) int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.l[b.bucket]
}

func (l *leaders) set(v ...int32) {
	l.mu.Lock()
	l.l = v
	l.mu.Unlock()
}

// Schema 1: (id, name, v INT); schema 2 adds `extra` STRING; ids 0..3.
func evoSchemas() (domain.Schema, domain.Schema) {
	c := func(name string, root domain.TypeRoot, nullable bool, id int32) domain.Column {
		cl := col(name, root, nullable)
		cl.ID = id
		return cl
	}
	v1 := domain.Schema{
		Columns:    []domain.Column{c("id", domain.TypeBigInt, false, 0), c("name", domain.TypeString, false, 1), c("v", domain.TypeInteger, true, 2)},
		PrimaryKey: []string{"id", "name"}, HighestFieldID: 2,
	}
	v2 := v1
	v2.Columns = append(append([]domain.Column(nil), v1.Columns...), c("extra", domain.TypeString, true, 3))
	v2.HighestFieldID = 3
	return v1, v2
}

func TestLookupSchemaEvolution(t *testing.T) {
	t.Parallel()
	v1, v2 := evoSchemas()
	path := domain.TablePath{Database: "db", Table: "evo"}
	desc := domain.TableDescriptor{Schema: v2, BucketCount: 4}
	mc := metatest.New(2)
	mc.AddTable(&metatest.Table{ID: 7, Path: path, Desc: desc, SchemaID: 2, Schemas: map[int32]domain.Schema{1: v1},
		Leaders: []int32{1, 2, 1, 2}})
	ld := &leaders{l: []int32{1, 2, 1, 2}}
	kv := newFakeKV(ld.of)
	f := callFake{mc, kv}
	cache := meta.New(f, meta.Options{})
	lk := lookup.New(f, cache, fastOpts())

	kt := newKVTable(t, path, 7, 2, desc)
	for i := int64(0); i < 20; i++ {
		key := row(i64(i), str(fmt.Sprint("n", i)))
		if i%2 == 0 {
			kv.put(t, kt, 1, v1, append(key, i64(i*10))) // written before the column was added
		} else {
			kv.put(t, kt, 2, v2, append(key, i64(i*10), str(fmt.Sprint("x", i))))
		}
	}
	keys := make([][]domain.Datum, 20)
	for i := range keys {
		keys[i] = row(i64(int64(i)), str(fmt.Sprint("n", i)))
	}

	// Current schema: old rows get a null `extra`.
	for range 2 {
		resp, err := lk.Lookup(ctx(t), &domain.LookupRequest{Table: path, TableID: 7, SchemaID: 2, Keys: keys})
		require.NoError(t, err)
		assert.Equal(t, int32(2), resp.SchemaID)
		for i, r := range resp.Results {
			require.Nil(t, r.Err, "key %d", i)
			want := append(row(i64(int64(i)), str(fmt.Sprint("n", i)), i64(int64(i)*10)), str(fmt.Sprint("x", i)))
			if i%2 == 0 {
				want[3] = null()
			}
			requireRow(t, want, r.Row, "key %d", i)
		}
	}
	assert.Equal(t, 1, mc.Calls(wire.KeyGetTableSchema), "schema 1 fetched once and cached")

	// Rendered in the older schema: the newer column is dropped.
	resp, err := lk.Lookup(ctx(t), &domain.LookupRequest{Table: path, SchemaID: 1, Keys: keys[:4]})
	require.NoError(t, err)
	assert.Equal(t, int32(1), resp.SchemaID)
	for i, r := range resp.Results {
		require.Nil(t, r.Err)
		requireRow(t, row(i64(int64(i)), str(fmt.Sprint("n", i)), i64(int64(i)*10)), r.Row)
	}

	// A schema newer than the cluster's: whole-request failure.
	_, err = lk.Lookup(ctx(t), &domain.LookupRequest{Table: path, SchemaID: 3, Keys: keys[:1]})
	assert.Equal(t, domain.KindFailedPrecondition, domain.KindOf(err))
	assert.True(t, domain.IsStaleDefinition(err), "%v", err)
}

func TestLookupSchemaTypeChange(t *testing.T) {
	t.Parallel()
	v1, v2 := evoSchemas()
	v1.Columns[2].Type = domain.DataType{Root: domain.TypeBigInt, Nullable: true} // v changed type: unreadable
	path := domain.TablePath{Database: "db", Table: "evo"}
	desc := domain.TableDescriptor{Schema: v2, BucketCount: 1}
	mc := metatest.New(1)
	mc.AddTable(&metatest.Table{ID: 7, Path: path, Desc: desc, SchemaID: 2, Schemas: map[int32]domain.Schema{1: v1}})
	kv := newFakeKV(func(bucketRef) int32 { return 1 })
	f := callFake{mc, kv}
	lk := lookup.New(f, meta.New(f, meta.Options{}), fastOpts())
	kt := newKVTable(t, path, 7, 2, desc)
	kv.put(t, kt, 1, v1, row(i64(1), str("a"), i64(5)))
	kv.put(t, kt, 2, v2, row(i64(2), str("b"), i64(6), null()))
	resp, err := lk.Lookup(ctx(t), &domain.LookupRequest{Table: path, Keys: [][]domain.Datum{{i64(1), str("a")}, {i64(2), str("b")}}})
	require.NoError(t, err)
	require.NotNil(t, resp.Results[0].Err)
	assert.Equal(t, "backend", resp.Results[0].Err.Code())
	assert.Contains(t, resp.Results[0].Err.Message, "changed its type")
	require.Nil(t, resp.Results[1].Err)
	requireRow(t, row(i64(2), str("b"), i64(6), null()), resp.Results[1].Row)
}

// TestLookupLeaderMove checks that keys follow their buckets' new leaders
// after NOT_LEADER_OR_FOLLOWER, in the same call, and that the partitioned
// path (partition ids, per-partition leaders) does too.
func TestLookupLeaderMove(t *testing.T) {
	t.Parallel()
	_, v2 := evoSchemas()
	path := domain.TablePath{Database: "db", Table: "mv"}
	desc := domain.TableDescriptor{Schema: v2, BucketCount: 4}
	mc := metatest.New(3)
	mc.AddTable(&metatest.Table{ID: 9, Path: path, Desc: desc, SchemaID: 1, Leaders: []int32{1, 2, 3, 1}})
	ld := &leaders{l: []int32{1, 2, 3, 1}}
	kv := newFakeKV(ld.of)
	f := callFake{mc, kv}
	lk := lookup.New(f, meta.New(f, meta.Options{}), fastOpts())
	kt := newKVTable(t, path, 9, 1, desc)
	keys := make([][]domain.Datum, 16)
	for i := range keys {
		r := row(i64(int64(i)), str("k"), i64(int64(i)), str("e"))
		kv.put(t, kt, 1, v2, r)
		keys[i] = r[:2]
	}
	check := func() {
		t.Helper()
		resp, err := lk.Lookup(ctx(t), &domain.LookupRequest{Table: path, Keys: keys})
		require.NoError(t, err)
		for i, r := range resp.Results {
			require.Nil(t, r.Err, "key %d", i)
			require.NotNil(t, r.Row, "key %d", i)
			assert.Equal(t, int64(i), r.Row[2].I64)
		}
	}
	check()
	md := mc.Calls(wire.KeyGetMetadata)
	kv.resetRequests()

	mc.SetLeaders(path, 3, 3, 2, 2)
	ld.set(3, 3, 2, 2)
	check()
	assert.Greater(t, mc.Calls(wire.KeyGetMetadata), md, "leaders were refreshed")
	reqs := kv.requests(wire.KeyLookup)
	last := map[int32]bool{}
	for _, r := range reqs[len(reqs)-2:] {
		last[r.node] = true
	}
	assert.Equal(t, map[int32]bool{2: true, 3: true}, last, "the retry went to the new leaders")

	// A bucket whose leader stays unknown fails its keys only, retryably.
	mc.SetLeaders(path, 3, meta.NoLeader, 2, 2)
	ld.set(3, -1, 2, 2)
	resp, err := lk.Lookup(ctx(t), &domain.LookupRequest{Table: path, Keys: keys})
	require.NoError(t, err)
	for i, r := range resp.Results {
		if kt.bucketOf(t, append(keys[i], null(), null())) == 1 {
			require.NotNil(t, r.Err, "key %d", i)
			assert.Equal(t, "unavailable", r.Err.Code())
			assert.True(t, r.Err.Retryable)
			assert.Contains(t, r.Err.Message, "LEADER_NOT_AVAILABLE")
		} else {
			require.Nil(t, r.Err, "key %d", i)
		}
	}
}

// TestLookupDroppedPartition checks that keys of a partition dropped after
// its id was cached end up not found after the leader refresh.
func TestLookupDroppedPartition(t *testing.T) {
	t.Parallel()
	path := domain.TablePath{Database: "db", Table: "pt"}
	desc := partDesc()
	mc := metatest.New(1)
	tbl := &metatest.Table{ID: 11, Path: path, Desc: desc, SchemaID: 1, Leaders: []int32{1, 1, 1, 1}}
	mc.AddTable(tbl)
	p1 := mc.AddPartition(path, "p1")
	p2 := mc.AddPartition(path, "p2")
	var mu sync.Mutex
	dropped := map[int64]bool{}
	kv := newFakeKV(func(bucketRef) int32 { return 1 })
	kv.bucketErr = func(_ int32, b bucketRef) wire.ErrorCode {
		mu.Lock()
		defer mu.Unlock()
		if dropped[b.part] {
			return wire.CodeUnknownTableOrBucketException
		}
		return 0
	}
	f := callFake{mc, kv}
	lk := lookup.New(f, meta.New(f, meta.Options{}), fastOpts())
	kt := newKVTable(t, path, 11, 1, desc)
	kt.parts["p1"], kt.parts["p2"] = p1, p2
	for _, p := range []string{"p1", "p2"} {
		kv.put(t, kt, 1, desc.Schema, row(str(p), i64(1), str(p)))
	}
	keys := [][]domain.Datum{{str("p1"), i64(1)}, {str("p2"), i64(1)}}
	resp, err := lk.Lookup(ctx(t), &domain.LookupRequest{Table: path, Keys: keys})
	require.NoError(t, err)
	require.NotNil(t, resp.Results[0].Row)
	require.NotNil(t, resp.Results[1].Row)

	// Drop p2 behind the cache's back.
	mu.Lock()
	dropped[p2] = true
	mu.Unlock()
	// metatest has no DropPartition; nothing is in flight, so edit its map.
	delete(tbl.Partitions, "p2")
	resp, err = lk.Lookup(ctx(t), &domain.LookupRequest{Table: path, Keys: keys})
	require.NoError(t, err)
	require.Nil(t, resp.Results[0].Err)
	require.NotNil(t, resp.Results[0].Row)
	require.Nil(t, resp.Results[1].Err, "%v", resp.Results[1].Err)
	assert.Nil(t, resp.Results[1].Row, "a key of a dropped partition is not found")
}

// TestLookupDroppedTable checks that a table dropped behind the cache's back
// (the server answers UNKNOWN_TABLE_OR_BUCKET, the refresh finds no table)
// fails the whole call with table_not_found.
func TestLookupDroppedTable(t *testing.T) {
	t.Parallel()
	_, v2 := evoSchemas()
	path := domain.TablePath{Database: "db", Table: "gone"}
	desc := domain.TableDescriptor{Schema: v2, BucketCount: 2}
	mc := metatest.New(1)
	mc.AddTable(&metatest.Table{ID: 5, Path: path, Desc: desc, SchemaID: 1})
	var mu sync.Mutex
	dropped := false
	kv := newFakeKV(func(bucketRef) int32 { return 1 })
	kv.bucketErr = func(int32, bucketRef) wire.ErrorCode {
		mu.Lock()
		defer mu.Unlock()
		if dropped {
			return wire.CodeUnknownTableOrBucketException
		}
		return 0
	}
	f := callFake{mc, kv}
	lk := lookup.New(f, meta.New(f, meta.Options{}), fastOpts())
	keys := [][]domain.Datum{{i64(1), str("a")}, {i64(2), str("b")}}
	_, err := lk.Lookup(ctx(t), &domain.LookupRequest{Table: path, Keys: keys})
	require.NoError(t, err)

	mu.Lock()
	dropped = true
	mu.Unlock()
	mc.DropTable(path)
	_, err = lk.Lookup(ctx(t), &domain.LookupRequest{Table: path, Keys: keys})
	de := domain.AsError(err)
	require.NotNil(t, de, "%v", err)
	assert.Equal(t, "table_not_found", de.Code(), "%v", err)
}
