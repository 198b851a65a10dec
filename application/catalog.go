package application

import (
	"context"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

// Scope is who acts on which cluster: the `{cluster}` path segment and the
// authenticated principal.
type Scope struct {
	Cluster   string
	Principal domain.Principal
}

// CreateDatabase is the input of CatalogService.CreateDatabase.
type CreateDatabase struct {
	Name           string
	Descriptor     domain.DatabaseDescriptor
	IgnoreIfExists bool
}

// DropDatabase is the input of CatalogService.DropDatabase.
type DropDatabase struct {
	Name              string
	IgnoreIfNotExists bool
	// Cascade drops the database's tables too; without it a non-empty
	// database is refused with database_not_empty.
	Cascade bool
}

// CreateTable is the input of CatalogService.CreateTable.
type CreateTable struct {
	Path           domain.TablePath
	Descriptor     domain.TableDescriptor
	IgnoreIfExists bool
	// ValidateOnly checks the definition locally, without asking Fluss and
	// without creating anything.
	ValidateOnly bool
}

// AlterTable is the input of CatalogService.AlterTable.
type AlterTable struct {
	Path              domain.TablePath
	Changes           []domain.TableChange
	IgnoreIfNotExists bool
}

// CreatePartition is the input of CatalogService.CreatePartition. Spec gives
// every partition key of the table a value, in any order.
type CreatePartition struct {
	Path           domain.TablePath
	Spec           domain.PartitionSpec
	IgnoreIfExists bool
}

// DropPartition is the input of CatalogService.DropPartition. Name is the
// partition values joined by `$` in partition-key order.
type DropPartition struct {
	Path              domain.TablePath
	Name              string
	IgnoreIfNotExists bool
}

// CatalogService implements the catalog use cases over domain.Clusters.
type CatalogService struct {
	clusters domain.Clusters
	tokens   *sealed.Sealer
	now      func() time.Time // the auto-partition retention check's clock
}

// NewCatalogService returns the catalog use cases over clusters; tokens seals
// the page tokens of its listings (nil: a random key of this process).
func NewCatalogService(clusters domain.Clusters, tokens *sealed.Sealer) *CatalogService {
	if tokens == nil {
		tokens = sealed.NewRandom()
	}
	return &CatalogService{clusters: clusters, tokens: tokens, now: time.Now}
}

// Clusters returns the configured cluster ids in configuration order.
func (s *CatalogService) Clusters() []string {
	return s.clusters.Names()
}

func (s *CatalogService) catalog(ctx context.Context, scope Scope) (domain.Catalog, error) {
	session, err := s.clusters.Session(ctx, scope.Cluster, scope.Principal)
	if err != nil {
		return nil, err
	}
	return session.Catalog(), nil
}

// ListDatabases returns one page of database names in lexicographic order.
func (s *CatalogService) ListDatabases(ctx context.Context, scope Scope, page PageRequest) (Page[string], error) {
	if _, err := pageSize(page.MaxResults); err != nil {
		return Page[string]{}, err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return Page[string]{}, err
	}
	names, err := cat.ListDatabases(ctx)
	if err != nil {
		return Page[string]{}, err
	}
	return paginate(s.tokens, newTokenScope(scope, "databases"), names, identity, page)
}

// GetDatabase describes a database.
func (s *CatalogService) GetDatabase(ctx context.Context, scope Scope, name string) (domain.DatabaseInfo, error) {
	if err := domain.ValidateName("database", name); err != nil {
		return domain.DatabaseInfo{}, err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return domain.DatabaseInfo{}, err
	}
	return cat.GetDatabase(ctx, name)
}

// DatabaseExists reports whether a database exists. A name Fluss could never
// accept is reported as invalid rather than absent.
func (s *CatalogService) DatabaseExists(ctx context.Context, scope Scope, name string) (bool, error) {
	if err := domain.ValidateName("database", name); err != nil {
		return false, err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return false, err
	}
	return cat.DatabaseExists(ctx, name)
}

// CreateDatabase creates a database and describes it. created is false when
// the database already existed and IgnoreIfExists was set.
func (s *CatalogService) CreateDatabase(ctx context.Context, scope Scope, cmd CreateDatabase) (info domain.DatabaseInfo, created bool, err error) {
	if err := domain.ValidateNewName("database", cmd.Name); err != nil {
		return domain.DatabaseInfo{}, false, err
	}
	if err := validateCustomProperties("custom_properties", cmd.Descriptor.CustomProperties); err != nil {
		return domain.DatabaseInfo{}, false, err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return domain.DatabaseInfo{}, false, err
	}
	// Creating without the ignore flag tells apart "created now" from "was
	// there already" in one call, without a racy existence check first.
	created = true
	if err := cat.CreateDatabase(ctx, cmd.Name, cmd.Descriptor, false); err != nil {
		if !cmd.IgnoreIfExists || domain.KindOf(err) != domain.KindAlreadyExists {
			return domain.DatabaseInfo{}, false, err
		}
		created = false
	}
	info, err = cat.GetDatabase(ctx, cmd.Name)
	return info, created, err
}

// DropDatabase drops a database.
func (s *CatalogService) DropDatabase(ctx context.Context, scope Scope, cmd DropDatabase) error {
	if err := domain.ValidateName("database", cmd.Name); err != nil {
		return err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return err
	}
	return cat.DropDatabase(ctx, cmd.Name, cmd.IgnoreIfNotExists, cmd.Cascade)
}

// ListTables returns one page of the table names of a database.
func (s *CatalogService) ListTables(ctx context.Context, scope Scope, database string, page PageRequest) (Page[string], error) {
	if err := domain.ValidateName("database", database); err != nil {
		return Page[string]{}, err
	}
	if _, err := pageSize(page.MaxResults); err != nil {
		return Page[string]{}, err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return Page[string]{}, err
	}
	names, err := cat.ListTables(ctx, database)
	if err != nil {
		return Page[string]{}, err
	}
	return paginate(s.tokens, newTokenScope(scope, "tables", database), names, identity, page)
}

// GetTable describes a table.
func (s *CatalogService) GetTable(ctx context.Context, scope Scope, path domain.TablePath) (domain.TableInfo, error) {
	if err := validatePath(path, false); err != nil {
		return domain.TableInfo{}, err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return domain.TableInfo{}, err
	}
	return cat.GetTable(ctx, path)
}

// TableExists reports whether a table exists.
func (s *CatalogService) TableExists(ctx context.Context, scope Scope, path domain.TablePath) (bool, error) {
	if err := validatePath(path, false); err != nil {
		return false, err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return false, err
	}
	return cat.TableExists(ctx, path)
}

// CreateTable validates and creates a table, then describes it. created is
// false when nothing was created: the table existed and IgnoreIfExists was
// set, or ValidateOnly was set. For ValidateOnly the returned info holds the
// normalized descriptor and no id.
func (s *CatalogService) CreateTable(ctx context.Context, scope Scope, cmd CreateTable) (info domain.TableInfo, created bool, err error) {
	if err := validatePath(cmd.Path, true); err != nil {
		return domain.TableInfo{}, false, err
	}
	desc := cmd.Descriptor
	if err := domain.ValidateTableDescriptor(desc); err != nil {
		return domain.TableInfo{}, false, err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return domain.TableInfo{}, false, err
	}
	if cmd.ValidateOnly {
		// As the official gateway: the definition is built and checked
		// locally; nothing is asked of Fluss (whether the database exists or
		// the table is free is only known when the table is created).
		return domain.TableInfo{Path: cmd.Path, Descriptor: desc}, false, nil
	}
	created = true
	if err := cat.CreateTable(ctx, cmd.Path, desc, false); err != nil {
		if !cmd.IgnoreIfExists || domain.KindOf(err) != domain.KindAlreadyExists {
			return domain.TableInfo{}, false, err
		}
		created = false
	}
	info, err = cat.GetTable(ctx, cmd.Path)
	return info, created, err
}

// AlterTable applies changes to a table and describes the result. found is
// false when the table does not exist and IgnoreIfNotExists was set.
func (s *CatalogService) AlterTable(ctx context.Context, scope Scope, cmd AlterTable) (info domain.TableInfo, found bool, err error) {
	if err := validatePath(cmd.Path, false); err != nil {
		return domain.TableInfo{}, false, err
	}
	if err := validateChanges(cmd.Changes); err != nil {
		return domain.TableInfo{}, false, err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return domain.TableInfo{}, false, err
	}
	if err := cat.AlterTable(ctx, cmd.Path, cmd.Changes, false); err != nil {
		if cmd.IgnoreIfNotExists && isTableOrDatabaseNotFound(err) {
			return domain.TableInfo{}, false, nil
		}
		return domain.TableInfo{}, false, err
	}
	info, err = cat.GetTable(ctx, cmd.Path)
	return info, err == nil, err
}

// DropTable drops a table.
func (s *CatalogService) DropTable(ctx context.Context, scope Scope, path domain.TablePath, ignoreIfNotExists bool) error {
	if err := validatePath(path, false); err != nil {
		return err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return err
	}
	return cat.DropTable(ctx, path, ignoreIfNotExists)
}

// ListPartitions returns one page of a partitioned table's partitions, ordered
// by partition name.
func (s *CatalogService) ListPartitions(ctx context.Context, scope Scope, path domain.TablePath, page PageRequest) (Page[domain.PartitionInfo], error) {
	if err := validatePath(path, false); err != nil {
		return Page[domain.PartitionInfo]{}, err
	}
	if _, err := pageSize(page.MaxResults); err != nil {
		return Page[domain.PartitionInfo]{}, err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return Page[domain.PartitionInfo]{}, err
	}
	parts, err := cat.ListPartitions(ctx, path)
	if err != nil {
		return Page[domain.PartitionInfo]{}, err
	}
	return paginate(s.tokens, newTokenScope(scope, "partitions", path.Database, path.Table), parts, func(p domain.PartitionInfo) string { return p.Name }, page)
}

// CreatePartition creates a partition of a partitioned table and describes
// it. The values are matched to the table's partition keys, so the caller
// need not know their order. created is false when the partition existed and
// IgnoreIfExists was set.
func (s *CatalogService) CreatePartition(ctx context.Context, scope Scope, cmd CreatePartition) (info domain.PartitionInfo, created bool, err error) {
	if err := validatePath(cmd.Path, false); err != nil {
		return domain.PartitionInfo{}, false, err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return domain.PartitionInfo{}, false, err
	}
	tinfo, err := cat.GetTable(ctx, cmd.Path)
	if err != nil {
		return domain.PartitionInfo{}, false, err
	}
	keys := tinfo.Descriptor.PartitionKeys
	if len(keys) == 0 {
		return domain.PartitionInfo{}, false, domain.InvalidArgument("table `%s` is not partitioned", cmd.Path)
	}
	spec, err := domain.ValidatePartitionSpec(keys, cmd.Spec, true)
	if err != nil {
		return domain.PartitionInfo{}, false, err
	}
	// The auto-partition format and retention, as writes check them: a
	// partition named otherwise could never be written.
	if auto := domain.AutoPartitionOf(tinfo.Descriptor); auto.Checked() {
		if err := auto.CheckNewPartition(auto.TimeValue(domain.PartitionName(spec)), s.now()); err != nil {
			return domain.PartitionInfo{}, false, err
		}
	}
	created = true
	if err := cat.CreatePartition(ctx, cmd.Path, spec, false); err != nil {
		if !cmd.IgnoreIfExists || domain.KindOf(err) != domain.KindAlreadyExists {
			return domain.PartitionInfo{}, false, err
		}
		created = false
	}
	name := domain.PartitionName(spec)
	parts, err := cat.ListPartitions(ctx, cmd.Path)
	if err != nil {
		return domain.PartitionInfo{}, false, err
	}
	for _, p := range parts {
		if p.Name == name {
			return p, created, nil
		}
	}
	// Dropped again between the create and the listing: report what was
	// created, without the id the listing would have supplied.
	return domain.PartitionInfo{ID: -1, Name: name, Spec: spec}, created, nil
}

// DropPartition drops a partition given its name.
func (s *CatalogService) DropPartition(ctx context.Context, scope Scope, cmd DropPartition) error {
	if err := validatePath(cmd.Path, false); err != nil {
		return err
	}
	cat, err := s.catalog(ctx, scope)
	if err != nil {
		return err
	}
	keys, err := partitionKeys(ctx, cat, cmd.Path)
	if err != nil {
		return err
	}
	spec, err := domain.ParsePartitionName(keys, cmd.Name)
	if err != nil {
		return err
	}
	return cat.DropPartition(ctx, cmd.Path, spec, cmd.IgnoreIfNotExists)
}

func partitionKeys(ctx context.Context, cat domain.Catalog, path domain.TablePath) ([]string, error) {
	info, err := cat.GetTable(ctx, path)
	if err != nil {
		return nil, err
	}
	keys := info.Descriptor.PartitionKeys
	if len(keys) == 0 {
		return nil, domain.InvalidArgument("table `%s` is not partitioned", path)
	}
	return keys, nil
}

func validatePath(path domain.TablePath, creating bool) error {
	check := domain.ValidateName
	if creating {
		check = domain.ValidateNewName
	}
	if err := domain.ValidateName("database", path.Database); err != nil {
		return err
	}
	if err := check("table_name", path.Table); err != nil {
		return err
	}
	return nil
}

func isTableOrDatabaseNotFound(err error) bool {
	e := domain.AsError(err)
	return e != nil && e.Kind == domain.KindNotFound &&
		(e.Resource == domain.ResourceTable || e.Resource == domain.ResourceDatabase)
}

func identity(s string) string { return s }
