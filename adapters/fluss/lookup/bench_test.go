package lookup_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/lookup"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// cannedCaller answers each node's Lookup with the response the fake KV gave
// the first time, reusing its buckets (no server work, no allocation), so
// that a benchmark measures the adapter alone: encode, bucket, group, build
// requests, match answers, decode rows.
type cannedCaller struct {
	callFake
	lookups map[int32]*flusspb.LookupResponse
}

func (c *cannedCaller) Call(ctx context.Context, to meta.Dest, key wire.APIKey, req, resp proto.Message) error {
	if key != wire.KeyLookup {
		return c.callFake.Call(ctx, to, key, req, resp)
	}
	r, ok := c.lookups[to.Node]
	if !ok {
		r = c.kv.lookup(to.Node, req.(*flusspb.LookupRequest))
		c.lookups[to.Node] = r
	}
	resp.(*flusspb.LookupResponse).BucketsResp = r.BucketsResp
	return nil
}

func benchRow(i int64) []domain.Datum {
	return row(i64(i), str(fmt.Sprintf("user-%06d", i)), f64(float64(i)/3), str(fmt.Sprintf("note for %d", i)),
		i64(1_700_000_000_000+i), i64(i*7), i64(i%2), i64(i*101))
}

// BenchmarkLookup128 is one Lookup of 128 keys (all found) on a table of 16
// buckets led by 3 nodes: encoding, bucketing, grouping into 3 requests,
// matching the answers and decoding 128 rows of 8 columns.
func BenchmarkLookup128(b *testing.B) {
	desc := lookup.BenchDescriptor()
	path := domain.TablePath{Database: "db", Table: "bench"}
	mc := metatest.New(3)
	lead := make([]int32, 16)
	for i := range lead {
		lead[i] = int32(i%3 + 1)
	}
	mc.AddTable(&metatest.Table{ID: 1, Path: path, Desc: desc, SchemaID: 1, Leaders: lead})
	kv := newFakeKV(func(r bucketRef) int32 { return lead[r.bucket] })
	kt := newKVTable(b, path, 1, 1, desc)
	keys := make([][]domain.Datum, 128)
	for i := range keys {
		r := benchRow(int64(i))
		kv.put(b, kt, 1, desc.Schema, r)
		keys[i] = r[:2]
	}
	call := &cannedCaller{callFake: callFake{mc, kv}, lookups: map[int32]*flusspb.LookupResponse{}}
	lk := lookup.New(call, meta.New(call, meta.Options{}), lookup.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := &domain.LookupRequest{Table: path, TableID: 1, SchemaID: 1, Keys: keys}
	resp, err := lk.Lookup(ctx, req)
	if err != nil {
		b.Fatal(err)
	}
	for i, r := range resp.Results {
		if r.Err != nil || r.Row == nil || r.Row[0].I64 != int64(i) {
			b.Fatalf("key %d: %+v", i, r)
		}
	}
	if n := len(kv.requests(wire.KeyLookup)); n != 3 {
		b.Fatalf("%d requests, want 3", n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := lk.Lookup(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
