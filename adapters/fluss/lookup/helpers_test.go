package lookup_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/admin"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/lookup"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// ---------------------------------------------------------------------------
// A fake KV store that answers Lookup and PrefixLookup like a tablet server:
// values by encoded key per physical bucket, NOT_LEADER_OR_FOLLOWER when the
// receiving node does not lead the bucket, prefix scans in key-byte order.
// Rows are put with encoders over FULL table rows (as the writer builds
// them), so a lookup only finds them when the adapter's key-only encoding,
// bucketing and partitioning agree byte for byte.
// ---------------------------------------------------------------------------

type bucketRef struct {
	table  int64
	part   int64
	bucket int32
}

type fakeReq struct {
	node    int32
	api     wire.APIKey
	buckets []bucketRef
	keys    int
}

type fakeKV struct {
	mu     sync.Mutex
	leader func(b bucketRef) int32
	data   map[bucketRef]map[string][]byte
	reqs   []fakeReq
	// bucketErr, when it returns a code, answers it for the bucket.
	bucketErr func(node int32, b bucketRef) wire.ErrorCode
}

func newFakeKV(leader func(bucketRef) int32) *fakeKV {
	return &fakeKV{leader: leader, data: make(map[bucketRef]map[string][]byte)}
}

func (kv *fakeKV) requests(api wire.APIKey) []fakeReq {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	var out []fakeReq
	for _, r := range kv.reqs {
		if r.api == api {
			out = append(out, r)
		}
	}
	return out
}

func (kv *fakeKV) resetRequests() {
	kv.mu.Lock()
	kv.reqs = nil
	kv.mu.Unlock()
}

func partOf(p *int64) int64 {
	if p == nil {
		return meta.NoPartition
	}
	return *p
}

// check returns the error to answer for a bucket (0 = serve it).
func (kv *fakeKV) check(node int32, b bucketRef) (wire.ErrorCode, string) {
	if kv.bucketErr != nil {
		if code := kv.bucketErr(node, b); code != 0 {
			return code, "injected"
		}
	}
	if kv.leader(b) != node {
		return wire.CodeNotLeaderOrFollower, fmt.Sprintf("node %d is not the leader of %v", node, b)
	}
	return 0, ""
}

func (kv *fakeKV) lookup(node int32, req *flusspb.LookupRequest) *flusspb.LookupResponse {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	fr := fakeReq{node: node, api: wire.KeyLookup}
	resp := &flusspb.LookupResponse{}
	for _, br := range req.GetBucketsReq() {
		b := bucketRef{req.GetTableId(), partOf(br.PartitionId), br.GetBucketId()}
		fr.buckets, fr.keys = append(fr.buckets, b), fr.keys+len(br.GetKeys())
		r := &flusspb.PbLookupRespForBucket{PartitionId: br.PartitionId, BucketId: br.BucketId}
		if code, msg := kv.check(node, b); code != 0 {
			r.ErrorCode, r.ErrorMessage = proto.Int32(int32(code)), proto.String(msg)
		} else {
			for _, k := range br.GetKeys() {
				r.Values = append(r.Values, &flusspb.PbValue{Values: kv.data[b][string(k)]})
			}
		}
		resp.BucketsResp = append(resp.BucketsResp, r)
	}
	// Answer buckets in reverse order: the adapter must match by bucket.
	slices.Reverse(resp.BucketsResp)
	kv.reqs = append(kv.reqs, fr)
	return resp
}

func (kv *fakeKV) prefixLookup(node int32, req *flusspb.PrefixLookupRequest) *flusspb.PrefixLookupResponse {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	fr := fakeReq{node: node, api: wire.KeyPrefixLookup}
	resp := &flusspb.PrefixLookupResponse{}
	for _, br := range req.GetBucketsReq() {
		b := bucketRef{req.GetTableId(), partOf(br.PartitionId), br.GetBucketId()}
		fr.buckets, fr.keys = append(fr.buckets, b), fr.keys+len(br.GetKeys())
		r := &flusspb.PbPrefixLookupRespForBucket{PartitionId: br.PartitionId, BucketId: br.BucketId}
		if code, msg := kv.check(node, b); code != 0 {
			r.ErrorCode, r.ErrorMessage = proto.Int32(int32(code)), proto.String(msg)
		} else {
			keys := make([]string, 0, len(kv.data[b]))
			for k := range kv.data[b] {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, p := range br.GetKeys() {
				list := &flusspb.PbValueList{}
				for _, k := range keys {
					if bytes.HasPrefix([]byte(k), p) {
						list.Values = append(list.Values, kv.data[b][k])
					}
				}
				r.ValueLists = append(r.ValueLists, list)
			}
		}
		resp.BucketsResp = append(resp.BucketsResp, r)
	}
	kv.reqs = append(kv.reqs, fr)
	return resp
}

// kvTable knows how to store full rows of one table in the fake.
type kvTable struct {
	path      domain.TablePath
	id        int64
	schemaID  int32
	schema    domain.Schema
	desc      domain.TableDescriptor
	buckets   int
	pkEnc     record.KeyEncoder
	bucketEnc record.KeyEncoder
	partPos   []int
	parts     map[string]int64
}

func fullPositions(t testing.TB, s domain.Schema, names []string) []int {
	out := make([]int, len(names))
	for i, n := range names {
		out[i] = slices.IndexFunc(s.Columns, func(c domain.Column) bool { return c.Name == n })
		require.GreaterOrEqual(t, out[i], 0, n)
	}
	return out
}

func schemaTypes(s domain.Schema) []domain.DataType {
	out := domain.ColumnTypes(s.Columns)
	return out
}

func newKVTable(t testing.TB, path domain.TablePath, id int64, schemaID int32, desc domain.TableDescriptor) *kvTable {
	t.Helper()
	s := desc.Schema
	types := schemaTypes(s)
	phys := domain.DefaultBucketKeys(s.PrimaryKey, desc.PartitionKeys)
	bk := desc.BucketKeys
	if len(bk) == 0 {
		bk = phys
	}
	kt := &kvTable{path: path, id: id, schemaID: schemaID, schema: s, desc: desc, buckets: desc.BucketCount,
		partPos: fullPositions(t, s, desc.PartitionKeys), parts: make(map[string]int64)}
	var err error
	kt.pkEnc, err = record.NewCompactedKeyEncoder(types, fullPositions(t, s, phys))
	require.NoError(t, err)
	kt.bucketEnc, err = record.NewCompactedKeyEncoder(types, fullPositions(t, s, bk))
	require.NoError(t, err)
	return kt
}

// put stores row (full width, schema rowSchema with id schemaID).
func (kv *fakeKV) put(t testing.TB, kt *kvTable, schemaID int32, rowSchema domain.Schema, row []domain.Datum) {
	t.Helper()
	key, err := kt.pkEnc.AppendKey(nil, row)
	require.NoError(t, err)
	bkey, err := kt.bucketEnc.AppendKey(nil, row)
	require.NoError(t, err)
	b, err := record.FlussBucketing{}.Bucket(bkey, kt.buckets)
	require.NoError(t, err)
	ref := bucketRef{kt.id, meta.NoPartition, int32(b)}
	if len(kt.partPos) > 0 {
		var types []domain.DataType
		var vals []domain.Datum
		for _, p := range kt.partPos {
			types, vals = append(types, kt.schema.Columns[p].Type), append(vals, row[p])
		}
		name, err := record.PartitionName(types, vals)
		require.NoError(t, err)
		id, ok := kt.parts[name]
		require.True(t, ok, "partition %s does not exist", name)
		ref.part = id
	}
	enc, err := record.NewCompactedRowEncoder(schemaTypes(rowSchema))
	require.NoError(t, err)
	rowBytes, err := enc.AppendRow(nil, row)
	require.NoError(t, err)
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if kv.data[ref] == nil {
		kv.data[ref] = make(map[string][]byte)
	}
	kv.data[ref][string(key)] = record.AppendValue(nil, int16(schemaID), rowBytes)
}

// ---------------------------------------------------------------------------
// flussfake environment: real TCP, real rpc.Client and meta.Cache.
// ---------------------------------------------------------------------------

type env struct {
	fc     *flussfake.Cluster
	client *rpc.Client
	cache  *meta.Cache
	lk     *lookup.Lookuper
	cat    *admin.Catalog
	kv     *fakeKV
	nodes  int
}

func newEnv(t *testing.T, servers int, opts lookup.Options) *env {
	t.Helper()
	fc, err := flussfake.NewCluster(flussfake.ClusterConfig{TabletServers: servers})
	require.NoError(t, err)
	t.Cleanup(fc.Close)
	c, err := rpc.NewClient(rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()}, RequestTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	e := &env{fc: fc, client: c, cat: admin.New(c), nodes: servers}
	// flussfake's metadata makes tablet server b mod n the leader of bucket b.
	e.kv = newFakeKV(func(b bucketRef) int32 { return b.bucket % int32(servers) })
	for _, s := range fc.TabletServers {
		node := s.NodeID()
		s.Handle(wire.KeyLookup, flussfake.Typed(func(_ context.Context, _ *flussfake.Request, req *flusspb.LookupRequest) (proto.Message, error) {
			return e.kv.lookup(node, req), nil
		}))
		s.Handle(wire.KeyPrefixLookup, flussfake.Typed(func(_ context.Context, _ *flussfake.Request, req *flusspb.PrefixLookupRequest) (proto.Message, error) {
			return e.kv.prefixLookup(node, req), nil
		}))
	}
	call := meta.RPCCaller{Client: c}
	e.cache = meta.New(call, meta.Options{})
	e.lk = lookup.New(call, e.cache, opts)
	require.NoError(t, e.cat.CreateDatabase(ctx(t), "db", domain.DatabaseDescriptor{}, true))
	return e
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// createTable creates a table (and partitions) in the fake cluster.
func (e *env) createTable(t *testing.T, name string, desc domain.TableDescriptor, partitions ...string) *kvTable {
	t.Helper()
	path := domain.TablePath{Database: "db", Table: name}
	require.NoError(t, e.cat.CreateTable(ctx(t), path, desc, false))
	for _, p := range partitions {
		spec, err := domain.ParsePartitionName(desc.PartitionKeys, p)
		require.NoError(t, err)
		require.NoError(t, e.cat.CreatePartition(ctx(t), path, spec, false))
	}
	tb, err := e.cache.Table(ctx(t), path)
	require.NoError(t, err)
	kt := newKVTable(t, path, tb.ID(), tb.Info.SchemaID, tb.Info.Descriptor)
	if len(partitions) > 0 {
		infos, err := e.cat.ListPartitions(ctx(t), path)
		require.NoError(t, err)
		for _, pi := range infos {
			kt.parts[pi.Name] = pi.ID
		}
	}
	return kt
}

func (e *env) metadataRequests() int {
	n := 0
	for _, s := range e.fc.Servers() {
		n += s.Requests(wire.KeyGetMetadata)
	}
	return n
}

// ---------------------------------------------------------------------------
// Values and schemas.
// ---------------------------------------------------------------------------

func col(name string, root domain.TypeRoot, nullable bool) domain.Column {
	return domain.Column{Name: name, Type: domain.DataType{Root: root, Nullable: nullable}, ID: domain.UnassignedFieldID}
}

func i64(v int64) domain.Datum             { return domain.Datum{I64: v} }
func str(s string) domain.Datum            { return domain.Datum{Bytes: []byte(s)} }
func null() domain.Datum                   { return domain.Datum{Null: true} }
func f64(v float64) domain.Datum           { return domain.Datum{F64: v} }
func row(d ...domain.Datum) []domain.Datum { return d }

// bucketOf returns the bucket of a full row.
func (kt *kvTable) bucketOf(t testing.TB, row []domain.Datum) int32 {
	t.Helper()
	bkey, err := kt.bucketEnc.AppendKey(nil, row)
	require.NoError(t, err)
	b, err := record.FlussBucketing{}.Bucket(bkey, kt.buckets)
	require.NoError(t, err)
	return int32(b)
}
