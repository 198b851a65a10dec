package domain

import (
	"context"
	"time"
)

// TablePath identifies a table inside one cluster: database and table name.
type TablePath struct {
	Database string
	Table    string
}

// String renders the path as `database.table`.
func (p TablePath) String() string { return p.Database + "." + p.Table }

// DatabaseDescriptor is the user-supplied part of a database definition
// (apache/fluss: DatabaseDescriptorJsonSerde: comment, custom_properties).
type DatabaseDescriptor struct {
	Comment          string
	CustomProperties map[string]string
}

// DatabaseInfo describes an existing database.
type DatabaseInfo struct {
	Name         string
	Descriptor   DatabaseDescriptor
	CreatedTime  time.Time
	ModifiedTime time.Time
}

// Column is one top-level column of a table schema. ID is the Fluss column id
// (-1 when not assigned yet).
type Column struct {
	Name    string
	Type    DataType
	Comment string
	ID      int32
}

// ColumnTypes returns the types of columns, in order.
func ColumnTypes(columns []Column) []DataType {
	types := make([]DataType, len(columns))
	for i := range columns {
		types[i] = columns[i].Type
	}
	return types
}

// Schema is a Fluss table schema (apache/fluss: SchemaJsonSerde). PrimaryKey is
// empty for log tables.
type Schema struct {
	Columns             []Column
	PrimaryKey          []string
	AutoIncrementColumn []string
	HighestFieldID      int32
}

// TableDescriptor is a table definition (apache/fluss: TableDescriptorJsonSerde).
// BucketCount is 0 when the server default applies. Properties are Fluss
// `table.*` options; CustomProperties are free-form.
type TableDescriptor struct {
	Schema           Schema
	Comment          string
	PartitionKeys    []string
	BucketKeys       []string
	BucketCount      int
	Properties       map[string]string
	CustomProperties map[string]string
}

// TableInfo describes an existing table.
type TableInfo struct {
	Path         TablePath
	TableID      int64
	SchemaID     int32
	Descriptor   TableDescriptor
	CreatedTime  time.Time
	ModifiedTime time.Time
}

// PartitionSpec is an ordered list of partition-key values, in the table's
// partition-key order.
type PartitionSpec []PartitionValue

// PartitionValue is the string form of one partition column's value.
type PartitionValue struct {
	Key   string
	Value string
}

// PartitionInfo describes an existing partition. Name is the values joined
// with `$` in partition-key order (apache/fluss: PartitionUtils).
type PartitionInfo struct {
	ID   int64
	Name string
	Spec PartitionSpec
}

// TableChangeKind selects the variant of a TableChange.
type TableChangeKind string

// Table changes accepted by AlterTable.
const (
	ChangeAddColumn   TableChangeKind = "add_column"
	ChangeSetConfig   TableChangeKind = "set_config"
	ChangeResetConfig TableChangeKind = "reset_config"
)

// TableChange is one alteration: add a (nullable, last) column, or set or reset
// one table option.
type TableChange struct {
	Kind   TableChangeKind
	Column Column // add_column
	Key    string // set_config, reset_config
	Value  string // set_config
}

// Catalog is the port for database, table and partition DDL and metadata on
// one cluster, as seen by one principal. Implementations return *Error values
// with resource-specific kinds (database_not_found, table_already_exists, ...).
type Catalog interface {
	ListDatabases(ctx context.Context) ([]string, error)
	DatabaseExists(ctx context.Context, name string) (bool, error)
	GetDatabase(ctx context.Context, name string) (DatabaseInfo, error)
	CreateDatabase(ctx context.Context, name string, desc DatabaseDescriptor, ignoreIfExists bool) error
	// DropDatabase fails with KindNotEmpty when the database holds tables and
	// cascade is false.
	DropDatabase(ctx context.Context, name string, ignoreIfNotExists, cascade bool) error

	ListTables(ctx context.Context, database string) ([]string, error)
	TableExists(ctx context.Context, path TablePath) (bool, error)
	GetTable(ctx context.Context, path TablePath) (TableInfo, error)
	CreateTable(ctx context.Context, path TablePath, desc TableDescriptor, ignoreIfExists bool) error
	AlterTable(ctx context.Context, path TablePath, changes []TableChange, ignoreIfNotExists bool) error
	DropTable(ctx context.Context, path TablePath, ignoreIfNotExists bool) error

	ListPartitions(ctx context.Context, path TablePath) ([]PartitionInfo, error)
	CreatePartition(ctx context.Context, path TablePath, spec PartitionSpec, ignoreIfExists bool) error
	DropPartition(ctx context.Context, path TablePath, spec PartitionSpec, ignoreIfNotExists bool) error
}
