package application

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestPaginate(t *testing.T) {
	t.Parallel()
	names := []string{"d", "a", "c", "b", "e"}
	cases := []struct {
		name      string
		req       PageRequest
		wantItems []string
		wantNext  string // the item the next token points after, "" for none
		wantErr   string
	}{
		{name: "default size", req: PageRequest{}, wantItems: []string{"a", "b", "c", "d", "e"}},
		{name: "first page", req: PageRequest{MaxResults: 2}, wantItems: []string{"a", "b"}, wantNext: "b"},
		{name: "middle page", req: PageRequest{MaxResults: 2, PageToken: testPageToken("b")}, wantItems: []string{"c", "d"}, wantNext: "d"},
		{name: "last page", req: PageRequest{MaxResults: 2, PageToken: testPageToken("d")}, wantItems: []string{"e"}},
		{name: "exact fit has no next", req: PageRequest{MaxResults: 5}, wantItems: []string{"a", "b", "c", "d", "e"}},
		{name: "token of a vanished key", req: PageRequest{MaxResults: 2, PageToken: testPageToken("bb")}, wantItems: []string{"c", "d"}, wantNext: "d"},
		{name: "token past the end", req: PageRequest{PageToken: testPageToken("z")}, wantItems: []string{}},
		{name: "max size", req: PageRequest{MaxResults: MaxPageSize}, wantItems: []string{"a", "b", "c", "d", "e"}},
		{name: "too small", req: PageRequest{MaxResults: -1}, wantErr: "max_results"},
		{name: "too large", req: PageRequest{MaxResults: MaxPageSize + 1}, wantErr: "max_results"},
		{name: "garbage token", req: PageRequest{PageToken: "!!"}, wantErr: "page_token"},
		{name: "foreign base64 token", req: PageRequest{PageToken: "YWJj"}, wantErr: "page_token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			page, err := paginate(testTokens, testScope, append([]string(nil), names...), identity, tc.req)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantItems, append([]string{}, page.Items...))
			if tc.wantNext == "" {
				assert.Empty(t, page.NextPageToken)
			} else {
				assert.Equal(t, testPageToken(tc.wantNext), page.NextPageToken)
			}
		})
	}
}

func TestPaginateDoesNotLetCallersGrowIntoTheNextPage(t *testing.T) {
	t.Parallel()
	items := []string{"a", "b", "c"}
	page, err := paginate(testTokens, testScope, items, identity, PageRequest{MaxResults: 1})
	require.NoError(t, err)
	page.Items = append(page.Items, "x")
	assert.Equal(t, "b", items[1])
}

func TestSessionErrorsPassThrough(t *testing.T) {
	t.Parallel()
	svc, _ := newService(&fakeCatalog{})
	_, err := svc.ListDatabases(context.Background(), Scope{Cluster: "nope"}, PageRequest{})
	require.Error(t, err)
	assert.Equal(t, "cluster_not_found", domain.AsError(err).Code())
	assert.Equal(t, []string{"c1"}, svc.Clusters())
}

func TestPrincipalReachesTheSession(t *testing.T) {
	t.Parallel()
	svc, clusters := newService(&fakeCatalog{listDatabases: func() ([]string, error) { return nil, nil }})
	_, err := svc.ListDatabases(context.Background(), scope, PageRequest{})
	require.NoError(t, err)
	assert.Equal(t, scope.Principal, clusters.principal)
}

func TestCreateDatabase(t *testing.T) {
	t.Parallel()
	exists := domain.AlreadyExists(domain.ResourceDatabase, "exists")
	cases := []struct {
		name        string
		cmd         CreateDatabase
		createErr   error
		wantCreated bool
		wantCode    string
		wantCalls   int
	}{
		{name: "created", cmd: CreateDatabase{Name: "db"}, wantCreated: true, wantCalls: 1},
		{name: "exists", cmd: CreateDatabase{Name: "db"}, createErr: exists, wantCode: "database_already_exists", wantCalls: 1},
		{name: "exists ignored", cmd: CreateDatabase{Name: "db", IgnoreIfExists: true}, createErr: exists, wantCreated: false, wantCalls: 1},
		{name: "other error not ignored", cmd: CreateDatabase{Name: "db", IgnoreIfExists: true}, createErr: domain.Errorf(domain.KindUnavailable, "down"), wantCode: "unavailable", wantCalls: 1},
		{name: "bad name", cmd: CreateDatabase{Name: "a.b"}, wantCode: "invalid_argument"},
		{name: "reserved name", cmd: CreateDatabase{Name: "__x"}, wantCode: "invalid_argument"},
		{name: "empty property key", cmd: CreateDatabase{Name: "db", Descriptor: domain.DatabaseDescriptor{CustomProperties: map[string]string{"": "v"}}}, wantCode: "invalid_argument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			svc, _ := newService(&fakeCatalog{
				createDatabase: func(name string, _ domain.DatabaseDescriptor, ignore bool) error {
					calls++
					assert.False(t, ignore, "the use case resolves ignore itself")
					return tc.createErr
				},
				getDatabase: func(name string) (domain.DatabaseInfo, error) { return domain.DatabaseInfo{Name: name}, nil },
			})
			info, created, err := svc.CreateDatabase(context.Background(), scope, tc.cmd)
			assert.Equal(t, tc.wantCalls, calls)
			if tc.wantCode != "" {
				require.Error(t, err)
				assert.Equal(t, tc.wantCode, domain.AsError(err).Code())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantCreated, created)
			assert.Equal(t, "db", info.Name)
		})
	}
}

func TestNameValidationHappensBeforeTheCluster(t *testing.T) {
	t.Parallel()
	svc, _ := newService(&fakeCatalog{}) // any catalog call would panic
	ctx := context.Background()
	bad := domain.TablePath{Database: "ok", Table: "no way"}
	checks := map[string]error{
		"GetDatabase":       func() error { _, err := svc.GetDatabase(ctx, scope, "a b"); return err }(),
		"DatabaseExists":    func() error { _, err := svc.DatabaseExists(ctx, scope, ""); return err }(),
		"DropDatabase":      svc.DropDatabase(ctx, scope, DropDatabase{Name: ".."}),
		"ListTables":        func() error { _, err := svc.ListTables(ctx, scope, "$", PageRequest{}); return err }(),
		"GetTable":          func() error { _, err := svc.GetTable(ctx, scope, bad); return err }(),
		"TableExists":       func() error { _, err := svc.TableExists(ctx, scope, bad); return err }(),
		"DropTable":         svc.DropTable(ctx, scope, bad, false),
		"ListPartitions":    func() error { _, err := svc.ListPartitions(ctx, scope, bad, PageRequest{}); return err }(),
		"DropPartition":     svc.DropPartition(ctx, scope, DropPartition{Path: bad, Name: "x"}),
		"ListDatabasesPage": func() error { _, err := svc.ListDatabases(ctx, scope, PageRequest{MaxResults: 5000}); return err }(),
	}
	for name, err := range checks {
		require.Error(t, err, name)
		assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err), name)
	}
}

func TestCreateTable(t *testing.T) {
	t.Parallel()
	path := domain.TablePath{Database: "db", Table: "t"}
	valid := domain.TableDescriptor{Schema: domain.Schema{Columns: []domain.Column{intColumn("a", false), intColumn("b", true)}, PrimaryKey: []string{"a"}}}
	cases := []struct {
		name        string
		cmd         CreateTable
		dbExists    bool
		tableExists bool
		createErr   error
		wantCreated bool
		wantCode    string
		wantCreate  bool
	}{
		{name: "created", cmd: CreateTable{Path: path, Descriptor: valid}, wantCreated: true, wantCreate: true},
		{name: "exists", cmd: CreateTable{Path: path, Descriptor: valid}, createErr: domain.AlreadyExists(domain.ResourceTable, "x"), wantCode: "table_already_exists", wantCreate: true},
		{name: "exists ignored", cmd: CreateTable{Path: path, Descriptor: valid, IgnoreIfExists: true}, createErr: domain.AlreadyExists(domain.ResourceTable, "x"), wantCreate: true},
		{name: "invalid descriptor", cmd: CreateTable{Path: path, Descriptor: domain.TableDescriptor{}}, wantCode: "invalid_argument"},
		{name: "reserved table name", cmd: CreateTable{Path: domain.TablePath{Database: "db", Table: "__t"}, Descriptor: valid}, wantCode: "invalid_argument"},
		{name: "validate only", cmd: CreateTable{Path: path, Descriptor: valid, ValidateOnly: true}, dbExists: true},
		// The official dry run is local: it asks Fluss nothing.
		{name: "validate only without database", cmd: CreateTable{Path: path, Descriptor: valid, ValidateOnly: true}},
		{name: "validate only existing table", cmd: CreateTable{Path: path, Descriptor: valid, ValidateOnly: true}, dbExists: true, tableExists: true},
		{name: "validate only invalid descriptor", cmd: CreateTable{Path: path, Descriptor: domain.TableDescriptor{}, ValidateOnly: true}, wantCode: "invalid_argument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			created := false
			svc, _ := newService(&fakeCatalog{
				databaseExists: func(string) (bool, error) {
					assert.False(t, tc.cmd.ValidateOnly, "a dry run asks Fluss nothing")
					return tc.dbExists, nil
				},
				tableExists: func(domain.TablePath) (bool, error) {
					assert.False(t, tc.cmd.ValidateOnly, "a dry run asks Fluss nothing")
					return tc.tableExists, nil
				},
				createTable: func(p domain.TablePath, d domain.TableDescriptor, _ bool) error {
					created = true
					assert.Equal(t, path, p)
					return tc.createErr
				},
				getTable: func(p domain.TablePath) (domain.TableInfo, error) {
					return domain.TableInfo{Path: p, TableID: 7, Descriptor: valid}, nil
				},
			})
			info, wasCreated, err := svc.CreateTable(context.Background(), scope, tc.cmd)
			assert.Equal(t, tc.wantCreate, created)
			if tc.wantCode != "" {
				require.Error(t, err)
				assert.Equal(t, tc.wantCode, domain.AsError(err).Code())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantCreated, wasCreated)
			if tc.cmd.ValidateOnly {
				assert.Zero(t, info.TableID, "nothing was created")
				assert.Equal(t, valid, info.Descriptor)
			} else {
				assert.Equal(t, int64(7), info.TableID)
			}
		})
	}
}

func TestAlterTable(t *testing.T) {
	t.Parallel()
	path := domain.TablePath{Database: "db", Table: "t"}
	addB := domain.TableChange{Kind: domain.ChangeAddColumn, Column: intColumn("b", true)}
	cases := []struct {
		name      string
		cmd       AlterTable
		alterErr  error
		wantFound bool
		wantCode  string
		wantMsg   string
	}{
		{name: "applied", cmd: AlterTable{Path: path, Changes: []domain.TableChange{addB}}, wantFound: true},
		{name: "no changes", cmd: AlterTable{Path: path}, wantCode: "invalid_argument", wantMsg: "changes"},
		{name: "not null column", cmd: AlterTable{Path: path, Changes: []domain.TableChange{{Kind: domain.ChangeAddColumn, Column: intColumn("c", false)}}}, wantCode: "invalid_argument", wantMsg: "changes[0]: an added column must be nullable"},
		{name: "blank column", cmd: AlterTable{Path: path, Changes: []domain.TableChange{{Kind: domain.ChangeAddColumn, Column: intColumn(" ", true)}}}, wantCode: "invalid_argument", wantMsg: "changes[0].name"},
		{name: "bad type", cmd: AlterTable{Path: path, Changes: []domain.TableChange{{Kind: domain.ChangeAddColumn, Column: domain.Column{Name: "c", Type: domain.DataType{Root: "INT", Nullable: true}}}}}, wantCode: "invalid_argument", wantMsg: "changes[0].data_type.type"},
		{name: "empty option key", cmd: AlterTable{Path: path, Changes: []domain.TableChange{{Kind: domain.ChangeResetConfig, Key: ""}}}, wantCode: "invalid_argument", wantMsg: "changes[0].key"},
		{name: "custom property key", cmd: AlterTable{Path: path, Changes: []domain.TableChange{{Kind: domain.ChangeSetConfig, Key: "app.owner", Value: "x"}, {Kind: domain.ChangeResetConfig, Key: "table.log.ttl"}}}, wantFound: true},
		{name: "schema and config changes mixed", cmd: AlterTable{Path: path, Changes: []domain.TableChange{addB, {Kind: domain.ChangeResetConfig, Key: "table.log.ttl"}}}, wantCode: "invalid_argument", wantMsg: "cannot be mixed"},
		{name: "unknown kind", cmd: AlterTable{Path: path, Changes: []domain.TableChange{{Kind: "drop_column"}}}, wantCode: "invalid_argument", wantMsg: "changes[0]"},
		{name: "missing table", cmd: AlterTable{Path: path, Changes: []domain.TableChange{addB}}, alterErr: domain.NotFound(domain.ResourceTable, "x"), wantCode: "table_not_found"},
		{name: "missing table ignored", cmd: AlterTable{Path: path, Changes: []domain.TableChange{addB}, IgnoreIfNotExists: true}, alterErr: domain.NotFound(domain.ResourceTable, "x")},
		{name: "missing database ignored", cmd: AlterTable{Path: path, Changes: []domain.TableChange{addB}, IgnoreIfNotExists: true}, alterErr: domain.NotFound(domain.ResourceDatabase, "x")},
		{name: "other errors are not ignored", cmd: AlterTable{Path: path, Changes: []domain.TableChange{addB}, IgnoreIfNotExists: true}, alterErr: domain.Errorf(domain.KindTimeout, "slow"), wantCode: "timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, _ := newService(&fakeCatalog{
				alterTable: func(p domain.TablePath, ch []domain.TableChange, ignore bool) error {
					assert.Equal(t, tc.cmd.Changes, ch)
					return tc.alterErr
				},
				getTable: func(p domain.TablePath) (domain.TableInfo, error) { return domain.TableInfo{Path: p, SchemaID: 2}, nil },
			})
			info, found, err := svc.AlterTable(context.Background(), scope, tc.cmd)
			if tc.wantCode != "" {
				require.Error(t, err)
				assert.Equal(t, tc.wantCode, domain.AsError(err).Code())
				assert.Contains(t, err.Error(), tc.wantMsg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantFound, found)
			if found {
				assert.Equal(t, int32(2), info.SchemaID)
			}
		})
	}
}

func partitionedInfo(p domain.TablePath) domain.TableInfo {
	return domain.TableInfo{Path: p, Descriptor: domain.TableDescriptor{PartitionKeys: []string{"dt", "region"}}}
}

func TestCreatePartition(t *testing.T) {
	t.Parallel()
	path := domain.TablePath{Database: "db", Table: "t"}
	unordered := domain.PartitionSpec{{Key: "region", Value: "eu"}, {Key: "dt", Value: "20260101"}}
	cases := []struct {
		name        string
		spec        domain.PartitionSpec
		ignore      bool
		table       func(domain.TablePath) (domain.TableInfo, error)
		createErr   error
		listed      []domain.PartitionInfo
		wantCode    string
		wantMsg     string
		wantID      int64
		wantCreated bool
	}{
		{name: "created in key order", spec: unordered, listed: []domain.PartitionInfo{{ID: 9, Name: "20260101$eu"}}, wantID: 9, wantCreated: true},
		{name: "created but gone before listing", spec: unordered, wantID: -1, wantCreated: true},
		{name: "exists", spec: unordered, createErr: domain.AlreadyExists(domain.ResourcePartition, "x"), wantCode: "partition_already_exists"},
		{name: "exists ignored", spec: unordered, ignore: true, createErr: domain.AlreadyExists(domain.ResourcePartition, "x"), listed: []domain.PartitionInfo{{ID: 3, Name: "20260101$eu"}}, wantID: 3},
		{name: "missing key", spec: unordered[:1], wantCode: "invalid_argument", wantMsg: `partition."dt"`},
		{name: "reserved value", spec: domain.PartitionSpec{{Key: "dt", Value: "__x"}, {Key: "region", Value: "eu"}}, wantCode: "invalid_argument", wantMsg: "reserved"},
		{
			name: "not partitioned", spec: unordered, wantCode: "invalid_argument", wantMsg: "not partitioned",
			table: func(p domain.TablePath) (domain.TableInfo, error) { return domain.TableInfo{Path: p}, nil },
		},
		{
			name: "table missing", spec: unordered, wantCode: "table_not_found",
			table: func(domain.TablePath) (domain.TableInfo, error) {
				return domain.TableInfo{}, domain.NotFound(domain.ResourceTable, "x")
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			getTable := tc.table
			if getTable == nil {
				getTable = func(p domain.TablePath) (domain.TableInfo, error) { return partitionedInfo(p), nil }
			}
			svc, _ := newService(&fakeCatalog{
				getTable: getTable,
				createPartition: func(_ domain.TablePath, s domain.PartitionSpec, ignore bool) error {
					assert.Equal(t, domain.PartitionSpec{{Key: "dt", Value: "20260101"}, {Key: "region", Value: "eu"}}, s)
					assert.False(t, ignore)
					return tc.createErr
				},
				listPartitions: func(domain.TablePath) ([]domain.PartitionInfo, error) { return tc.listed, nil },
			})
			info, created, err := svc.CreatePartition(context.Background(), scope, CreatePartition{Path: path, Spec: tc.spec, IgnoreIfExists: tc.ignore})
			if tc.wantCode != "" {
				require.Error(t, err)
				assert.Equal(t, tc.wantCode, domain.AsError(err).Code())
				assert.Contains(t, err.Error(), tc.wantMsg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantCreated, created)
			assert.Equal(t, tc.wantID, info.ID)
			assert.Equal(t, "20260101$eu", info.Name)
		})
	}
}

// TestCreatePartitionFollowsTheAutoPartitionRule: on a DAY auto-partitioned
// table, POST .../partitions refuses a name writes would refuse (wrong
// format, or older than the retention) with 400 naming the format, and
// creates nothing; a well-formed, retained name is created. A table's
// table.auto-partition.time-format (Fluss 1.0) replaces the unit's format,
// and with auto-partitioning off still decides the format (not the
// retention), as the 1.0 coordinator's createPartition does.
func TestCreatePartitionFollowsTheAutoPartitionRule(t *testing.T) {
	t.Parallel()
	path := domain.TablePath{Database: "db", Table: "t"}
	dayTable := map[string]string{domain.OptAutoPartitionEnabled: "true", domain.OptAutoPartitionTimeUnit: "DAY",
		domain.OptAutoPartitionRetention: "3"}
	isoTable := map[string]string{domain.OptAutoPartitionEnabled: "true", domain.OptAutoPartitionTimeUnit: "DAY",
		domain.OptAutoPartitionRetention: "3", domain.OptAutoPartitionTimeFormat: "yyyy-MM-dd"}
	formatOnly := map[string]string{domain.OptAutoPartitionTimeUnit: "MONTH", domain.OptAutoPartitionTimeFormat: "yyyy_MM"}
	cases := []struct {
		name           string
		props          map[string]string
		value, wantMsg string
	}{
		{name: "day", props: dayTable, value: "2026-12-03", wantMsg: "does not match the table's auto-partition format yyyyMMdd"},
		{name: "day", props: dayTable, value: "20261340", wantMsg: "does not match"},
		{name: "day", props: dayTable, value: "20261101", wantMsg: "older than the table's retention"},
		{name: "day", props: dayTable, value: "20261203"},
		{name: "iso", props: isoTable, value: "20261203", wantMsg: "does not match the table's auto-partition format yyyy-MM-dd"},
		{name: "iso", props: isoTable, value: "2026-11-01", wantMsg: "older than the table's retention"},
		{name: "iso", props: isoTable, value: "2026-12-03"},
		{name: "format-only", props: formatOnly, value: "202001", wantMsg: "auto-partitioning off"},
		{name: "format-only", props: formatOnly, value: "2020_01"},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/"+tc.value, func(t *testing.T) {
			t.Parallel()
			createdAny := false
			svc, _ := newService(&fakeCatalog{
				getTable: func(p domain.TablePath) (domain.TableInfo, error) {
					return domain.TableInfo{Path: p, Descriptor: domain.TableDescriptor{
						PartitionKeys: []string{"dt"}, Properties: tc.props,
					}}, nil
				},
				createPartition: func(domain.TablePath, domain.PartitionSpec, bool) error {
					createdAny = true
					return nil
				},
				listPartitions: func(domain.TablePath) ([]domain.PartitionInfo, error) { return nil, nil },
			})
			svc.now = func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }
			_, _, err := svc.CreatePartition(context.Background(), scope, CreatePartition{Path: path,
				Spec: domain.PartitionSpec{{Key: "dt", Value: tc.value}}})
			if tc.wantMsg == "" {
				require.NoError(t, err)
				assert.True(t, createdAny)
				return
			}
			require.Error(t, err)
			assert.Equal(t, "invalid_argument", domain.AsError(err).Code())
			assert.Contains(t, err.Error(), tc.wantMsg)
			assert.Contains(t, err.Error(), "the partition was not created")
			assert.False(t, createdAny, "nothing is created")
		})
	}
}

func TestDropPartition(t *testing.T) {
	t.Parallel()
	path := domain.TablePath{Database: "db", Table: "t"}
	cases := []struct {
		name     string
		partName string
		wantSpec domain.PartitionSpec
		wantMsg  string
	}{
		{name: "split by keys", partName: "20260101$eu", wantSpec: domain.PartitionSpec{{Key: "dt", Value: "20260101"}, {Key: "region", Value: "eu"}}},
		{name: "too few values", partName: "20260101", wantMsg: "has 1 value(s)"},
		{name: "too many values", partName: "a$b$c", wantMsg: "has 3 value(s)"},
		{name: "empty value", partName: "a$", wantMsg: "must not be empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got domain.PartitionSpec
			svc, _ := newService(&fakeCatalog{
				getTable: func(p domain.TablePath) (domain.TableInfo, error) { return partitionedInfo(p), nil },
				dropPartition: func(_ domain.TablePath, s domain.PartitionSpec, ignore bool) error {
					got = s
					assert.True(t, ignore)
					return nil
				},
			})
			err := svc.DropPartition(context.Background(), scope, DropPartition{Path: path, Name: tc.partName, IgnoreIfNotExists: true})
			if tc.wantMsg != "" {
				require.Error(t, err)
				assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
				assert.Contains(t, err.Error(), tc.wantMsg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantSpec, got)
		})
	}
}

func TestListings(t *testing.T) {
	t.Parallel()
	svc, _ := newService(&fakeCatalog{
		listDatabases: func() ([]string, error) { return []string{"b", "a"}, nil },
		listTables: func(db string) ([]string, error) {
			if db != "db" {
				return nil, domain.NotFound(domain.ResourceDatabase, "x")
			}
			return []string{"t2", "t1", "t3"}, nil
		},
		listPartitions: func(domain.TablePath) ([]domain.PartitionInfo, error) {
			return []domain.PartitionInfo{{ID: 2, Name: "b"}, {ID: 1, Name: "a"}}, nil
		},
	})
	ctx := context.Background()
	dbs, err := svc.ListDatabases(ctx, scope, PageRequest{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, dbs.Items)

	tables, err := svc.ListTables(ctx, scope, "db", PageRequest{MaxResults: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"t1", "t2"}, tables.Items)
	require.NotEmpty(t, tables.NextPageToken)
	tables, err = svc.ListTables(ctx, scope, "db", PageRequest{MaxResults: 2, PageToken: tables.NextPageToken})
	require.NoError(t, err)
	assert.Equal(t, []string{"t3"}, tables.Items)

	_, err = svc.ListTables(ctx, scope, "other", PageRequest{})
	assert.Equal(t, "database_not_found", domain.AsError(err).Code())

	parts, err := svc.ListPartitions(ctx, scope, domain.TablePath{Database: "db", Table: "t"}, PageRequest{MaxResults: 1})
	require.NoError(t, err)
	require.Len(t, parts.Items, 1)
	assert.Equal(t, "a", parts.Items[0].Name)
	assert.True(t, strings.TrimSpace(parts.NextPageToken) != "")
}

func TestDropDatabasePassesFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []DropDatabase{{Name: "d"}, {Name: "d", IgnoreIfNotExists: true}, {Name: "d", Cascade: true}} {
		svc, _ := newService(&fakeCatalog{dropDatabase: func(name string, ignore, cascade bool) error {
			assert.Equal(t, tc, DropDatabase{Name: name, IgnoreIfNotExists: ignore, Cascade: cascade})
			return nil
		}})
		require.NoError(t, svc.DropDatabase(context.Background(), scope, tc))
	}
}
