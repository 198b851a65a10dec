package domain

import (
	"context"
	"errors"
	"fmt"
)

// TableDefinitions is the one source of the table definitions that
// data-plane requests (writes, lookups) are decoded against and that the
// writer and the lookup client encode with. An adapter implements it over
// its single metadata cache; the catalog's own DDL invalidates that cache,
// so after a create, alter or drop answered through the same adapter the
// next Table call returns the new definition.
type TableDefinitions interface {
	// Table returns the current definition of path, from the cache when it
	// has one. An unknown table is a KindNotFound/ResourceTable *Error.
	Table(ctx context.Context, path TablePath) (TableInfo, error)
	// Refresh drops what is cached about path and loads it from the cluster
	// again. Callers use it when a request was refused for naming what the
	// cached definition lacks (a schema mismatch) or with a
	// StaleDefinitionError.
	Refresh(ctx context.Context, path TablePath) (TableInfo, error)
}

// TableSource is implemented by a Session whose adapter resolves table
// definitions itself (through its metadata cache). Sessions that do not
// implement it are served by their Catalog's GetTable.
type TableSource interface {
	Tables() TableDefinitions
}

// StaleDefinitionError says a request was built for another definition of
// the table than the cluster's current one: the table was re-created (another
// table id) or its schema is newer than the one used. Nothing was sent. The
// caller refreshes the definition (TableDefinitions.Refresh) and, when it
// changed, builds the request again.
type StaleDefinitionError struct {
	Table TablePath
	// UsedTableID and UsedSchemaID are what the request was built for;
	// TableID and SchemaID what the cluster has now.
	UsedTableID, TableID   int64
	UsedSchemaID, SchemaID int32
}

func (e *StaleDefinitionError) Error() string {
	if e.UsedTableID != 0 && e.UsedTableID != e.TableID {
		return fmt.Sprintf("table `%s` was re-created (id %d, the request was built for id %d)", e.Table, e.TableID, e.UsedTableID)
	}
	return fmt.Sprintf("table `%s`: the request was built for schema %d, the cluster has schema %d", e.Table, e.UsedSchemaID, e.SchemaID)
}

// NewStaleDefinition returns the *Error a writer or lookup client answers a
// request built for an outdated definition with: KindFailedPrecondition,
// retryable, its Cause a *StaleDefinitionError (see IsStaleDefinition).
func NewStaleDefinition(e *StaleDefinitionError) *Error {
	return &Error{Kind: KindFailedPrecondition, Retryable: true, Message: e.Error() + "; retry", Cause: e}
}

// IsStaleDefinition reports whether err carries a *StaleDefinitionError.
func IsStaleDefinition(err error) bool {
	var s *StaleDefinitionError
	return errors.As(err, &s)
}
