package flussfake

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta/metatest"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"google.golang.org/protobuf/proto"
)

// The data plane of the fake cluster: the tablet servers answer InitWriter,
// PutKv, ProduceLog, Lookup and PrefixLookup over one in-memory store, as a
// single-replica 0.9.1 cluster does for well-behaved clients:
//
//   - a bucket is served only by its leader (bucket b of every table and
//     partition is led by tablet server b mod n, as metadata says); others
//     answer NOT_LEADER_OR_FOLLOWER;
//   - an unknown table id, partition id or bucket is
//     UNKNOWN_TABLE_OR_BUCKET_EXCEPTION;
//   - KV batches must decode (length, magic, CRC); a record with a value
//     upserts its key, one without deletes it; a value is stored as the
//     batch's schema id followed by the row, and Lookup returns that; PrefixLookup
//     returns the values whose key starts with the prefix, in key order;
//   - log batches must decode and are counted, not kept (no scan API);
//   - writer ids and batch sequences follow the leader's idempotence rule
//     (metatest.Sequences, shared with the writer's fake): a resend of a
//     recent batch is a success not applied again, a gap is
//     OUT_OF_ORDER_SEQUENCE; metatest.Contract holds both fakes to it.
//
// Partial updates overwrite the whole value.

type bucketKey struct {
	table     int64
	partition int64 // -1: not partitioned
	bucket    int32
}

type dataStore struct {
	kv         map[bucketKey]map[string][]byte
	logRecords map[bucketKey]int
	nextWriter int64
	sequences  metatest.Sequences[bucketKey]
}

func (c *Cluster) registerData() {
	c.data = &dataStore{kv: make(map[bucketKey]map[string][]byte), logRecords: make(map[bucketKey]int)}
	for _, ts := range c.TabletServers {
		node := ts.NodeID()
		ts.Handle(wire.KeyInitWriter, Typed(func(_ context.Context, _ *Request, _ *flusspb.InitWriterRequest) (proto.Message, error) {
			c.Catalog.mu.Lock()
			defer c.Catalog.mu.Unlock()
			c.data.nextWriter++
			return &flusspb.InitWriterResponse{WriterId: proto.Int64(c.data.nextWriter)}, nil
		}))
		ts.Handle(wire.KeyPutKv, Typed(func(_ context.Context, _ *Request, req *flusspb.PutKvRequest) (proto.Message, error) {
			return c.putKv(node, req), nil
		}))
		ts.Handle(wire.KeyProduceLog, Typed(func(_ context.Context, _ *Request, req *flusspb.ProduceLogRequest) (proto.Message, error) {
			return c.produceLog(node, req), nil
		}))
		ts.Handle(wire.KeyLookup, Typed(func(_ context.Context, _ *Request, req *flusspb.LookupRequest) (proto.Message, error) {
			return c.lookup(node, req), nil
		}))
		ts.Handle(wire.KeyPrefixLookup, Typed(func(_ context.Context, _ *Request, req *flusspb.PrefixLookupRequest) (proto.Message, error) {
			return c.prefixLookup(node, req), nil
		}))
	}
}

// LogRecords returns how many log records the fake accepted for a table
// (all partitions and buckets); 0 without ClusterConfig.DataPlane.
func (c *Cluster) LogRecords(tableID int64) int {
	if c.data == nil {
		return 0
	}
	c.Catalog.mu.Lock()
	defer c.Catalog.mu.Unlock()
	n := 0
	for b, count := range c.data.logRecords {
		if b.table == tableID {
			n += count
		}
	}
	return n
}

// checkBucketLocked returns the error code and message for a bucket request
// received by node, 0 when node serves it.
func (c *Cluster) checkBucketLocked(node int32, b bucketKey) (wire.ErrorCode, string) {
	var t *table
	for _, db := range c.Catalog.dbs {
		for _, tb := range db.tables {
			if tb.id == b.table {
				t = tb
			}
		}
	}
	if t == nil {
		return wire.CodeUnknownTableOrBucketException, fmt.Sprintf("Unknown table id %d.", b.table)
	}
	if (b.partition >= 0) != (len(t.partitionKeys) > 0) {
		return wire.CodeUnknownTableOrBucketException, fmt.Sprintf("Unknown table or bucket: %v.", b)
	}
	if b.partition >= 0 {
		found := false
		for _, p := range t.partitions {
			found = found || p.id == b.partition
		}
		if !found {
			return wire.CodeUnknownTableOrBucketException, fmt.Sprintf("Unknown partition id %d.", b.partition)
		}
	}
	if b.bucket < 0 || int(b.bucket) >= t.buckets {
		return wire.CodeUnknownTableOrBucketException, fmt.Sprintf("Unknown bucket %d.", b.bucket)
	}
	if leader := c.TabletServers[int(b.bucket)%len(c.TabletServers)].NodeID(); leader != node {
		return wire.CodeNotLeaderOrFollower, fmt.Sprintf("Server %d is not the leader of %v.", node, b)
	}
	return 0, ""
}

func bucketOf(table int64, part *int64, bucket int32) bucketKey {
	b := bucketKey{table: table, partition: -1, bucket: bucket}
	if part != nil {
		b.partition = *part
	}
	return b
}

func errFields(code wire.ErrorCode, msg string) (*int32, *string) {
	if code == 0 {
		return nil, nil
	}
	return proto.Int32(int32(code)), proto.String(msg)
}

func (c *Cluster) putKv(node int32, req *flusspb.PutKvRequest) *flusspb.PutKvResponse {
	c.Catalog.mu.Lock()
	defer c.Catalog.mu.Unlock()
	resp := &flusspb.PutKvResponse{}
	for _, br := range req.GetBucketsReq() {
		b := bucketOf(req.GetTableId(), br.PartitionId, br.GetBucketId())
		code, msg := c.checkBucketLocked(node, b)
		var recs []record.KvRecord
		var kb record.KvBatch
		if code == 0 {
			var err error
			kb, _, err = record.ReadKvBatch(br.GetRecords())
			if err == nil {
				recs, err = kb.ReadRecords()
			}
			if err != nil {
				code, msg = wire.CodeCorruptRecordException, err.Error()
			}
		}
		appended := false
		if code == 0 {
			if code, appended = c.data.sequences.Check(b, kb.WriterID, kb.BatchSequence); code != 0 {
				msg = fmt.Sprintf("Out of order batch sequence %d of writer %d.", kb.BatchSequence, kb.WriterID)
			}
		}
		if appended {
			m := c.data.kv[b]
			if m == nil {
				m = make(map[string][]byte)
				c.data.kv[b] = m
			}
			for _, r := range recs {
				if r.Value == nil {
					delete(m, string(r.Key))
				} else {
					// The server stores the row behind the batch's schema id
					// (KvTablet#putAsLeader, ValueEncoder); lookups return
					// that stored value.
					m[string(r.Key)] = record.AppendValue(nil, kb.SchemaID, r.Value)
				}
			}
		}
		ec, em := errFields(code, msg)
		resp.BucketsResp = append(resp.BucketsResp, &flusspb.PbPutKvRespForBucket{
			PartitionId: br.PartitionId, BucketId: br.BucketId, ErrorCode: ec, ErrorMessage: em})
	}
	return resp
}

func (c *Cluster) produceLog(node int32, req *flusspb.ProduceLogRequest) *flusspb.ProduceLogResponse {
	c.Catalog.mu.Lock()
	defer c.Catalog.mu.Unlock()
	resp := &flusspb.ProduceLogResponse{}
	for _, br := range req.GetBucketsReq() {
		b := bucketOf(req.GetTableId(), br.PartitionId, br.GetBucketId())
		code, msg := c.checkBucketLocked(node, b)
		var base *int64
		if code == 0 {
			lb, _, err := record.ReadLogBatch(br.GetRecords())
			appended := false
			if err != nil {
				code, msg = wire.CodeCorruptRecordException, err.Error()
			} else if code, appended = c.data.sequences.Check(b, lb.WriterID, lb.BatchSequence); code != 0 {
				msg = fmt.Sprintf("Out of order batch sequence %d of writer %d.", lb.BatchSequence, lb.WriterID)
			}
			if appended {
				// The batch's records take the next offsets of the bucket's
				// log; the answer names the first (base_offset).
				base = proto.Int64(int64(c.data.logRecords[b]))
				c.data.logRecords[b] += int(lb.RecordCount)
			}
		}
		ec, em := errFields(code, msg)
		resp.BucketsResp = append(resp.BucketsResp, &flusspb.PbProduceLogRespForBucket{
			PartitionId: br.PartitionId, BucketId: br.BucketId, ErrorCode: ec, ErrorMessage: em, BaseOffset: base})
	}
	return resp
}

func (c *Cluster) lookup(node int32, req *flusspb.LookupRequest) *flusspb.LookupResponse {
	c.Catalog.mu.Lock()
	defer c.Catalog.mu.Unlock()
	resp := &flusspb.LookupResponse{}
	for _, br := range req.GetBucketsReq() {
		b := bucketOf(req.GetTableId(), br.PartitionId, br.GetBucketId())
		r := &flusspb.PbLookupRespForBucket{PartitionId: br.PartitionId, BucketId: br.BucketId}
		if code, msg := c.checkBucketLocked(node, b); code != 0 {
			r.ErrorCode, r.ErrorMessage = errFields(code, msg)
		} else {
			for _, k := range br.GetKeys() {
				r.Values = append(r.Values, &flusspb.PbValue{Values: c.data.kv[b][string(k)]})
			}
		}
		resp.BucketsResp = append(resp.BucketsResp, r)
	}
	return resp
}

func (c *Cluster) prefixLookup(node int32, req *flusspb.PrefixLookupRequest) *flusspb.PrefixLookupResponse {
	c.Catalog.mu.Lock()
	defer c.Catalog.mu.Unlock()
	resp := &flusspb.PrefixLookupResponse{}
	for _, br := range req.GetBucketsReq() {
		b := bucketOf(req.GetTableId(), br.PartitionId, br.GetBucketId())
		r := &flusspb.PbPrefixLookupRespForBucket{PartitionId: br.PartitionId, BucketId: br.BucketId}
		if code, msg := c.checkBucketLocked(node, b); code != 0 {
			r.ErrorCode, r.ErrorMessage = errFields(code, msg)
		} else {
			keys := make([]string, 0, len(c.data.kv[b]))
			for k := range c.data.kv[b] {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, p := range br.GetKeys() {
				list := &flusspb.PbValueList{}
				for _, k := range keys {
					if bytes.HasPrefix([]byte(k), p) {
						list.Values = append(list.Values, c.data.kv[b][k])
					}
				}
				r.ValueLists = append(r.ValueLists, list)
			}
		}
		resp.BucketsResp = append(resp.BucketsResp, r)
	}
	return resp
}
