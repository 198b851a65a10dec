package application

import (
	"context"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// fakeClusters hands out one session over catalog for cluster "c1"; any other
// id is cluster_not_found.
type fakeClusters struct {
	catalog *fakeCatalog
	// principal records the principal of the last session request.
	principal domain.Principal
}

func (f *fakeClusters) Names() []string { return []string{"c1"} }

func (f *fakeClusters) Session(_ context.Context, cluster string, p domain.Principal) (domain.Session, error) {
	if cluster != "c1" {
		return nil, domain.NotFound(domain.ResourceCluster, "cluster `%s` is not configured", cluster)
	}
	f.principal = p
	return fakeSession{f.catalog}, nil
}

type fakeSession struct{ c *fakeCatalog }

func (s fakeSession) Catalog() domain.Catalog  { return s.c }
func (s fakeSession) Writer() domain.RowWriter { panic("unexpected Writer call") }
func (s fakeSession) Lookup() domain.Lookup    { panic("unexpected Lookup call") }

// fakeCatalog is a hand-written Catalog: each test sets the functions it
// expects to be called; an unexpected call panics on the nil function.
type fakeCatalog struct {
	listDatabases   func() ([]string, error)
	databaseExists  func(name string) (bool, error)
	getDatabase     func(name string) (domain.DatabaseInfo, error)
	createDatabase  func(name string, d domain.DatabaseDescriptor, ignore bool) error
	dropDatabase    func(name string, ignore, cascade bool) error
	listTables      func(db string) ([]string, error)
	tableExists     func(p domain.TablePath) (bool, error)
	getTable        func(p domain.TablePath) (domain.TableInfo, error)
	createTable     func(p domain.TablePath, d domain.TableDescriptor, ignore bool) error
	alterTable      func(p domain.TablePath, ch []domain.TableChange, ignore bool) error
	dropTable       func(p domain.TablePath, ignore bool) error
	listPartitions  func(p domain.TablePath) ([]domain.PartitionInfo, error)
	createPartition func(p domain.TablePath, s domain.PartitionSpec, ignore bool) error
	dropPartition   func(p domain.TablePath, s domain.PartitionSpec, ignore bool) error
}

func (f *fakeCatalog) ListDatabases(context.Context) ([]string, error) { return f.listDatabases() }
func (f *fakeCatalog) DatabaseExists(_ context.Context, n string) (bool, error) {
	if f.databaseExists == nil {
		return true, nil // tests that do not set it are not about databases
	}
	return f.databaseExists(n)
}
func (f *fakeCatalog) GetDatabase(_ context.Context, n string) (domain.DatabaseInfo, error) {
	return f.getDatabase(n)
}
func (f *fakeCatalog) CreateDatabase(_ context.Context, n string, d domain.DatabaseDescriptor, i bool) error {
	return f.createDatabase(n, d, i)
}
func (f *fakeCatalog) DropDatabase(_ context.Context, n string, i, c bool) error {
	return f.dropDatabase(n, i, c)
}
func (f *fakeCatalog) ListTables(_ context.Context, db string) ([]string, error) {
	return f.listTables(db)
}
func (f *fakeCatalog) TableExists(_ context.Context, p domain.TablePath) (bool, error) {
	return f.tableExists(p)
}
func (f *fakeCatalog) GetTable(_ context.Context, p domain.TablePath) (domain.TableInfo, error) {
	return f.getTable(p)
}
func (f *fakeCatalog) CreateTable(_ context.Context, p domain.TablePath, d domain.TableDescriptor, i bool) error {
	return f.createTable(p, d, i)
}
func (f *fakeCatalog) AlterTable(_ context.Context, p domain.TablePath, ch []domain.TableChange, i bool) error {
	return f.alterTable(p, ch, i)
}
func (f *fakeCatalog) DropTable(_ context.Context, p domain.TablePath, i bool) error {
	return f.dropTable(p, i)
}
func (f *fakeCatalog) ListPartitions(_ context.Context, p domain.TablePath) ([]domain.PartitionInfo, error) {
	return f.listPartitions(p)
}
func (f *fakeCatalog) CreatePartition(_ context.Context, p domain.TablePath, s domain.PartitionSpec, i bool) error {
	return f.createPartition(p, s, i)
}
func (f *fakeCatalog) DropPartition(_ context.Context, p domain.TablePath, s domain.PartitionSpec, i bool) error {
	return f.dropPartition(p, s, i)
}

var scope = Scope{Cluster: "c1", Principal: domain.Principal{Name: "alice", Method: "token"}}

func newService(c *fakeCatalog) (*CatalogService, *fakeClusters) {
	clusters := &fakeClusters{catalog: c}
	return NewCatalogService(clusters, nil), clusters
}

// intColumn is a nullable INTEGER column with an unassigned id.
func intColumn(name string, nullable bool) domain.Column {
	return domain.Column{Name: name, Type: domain.DataType{Root: domain.TypeInteger, Nullable: nullable}, ID: domain.UnassignedFieldID}
}
