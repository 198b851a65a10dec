package admin_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/admin"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/flussfake"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/tests/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

type env struct {
	fake *flussfake.Cluster
	rpc  *rpc.Client
	cat  *admin.Catalog
}

func newEnv(t *testing.T, cc flussfake.ClusterConfig, rc rpc.Config) env {
	t.Helper()
	fc, err := flussfake.NewCluster(cc)
	require.NoError(t, err)
	t.Cleanup(fc.Close)
	rc.BootstrapServers = []string{fc.BootstrapAddr()}
	if rc.MetadataBackoff == 0 {
		rc.MetadataBackoff = time.Millisecond
	}
	c, err := rpc.NewClient(rc)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return env{fake: fc, rpc: c, cat: admin.New(c)}
}

// The Catalog contract (tests/contract) runs against this adapter over
// flussfake in adapters/fluss (TestCatalogContract) and over the real
// cluster in tests/integration; the tests here keep what is particular to
// the adapter: request routing and bytes, error mapping, transport failures.

func TestDatabaseCallsGoToTheCoordinator(t *testing.T) {
	t.Parallel()
	e := newEnv(t, flussfake.ClusterConfig{}, rpc.Config{})
	ctx := context.Background()
	cat := e.cat

	require.NoError(t, cat.CreateDatabase(ctx, "sales", domain.DatabaseDescriptor{}, false))
	require.NoError(t, cat.CreateDatabase(ctx, "hr", domain.DatabaseDescriptor{}, false))
	names, err := cat.ListDatabases(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"hr", "sales"}, names)
	info, err := cat.GetDatabase(ctx, "sales")
	require.NoError(t, err)
	assert.Equal(t, time.UTC, info.CreatedTime.Location())

	for _, ts := range e.fake.TabletServers {
		assert.Zero(t, ts.Requests(wire.KeyListDatabases))
		assert.Zero(t, ts.Requests(wire.KeyGetDatabaseInfo))
	}
	assert.Equal(t, 1, e.fake.Coordinator.Requests(wire.KeyListDatabases))
}

func TestCreateDatabaseSendsDescriptorJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, flussfake.ClusterConfig{}, rpc.Config{})
	var got *flusspb.CreateDatabaseRequest
	e.fake.Coordinator.ControlOnce(wire.KeyCreateDatabase, func(_ context.Context, r *flussfake.Request) (proto.Message, error, bool) {
		got = &flusspb.CreateDatabaseRequest{}
		require.NoError(t, proto.Unmarshal(r.Body, got))
		return &flusspb.CreateDatabaseResponse{}, nil, true
	})
	require.NoError(t, e.cat.CreateDatabase(context.Background(), "d", domain.DatabaseDescriptor{Comment: "hi"}, true))
	require.NotNil(t, got)
	assert.Equal(t, "d", got.GetDatabaseName())
	assert.True(t, got.GetIgnoreIfExists())
	// DatabaseDescriptorJsonSerde form (apache/fluss utils/json/): version,
	// comment when present, custom_properties always.
	assert.JSONEq(t, `{"version":1,"comment":"hi","custom_properties":{}}`, string(got.GetDatabaseJson()))
}

func logTable() domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			{Name: "id", Type: domain.DataType{Root: domain.TypeBigInt, Nullable: true}, ID: domain.UnassignedFieldID},
			{Name: "msg", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: domain.UnassignedFieldID},
		}},
		BucketCount: 3,
	}
}

func TestCreateTableRejectsUnwritableDescriptor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, flussfake.ClusterConfig{}, rpc.Config{})
	// Primary key equal to the partition keys: no default bucket key exists.
	desc := domain.TableDescriptor{
		Schema: domain.Schema{
			Columns:    []domain.Column{{Name: "dt", Type: domain.DataType{Root: domain.TypeString}, ID: domain.UnassignedFieldID}},
			PrimaryKey: []string{"dt"},
		},
		PartitionKeys: []string{"dt"},
	}
	err := e.cat.CreateTable(context.Background(), domain.TablePath{Database: "d", Table: "t"}, desc, false)
	contract.RequireKind(t, err, domain.KindInvalidArgument, domain.ResourceNone)
	assert.Zero(t, e.fake.Coordinator.Requests(wire.KeyCreateTable), "nothing sent")
}

func TestAlterTableRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, flussfake.ClusterConfig{}, rpc.Config{})
	var got *flusspb.AlterTableRequest
	e.fake.Coordinator.Handle(wire.KeyAlterTable, flussfake.Typed(func(_ context.Context, _ *flussfake.Request, req *flusspb.AlterTableRequest) (proto.Message, error) {
		got = req
		return &flusspb.AlterTableResponse{}, nil
	}))
	path := domain.TablePath{Database: "d", Table: "t"}
	err := e.cat.AlterTable(context.Background(), path, []domain.TableChange{
		{Kind: domain.ChangeAddColumn, Column: domain.Column{Name: "c", Type: domain.DataType{Root: domain.TypeDecimal, Nullable: true, Precision: 10, Scale: 2}, Comment: "cc"}},
		{Kind: domain.ChangeSetConfig, Key: "table.log.ttl", Value: "2d"},
		{Kind: domain.ChangeResetConfig, Key: "table.datalake.freshness"},
	}, true)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, "d", got.GetTablePath().GetDatabaseName())
	assert.True(t, got.GetIgnoreIfNotExists())
	require.Len(t, got.GetAddColumns(), 1)
	add := got.GetAddColumns()[0]
	assert.Equal(t, "c", add.GetColumnName())
	assert.Equal(t, "cc", add.GetComment())
	assert.Equal(t, int32(0), add.GetColumnPositionType(), "LAST")
	assert.JSONEq(t, `{"type":"DECIMAL","precision":10,"scale":2}`, string(add.GetDataTypeJson()))
	require.Len(t, got.GetConfigChanges(), 2)
	assert.Equal(t, "table.log.ttl", got.GetConfigChanges()[0].GetConfigKey())
	assert.Equal(t, "2d", got.GetConfigChanges()[0].GetConfigValue())
	assert.Equal(t, int32(0), got.GetConfigChanges()[0].GetOpType(), "SET")
	assert.Nil(t, got.GetConfigChanges()[1].ConfigValue)
	assert.Equal(t, int32(1), got.GetConfigChanges()[1].GetOpType(), "DELETE")

	err = e.cat.AlterTable(context.Background(), path, []domain.TableChange{{Kind: "rename_column"}}, false)
	de := contract.RequireKind(t, err, domain.KindInvalidArgument, domain.ResourceNone)
	assert.Contains(t, de.Message, "changes[0].kind")
}

func TestCreatePartitionRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, flussfake.ClusterConfig{}, rpc.Config{})
	ctx := context.Background()
	cat := e.cat
	require.NoError(t, cat.CreateDatabase(ctx, "d", domain.DatabaseDescriptor{}, false))
	path := domain.TablePath{Database: "d", Table: "p"}
	desc := logTable()
	desc.Schema.Columns = append(desc.Schema.Columns,
		domain.Column{Name: "dt", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: domain.UnassignedFieldID},
		domain.Column{Name: "region", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: domain.UnassignedFieldID})
	desc.PartitionKeys = []string{"dt", "region"}
	require.NoError(t, cat.CreateTable(ctx, path, desc, false))

	var sent *flusspb.CreatePartitionRequest
	var mu sync.Mutex
	e.fake.Coordinator.Control(wire.KeyCreatePartition, func(_ context.Context, r *flussfake.Request) (proto.Message, error, bool) {
		m := &flusspb.CreatePartitionRequest{}
		_ = proto.Unmarshal(r.Body, m)
		mu.Lock()
		sent = m
		mu.Unlock()
		return nil, nil, false
	})

	a := domain.PartitionSpec{{Key: "dt", Value: "20260822"}, {Key: "region", Value: "eu"}}
	b := domain.PartitionSpec{{Key: "dt", Value: "20260821"}, {Key: "region", Value: "us"}}
	require.NoError(t, cat.CreatePartition(ctx, path, a, false))
	require.NoError(t, cat.CreatePartition(ctx, path, b, false))
	require.NoError(t, cat.CreatePartition(ctx, path, a, true))
	mu.Lock()
	assert.True(t, sent.GetIgnoreIfNotExists(), "field 3 carries ignoreIfExists")
	mu.Unlock()

	parts, err := cat.ListPartitions(ctx, path)
	require.NoError(t, err)
	require.Len(t, parts, 2)
	assert.Equal(t, "20260821$us", parts[0].Name, "in the server's order")
	assert.Equal(t, b, parts[0].Spec)
	assert.Equal(t, "20260822$eu", parts[1].Name)
}

func TestAnsweredErrorMapping(t *testing.T) {
	t.Parallel()
	const stack = "org.apache.fluss.exception.FlussRuntimeException: Failed to get tables.\n" +
		"\tat org.apache.fluss.server.X.y(X.java:1)\n" +
		"Caused by: org.apache.fluss.exception.TableNotExistException: Table 'd.t' does not exist."
	tests := []struct {
		code      wire.ErrorCode
		msg       string
		kind      domain.Kind
		res       domain.Resource
		retryable bool
		wireCode  string
	}{
		{wire.CodeDatabaseNotExist, "", domain.KindNotFound, domain.ResourceDatabase, false, "database_not_found"},
		{wire.CodeDatabaseAlreadyExist, "", domain.KindAlreadyExists, domain.ResourceDatabase, false, "database_already_exists"},
		{wire.CodeDatabaseNotEmpty, "", domain.KindNotEmpty, domain.ResourceDatabase, false, "database_not_empty"},
		{wire.CodeTableNotExist, "", domain.KindNotFound, domain.ResourceTable, false, "table_not_found"},
		{wire.CodeTableAlreadyExist, "", domain.KindAlreadyExists, domain.ResourceTable, false, "table_already_exists"},
		{wire.CodePartitionNotExists, "", domain.KindNotFound, domain.ResourcePartition, false, "partition_not_found"},
		{wire.CodePartitionAlreadyExists, "", domain.KindAlreadyExists, domain.ResourcePartition, false, "partition_already_exists"},
		{wire.CodeInvalidDatabaseException, "bad name", domain.KindInvalidArgument, domain.ResourceNone, false, "invalid_argument"},
		{wire.CodeInvalidTableException, "", domain.KindInvalidArgument, domain.ResourceNone, false, "invalid_argument"},
		{wire.CodeInvalidConfigException, "", domain.KindInvalidArgument, domain.ResourceNone, false, "invalid_argument"},
		{wire.CodeInvalidReplicationFactor, "", domain.KindInvalidArgument, domain.ResourceNone, false, "invalid_argument"},
		{wire.CodePartitionMaxNumException, "", domain.KindFailedPrecondition, domain.ResourceNone, false, "failed_precondition"},
		{wire.CodeAuthorizationException, "", domain.KindUnauthorized, domain.ResourceNone, false, "unauthorized"},
		{wire.CodeAuthenticateException, "", domain.KindUnavailable, domain.ResourceNone, false, "unavailable"},
		{wire.CodeSecurityDisabledException, "", domain.KindUnsupported, domain.ResourceNone, false, "unsupported"},
		{wire.CodeRequestTimeOut, "", domain.KindTimeout, domain.ResourceNone, true, "timeout"},
		{wire.CodeNotCoordinatorLeaderException, "", domain.KindUnavailable, domain.ResourceNone, true, "unavailable"},
		{wire.CodeStorageException, "", domain.KindUnavailable, domain.ResourceNone, true, "unavailable"},
		{wire.CodeUnknownServerError, "boom", domain.KindBackend, domain.ResourceNone, false, "backend"},
		{wire.CodeUnknownServerError, stack, domain.KindNotFound, domain.ResourceTable, false, "table_not_found"},
		{wire.CodeFencedLeaderEpochException, "", domain.KindBackend, domain.ResourceNone, false, "backend"},
	}
	e := newEnv(t, flussfake.ClusterConfig{}, rpc.Config{})
	var mu sync.Mutex // the cases share one server; run them in order
	for _, tc := range tests {
		t.Run(tc.code.String()+"/"+tc.wireCode, func(t *testing.T) {
			mu.Lock()
			defer mu.Unlock()
			e.fake.Coordinator.ControlOnce(wire.KeyCreateDatabase, func(context.Context, *flussfake.Request) (proto.Message, error, bool) {
				return nil, wire.NewServerError(tc.code, tc.msg), true
			})
			err := e.cat.CreateDatabase(context.Background(), "x", domain.DatabaseDescriptor{}, false)
			de := contract.RequireKind(t, err, tc.kind, tc.res)
			assert.Equal(t, tc.wireCode, de.Code())
			assert.Equal(t, tc.retryable, de.Retryable)
			assert.NotContains(t, de.Message, "\tat ", "no stack traces in API messages")
			var se *wire.ServerError
			assert.True(t, errors.As(err, &se), "cause chain keeps the Fluss error")
		})
	}
}

// TestGetTableDuringDDLElsewhereIsUnavailable: GET_TABLE_INFO answered with
// UNKNOWN_SERVER_ERROR wrapping an IOException (the table's znode exists
// but is still empty: another client is creating it) is 503 `unavailable`,
// retryable with a Retry-After, with no Java text in the message.
func TestGetTableDuringDDLElsewhereIsUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, flussfake.ClusterConfig{}, rpc.Config{})
	e.fake.Coordinator.ControlOnce(wire.KeyGetTableInfo, func(context.Context, *flussfake.Request) (proto.Message, error, bool) {
		return nil, wire.NewServerError(wire.CodeUnknownServerError,
			"org.apache.fluss.exception.FlussRuntimeException: Failed to get table 'd.t'.\nCaused by: java.io.IOException: No content to map due to end-of-input."), true
	})
	_, err := e.cat.GetTable(context.Background(), domain.TablePath{Database: "d", Table: "t"})
	de := contract.RequireKind(t, err, domain.KindUnavailable, domain.ResourceNone)
	assert.True(t, de.Retryable)
	assert.Positive(t, de.RetryAfterMillis)
	assert.NotContains(t, de.Message, "Exception")
	assert.Contains(t, de.Message, "nothing was changed")
}

func TestAuthenticationFailureIsUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, flussfake.ClusterConfig{SASLUsers: map[string]string{"admin": "admin-secret"}},
		rpc.Config{SASL: &rpc.SASLConfig{Username: "admin", Password: "wrong"}})
	_, err := e.cat.ListDatabases(context.Background())
	de := contract.RequireKind(t, err, domain.KindUnavailable, domain.ResourceNone)
	assert.True(t, strings.HasPrefix(de.Message, "authentication to the Fluss cluster failed"), de.Message)
	assert.False(t, de.Retryable)
	assert.NotContains(t, de.Error(), "wrong")
	assert.True(t, rpc.IsAuthentication(err))
}

func TestUnreachableClusterIsUnavailable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	c, err := rpc.NewClient(rpc.Config{BootstrapServers: []string{addr}, MetadataBackoff: time.Millisecond})
	require.NoError(t, err)
	defer c.Close()

	err = admin.New(c).CreateDatabase(context.Background(), "d", domain.DatabaseDescriptor{}, false)
	de := contract.RequireKind(t, err, domain.KindUnavailable, domain.ResourceNone)
	assert.True(t, de.Retryable, "nothing was sent, so even DDL may be retried")
}

func TestTimeoutsAndCancellation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, flussfake.ClusterConfig{}, rpc.Config{RequestTimeout: 100 * time.Millisecond})
	ctx := context.Background()
	_, err := e.rpc.Cluster(ctx)
	require.NoError(t, err)
	e.fake.Coordinator.Control(0, func(context.Context, *flussfake.Request) (proto.Message, error, bool) {
		return nil, flussfake.ErrDrop, true
	})

	tests := []struct {
		name      string
		call      func(context.Context) error
		retryable bool
		unknown   bool
	}{
		{"non-idempotent DDL", func(ctx context.Context) error {
			return e.cat.CreateDatabase(ctx, "d", domain.DatabaseDescriptor{}, false)
		}, false, true},
		{"idempotent DDL", func(ctx context.Context) error {
			return e.cat.CreateDatabase(ctx, "d", domain.DatabaseDescriptor{}, true)
		}, true, false},
		{"read", func(ctx context.Context) error { _, err := e.cat.ListDatabases(ctx); return err }, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			de := contract.RequireKind(t, tc.call(ctx), domain.KindTimeout, domain.ResourceNone)
			assert.Equal(t, tc.retryable, de.Retryable)
			assert.Equal(t, tc.unknown, strings.Contains(de.Message, "may or may not have been applied"), de.Message)
		})
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	contract.RequireKind(t, e.cat.DropDatabase(cctx, "d", false, false), domain.KindCancelled, domain.ResourceNone)
}

func TestUnsupportedAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, flussfake.ClusterConfig{}, rpc.Config{})
	e.fake.Coordinator.Unhandle(wire.KeyAlterTable) // fresh connections no longer list it
	err := e.cat.AlterTable(context.Background(), domain.TablePath{Database: "d", Table: "t"},
		[]domain.TableChange{{Kind: domain.ChangeSetConfig, Key: "k", Value: "v"}}, false)
	contract.RequireKind(t, err, domain.KindUnsupported, domain.ResourceNone)
}

func TestCorruptJSONFromServerIsBackend(t *testing.T) {
	t.Parallel()
	e := newEnv(t, flussfake.ClusterConfig{}, rpc.Config{})
	e.fake.Coordinator.ControlOnce(wire.KeyGetDatabaseInfo, func(context.Context, *flussfake.Request) (proto.Message, error, bool) {
		return &flusspb.GetDatabaseInfoResponse{DatabaseJson: []byte(`{"version":1}`),
			CreatedTime: proto.Int64(0), ModifiedTime: proto.Int64(0)}, nil, true
	})
	_, err := e.cat.GetDatabase(context.Background(), "d")
	contract.RequireKind(t, err, domain.KindBackend, domain.ResourceNone)
}
