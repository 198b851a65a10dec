package meta

import (
	"context"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Source is what the read paths (lookups, log scans) need from the table
// metadata cache; *Cache implements it, and tests may fake it.
type Source interface {
	// Table returns the (possibly cached) metadata of a table.
	Table(ctx context.Context, path domain.TablePath) (*Table, error)
	// Reload fetches the metadata of a table now.
	Reload(ctx context.Context, path domain.TablePath) (*Table, error)
	// Schema returns schema id of table t (GetTableSchema for old ones).
	Schema(ctx context.Context, t *Table, schemaID int32) (domain.Schema, error)
	// Partition resolves a partition name to its id; a missing partition is
	// a partition_not_found *domain.Error.
	Partition(ctx context.Context, t *Table, name string, create bool) (int64, error)
	// Leader returns the leader of a bucket, ok false when unknown.
	Leader(tableID, partitionID int64, bucket int32) (ServerNode, bool)
	// RefreshLeaders fetches the bucket leaders of one physical table.
	RefreshLeaders(ctx context.Context, tableID, partitionID int64) error
	// InvalidateLeaders forgets the bucket leaders of one physical table.
	InvalidateLeaders(tableID, partitionID int64)
}

var _ Source = (*Cache)(nil)
