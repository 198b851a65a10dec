package flussfake_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
)

// TestDataPlaneBucketChecks: a bucket is served only by its leader; unknown
// tables and buckets are refused; a stored value is the batch's schema id
// and the row; a record without value deletes the key.
func TestDataPlaneBucketChecks(t *testing.T) {
	t.Parallel()
	fc, err := flussfake.NewCluster(flussfake.ClusterConfig{TabletServers: 2, DataPlane: true})
	require.NoError(t, err)
	defer fc.Close()
	c, err := rpc.NewClient(rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()}, RequestTimeout: 2 * time.Second})
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	require.NoError(t, c.CallCoordinator(ctx, wire.KeyCreateDatabase, &flusspb.CreateDatabaseRequest{
		DatabaseName: proto.String("d"), IgnoreIfExists: proto.Bool(false)}, &flusspb.CreateDatabaseResponse{}))
	require.NoError(t, c.CallCoordinator(ctx, wire.KeyCreateTable, &flusspb.CreateTableRequest{
		TablePath:      &flusspb.PbTablePath{DatabaseName: proto.String("d"), TableName: proto.String("t")},
		TableJson:      []byte(`{"version":1,"schema":{"columns":[]},"partition_key":[],"bucket_count":2,"properties":{},"custom_properties":{}}`),
		IgnoreIfExists: proto.Bool(false)}, &flusspb.CreateTableResponse{}))
	var info flusspb.GetTableInfoResponse
	require.NoError(t, c.CallCoordinator(ctx, wire.KeyGetTableInfo, &flusspb.GetTableInfoRequest{
		TablePath: &flusspb.PbTablePath{DatabaseName: proto.String("d"), TableName: proto.String("t")}}, &info))
	table := info.GetTableId()

	kvBatch := func(deleteKey bool) []byte {
		b, err := record.NewKvBatchBuilder(3, nil)
		require.NoError(t, err)
		if deleteKey {
			require.NoError(t, b.Delete([]byte("k")))
		} else {
			require.NoError(t, b.UpsertEncoded([]byte("k"), []byte("row")))
		}
		return b.Build(record.NoWriterID, 0)
	}
	put := func(node int32, tableID int64, bucket int32, deleteKey bool) int32 {
		var resp flusspb.PutKvResponse
		require.NoError(t, c.CallTabletServer(ctx, node, wire.KeyPutKv, &flusspb.PutKvRequest{
			TableId: proto.Int64(tableID), Acks: proto.Int32(-1), TimeoutMs: proto.Int32(1000),
			BucketsReq: []*flusspb.PbPutKvReqForBucket{{BucketId: proto.Int32(bucket), Records: kvBatch(deleteKey)}},
		}, &resp))
		require.Len(t, resp.GetBucketsResp(), 1)
		return resp.GetBucketsResp()[0].GetErrorCode()
	}
	get := func() []byte {
		var resp flusspb.LookupResponse
		require.NoError(t, c.CallTabletServer(ctx, 1, wire.KeyLookup, &flusspb.LookupRequest{
			TableId:    proto.Int64(table),
			BucketsReq: []*flusspb.PbLookupReqForBucket{{BucketId: proto.Int32(1), Keys: [][]byte{[]byte("k")}}},
		}, &resp))
		require.Len(t, resp.GetBucketsResp(), 1)
		require.Zero(t, resp.GetBucketsResp()[0].GetErrorCode())
		return resp.GetBucketsResp()[0].GetValues()[0].GetValues()
	}

	assert.Equal(t, int32(wire.CodeNotLeaderOrFollower), put(0, table, 1, false), "bucket 1 is led by tablet server 1")
	assert.Equal(t, int32(wire.CodeUnknownTableOrBucketException), put(1, table+100, 1, false))
	assert.Equal(t, int32(wire.CodeUnknownTableOrBucketException), put(0, table, 2, false), "two buckets")
	assert.Zero(t, put(1, table, 1, false))
	assert.Equal(t, record.AppendValue(nil, 3, []byte("row")), get())
	assert.Zero(t, put(1, table, 1, true))
	assert.Nil(t, get(), "deleted")
}
