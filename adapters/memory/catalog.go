package memory

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Hook runs before every Catalog operation with the operation's method name
// (for example "CreateTable"). A non-nil error is returned to the caller
// instead of performing the operation; a hook may also block until ctx ends
// to simulate a slow backend.
type Hook func(ctx context.Context, op string) error

// Option configures a Catalog.
type Option func(*Catalog)

// WithClock sets the time source used for created and modified times.
func WithClock(now func() time.Time) Option {
	return func(c *Catalog) { c.now = now }
}

// WithHook installs a Hook at construction time.
func WithHook(h Hook) Option {
	return func(c *Catalog) { c.hook = h }
}

// Catalog is an in-memory domain.Catalog. It is safe for concurrent use. All
// values it returns are copies, so callers may modify them freely.
type Catalog struct {
	mu              sync.Mutex
	now             func() time.Time
	hook            Hook
	nextTableID     int64
	nextPartitionID int64
	databases       map[string]*database
}

type database struct {
	info   domain.DatabaseInfo
	tables map[string]*table
}

type table struct {
	info       domain.TableInfo
	partitions map[string]domain.PartitionInfo
}

var _ domain.Catalog = (*Catalog)(nil)

// NewCatalog returns an empty catalog.
func NewCatalog(opts ...Option) *Catalog {
	c := &Catalog{
		now:       time.Now,
		databases: make(map[string]*database),
	}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// SetHook replaces the hook run before every operation; nil removes it.
func (c *Catalog) SetHook(h Hook) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hook = h
}

// begin runs the hook and the context check shared by every operation. It
// must be called without holding the lock, since a hook may block.
func (c *Catalog) begin(ctx context.Context, op string) error {
	c.mu.Lock()
	hook := c.hook
	c.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, op); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// ListDatabases returns the database names in lexicographic order.
func (c *Catalog) ListDatabases(ctx context.Context) ([]string, error) {
	if err := c.begin(ctx, "ListDatabases"); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.databases)), nil
}

// DatabaseExists reports whether the database exists.
func (c *Catalog) DatabaseExists(ctx context.Context, name string) (bool, error) {
	if err := c.begin(ctx, "DatabaseExists"); err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.databases[name]
	return ok, nil
}

// GetDatabase describes a database.
func (c *Catalog) GetDatabase(ctx context.Context, name string) (domain.DatabaseInfo, error) {
	if err := c.begin(ctx, "GetDatabase"); err != nil {
		return domain.DatabaseInfo{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	db, err := c.database(name)
	if err != nil {
		return domain.DatabaseInfo{}, err
	}
	return copyDatabaseInfo(db.info), nil
}

// CreateDatabase creates a database.
func (c *Catalog) CreateDatabase(ctx context.Context, name string, desc domain.DatabaseDescriptor, ignoreIfExists bool) error {
	if err := c.begin(ctx, "CreateDatabase"); err != nil {
		return err
	}
	if err := domain.ValidateNewName("database", name); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.databases[name]; ok {
		if ignoreIfExists {
			return nil
		}
		return domain.AlreadyExists(domain.ResourceDatabase, "database `%s` already exists", name)
	}
	now := c.now()
	c.databases[name] = &database{
		info: domain.DatabaseInfo{
			Name:         name,
			Descriptor:   copyDatabaseDescriptor(desc),
			CreatedTime:  now,
			ModifiedTime: now,
		},
		tables: make(map[string]*table),
	}
	return nil
}

// DropDatabase drops a database; without cascade it refuses one that holds
// tables with a KindNotEmpty error.
func (c *Catalog) DropDatabase(ctx context.Context, name string, ignoreIfNotExists, cascade bool) error {
	if err := c.begin(ctx, "DropDatabase"); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	db, ok := c.databases[name]
	if !ok {
		if ignoreIfNotExists {
			return nil
		}
		return databaseNotFound(name)
	}
	if len(db.tables) > 0 && !cascade {
		return &domain.Error{
			Kind:     domain.KindNotEmpty,
			Resource: domain.ResourceDatabase,
			Message:  "database `" + name + "` is not empty; drop its tables first or use cascade",
		}
	}
	delete(c.databases, name)
	return nil
}

// ListTables returns the table names of a database in lexicographic order.
func (c *Catalog) ListTables(ctx context.Context, databaseName string) ([]string, error) {
	if err := c.begin(ctx, "ListTables"); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	db, err := c.database(databaseName)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(db.tables)), nil
}

// TableExists reports whether the table exists; a missing database means the
// table does not exist.
func (c *Catalog) TableExists(ctx context.Context, path domain.TablePath) (bool, error) {
	if err := c.begin(ctx, "TableExists"); err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	db, ok := c.databases[path.Database]
	if !ok {
		return false, nil
	}
	_, ok = db.tables[path.Table]
	return ok, nil
}

// GetTable describes a table.
func (c *Catalog) GetTable(ctx context.Context, path domain.TablePath) (domain.TableInfo, error) {
	if err := c.begin(ctx, "GetTable"); err != nil {
		return domain.TableInfo{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.table(path)
	if err != nil {
		return domain.TableInfo{}, err
	}
	return copyTableInfo(t.info), nil
}

// CreateTable creates a table. It assigns the table id, schema id 1 and
// column ids in declaration order, and makes primary-key columns NOT NULL as
// Fluss does.
func (c *Catalog) CreateTable(ctx context.Context, path domain.TablePath, desc domain.TableDescriptor, ignoreIfExists bool) error {
	if err := c.begin(ctx, "CreateTable"); err != nil {
		return err
	}
	if err := domain.ValidateNewName("table", path.Table); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	db, err := c.database(path.Database)
	if err != nil {
		return err
	}
	if _, ok := db.tables[path.Table]; ok {
		if ignoreIfExists {
			return nil
		}
		return domain.AlreadyExists(domain.ResourceTable, "table `%s` already exists", path)
	}
	if len(desc.Schema.Columns) == 0 {
		return domain.InvalidArgument("columns: a table needs at least one column")
	}
	desc = copyTableDescriptor(desc)
	schema, err := domain.AssignFieldIDs(desc.Schema)
	if err != nil {
		return err
	}
	for i := range schema.Columns {
		if slices.Contains(schema.PrimaryKey, schema.Columns[i].Name) {
			schema.Columns[i].Type.Nullable = false
		}
	}
	desc.Schema = schema
	if len(desc.BucketKeys) == 0 && len(schema.PrimaryKey) > 0 {
		desc.BucketKeys = domain.DefaultBucketKeys(schema.PrimaryKey, desc.PartitionKeys)
	}
	if desc.BucketCount == 0 {
		desc.BucketCount = defaultBucketCount
	}
	c.nextTableID++
	now := c.now()
	db.tables[path.Table] = &table{
		info: domain.TableInfo{
			Path:         path,
			TableID:      c.nextTableID,
			SchemaID:     1,
			Descriptor:   desc,
			CreatedTime:  now,
			ModifiedTime: now,
		},
		partitions: make(map[string]domain.PartitionInfo),
	}
	return nil
}

// defaultBucketCount is the bucket count of a table created without one, as
// Fluss's `default.bucket.number` (1) gives it.
const defaultBucketCount = 1

// AlterTable applies changes atomically: either all of them or none.
func (c *Catalog) AlterTable(ctx context.Context, path domain.TablePath, changes []domain.TableChange, ignoreIfNotExists bool) error {
	if err := c.begin(ctx, "AlterTable"); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.table(path)
	if err != nil {
		if ignoreIfNotExists && domain.KindOf(err) == domain.KindNotFound {
			return nil
		}
		return err
	}
	info := copyTableInfo(t.info)
	schemaChanged := false
	for i, ch := range changes {
		switch ch.Kind {
		case domain.ChangeAddColumn:
			if slices.ContainsFunc(info.Descriptor.Schema.Columns, func(col domain.Column) bool { return col.Name == ch.Column.Name }) {
				return domain.InvalidArgument("changes[%d].add_column.name: column `%s` already exists", i, ch.Column.Name)
			}
			if !ch.Column.Type.Nullable {
				return domain.InvalidArgument("changes[%d].add_column: an added column must be nullable", i)
			}
			col := ch.Column
			info.Descriptor.Schema.HighestFieldID++
			col.ID = info.Descriptor.Schema.HighestFieldID
			info.Descriptor.Schema.Columns = append(info.Descriptor.Schema.Columns, col)
			schemaChanged = true
		case domain.ChangeSetConfig:
			// As Fluss: `table.` keys are table properties, others custom ones.
			props := &info.Descriptor.Properties
			if !strings.HasPrefix(ch.Key, domain.TablePropertyPrefix) {
				props = &info.Descriptor.CustomProperties
			}
			if *props == nil {
				*props = make(map[string]string)
			}
			(*props)[ch.Key] = ch.Value
		case domain.ChangeResetConfig:
			delete(info.Descriptor.Properties, ch.Key)
			delete(info.Descriptor.CustomProperties, ch.Key)
		default:
			return domain.InvalidArgument("changes[%d]: unsupported change %q", i, ch.Kind)
		}
	}
	if schemaChanged {
		info.SchemaID++
	}
	info.ModifiedTime = c.now()
	t.info = info
	return nil
}

// DropTable drops a table and its partitions.
func (c *Catalog) DropTable(ctx context.Context, path domain.TablePath, ignoreIfNotExists bool) error {
	if err := c.begin(ctx, "DropTable"); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.table(path); err != nil {
		if ignoreIfNotExists && domain.KindOf(err) == domain.KindNotFound {
			return nil
		}
		return err
	}
	delete(c.databases[path.Database].tables, path.Table)
	return nil
}

// ListPartitions returns the partitions of a partitioned table ordered by name.
func (c *Catalog) ListPartitions(ctx context.Context, path domain.TablePath) ([]domain.PartitionInfo, error) {
	if err := c.begin(ctx, "ListPartitions"); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.partitionedTable(path)
	if err != nil {
		return nil, err
	}
	out := make([]domain.PartitionInfo, 0, len(t.partitions))
	for _, name := range slices.Sorted(maps.Keys(t.partitions)) {
		p := t.partitions[name]
		p.Spec = slices.Clone(p.Spec)
		out = append(out, p)
	}
	return out, nil
}

// CreatePartition creates a partition. The spec must list every partition key
// once, in the table's partition-key order.
func (c *Catalog) CreatePartition(ctx context.Context, path domain.TablePath, spec domain.PartitionSpec, ignoreIfExists bool) error {
	if err := c.begin(ctx, "CreatePartition"); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.partitionedTable(path)
	if err != nil {
		return err
	}
	name, err := partitionName(t.info.Descriptor.PartitionKeys, spec)
	if err != nil {
		return err
	}
	if _, ok := t.partitions[name]; ok {
		if ignoreIfExists {
			return nil
		}
		return domain.AlreadyExists(domain.ResourcePartition, "partition `%s` of table `%s` already exists", name, path)
	}
	c.nextPartitionID++
	t.partitions[name] = domain.PartitionInfo{ID: c.nextPartitionID, Name: name, Spec: slices.Clone(spec)}
	return nil
}

// DropPartition drops a partition.
func (c *Catalog) DropPartition(ctx context.Context, path domain.TablePath, spec domain.PartitionSpec, ignoreIfNotExists bool) error {
	if err := c.begin(ctx, "DropPartition"); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.partitionedTable(path)
	if err != nil {
		return err
	}
	name, err := partitionName(t.info.Descriptor.PartitionKeys, spec)
	if err != nil {
		return err
	}
	if _, ok := t.partitions[name]; !ok {
		if ignoreIfNotExists {
			return nil
		}
		return domain.NotFound(domain.ResourcePartition, "partition `%s` of table `%s` does not exist", name, path)
	}
	delete(t.partitions, name)
	return nil
}

func (c *Catalog) database(name string) (*database, error) {
	db, ok := c.databases[name]
	if !ok {
		return nil, databaseNotFound(name)
	}
	return db, nil
}

// table resolves a table path as a whole, as Fluss does: a table of a
// missing database is a missing table (table_not_found).
func (c *Catalog) table(path domain.TablePath) (*table, error) {
	var t *table
	db, ok := c.databases[path.Database]
	if ok {
		t, ok = db.tables[path.Table]
	}
	if !ok {
		return nil, domain.NotFound(domain.ResourceTable, "table `%s` does not exist", path)
	}
	return t, nil
}

func (c *Catalog) partitionedTable(path domain.TablePath) (*table, error) {
	t, err := c.table(path)
	if err != nil {
		return nil, err
	}
	if len(t.info.Descriptor.PartitionKeys) == 0 {
		return nil, domain.InvalidArgument("table `%s` is not partitioned", path)
	}
	return t, nil
}

func databaseNotFound(name string) *domain.Error {
	return domain.NotFound(domain.ResourceDatabase, "database `%s` does not exist", name)
}

// partitionName checks spec against the partition keys and renders its name.
func partitionName(keys []string, spec domain.PartitionSpec) (string, error) {
	ordered, err := domain.ValidatePartitionSpec(keys, spec, false)
	if err != nil {
		return "", err
	}
	return domain.PartitionName(ordered), nil
}
