//go:build integration

// Integration tests of the Fluss protocol core (adapters/fluss/rpc) and the
// catalog adapter (adapters/fluss/admin) against a real Fluss 0.9.1 cluster.
//
// Start one with `bash deployments/local/fluss-cluster.sh start`, then:
//
//	FLUSS_BOOTSTRAP=127.0.0.1:19123 FLUSS_SASL_BOOTSTRAP=127.0.0.1:19124 \
//	  go test -tags integration ./tests/integration/ -run Fluss -v
//
// Tests skip when FLUSS_BOOTSTRAP (or, for SASL tests, FLUSS_SASL_BOOTSTRAP)
// is unset. The SASL listener is expected to know admin/admin-secret and
// alice/alice-secret.
package integration

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/admin"
	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/tests/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func bootstrap(t *testing.T, env string) string {
	t.Helper()
	addr := os.Getenv(env)
	if addr == "" {
		if os.Getenv("FLUSS_INTEGRATION_REQUIRED") == "1" {
			t.Fatalf("FLUSS_INTEGRATION_REQUIRED=1 but %s is not set", env)
		}
		t.Skipf("%s is not set; start a cluster with deployments/local/fluss-cluster.sh", env)
	}
	return addr
}

func flussClient(t *testing.T, addr string, sasl *rpc.SASLConfig) *rpc.Client {
	t.Helper()
	c, err := rpc.NewClient(rpc.Config{
		BootstrapServers: []string{addr},
		SASL:             sasl,
		RequestTimeout:   20 * time.Second,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func dropDatabaseLater(t *testing.T, cat *admin.Catalog, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = cat.DropDatabase(ctx, name, true, true)
	})
}

func TestFlussMetadataAndVersions(t *testing.T) {
	c := flussClient(t, bootstrap(t, "FLUSS_BOOTSTRAP"), nil)
	ctx := contract.Ctx(t)

	cl, err := c.Cluster(ctx)
	require.NoError(t, err)
	require.NotNil(t, cl.Coordinator, "metadata names the coordinator")
	require.NotEmpty(t, cl.TabletServers, "metadata lists at least one tablet server")

	ts, err := c.NodeConn(ctx, cl.TabletServers[0])
	require.NoError(t, err)
	assert.Equal(t, rpc.ServerTablet, ts.ServerType())
	// Fluss 0.9.1: PUT_KV 0..1, Fluss 1.0: 0..2 (v2: error 72 and the
	// per-bucket pressure); LOOKUP 0..1 on both; the client uses the highest.
	wantPutKv := int16(1)
	if fluss10() {
		wantPutKv = 2
	}
	v, ok := ts.Version(wire.KeyPutKv)
	require.True(t, ok)
	assert.Equal(t, wantPutKv, v, "Fluss %s", flussVersion())
	r, ok := ts.Advertised(wire.KeyPutKv)
	require.True(t, ok)
	assert.Equal(t, wantPutKv, r.Max)
	t.Logf("Fluss %s tablet server advertises PUT_KV %d..%d", flussVersion(), r.Min, r.Max)
	v, ok = ts.Version(wire.KeyLookup)
	require.True(t, ok)
	assert.Equal(t, int16(1), v)
	_, ok = ts.Version(wire.KeyCreateDatabase)
	assert.False(t, ok, "DDL is not served by tablet servers")

	coord, err := c.NodeConn(ctx, *cl.Coordinator)
	require.NoError(t, err)
	assert.Equal(t, rpc.ServerCoordinator, coord.ServerType())
	_, ok = coord.Version(wire.KeyCreateDatabase)
	assert.True(t, ok)
	_, ok = coord.Version(wire.KeyPutKv)
	assert.False(t, ok, "the coordinator does not serve writes")

	// Refused locally instead of waiting for a silent drop.
	err = c.CallTabletServer(ctx, cl.TabletServers[0].ID, wire.KeyCreateDatabase, &flusspb.CreateDatabaseRequest{
		DatabaseName: proto.String("never"), IgnoreIfExists: proto.Bool(true),
	}, &flusspb.CreateDatabaseResponse{})
	assert.ErrorIs(t, err, rpc.ErrUnsupportedAPI)
	assert.True(t, rpc.IsNotSent(err))

	// Metadata for a table that does not exist is a request-level error.
	_, err = c.Metadata(ctx, &flusspb.MetadataRequest{TablePath: []*flusspb.PbTablePath{{
		DatabaseName: proto.String("no_such_db_x"), TableName: proto.String("t"),
	}}})
	// Fluss 0.9.1 answers UNKNOWN_SERVER_ERROR (-1) here, not TABLE_NOT_EXIST:
	// MetadataManager#getTables wraps the TableNotExistException in a
	// FlussRuntimeException. The cause is recoverable from the stack trace.
	code, ok := rpc.CodeOf(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, wire.CodeUnknownServerError, code)
	var se *wire.ServerError
	require.ErrorAs(t, err, &se)
	assert.True(t, se.CausedBy("TableNotExistException"), se.Message)
	assert.Equal(t, wire.CodeTableNotExist, se.EffectiveCode())
	t.Logf("metadata for a missing table: %s", se.Summary())
}

func TestFlussPipelinedRequests(t *testing.T) {
	c := flussClient(t, bootstrap(t, "FLUSS_BOOTSTRAP"), nil)
	ctx := contract.Ctx(t)
	cl, err := c.Cluster(ctx)
	require.NoError(t, err)
	conn, err := c.NodeConn(ctx, *cl.Coordinator)
	require.NoError(t, err)

	const n = 32
	errs := make(chan error, n)
	for range n {
		go func() {
			var resp flusspb.DatabaseExistsResponse
			err := conn.Call(ctx, wire.KeyDatabaseExists, &flusspb.DatabaseExistsRequest{DatabaseName: proto.String("fluss")}, &resp)
			errs <- err
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
}

// The database, table and partition lifecycles run as the Catalog contract
// (TestCatalogContract, contract_test.go); the tests below keep what only
// the real cluster shows: metadata, error messages, SASL.

func TestFlussInvalidDatabaseName(t *testing.T) {
	c := flussClient(t, bootstrap(t, "FLUSS_BOOTSTRAP"), nil)
	cat := admin.New(c)
	ctx := contract.Ctx(t)
	for _, bad := range []string{"has space", "__internal", "dot.ted"} {
		err := cat.CreateDatabase(ctx, bad, domain.DatabaseDescriptor{}, false)
		de := contract.RequireKind(t, err, domain.KindInvalidArgument, domain.ResourceNone)
		assert.Contains(t, de.Message, "invalid", "%q: %v", bad, err)
	}
}

func logTable() domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			{Name: "id", Type: domain.DataType{Root: domain.TypeBigInt, Nullable: true}, ID: domain.UnassignedFieldID},
			{Name: "msg", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: domain.UnassignedFieldID},
		}},
		BucketCount: 1,
		Comment:     "log table",
	}
}

func TestFlussTableMetadata(t *testing.T) {
	c := flussClient(t, bootstrap(t, "FLUSS_BOOTSTRAP"), nil)
	cat := admin.New(c)
	ctx := contract.Ctx(t)
	db := contract.UniqueName("gw_it_tbl")
	dropDatabaseLater(t, cat, db)
	require.NoError(t, cat.CreateDatabase(ctx, db, domain.DatabaseDescriptor{}, false))
	path := domain.TablePath{Database: db, Table: "users"}
	desc := logTable()
	desc.BucketCount = 2
	require.NoError(t, cat.CreateTable(ctx, path, desc, false))
	info, err := cat.GetTable(ctx, path)
	require.NoError(t, err)

	// The table shows up in metadata with two buckets that have leaders.
	md, err := c.Metadata(ctx, &flusspb.MetadataRequest{TablePath: []*flusspb.PbTablePath{{
		DatabaseName: proto.String(db), TableName: proto.String("users"),
	}}})
	require.NoError(t, err)
	require.Len(t, md.GetTableMetadata(), 1)
	assert.Equal(t, info.TableID, md.GetTableMetadata()[0].GetTableId())
	assert.Len(t, md.GetTableMetadata()[0].GetBucketMetadata(), 2)

	err = cat.AlterTable(ctx, path, []domain.TableChange{
		{Kind: domain.ChangeAddColumn, Column: domain.Column{Name: "msg", Type: domain.DataType{Root: domain.TypeString, Nullable: true}}},
	}, false)
	de := contract.RequireKind(t, err, domain.KindInvalidArgument, domain.ResourceNone)
	t.Logf("adding a duplicate column: %v", de)
}

func TestFlussPartitionMetadata(t *testing.T) {
	c := flussClient(t, bootstrap(t, "FLUSS_BOOTSTRAP"), nil)
	cat := admin.New(c)
	ctx := contract.Ctx(t)
	db := contract.UniqueName("gw_it_part")
	dropDatabaseLater(t, cat, db)
	require.NoError(t, cat.CreateDatabase(ctx, db, domain.DatabaseDescriptor{}, false))

	path := domain.TablePath{Database: db, Table: "sales"}
	require.NoError(t, cat.CreateTable(ctx, path, domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			{Name: "id", Type: domain.DataType{Root: domain.TypeBigInt, Nullable: true}, ID: domain.UnassignedFieldID},
			{Name: "dt", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: domain.UnassignedFieldID},
			{Name: "region", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, ID: domain.UnassignedFieldID},
		}},
		PartitionKeys: []string{"dt", "region"},
		BucketCount:   1,
	}, false))
	spec := domain.PartitionSpec{{Key: "dt", Value: "20260822"}, {Key: "region", Value: "eu"}}
	require.NoError(t, cat.CreatePartition(ctx, path, spec, false))
	parts, err := cat.ListPartitions(ctx, path)
	require.NoError(t, err)
	require.Len(t, parts, 1)

	// Partition metadata by name.
	md, err := c.Metadata(ctx, &flusspb.MetadataRequest{PartitionsPath: []*flusspb.PbPhysicalTablePath{{
		DatabaseName: proto.String(db), TableName: proto.String("sales"), PartitionName: proto.String("20260822$eu"),
	}}})
	require.NoError(t, err)
	require.Len(t, md.GetPartitionMetadata(), 1)
	assert.Equal(t, parts[0].ID, md.GetPartitionMetadata()[0].GetPartitionId())

	_, err = c.Metadata(ctx, &flusspb.MetadataRequest{PartitionsPath: []*flusspb.PbPhysicalTablePath{{
		DatabaseName: proto.String(db), TableName: proto.String("sales"), PartitionName: proto.String("20260823$eu"),
	}}})
	var se *wire.ServerError
	require.ErrorAs(t, err, &se)
	t.Logf("metadata for a missing partition: %s: %s", se.Code, se.Summary())
	assert.Equal(t, wire.CodePartitionNotExists, se.EffectiveCode())
}

func TestFlussSASL(t *testing.T) {
	addr := bootstrap(t, "FLUSS_SASL_BOOTSTRAP")
	ctx := contract.Ctx(t)

	for _, user := range []struct{ name, password string }{{"admin", "admin-secret"}, {"alice", "alice-secret"}} {
		c := flussClient(t, addr, &rpc.SASLConfig{Username: user.name, Password: user.password})
		cl, err := c.Cluster(ctx)
		require.NoError(t, err, user.name)
		require.NotEmpty(t, cl.TabletServers)
		// Tablet servers are reached through their SASL listener too.
		ts, err := c.NodeConn(ctx, cl.TabletServers[0])
		require.NoError(t, err, user.name)
		assert.Equal(t, rpc.ServerTablet, ts.ServerType())
	}

	admin := admin.New(flussClient(t, addr, &rpc.SASLConfig{Username: "admin", Password: "admin-secret"}))
	names, err := admin.ListDatabases(ctx)
	require.NoError(t, err)
	t.Logf("databases visible to admin: %d", len(names))

	// impersonation (authzid == username is allowed).
	self := flussClient(t, addr, &rpc.SASLConfig{Username: "alice", Password: "alice-secret", AuthorizationID: "alice"})
	_, err = self.Cluster(ctx)
	require.NoError(t, err)
}

func TestFlussSASLWrongPassword(t *testing.T) {
	addr := bootstrap(t, "FLUSS_SASL_BOOTSTRAP")
	ctx := contract.Ctx(t)
	c := flussClient(t, addr, &rpc.SASLConfig{Username: "alice", Password: "not-her-password"})
	_, err := c.Cluster(ctx)
	require.Error(t, err)
	assert.True(t, rpc.IsAuthentication(err), "%v", err)
	e := rpc.AsError(err)
	require.NotNil(t, e)
	assert.True(t, e.NotSent())
	assert.False(t, e.Retriable())
	assert.Equal(t, wire.CodeAuthenticateException, e.Code)
	assert.Contains(t, err.Error(), "authentication failed")
	assert.NotContains(t, err.Error(), "not-her-password")
	t.Logf("wrong password: %v", err)

	_, err = admin.New(c).ListDatabases(ctx)
	de := contract.RequireKind(t, err, domain.KindUnavailable, domain.ResourceNone)
	assert.Contains(t, de.Message, "authentication")
	assert.False(t, de.Retryable)
}

func TestFlussSASLImpersonationRefused(t *testing.T) {
	addr := bootstrap(t, "FLUSS_SASL_BOOTSTRAP")
	ctx := contract.Ctx(t)
	// Fluss 0.9.1 rejects an authzid other than the username (no act-as yet).
	c := flussClient(t, addr, &rpc.SASLConfig{Username: "alice", Password: "alice-secret", AuthorizationID: "bob"})
	_, err := c.Cluster(ctx)
	require.Error(t, err)
	assert.True(t, rpc.IsAuthentication(err), "%v", err)
	t.Logf("act-as: %v", err)
}

func TestFlussSASLListenerWithoutCredentials(t *testing.T) {
	addr := bootstrap(t, "FLUSS_SASL_BOOTSTRAP")
	ctx := contract.Ctx(t)
	c := flussClient(t, addr, nil)
	_, err := c.Cluster(ctx)
	require.Error(t, err)
	assert.True(t, rpc.IsAuthentication(err), "%v", err)
	assert.True(t, strings.Contains(err.Error(), "authentication"), "%v", err)
}
