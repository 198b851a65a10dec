package memory

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

var (
	ctx     = context.Background()
	orders  = domain.TablePath{Database: "shop", Table: "orders"}
	epoch   = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fixedAt = WithClock(func() time.Time { return epoch })
)

func col(name string, root domain.TypeRoot) domain.Column {
	return domain.Column{Name: name, Type: domain.DataType{Root: root, Nullable: true}, ID: domain.UnassignedFieldID}
}

func pkTable(partitionKeys ...string) domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema: domain.Schema{
			Columns:    []domain.Column{col("id", domain.TypeBigInt), col("dt", domain.TypeString), col("v", domain.TypeString)},
			PrimaryKey: []string{"id", "dt"},
		},
		PartitionKeys: partitionKeys,
		Properties:    map[string]string{"table.log.ttl": "1d"},
	}
}

func code(err error) string {
	if e := domain.AsError(err); e != nil {
		return e.Code()
	}
	return ""
}

// The Catalog contract (tests/contract, TestCatalogContract) covers the
// lifecycles, errors and flags; these tests keep what is particular to the
// memory adapter: its clock, copies in and out, sequential ids, config
// changes and all-or-nothing alters.

func TestDatabaseCopiesAndClock(t *testing.T) {
	t.Parallel()
	c := NewCatalog(fixedAt)
	require.NoError(t, c.CreateDatabase(ctx, "shop", domain.DatabaseDescriptor{Comment: "c", CustomProperties: map[string]string{"k": "v"}}, false))
	info, err := c.GetDatabase(ctx, "shop")
	require.NoError(t, err)
	assert.Equal(t, domain.DatabaseInfo{Name: "shop", Descriptor: domain.DatabaseDescriptor{Comment: "c", CustomProperties: map[string]string{"k": "v"}}, CreatedTime: epoch, ModifiedTime: epoch}, info)
	info.Descriptor.CustomProperties["k"] = "changed"
	again, _ := c.GetDatabase(ctx, "shop")
	assert.Equal(t, "v", again.Descriptor.CustomProperties["k"], "results are copies")
}

func TestTableSemantics(t *testing.T) {
	t.Parallel()
	c := NewCatalog(fixedAt)
	require.NoError(t, c.CreateDatabase(ctx, "shop", domain.DatabaseDescriptor{}, false))
	desc := pkTable()
	require.NoError(t, c.CreateTable(ctx, orders, desc, false))
	desc.Properties["table.log.ttl"] = "changed"

	info, err := c.GetTable(ctx, orders)
	require.NoError(t, err)
	assert.Equal(t, int64(1), info.TableID)
	assert.Equal(t, int32(1), info.SchemaID)
	assert.Equal(t, "1d", info.Descriptor.Properties["table.log.ttl"], "inputs are copied")
	cols := info.Descriptor.Schema.Columns
	assert.Equal(t, []int32{0, 1, 2}, []int32{cols[0].ID, cols[1].ID, cols[2].ID})
	assert.False(t, cols[0].Type.Nullable, "primary-key columns are NOT NULL")
	assert.False(t, cols[1].Type.Nullable)
	assert.True(t, cols[2].Type.Nullable)
	assert.Equal(t, []string{"id", "dt"}, info.Descriptor.BucketKeys, "default bucket keys")

	require.NoError(t, c.AlterTable(ctx, orders, []domain.TableChange{
		{Kind: domain.ChangeAddColumn, Column: col("note", domain.TypeString)},
		{Kind: domain.ChangeSetConfig, Key: "table.datalake.enabled", Value: "true"},
		{Kind: domain.ChangeResetConfig, Key: "table.log.ttl"},
	}, false))
	info, _ = c.GetTable(ctx, orders)
	assert.Equal(t, int32(2), info.SchemaID)
	assert.Equal(t, int32(3), info.Descriptor.Schema.Columns[3].ID)
	assert.Equal(t, map[string]string{"table.datalake.enabled": "true"}, info.Descriptor.Properties)

	failures := []struct {
		name    string
		changes []domain.TableChange
		want    string
	}{
		{"existing column", []domain.TableChange{{Kind: domain.ChangeAddColumn, Column: col("v", domain.TypeString)}}, "invalid_argument"},
		{"not null column", []domain.TableChange{{Kind: domain.ChangeAddColumn, Column: domain.Column{Name: "x", Type: domain.DataType{Root: domain.TypeInteger}}}}, "invalid_argument"},
		{"unknown change", []domain.TableChange{{Kind: "rename"}}, "invalid_argument"},
	}
	for _, f := range failures {
		before, _ := c.GetTable(ctx, orders)
		changes := append([]domain.TableChange{{Kind: domain.ChangeSetConfig, Key: "table.x", Value: "1"}}, f.changes...)
		assert.Equal(t, f.want, code(c.AlterTable(ctx, orders, changes, false)), f.name)
		after, _ := c.GetTable(ctx, orders)
		assert.Equal(t, before, after, "%s: a failed alter changes nothing", f.name)
	}
}

func TestPartitionSemantics(t *testing.T) {
	t.Parallel()
	c := NewCatalog()
	require.NoError(t, c.CreateDatabase(ctx, "shop", domain.DatabaseDescriptor{}, false))
	require.NoError(t, c.CreateTable(ctx, orders, pkTable("dt"), false))

	spec := func(v string) domain.PartitionSpec { return domain.PartitionSpec{{Key: "dt", Value: v}} }
	require.NoError(t, c.CreatePartition(ctx, orders, spec("b"), false))
	require.NoError(t, c.CreatePartition(ctx, orders, spec("a"), false))
	assert.Equal(t, "invalid_argument", code(c.CreatePartition(ctx, orders, domain.PartitionSpec{{Key: "id", Value: "1"}}, false)), "wrong key")
	assert.Equal(t, "table_not_found", code(c.DropPartition(ctx, domain.TablePath{Database: "shop", Table: "x"}, spec("a"), true)),
		"ignoreIfNotExists covers the partition, not the table")

	parts, err := c.ListPartitions(ctx, orders)
	require.NoError(t, err)
	assert.Equal(t, []domain.PartitionInfo{{ID: 2, Name: "a", Spec: spec("a")}, {ID: 1, Name: "b", Spec: spec("b")}}, parts,
		"sorted by name, ids in creation order")
}

func TestHookAndContext(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	var ops []string
	c := NewCatalog(WithHook(func(_ context.Context, op string) error {
		ops = append(ops, op)
		if op == "DropDatabase" {
			return boom
		}
		return nil
	}))
	require.NoError(t, c.CreateDatabase(ctx, "d", domain.DatabaseDescriptor{}, false))
	assert.ErrorIs(t, c.DropDatabase(ctx, "d", false, false), boom)
	assert.Equal(t, []string{"CreateDatabase", "DropDatabase"}, ops)

	c.SetHook(nil)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := c.ListDatabases(cancelled)
	assert.ErrorIs(t, err, context.Canceled)
	ok, err := c.DatabaseExists(ctx, "d")
	require.NoError(t, err)
	assert.True(t, ok, "the failed drop did nothing")
}

func TestClusters(t *testing.T) {
	t.Parallel()
	cs := NewClusters("a", "b", "a")
	assert.Equal(t, []string{"a", "b"}, cs.Names())
	_, err := cs.Session(ctx, "zz", domain.Principal{})
	assert.Equal(t, "cluster_not_found", code(err))

	s, err := cs.Session(ctx, "a", domain.Principal{Name: "alice"})
	require.NoError(t, err)
	require.NoError(t, s.Catalog().CreateDatabase(ctx, "d", domain.DatabaseDescriptor{}, false))
	ok, _ := cs.Cluster("a").Catalog().DatabaseExists(ctx, "d")
	assert.True(t, ok)
	ok, _ = cs.Cluster("b").Catalog().DatabaseExists(ctx, "d")
	assert.False(t, ok, "clusters are independent")

	_, err = s.Writer().Write(ctx, &domain.WriteBatch{})
	assert.Equal(t, "unsupported", code(err))
	_, err = s.Lookup().Lookup(ctx, &domain.LookupRequest{})
	assert.Equal(t, "unsupported", code(err))
	_, err = s.Lookup().PrefixLookup(ctx, &domain.PrefixLookupRequest{})
	assert.Equal(t, "unsupported", code(err))
	assert.NoError(t, cs.Cluster("a").Close(ctx))
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	c := NewCatalog()
	require.NoError(t, c.CreateDatabase(ctx, "shop", domain.DatabaseDescriptor{}, false))
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func(i int) {
			defer func() { done <- struct{}{} }()
			p := domain.TablePath{Database: "shop", Table: string(rune('a' + i))}
			for j := 0; j < 20; j++ {
				_ = c.CreateTable(ctx, p, pkTable(), true)
				_, _ = c.GetTable(ctx, p)
				_, _ = c.ListTables(ctx, "shop")
				_ = c.DropTable(ctx, p, true)
			}
		}(i)
	}
	for i := 0; i < 4; i++ {
		<-done
	}
}
