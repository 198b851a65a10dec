package application

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/lru"
)

// Table is a snapshot of a table's definition that data-plane requests are
// decoded against and rendered with. Snapshots are immutable and shared
// between requests while the definition is unchanged (see snapshots).
type Table struct {
	Info domain.TableInfo

	// checked is when the definition was last loaded or confirmed by a
	// refresh (Unix nanoseconds): a request that fails to decode refreshes
	// it only when this is older than the refetch interval.
	checked atomic.Int64

	compileOnce sync.Once
	compiled    any
	compileErr  error
}

// NewTable returns a snapshot of info (for tests and adapters that build one
// themselves).
func NewTable(info domain.TableInfo) *Table { return &Table{Info: info} }

// Compiled returns build(t.Info), computed once per snapshot: an inbound
// adapter keeps its compiled form of the schema (a JSON codec, say) here, so
// it lives and is invalidated together with the cached schema. Every caller
// must pass the same kind of build function.
func (t *Table) Compiled(build func(domain.TableInfo) (any, error)) (any, error) {
	t.compileOnce.Do(func() { t.compiled, t.compileErr = build(t.Info) })
	return t.compiled, t.compileErr
}

// Columns returns the table's columns in schema order.
func (t *Table) Columns() []domain.Column { return t.Info.Descriptor.Schema.Columns }

// sameVersion reports whether two snapshots describe the same table id and
// schema id.
func (t *Table) sameVersion(o *Table) bool {
	return t.Info.TableID == o.Info.TableID && t.Info.SchemaID == o.Info.SchemaID
}

// sameInfo reports whether info is the definition t was made from (same
// table id, schema id and modification time).
func (t *Table) sameInfo(info domain.TableInfo) bool {
	return t.Info.TableID == info.TableID && t.Info.SchemaID == info.SchemaID && t.Info.ModifiedTime.Equal(info.ModifiedTime)
}

// DefaultSnapshotCacheSize bounds the remembered snapshots (LRU).
const DefaultSnapshotCacheSize = 1024

// tableKey identifies a table as one principal sees it on one cluster (so
// that one caller's access never serves another's in user identity mode).
type tableKey struct {
	cluster   string
	principal string
	actAs     string
	path      domain.TablePath
}

func keyOf(scope Scope, path domain.TablePath) tableKey {
	return tableKey{cluster: scope.Cluster, principal: scope.Principal.Name, actAs: scope.Principal.ActAs, path: path}
}

// definitionsOf returns where a session's table definitions come from: the
// adapter's own (its one metadata cache, which its catalog's DDL
// invalidates) when the session has them, else its catalog, uncached.
func definitionsOf(session domain.Session) domain.TableDefinitions {
	if ts, ok := session.(domain.TableSource); ok {
		if d := ts.Tables(); d != nil {
			return d
		}
	}
	return catalogDefinitions{session.Catalog()}
}

// catalogDefinitions serves definitions straight from a catalog.
type catalogDefinitions struct{ cat domain.Catalog }

func (c catalogDefinitions) Table(ctx context.Context, path domain.TablePath) (domain.TableInfo, error) {
	return c.cat.GetTable(ctx, path)
}

func (c catalogDefinitions) Refresh(ctx context.Context, path domain.TablePath) (domain.TableInfo, error) {
	return c.cat.GetTable(ctx, path)
}

// snapshots remembers the latest *Table snapshot of each table (and so its
// compiled codec), so that requests against an unchanged definition share
// one. It caches no definition: every request asks the session's
// TableDefinitions, and a definition that differs from the remembered one
// replaces it. Bounded LRU.
type snapshots struct {
	now func() time.Time

	mu    sync.Mutex
	items *lru.Cache[tableKey, *Table]
}

func newSnapshots(size int, now func() time.Time) *snapshots {
	if size <= 0 {
		size = DefaultSnapshotCacheSize
	}
	return &snapshots{now: now, items: lru.New[tableKey, *Table](size, nil)}
}

// of returns the snapshot of info for key: the remembered one when info is
// the definition it was made from, else a new one (remembered from now on).
// refreshed says info was just loaded from the cluster: a remembered
// snapshot counts as checked now.
func (c *snapshots) of(key tableKey, info domain.TableInfo, refreshed bool) *Table {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.items.Get(key); ok && t.sameInfo(info) {
		if refreshed {
			t.checked.Store(c.now().UnixNano())
		}
		return t
	}
	t := &Table{Info: info}
	t.checked.Store(c.now().UnixNano())
	c.items.Put(key, t)
	return t
}

// len returns the number of remembered snapshots.
func (c *snapshots) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.items.Len()
}

// definition resolves the table definitions of one request.
type definition struct {
	key   tableKey
	defs  domain.TableDefinitions
	snaps *snapshots
}

func (d definition) current(ctx context.Context) (*Table, error) {
	info, err := d.defs.Table(ctx, d.key.path)
	if err != nil {
		return nil, err
	}
	return d.snaps.of(d.key, info, false), nil
}

func (d definition) refresh(ctx context.Context) (*Table, error) {
	info, err := d.defs.Refresh(ctx, d.key.path)
	if err != nil {
		return nil, err
	}
	return d.snaps.of(d.key, info, true), nil
}

// withDefinition is the one retry rule of every data-plane request: it
// resolves the table's current definition, builds the request against it
// (decode) and runs it (run).
//
//   - When decode fails naming a column the snapshot does not have
//     (domain.IsUnknownColumn: the column may have been added a moment ago
//     through another gateway or client), the definition is refreshed once
//     (unless it was confirmed after the request began) and, if it
//     changed, the request is built once more; a refusal after the refresh
//     stands (400). Any other KindInvalidArgument failure refreshes only a
//     snapshot older than refetch.
//   - When run fails with a stale-definition error (domain.IsStaleDefinition:
//     the writer or lookup client found another table id or a newer schema;
//     nothing was sent), the definition is refreshed and, if it changed, the
//     request is built and run once more.
//   - When run fails with table_not_found (KindNotFound, ResourceTable: the
//     cluster no longer knows the table id the request was built for, as
//     after another gateway or client dropped, and perhaps re-created, the
//     table; nothing was applied), the same: a re-created table (new table
//     id) is written or looked up once more, a table that is really gone
//     answers the refresh's table_not_found for the whole request.
//
// It returns the definition the final attempt used.
func withDefinition[R, O any](ctx context.Context, d definition, refetch time.Duration, now func() time.Time,
	decode func(*Table) (R, []string, error), run func(*Table, R) (O, error)) (*Table, []string, O, error) {
	var zero O
	start := now()
	t, err := d.current(ctx)
	if err != nil {
		return nil, nil, zero, err
	}
	req, ids, err := decode(t)
	if err != nil {
		checked := time.Unix(0, t.checked.Load())
		// An unknown column: refresh unless the snapshot was confirmed
		// after this request began (then the refusal stands as it is).
		unknownCol := domain.IsUnknownColumn(err) && checked.Before(start)
		if domain.KindOf(err) != domain.KindInvalidArgument || (!unknownCol && now().Sub(checked) < refetch) {
			return t, nil, zero, err
		}
		fresh, ferr := d.refresh(ctx)
		if ferr != nil || fresh.sameVersion(t) {
			return t, nil, zero, err
		}
		t = fresh
		if req, ids, err = decode(t); err != nil {
			return t, nil, zero, err
		}
	}
	out, err := run(t, req)
	if err == nil || !(domain.IsStaleDefinition(err) || isTableNotFound(err)) {
		return t, ids, out, err
	}
	fresh, ferr := d.refresh(ctx)
	if ferr != nil {
		return t, nil, zero, ferr
	}
	if fresh.sameVersion(t) {
		return t, nil, zero, err
	}
	t = fresh
	if req, ids, err = decode(t); err != nil {
		return t, nil, zero, err
	}
	out, err = run(t, req)
	return t, ids, out, err
}

// isTableNotFound reports whether err is a table_not_found *domain.Error.
func isTableNotFound(err error) bool {
	de := domain.AsError(err)
	return de != nil && de.Kind == domain.KindNotFound && de.Resource == domain.ResourceTable
}
