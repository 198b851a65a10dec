package metatest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Contract is the behaviour of a Fluss cluster that the metadata cache and
// the writer rely on, as one suite that every model of the server runs: this
// package's Cluster (the writer's retry tests), flussfake's data plane (the
// protocol-level fake) and, under the integration build tag, a real 0.9.1 or
// 1.0 cluster (tests/integration), so that the fakes cannot drift from the
// server unnoticed.
//
// What it holds them to (the sequences: apache/fluss@ff3bcd5
// fluss-server/src/main/java/org/apache/fluss/server/log/WriterAppendInfo.java;
// resends and the rest: docs/fluss-writer.md, docs/fluss-rpc.md; verified on
// 0.9.1-incubating and 1.0-SNAPSHOT by TestFakesContractOnRealCluster):
//   - GetMetadata of a table names its id (0 or more: a fresh cluster's first
//     table is 0), schema id and a leader per bucket
//     among the tablet servers it lists; of a missing table it fails with
//     TABLE_NOT_EXIST;
//   - InitWriter hands out distinct writer ids, 0 or more (a fresh cluster's
//     first is 0, a valid id: record.NoWriterID is -1);
//   - per (writer id, bucket), PutKv and ProduceLog append a batch whose
//     sequence follows the last appended one (the first is 0), answer a resend
//     of the last appended batch as a success without appending it again, and
//     answer any other sequence OUT_OF_ORDER_SEQUENCE;
//   - a write to an unknown table id fails with UNKNOWN_TABLE_OR_BUCKET, one
//     to a tablet server that does not lead the bucket with
//     NOT_LEADER_OR_FOLLOWER (checked when there are two tablet servers or
//     more).
type Contract struct {
	// Caller reaches the cluster.
	Caller meta.Caller
	// CreateTable creates the table ContractDescriptor(pk) describes (one
	// bucket, the columns `id INT NOT NULL, v STRING`, a primary key on id
	// when pk) and returns its path.
	CreateTable func(t *testing.T, name string, pk bool) domain.TablePath
}

// ContractSchema is the schema of the suite's tables.
func ContractSchema(pk bool) domain.Schema {
	s := domain.Schema{Columns: []domain.Column{
		{Name: "id", Type: domain.DataType{Root: domain.TypeInteger}, ID: 0},
		{Name: "v", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: 1},
	}, HighestFieldID: 1}
	if pk {
		s.PrimaryKey = []string{"id"}
	}
	return s
}

// ContractDescriptor is the descriptor of the suite's tables: ContractSchema,
// one bucket and, for a log table, the row (INDEXED) log format.
func ContractDescriptor(pk bool) domain.TableDescriptor {
	d := domain.TableDescriptor{Schema: ContractSchema(pk), BucketCount: 1,
		Properties: map[string]string{}, CustomProperties: map[string]string{}}
	if !pk {
		d.Properties["table.log.format"] = "INDEXED"
	}
	return d
}

// contractTable is what the suite learns from GetMetadata.
type contractTable struct {
	id       int64
	schemaID int32
	leader   int32
	servers  []int32
}

// Run runs the suite.
func (c Contract) Run(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kv := c.CreateTable(t, "contract_kv", true)
	log := c.CreateTable(t, "contract_log", false)

	t.Run("metadata", func(t *testing.T) {
		for _, path := range []domain.TablePath{kv, log} {
			tb := c.metadata(ctx, t, path)
			assert.GreaterOrEqual(t, tb.id, int64(0), "%s: table ids start at 0 on a fresh cluster", path)
			assert.Contains(t, tb.servers, tb.leader, "%s: the leader is a listed tablet server", path)
		}
		var resp flusspb.MetadataResponse
		err := c.Caller.Call(ctx, meta.Any(), wire.KeyGetMetadata, &flusspb.MetadataRequest{
			TablePath: []*flusspb.PbTablePath{contractPath(domain.TablePath{Database: kv.Database, Table: "contract_missing"})}}, &resp)
		assert.Equal(t, wire.CodeTableNotExist, meta.ErrorCode(err), "a missing table: %v", err)
	})

	t.Run("writer ids", func(t *testing.T) {
		a, b := c.initWriter(ctx, t, kv), c.initWriter(ctx, t, kv)
		assert.GreaterOrEqual(t, a, int64(0), "writer ids start at 0 on a fresh cluster")
		assert.GreaterOrEqual(t, b, int64(0))
		assert.NotEqual(t, a, b)
	})

	for _, tc := range []struct {
		name string
		path domain.TablePath
		api  wire.APIKey
	}{
		{"PutKv sequences", kv, wire.KeyPutKv},
		{"ProduceLog sequences", log, wire.KeyProduceLog},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := c.metadata(ctx, t, tc.path)
			w := c.initWriter(ctx, t, tc.path)
			send := func(seq int32, row int32) wire.ErrorCode {
				return c.write(ctx, t, tc.api, tb, tb.id, tb.leader, w, seq, row)
			}
			assert.Equal(t, wire.CodeNone, send(0, 1), "the first batch of a writer is sequence 0")
			assert.Equal(t, wire.CodeNone, send(0, 1), "a resend of the last batch is a success")
			assert.Equal(t, wire.CodeOutOfOrderSequenceException, send(2, 3), "a gap")
			assert.Equal(t, wire.CodeNone, send(1, 2), "the next sequence")
			assert.Equal(t, wire.CodeOutOfOrderSequenceException, c.write(ctx, t, tc.api, tb, tb.id, tb.leader,
				c.initWriter(ctx, t, tc.path), 3, 4), "a new writer's first batch must be sequence 0")
		})
	}

	t.Run("bucket checks", func(t *testing.T) {
		tb := c.metadata(ctx, t, kv)
		w := c.initWriter(ctx, t, kv)
		assert.Equal(t, wire.CodeUnknownTableOrBucketException,
			c.write(ctx, t, wire.KeyPutKv, tb, tb.id+1_000_000, tb.leader, w, 0, 1), "an unknown table id")
		for _, other := range tb.servers {
			if other != tb.leader {
				assert.Equal(t, wire.CodeNotLeaderOrFollower,
					c.write(ctx, t, wire.KeyPutKv, tb, tb.id, other, w, 0, 1), "tablet server %d does not lead the bucket", other)
				break
			}
		}
	})
}

func contractPath(p domain.TablePath) *flusspb.PbTablePath {
	return &flusspb.PbTablePath{DatabaseName: proto.String(p.Database), TableName: proto.String(p.Table)}
}

func (c Contract) metadata(ctx context.Context, t *testing.T, path domain.TablePath) contractTable {
	t.Helper()
	var resp flusspb.MetadataResponse
	require.NoError(t, c.Caller.Call(ctx, meta.Any(), wire.KeyGetMetadata,
		&flusspb.MetadataRequest{TablePath: []*flusspb.PbTablePath{contractPath(path)}}, &resp))
	require.Len(t, resp.GetTableMetadata(), 1, path.String())
	tm := resp.GetTableMetadata()[0]
	require.Len(t, tm.GetBucketMetadata(), 1, "%s has one bucket", path)
	require.NotNil(t, tm.GetBucketMetadata()[0].LeaderId, "%s: bucket 0 has a leader", path)
	tb := contractTable{id: tm.GetTableId(), schemaID: tm.GetSchemaId(), leader: tm.GetBucketMetadata()[0].GetLeaderId()}
	for _, s := range resp.GetTabletServers() {
		tb.servers = append(tb.servers, s.GetNodeId())
	}
	return tb
}

func (c Contract) initWriter(ctx context.Context, t *testing.T, path domain.TablePath) int64 {
	t.Helper()
	var resp flusspb.InitWriterResponse
	require.NoError(t, c.Caller.Call(ctx, meta.Any(), wire.KeyInitWriter,
		&flusspb.InitWriterRequest{TablePath: []*flusspb.PbTablePath{contractPath(path)}}, &resp))
	return resp.GetWriterId()
}

// write sends one batch of one row (id, "v") for bucket 0 of table tableID
// to node and returns the bucket's answer code.
func (c Contract) write(ctx context.Context, t *testing.T, api wire.APIKey, tb contractTable, tableID int64, node int32,
	writer int64, seq, id int32) wire.ErrorCode {
	t.Helper()
	schema := ContractSchema(api == wire.KeyPutKv)
	types := []domain.DataType{schema.Columns[0].Type, schema.Columns[1].Type}
	row := []domain.Datum{{I64: int64(id)}, {Bytes: []byte("v")}}
	var batch []byte
	if api == wire.KeyPutKv {
		enc, err := record.NewCompactedRowEncoder(types)
		require.NoError(t, err)
		keyEnc, err := record.NewCompactedKeyEncoder(types, []int{0})
		require.NoError(t, err)
		key, err := keyEnc.AppendKey(nil, row)
		require.NoError(t, err)
		b, err := record.NewKvBatchBuilder(tb.schemaID, nil)
		require.NoError(t, err)
		require.NoError(t, b.Upsert(key, enc, row))
		batch = b.Build(writer, seq)
	} else {
		enc, err := record.NewIndexedRowEncoder(types)
		require.NoError(t, err)
		b, err := record.NewRowLogBatchBuilder(enc, tb.schemaID, true, nil)
		require.NoError(t, err)
		require.NoError(t, b.Append(record.ChangeAppendOnly, row))
		batch = b.Build(writer, seq)
	}
	to := meta.Node(node)
	if api == wire.KeyPutKv {
		var resp flusspb.PutKvResponse
		require.NoError(t, c.Caller.Call(ctx, to, api, &flusspb.PutKvRequest{
			TableId: proto.Int64(tableID), Acks: proto.Int32(-1), TimeoutMs: proto.Int32(30_000),
			BucketsReq: []*flusspb.PbPutKvReqForBucket{{BucketId: proto.Int32(0), Records: batch}},
		}, &resp))
		require.Len(t, resp.GetBucketsResp(), 1)
		return wire.ErrorCode(resp.GetBucketsResp()[0].GetErrorCode())
	}
	var resp flusspb.ProduceLogResponse
	require.NoError(t, c.Caller.Call(ctx, to, api, &flusspb.ProduceLogRequest{
		TableId: proto.Int64(tableID), Acks: proto.Int32(-1), TimeoutMs: proto.Int32(30_000),
		BucketsReq: []*flusspb.PbProduceLogReqForBucket{{BucketId: proto.Int32(0), Records: batch}},
	}, &resp))
	require.Len(t, resp.GetBucketsResp(), 1)
	return wire.ErrorCode(resp.GetBucketsResp()[0].GetErrorCode())
}
