package contract

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// NewCatalog returns the catalog under test. It is called once per scenario;
// it may return a fresh adapter each time or the same one (a shared cluster).
// Cleanups registered on t run when the scenario ends.
type NewCatalog func(t *testing.T) domain.Catalog

// RunCatalog runs the domain.Catalog contract against the adapter newCatalog
// returns: database, table and partition lifecycles with their not-found,
// already-exists and not-empty errors, the ignore-if flags and cascade.
func RunCatalog(t *testing.T, newCatalog NewCatalog) {
	scenarios := []struct {
		name string
		run  func(t *testing.T, c domain.Catalog)
	}{
		{"DatabaseLifecycle", catalogDatabaseLifecycle},
		{"DatabaseWithoutDescriptor", catalogDatabaseWithoutDescriptor},
		{"DropDatabaseNotEmptyAndCascade", catalogDropDatabaseNotEmptyAndCascade},
		{"InvalidNames", catalogInvalidNames},
		{"TableLifecycle", catalogTableLifecycle},
		{"TableInMissingDatabase", catalogTableInMissingDatabase},
		{"AddColumn", catalogAddColumn},
		{"Partitions", catalogPartitions},
		{"PartitionsOfUnpartitionedTable", catalogPartitionsOfUnpartitionedTable},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, newCatalog(t)) })
	}
}

// Ctx is the context of one scenario: bounded, so that a hanging adapter
// fails the test instead of the test binary's timeout.
func Ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// UniqueName returns prefix plus a random suffix: names no other run uses.
func UniqueName(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}

// RequireKind checks that err is a *domain.Error of kind and resource.
func RequireKind(t *testing.T, err error, kind domain.Kind, res domain.Resource) *domain.Error {
	t.Helper()
	require.Error(t, err)
	de := domain.AsError(err)
	require.NotNil(t, de, "want *domain.Error, got %T: %v", err, err)
	assert.Equal(t, kind, de.Kind, "kind of %v", err)
	assert.Equal(t, res, de.Resource, "resource of %v", err)
	return de
}

// NewDatabase creates a database with a unique name and drops it (cascade)
// when t ends.
func NewDatabase(t *testing.T, c domain.Catalog, prefix string) string {
	t.Helper()
	name := UniqueName(prefix)
	require.NoError(t, c.CreateDatabase(Ctx(t), name, domain.DatabaseDescriptor{}, false))
	dropLater(t, c, name)
	return name
}

func dropLater(t *testing.T, c domain.Catalog, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.DropDatabase(ctx, name, true, true)
	})
}

// Column is a column with an unassigned id.
func Column(name string, root domain.TypeRoot, nullable bool) domain.Column {
	return domain.Column{Name: name, Type: domain.DataType{Root: root, Nullable: nullable}, ID: domain.UnassignedFieldID}
}

func logTable() domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			Column("id", domain.TypeBigInt, true),
			Column("msg", domain.TypeString, true),
		}},
		BucketCount: 1,
		Comment:     "log table",
	}
}

func catalogDatabaseLifecycle(t *testing.T, c domain.Catalog) {
	ctx := Ctx(t)
	name := UniqueName("ct_db")
	dropLater(t, c, name)

	ok, err := c.DatabaseExists(ctx, name)
	require.NoError(t, err)
	assert.False(t, ok)

	desc := domain.DatabaseDescriptor{Comment: "contract", CustomProperties: map[string]string{"owner": "gw", "k": "v"}}
	require.NoError(t, c.CreateDatabase(ctx, name, desc, false))
	de := RequireKind(t, c.CreateDatabase(ctx, name, desc, false), domain.KindAlreadyExists, domain.ResourceDatabase)
	assert.Equal(t, "database_already_exists", de.Code())
	assert.False(t, de.Retryable)
	require.NoError(t, c.CreateDatabase(ctx, name, domain.DatabaseDescriptor{Comment: "other"}, true), "ignoreIfExists")

	ok, err = c.DatabaseExists(ctx, name)
	require.NoError(t, err)
	assert.True(t, ok)
	names, err := c.ListDatabases(ctx)
	require.NoError(t, err)
	assert.Contains(t, names, name)

	info, err := c.GetDatabase(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, name, info.Name)
	assert.Equal(t, desc, info.Descriptor, "the first definition stays")
	assert.WithinDuration(t, time.Now(), info.CreatedTime, time.Hour, "creation time")
	assert.False(t, info.ModifiedTime.Before(info.CreatedTime))

	require.NoError(t, c.DropDatabase(ctx, name, false, false))
	de = RequireKind(t, c.DropDatabase(ctx, name, false, false), domain.KindNotFound, domain.ResourceDatabase)
	assert.Equal(t, "database_not_found", de.Code())
	require.NoError(t, c.DropDatabase(ctx, name, true, false), "ignoreIfNotExists")

	_, err = c.GetDatabase(ctx, name)
	RequireKind(t, err, domain.KindNotFound, domain.ResourceDatabase)
	_, err = c.ListTables(ctx, name)
	RequireKind(t, err, domain.KindNotFound, domain.ResourceDatabase)
	ok, err = c.DatabaseExists(ctx, name)
	require.NoError(t, err)
	assert.False(t, ok)
	names, err = c.ListDatabases(ctx)
	require.NoError(t, err)
	assert.NotContains(t, names, name)
}

func catalogDatabaseWithoutDescriptor(t *testing.T, c domain.Catalog) {
	ctx := Ctx(t)
	name := NewDatabase(t, c, "ct_plain")
	info, err := c.GetDatabase(ctx, name)
	require.NoError(t, err)
	assert.Empty(t, info.Descriptor.Comment)
	assert.Empty(t, info.Descriptor.CustomProperties)
	tables, err := c.ListTables(ctx, name)
	require.NoError(t, err)
	assert.Empty(t, tables)
}

func catalogDropDatabaseNotEmptyAndCascade(t *testing.T, c domain.Catalog) {
	ctx := Ctx(t)
	name := NewDatabase(t, c, "ct_ne")
	path := domain.TablePath{Database: name, Table: "events"}
	require.NoError(t, c.CreateTable(ctx, path, logTable(), false))

	de := RequireKind(t, c.DropDatabase(ctx, name, false, false), domain.KindNotEmpty, domain.ResourceDatabase)
	assert.Equal(t, "database_not_empty", de.Code())
	ok, err := c.TableExists(ctx, path)
	require.NoError(t, err)
	assert.True(t, ok, "a refused drop changes nothing")

	require.NoError(t, c.DropDatabase(ctx, name, false, true), "cascade")
	ok, err = c.DatabaseExists(ctx, name)
	require.NoError(t, err)
	assert.False(t, ok)
	ok, err = c.TableExists(ctx, path)
	require.NoError(t, err)
	assert.False(t, ok, "cascade drops the tables")
}

func catalogInvalidNames(t *testing.T, c domain.Catalog) {
	ctx := Ctx(t)
	for _, bad := range []string{"has space", "__internal", "dot.ted"} {
		err := c.CreateDatabase(ctx, bad, domain.DatabaseDescriptor{}, false)
		RequireKind(t, err, domain.KindInvalidArgument, domain.ResourceNone)
		ok, err := c.DatabaseExists(ctx, bad)
		if err == nil {
			assert.False(t, ok, "%q was not created", bad)
		}
	}
	db := NewDatabase(t, c, "ct_names")
	err := c.CreateTable(ctx, domain.TablePath{Database: db, Table: "has space"}, logTable(), false)
	RequireKind(t, err, domain.KindInvalidArgument, domain.ResourceNone)
}

func usersTable() domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema: domain.Schema{
			Columns: []domain.Column{
				Column("id", domain.TypeInteger, false),
				{Name: "name", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, Comment: "display name", ID: domain.UnassignedFieldID},
				{Name: "amount", Type: domain.DataType{Root: domain.TypeDecimal, Nullable: true, Precision: 12, Scale: 2}, ID: domain.UnassignedFieldID},
			},
			PrimaryKey: []string{"id"},
		},
		BucketCount:      2,
		Comment:          "users",
		Properties:       map[string]string{"table.replication.factor": "1"},
		CustomProperties: map[string]string{"owner": "gw"},
	}
}

func catalogTableLifecycle(t *testing.T, c domain.Catalog) {
	ctx := Ctx(t)
	db := NewDatabase(t, c, "ct_tbl")
	path := domain.TablePath{Database: db, Table: "users"}

	ok, err := c.TableExists(ctx, path)
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, c.CreateTable(ctx, path, usersTable(), false))
	de := RequireKind(t, c.CreateTable(ctx, path, usersTable(), false), domain.KindAlreadyExists, domain.ResourceTable)
	assert.Equal(t, "table_already_exists", de.Code())
	require.NoError(t, c.CreateTable(ctx, path, logTable(), true), "ignoreIfExists")

	ok, err = c.TableExists(ctx, path)
	require.NoError(t, err)
	assert.True(t, ok)
	tables, err := c.ListTables(ctx, db)
	require.NoError(t, err)
	assert.Equal(t, []string{"users"}, tables)

	info, err := c.GetTable(ctx, path)
	require.NoError(t, err)
	assert.Equal(t, path, info.Path)
	assert.Positive(t, info.TableID)
	assert.Equal(t, int32(1), info.SchemaID)
	d := info.Descriptor
	assert.Equal(t, "users", d.Comment, "the first definition stays")
	assert.Equal(t, []string{"id"}, d.Schema.PrimaryKey)
	require.Len(t, d.Schema.Columns, 3)
	for i, col := range d.Schema.Columns {
		assert.Equal(t, int32(i), col.ID, "column ids in declaration order")
	}
	assert.False(t, d.Schema.Columns[0].Type.Nullable, "primary-key columns are NOT NULL")
	assert.Equal(t, "display name", d.Schema.Columns[1].Comment)
	assert.Equal(t, domain.TypeDecimal, d.Schema.Columns[2].Type.Root)
	assert.Equal(t, 12, d.Schema.Columns[2].Type.Precision)
	assert.Equal(t, 2, d.Schema.Columns[2].Type.Scale)
	assert.Equal(t, 2, d.BucketCount)
	assert.Equal(t, []string{"id"}, d.BucketKeys, "default bucket keys: the primary key")
	assert.Equal(t, "gw", d.CustomProperties["owner"])
	assert.Equal(t, "1", d.Properties["table.replication.factor"])

	require.NoError(t, c.DropTable(ctx, path, false))
	de = RequireKind(t, c.DropTable(ctx, path, false), domain.KindNotFound, domain.ResourceTable)
	assert.Equal(t, "table_not_found", de.Code())
	require.NoError(t, c.DropTable(ctx, path, true), "ignoreIfNotExists")
	_, err = c.GetTable(ctx, path)
	RequireKind(t, err, domain.KindNotFound, domain.ResourceTable)
	ok, err = c.TableExists(ctx, path)
	require.NoError(t, err)
	assert.False(t, ok)
	tables, err = c.ListTables(ctx, db)
	require.NoError(t, err)
	assert.Empty(t, tables)
}

func catalogTableInMissingDatabase(t *testing.T, c domain.Catalog) {
	ctx := Ctx(t)
	missing := UniqueName("ct_missing")
	path := domain.TablePath{Database: missing, Table: "t"}
	RequireKind(t, c.CreateTable(ctx, path, logTable(), false), domain.KindNotFound, domain.ResourceDatabase)
	ok, err := c.TableExists(ctx, path)
	require.NoError(t, err)
	assert.False(t, ok)
	// Fluss resolves the table path as a whole: a table in a missing
	// database is a missing table.
	_, err = c.GetTable(ctx, path)
	RequireKind(t, err, domain.KindNotFound, domain.ResourceTable)
	RequireKind(t, c.DropTable(ctx, path, false), domain.KindNotFound, domain.ResourceTable)
	require.NoError(t, c.DropTable(ctx, path, true), "ignoreIfNotExists")
	_, err = c.ListPartitions(ctx, path)
	RequireKind(t, err, domain.KindNotFound, domain.ResourceTable)
}

func catalogAddColumn(t *testing.T, c domain.Catalog) {
	ctx := Ctx(t)
	db := NewDatabase(t, c, "ct_alter")
	path := domain.TablePath{Database: db, Table: "users"}
	require.NoError(t, c.CreateTable(ctx, path, usersTable(), false))
	before, err := c.GetTable(ctx, path)
	require.NoError(t, err)

	email := domain.Column{Name: "email", Type: domain.DataType{Root: domain.TypeString, Nullable: true}, Comment: "added"}
	require.NoError(t, c.AlterTable(ctx, path, []domain.TableChange{{Kind: domain.ChangeAddColumn, Column: email}}, false))
	after, err := c.GetTable(ctx, path)
	require.NoError(t, err)
	cols := after.Descriptor.Schema.Columns
	require.Len(t, cols, 4)
	assert.Equal(t, "email", cols[3].Name, "added last")
	assert.Equal(t, "added", cols[3].Comment)
	assert.True(t, cols[3].Type.Nullable)
	assert.Equal(t, int32(3), cols[3].ID, "the next field id")
	assert.Greater(t, after.SchemaID, before.SchemaID)
	assert.Equal(t, before.TableID, after.TableID)

	err = c.AlterTable(ctx, path, []domain.TableChange{{Kind: domain.ChangeAddColumn, Column: email}}, false)
	RequireKind(t, err, domain.KindInvalidArgument, domain.ResourceNone)
	again, err := c.GetTable(ctx, path)
	require.NoError(t, err)
	assert.Equal(t, after.SchemaID, again.SchemaID, "a refused alter changes nothing")

	missing := domain.TablePath{Database: db, Table: "nope"}
	other := domain.Column{Name: "x", Type: domain.DataType{Root: domain.TypeString, Nullable: true}}
	err = c.AlterTable(ctx, missing, []domain.TableChange{{Kind: domain.ChangeAddColumn, Column: other}}, false)
	RequireKind(t, err, domain.KindNotFound, domain.ResourceTable)
	require.NoError(t, c.AlterTable(ctx, missing, []domain.TableChange{{Kind: domain.ChangeAddColumn, Column: other}}, true),
		"ignoreIfNotExists")
}

func partitionedTable() domain.TableDescriptor {
	return domain.TableDescriptor{
		Schema: domain.Schema{Columns: []domain.Column{
			Column("id", domain.TypeBigInt, true),
			Column("dt", domain.TypeString, true),
			Column("region", domain.TypeString, true),
		}},
		PartitionKeys: []string{"dt", "region"},
		BucketCount:   1,
	}
}

func catalogPartitions(t *testing.T, c domain.Catalog) {
	ctx := Ctx(t)
	db := NewDatabase(t, c, "ct_part")
	path := domain.TablePath{Database: db, Table: "sales"}
	require.NoError(t, c.CreateTable(ctx, path, partitionedTable(), false))

	parts, err := c.ListPartitions(ctx, path)
	require.NoError(t, err)
	assert.Empty(t, parts)

	a := domain.PartitionSpec{{Key: "dt", Value: "20260822"}, {Key: "region", Value: "eu"}}
	b := domain.PartitionSpec{{Key: "dt", Value: "20260821"}, {Key: "region", Value: "us"}}
	require.NoError(t, c.CreatePartition(ctx, path, a, false))
	require.NoError(t, c.CreatePartition(ctx, path, b, false))
	de := RequireKind(t, c.CreatePartition(ctx, path, a, false), domain.KindAlreadyExists, domain.ResourcePartition)
	assert.Equal(t, "partition_already_exists", de.Code())
	require.NoError(t, c.CreatePartition(ctx, path, a, true), "ignoreIfExists")

	parts, err = c.ListPartitions(ctx, path)
	require.NoError(t, err)
	require.Len(t, parts, 2)
	byName := map[string]domain.PartitionInfo{}
	for _, p := range parts {
		byName[p.Name] = p
		assert.GreaterOrEqual(t, p.ID, int64(0))
	}
	require.Contains(t, byName, "20260822$eu", "the name is the values joined by $")
	require.Contains(t, byName, "20260821$us")
	assert.Equal(t, a, byName["20260822$eu"].Spec)
	assert.Equal(t, b, byName["20260821$us"].Spec)
	assert.NotEqual(t, byName["20260822$eu"].ID, byName["20260821$us"].ID)

	require.NoError(t, c.DropPartition(ctx, path, a, false))
	de = RequireKind(t, c.DropPartition(ctx, path, a, false), domain.KindNotFound, domain.ResourcePartition)
	assert.Equal(t, "partition_not_found", de.Code())
	require.NoError(t, c.DropPartition(ctx, path, a, true), "ignoreIfNotExists")
	parts, err = c.ListPartitions(ctx, path)
	require.NoError(t, err)
	require.Len(t, parts, 1)
	assert.Equal(t, "20260821$us", parts[0].Name)

	missing := domain.TablePath{Database: db, Table: "nope"}
	_, err = c.ListPartitions(ctx, missing)
	RequireKind(t, err, domain.KindNotFound, domain.ResourceTable)
	RequireKind(t, c.CreatePartition(ctx, missing, a, false), domain.KindNotFound, domain.ResourceTable)
	RequireKind(t, c.DropPartition(ctx, missing, a, false), domain.KindNotFound, domain.ResourceTable)
}

func catalogPartitionsOfUnpartitionedTable(t *testing.T, c domain.Catalog) {
	ctx := Ctx(t)
	db := NewDatabase(t, c, "ct_flat")
	path := domain.TablePath{Database: db, Table: "flat"}
	require.NoError(t, c.CreateTable(ctx, path, logTable(), false))
	_, err := c.ListPartitions(ctx, path)
	RequireKind(t, err, domain.KindInvalidArgument, domain.ResourceNone)
	spec := domain.PartitionSpec{{Key: "dt", Value: "20260822"}}
	RequireKind(t, c.CreatePartition(ctx, path, spec, false), domain.KindInvalidArgument, domain.ResourceNone)
}
