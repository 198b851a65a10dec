// Package metatest provides an in-memory fake of the Fluss calls the
// metadata cache and the writer make (GetMetadata, GetTableSchema,
// CreatePartition, InitWriter, PutKv, ProduceLog), implementing meta.Caller,
// with hooks to inject per-bucket errors, delays and lost responses. It keeps
// the 0.9.1 server's idempotence rules per bucket: a batch is appended when
// its sequence follows the writer's last one (the first must be 0), a resend
// of one of the last 5 batches is answered as a success, anything else is
// OUT_OF_ORDER_SEQUENCE. For tests only.
package metatest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/serde"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Error is a classified error as package rpc returns them.
type Error struct {
	Code    wire.ErrorCode
	Outcome string // "answered", "notsent", "ambiguous"
	Retry   bool
	Message string
	Wrapped error
}

func (e *Error) Error() string {
	return fmt.Sprintf("fake %s: %s (code %d)", e.Outcome, e.Message, e.Code)
}
func (e *Error) Unwrap() error         { return e.Wrapped }
func (e *Error) NotSent() bool         { return e.Outcome == "notsent" }
func (e *Error) Ambiguous() bool       { return e.Outcome == "ambiguous" }
func (e *Error) Retriable() bool       { return e.Retry }
func (e *Error) FlussErrorCode() int32 { return int32(e.Code) }

// Answer returns an answered error with code.
func Answer(code wire.ErrorCode, msg string) *Error {
	return &Error{Code: code, Outcome: "answered", Retry: code.Retriable(), Message: msg}
}

// Table is a table of the fake cluster.
type Table struct {
	ID       int64
	Path     domain.TablePath
	Desc     domain.TableDescriptor
	SchemaID int32
	// Schemas holds older schemas by id (GetTableSchema).
	Schemas map[int32]domain.Schema
	// Leaders per bucket (NoLeader = none) of a non-partitioned table, and
	// of every partition of a partitioned one.
	Leaders    []int32
	Partitions map[string]int64
}

// Batch is one bucket's batch as the fake received it.
type Batch struct {
	Node       int32
	Lane       int // the connection lane of the request (meta.Dest.Lane)
	API        wire.APIKey
	TableID    int64
	Partition  int64
	Bucket     int32
	WriterID   int64
	Seq        int32
	TargetCols []int32
	KV         []record.KvRecord
	Log        record.LogBatch
	Bytes      []byte
	// Outcome is what the fake answered: 0 success, else the error code.
	Outcome wire.ErrorCode
	// Appended is true when the batch was applied (not a duplicate, no error).
	Appended bool
}

// BucketRef names a physical bucket.
type BucketRef struct {
	Table     int64
	Partition int64
	Bucket    int32
}

// Cluster is the fake. Configure it before use; its hooks run without the
// fake's lock held.
type Cluster struct {
	// Nodes are the tablet server ids; Coordinator is the coordinator id.
	Nodes       []int32
	Coordinator int32

	// BeforeWrite runs before a PutKv/ProduceLog is processed; a non-nil
	// error is returned as the request's error (nothing is applied).
	BeforeWrite func(ctx context.Context, node int32, api wire.APIKey, tableID int64) error
	// BucketError, when it returns a non-zero code for a bucket, makes the
	// fake answer that code for it without applying the batch.
	BucketError func(node int32, b BucketRef, seq int32) wire.ErrorCode
	// BucketPressure, when set, gives the Fluss 1.0 `pressure` of a
	// PutKv bucket answer (0: field absent).
	BucketPressure func(node int32, b BucketRef) float32
	// AfterWrite runs after the batches were applied, before the answer is
	// returned; a non-nil error replaces the answer (a lost response).
	AfterWrite func(ctx context.Context, node int32) error

	mu         sync.Mutex
	tables     map[domain.TablePath]*Table
	nextWriter int64
	calls      map[wire.APIKey]int
	batches    []Batch
	sequences  Sequences[BucketRef]
	inflight   map[BucketRef]int
	maxInfl    map[BucketRef]int
	nextPartID int64
	// logEnd is each bucket's log end offset: a log batch takes the next
	// RecordCount offsets, a KV batch one changelog record per KV record
	// (the real server writes one or two per upsert, none for a delete of
	// a missing key).
	logEnd map[BucketRef]int64
}

// New returns a fake with tablet servers 1..n and coordinator 0.
func New(n int) *Cluster {
	c := &Cluster{
		tables: make(map[domain.TablePath]*Table), calls: make(map[wire.APIKey]int),
		inflight: make(map[BucketRef]int),
		maxInfl:  make(map[BucketRef]int), nextWriter: 1000, nextPartID: 500,
	}
	for i := 1; i <= n; i++ {
		c.Nodes = append(c.Nodes, int32(i))
	}
	return c
}

// AddTable registers a table; leaders default to node 1 for every bucket.
func (c *Cluster) AddTable(t *Table) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.SchemaID == 0 {
		t.SchemaID = 1
	}
	if t.Leaders == nil {
		t.Leaders = make([]int32, t.Desc.BucketCount)
		for i := range t.Leaders {
			t.Leaders[i] = c.Nodes[0]
		}
	}
	if t.Partitions == nil {
		t.Partitions = make(map[string]int64)
	}
	c.tables[t.Path] = t
}

// SetLeaders replaces the leaders of a table's buckets.
func (c *Cluster) SetLeaders(path domain.TablePath, leaders ...int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tables[path].Leaders = leaders
}

// DropTable removes a table.
func (c *Cluster) DropTable(path domain.TablePath) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tables, path)
}

// Calls returns how often api was called.
func (c *Cluster) Calls(api wire.APIKey) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[api]
}

// Batches returns the batches received so far.
func (c *Cluster) Batches() []Batch {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Batch(nil), c.batches...)
}

// MaxInFlight returns the most batches of one bucket that were inside the
// fake at the same time.
func (c *Cluster) MaxInFlight(b BucketRef) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxInfl[b]
}

// Call implements meta.Caller.
func (c *Cluster) Call(ctx context.Context, to meta.Dest, key wire.APIKey, req, resp proto.Message) error {
	c.mu.Lock()
	c.calls[key]++
	c.mu.Unlock()
	if f := meta.WrittenFunc(ctx); f != nil {
		f() // the request is "on the wire" at once
	}
	if err := ctx.Err(); err != nil {
		return &Error{Outcome: "notsent", Message: "context done", Wrapped: err}
	}
	switch key {
	case wire.KeyGetMetadata:
		return c.metadata(req.(*flusspb.MetadataRequest), resp.(*flusspb.MetadataResponse))
	case wire.KeyGetTableSchema:
		return c.schema(req.(*flusspb.GetTableSchemaRequest), resp.(*flusspb.GetTableSchemaResponse))
	case wire.KeyCreatePartition:
		if to.Kind != meta.ToCoordinator {
			return &Error{Outcome: "ambiguous", Message: "CreatePartition sent to a tablet server: dropped", Retry: true}
		}
		return c.createPartition(req.(*flusspb.CreatePartitionRequest))
	case wire.KeyInitWriter:
		c.mu.Lock()
		c.nextWriter++
		id := c.nextWriter
		c.mu.Unlock()
		resp.(*flusspb.InitWriterResponse).WriterId = proto.Int64(id)
		return nil
	case wire.KeyPutKv, wire.KeyProduceLog:
		return c.write(ctx, to, key, req, resp)
	}
	return &Error{Outcome: "ambiguous", Message: "unexpected API " + key.String()}
}

func pbPath(p domain.TablePath) *flusspb.PbTablePath {
	return &flusspb.PbTablePath{DatabaseName: proto.String(p.Database), TableName: proto.String(p.Table)}
}

func buckets(leaders []int32) []*flusspb.PbBucketMetadata {
	var out []*flusspb.PbBucketMetadata
	for i, l := range leaders {
		bm := &flusspb.PbBucketMetadata{BucketId: proto.Int32(int32(i))}
		if l != meta.NoLeader {
			bm.LeaderId = proto.Int32(l)
		}
		out = append(out, bm)
	}
	return out
}

func (c *Cluster) metadata(req *flusspb.MetadataRequest, resp *flusspb.MetadataResponse) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	resp.CoordinatorServer = &flusspb.PbServerNode{NodeId: proto.Int32(c.Coordinator), Host: proto.String("127.0.0.1"), Port: proto.Int32(9000)}
	for _, n := range c.Nodes {
		resp.TabletServers = append(resp.TabletServers, &flusspb.PbServerNode{NodeId: proto.Int32(n), Host: proto.String("127.0.0.1"), Port: proto.Int32(9000 + n)})
	}
	for _, tp := range req.GetTablePath() {
		path := domain.TablePath{Database: tp.GetDatabaseName(), Table: tp.GetTableName()}
		t, ok := c.tables[path]
		if !ok {
			return Answer(wire.CodeTableNotExist, "table "+path.String()+" does not exist")
		}
		js, err := serde.MarshalTableDescriptorJSON(t.Desc)
		if err != nil {
			return err
		}
		tm := &flusspb.PbTableMetadata{
			TablePath: pbPath(path), TableId: proto.Int64(t.ID), SchemaId: proto.Int32(t.SchemaID),
			TableJson: js, CreatedTime: proto.Int64(1), ModifiedTime: proto.Int64(1),
		}
		if len(t.Desc.PartitionKeys) == 0 {
			tm.BucketMetadata = buckets(t.Leaders)
		}
		resp.TableMetadata = append(resp.TableMetadata, tm)
		for _, id := range req.GetPartitionsId() {
			found := false
			for name, pid := range t.Partitions {
				if pid == id {
					found = true
					resp.PartitionMetadata = append(resp.PartitionMetadata, &flusspb.PbPartitionMetadata{
						TableId: proto.Int64(t.ID), PartitionName: proto.String(name), PartitionId: proto.Int64(pid),
						BucketMetadata: buckets(t.Leaders),
					})
				}
			}
			if !found {
				return Answer(wire.CodePartitionNotExists, fmt.Sprintf("partition id %d does not exist", id))
			}
		}
	}
	for _, pp := range req.GetPartitionsPath() {
		path := domain.TablePath{Database: pp.GetDatabaseName(), Table: pp.GetTableName()}
		t, ok := c.tables[path]
		if !ok {
			return Answer(wire.CodeTableNotExist, "table does not exist")
		}
		pid, ok := t.Partitions[pp.GetPartitionName()]
		if !ok {
			return Answer(wire.CodePartitionNotExists, "partition "+pp.GetPartitionName()+" does not exist")
		}
		resp.PartitionMetadata = append(resp.PartitionMetadata, &flusspb.PbPartitionMetadata{
			TableId: proto.Int64(t.ID), PartitionName: proto.String(pp.GetPartitionName()), PartitionId: proto.Int64(pid),
			BucketMetadata: buckets(t.Leaders),
		})
	}
	return nil
}

func (c *Cluster) schema(req *flusspb.GetTableSchemaRequest, resp *flusspb.GetTableSchemaResponse) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	path := domain.TablePath{Database: req.GetTablePath().GetDatabaseName(), Table: req.GetTablePath().GetTableName()}
	t, ok := c.tables[path]
	if !ok {
		return Answer(wire.CodeTableNotExist, "table does not exist")
	}
	s, ok := t.Schemas[req.GetSchemaId()]
	if req.GetSchemaId() == t.SchemaID {
		s, ok = t.Desc.Schema, true
	}
	if !ok {
		return Answer(wire.CodeSchemaNotExist, "schema does not exist")
	}
	js, err := serde.MarshalSchemaJSON(s)
	if err != nil {
		return err
	}
	resp.SchemaId, resp.SchemaJson = proto.Int32(req.GetSchemaId()), js
	return nil
}

// AddPartition creates a partition directly.
func (c *Cluster) AddPartition(path domain.TablePath, name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextPartID++
	c.tables[path].Partitions[name] = c.nextPartID
	return c.nextPartID
}

func (c *Cluster) createPartition(req *flusspb.CreatePartitionRequest) error {
	path := domain.TablePath{Database: req.GetTablePath().GetDatabaseName(), Table: req.GetTablePath().GetTableName()}
	c.mu.Lock()
	t, ok := c.tables[path]
	c.mu.Unlock()
	if !ok {
		return Answer(wire.CodeTableNotExist, "table does not exist")
	}
	var spec domain.PartitionSpec
	for _, kv := range req.GetPartitionSpec().GetPartitionKeyValues() {
		spec = append(spec, domain.PartitionValue{Key: kv.GetKey(), Value: kv.GetValue()})
	}
	spec, err := domain.ValidatePartitionSpec(t.Desc.PartitionKeys, spec, true)
	if err != nil {
		return Answer(wire.CodePartitionSpecInvalidException, err.Error())
	}
	name := domain.PartitionName(spec)
	c.mu.Lock()
	_, exists := t.Partitions[name]
	c.mu.Unlock()
	if exists {
		if req.GetIgnoreIfNotExists() {
			return nil
		}
		return Answer(wire.CodePartitionAlreadyExists, "exists")
	}
	c.AddPartition(path, name)
	return nil
}

func (c *Cluster) write(ctx context.Context, to meta.Dest, key wire.APIKey, req, resp proto.Message) error {
	type bucketReq struct {
		part    *int64
		bucket  int32
		records []byte
	}
	var tableID int64
	var cols []int32
	var reqs []bucketReq
	if key == wire.KeyPutKv {
		r := req.(*flusspb.PutKvRequest)
		tableID, cols = r.GetTableId(), r.GetTargetColumns()
		for _, b := range r.GetBucketsReq() {
			reqs = append(reqs, bucketReq{b.PartitionId, b.GetBucketId(), b.GetRecords()})
		}
	} else {
		r := req.(*flusspb.ProduceLogRequest)
		tableID = r.GetTableId()
		for _, b := range r.GetBucketsReq() {
			reqs = append(reqs, bucketReq{b.PartitionId, b.GetBucketId(), b.GetRecords()})
		}
	}
	refs := make([]BucketRef, len(reqs))
	c.mu.Lock()
	for i, br := range reqs {
		refs[i] = BucketRef{tableID, meta.NoPartition, br.bucket}
		if br.part != nil {
			refs[i].Partition = *br.part
		}
		c.inflight[refs[i]]++
		c.maxInfl[refs[i]] = max(c.maxInfl[refs[i]], c.inflight[refs[i]])
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		for _, r := range refs {
			c.inflight[r]--
		}
		c.mu.Unlock()
	}()
	if c.BeforeWrite != nil {
		if err := c.BeforeWrite(ctx, to.Node, key, tableID); err != nil {
			return err
		}
	}
	type answer struct {
		code   wire.ErrorCode
		msg    string
		offset *int64 // base_offset (ProduceLog) or log_end_offset (PutKv)
	}
	answers := make([]answer, len(reqs))
	for i, br := range reqs {
		b := Batch{Node: to.Node, Lane: to.Lane, API: key, TableID: tableID, Partition: refs[i].Partition, Bucket: br.bucket,
			TargetCols: cols, Bytes: append([]byte(nil), br.records...)}
		var err error
		if key == wire.KeyPutKv {
			var kb record.KvBatch
			if kb, _, err = record.ReadKvBatch(b.Bytes); err == nil {
				b.WriterID, b.Seq = kb.WriterID, kb.BatchSequence
				b.KV, err = kb.ReadRecords()
			}
		} else {
			if b.Log, _, err = record.ReadLogBatch(b.Bytes); err == nil {
				b.WriterID, b.Seq = b.Log.WriterID, b.Log.BatchSequence
			}
		}
		if err != nil {
			answers[i] = answer{code: wire.CodeCorruptRecordException, msg: err.Error()}
		} else if c.BucketError != nil {
			if code := c.BucketError(to.Node, refs[i], b.Seq); code != 0 {
				answers[i] = answer{code: code, msg: "injected"}
			}
		}
		c.mu.Lock()
		if answers[i].code == 0 {
			if t := c.tableByID(tableID); t == nil {
				answers[i] = answer{code: wire.CodeUnknownTableOrBucketException, msg: "unknown table"}
			} else if l := t.Leaders; int(br.bucket) >= len(l) || l[br.bucket] != to.Node {
				answers[i] = answer{code: wire.CodeNotLeaderOrFollower, msg: "not the leader"}
			}
		}
		if answers[i].code == 0 {
			answers[i].code, b.Appended = c.sequences.Check(refs[i], b.WriterID, b.Seq)
		}
		if b.Appended {
			if c.logEnd == nil {
				c.logEnd = make(map[BucketRef]int64)
			}
			if key == wire.KeyPutKv {
				c.logEnd[refs[i]] += int64(len(b.KV))
				answers[i].offset = proto.Int64(c.logEnd[refs[i]])
			} else {
				answers[i].offset = proto.Int64(c.logEnd[refs[i]])
				c.logEnd[refs[i]] += int64(b.Log.RecordCount)
			}
		}
		b.Outcome = answers[i].code
		c.batches = append(c.batches, b)
		c.mu.Unlock()
	}
	if c.AfterWrite != nil {
		if err := c.AfterWrite(ctx, to.Node); err != nil {
			return err
		}
	}
	for i, br := range reqs {
		a := answers[i]
		var code *int32
		var msg *string
		if a.code != 0 {
			code, msg = proto.Int32(int32(a.code)), proto.String(a.msg)
		}
		if key == wire.KeyPutKv {
			r := resp.(*flusspb.PutKvResponse)
			var pressure *float32
			if c.BucketPressure != nil {
				if p := c.BucketPressure(to.Node, refs[i]); p > 0 {
					pressure = proto.Float32(p)
				}
			}
			r.BucketsResp = append(r.BucketsResp, &flusspb.PbPutKvRespForBucket{
				PartitionId: br.part, BucketId: proto.Int32(br.bucket), ErrorCode: code, ErrorMessage: msg, Pressure: pressure,
				LogEndOffset: a.offset})
		} else {
			r := resp.(*flusspb.ProduceLogResponse)
			r.BucketsResp = append(r.BucketsResp, &flusspb.PbProduceLogRespForBucket{
				PartitionId: br.part, BucketId: proto.Int32(br.bucket), ErrorCode: code, ErrorMessage: msg, BaseOffset: a.offset})
		}
	}
	return nil
}

func (c *Cluster) tableByID(id int64) *Table {
	for _, t := range c.tables {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// ErrLost is what AfterWrite hooks return for a lost response.
var ErrLost = errors.New("response lost")
