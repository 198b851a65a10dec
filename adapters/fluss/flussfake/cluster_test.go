package flussfake_test

import (
	"context"
	"testing"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func TestClusterMetadata(t *testing.T) {
	t.Parallel()
	fc, err := flussfake.NewCluster(flussfake.ClusterConfig{TabletServers: 2})
	require.NoError(t, err)
	defer fc.Close()
	c, err := rpc.NewClient(rpc.Config{BootstrapServers: []string{fc.BootstrapAddr()}, RequestTimeout: 2 * time.Second})
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()

	require.NoError(t, c.CallCoordinator(ctx, wire.KeyCreateDatabase, &flusspb.CreateDatabaseRequest{
		DatabaseName: proto.String("d"), IgnoreIfExists: proto.Bool(false),
	}, &flusspb.CreateDatabaseResponse{}))
	require.NoError(t, c.CallCoordinator(ctx, wire.KeyCreateTable, &flusspb.CreateTableRequest{
		TablePath:      &flusspb.PbTablePath{DatabaseName: proto.String("d"), TableName: proto.String("t")},
		TableJson:      []byte(`{"version":1,"schema":{"columns":[]},"partition_key":[],"bucket_count":3,"properties":{},"custom_properties":{}}`),
		IgnoreIfExists: proto.Bool(false),
	}, &flusspb.CreateTableResponse{}))

	md, err := c.Metadata(ctx, &flusspb.MetadataRequest{TablePath: []*flusspb.PbTablePath{
		{DatabaseName: proto.String("d"), TableName: proto.String("t")},
	}})
	require.NoError(t, err)
	require.Len(t, md.GetTableMetadata(), 1)
	buckets := md.GetTableMetadata()[0].GetBucketMetadata()
	require.Len(t, buckets, 3)
	assert.Equal(t, []int32{0, 1, 0}, []int32{buckets[0].GetLeaderId(), buckets[1].GetLeaderId(), buckets[2].GetLeaderId()})

	// Like Fluss 0.9.1: a missing table is UNKNOWN_SERVER_ERROR with the
	// TableNotExistException as cause.
	_, err = c.Metadata(ctx, &flusspb.MetadataRequest{TablePath: []*flusspb.PbTablePath{
		{DatabaseName: proto.String("d"), TableName: proto.String("nope")},
	}})
	var se *wire.ServerError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, wire.CodeUnknownServerError, se.Code)
	assert.Equal(t, wire.CodeTableNotExist, se.EffectiveCode())

	// Bad table JSON is INVALID_TABLE_EXCEPTION.
	err = c.CallCoordinator(ctx, wire.KeyCreateTable, &flusspb.CreateTableRequest{
		TablePath:      &flusspb.PbTablePath{DatabaseName: proto.String("d"), TableName: proto.String("u")},
		TableJson:      []byte(`{"version":1}`),
		IgnoreIfExists: proto.Bool(false),
	}, &flusspb.CreateTableResponse{})
	code, ok := rpc.CodeOf(err)
	require.True(t, ok)
	assert.Equal(t, wire.CodeInvalidTableException, code)
}

func TestUnknownAPIIsDropped(t *testing.T) {
	t.Parallel()
	s, err := flussfake.NewServer(flussfake.ServerConfig{
		// Advertise an API without a handler: the request reaches the
		// server, which then stays silent like a real one.
		Versions: map[wire.APIKey]wire.VersionRange{wire.KeyLookup: {Min: 0, Max: 1}},
	})
	require.NoError(t, err)
	defer s.Close()
	s.Handle(wire.KeyLookup, func(context.Context, *flussfake.Request) (proto.Message, error) {
		return &flusspb.LookupResponse{}, nil
	})
	conn, err := rpc.Dial(context.Background(), s.Addr(), rpc.ConnConfig{RequestTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	defer conn.Close()
	s.Unhandle(wire.KeyLookup)

	err = conn.Call(context.Background(), wire.KeyLookup, &flusspb.LookupRequest{TableId: proto.Int64(1)}, &flusspb.LookupResponse{})
	assert.ErrorIs(t, err, rpc.ErrTimeout)
	assert.Equal(t, 1, s.Requests(wire.KeyLookup))
}
