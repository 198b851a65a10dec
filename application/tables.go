package application

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Table is a snapshot of a table's definition that data-plane requests are
// decoded against and rendered with. Snapshots are immutable and shared
// between requests through the schema cache.
type Table struct {
	Info domain.TableInfo

	fetched time.Time

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

// Schema cache defaults.
const (
	// DefaultSchemaCacheTTL is how long a fetched table definition is used
	// before it is fetched again. Short: a schema change is picked up within
	// it, and sooner when a request fails in a way a newer schema could fix.
	DefaultSchemaCacheTTL = 5 * time.Second
	// DefaultSchemaCacheSize bounds the cached definitions (LRU).
	DefaultSchemaCacheSize = 1024
)

// tableKey identifies a cached definition: the cluster, the principal that
// fetched it (so one caller's access never serves another's in user identity
// mode) and the table.
type tableKey struct {
	cluster   string
	principal string
	actAs     string
	path      domain.TablePath
}

func keyOf(scope Scope, path domain.TablePath) tableKey {
	return tableKey{cluster: scope.Cluster, principal: scope.Principal.Name, actAs: scope.Principal.ActAs, path: path}
}

// tableCache is a bounded LRU of table definitions with a time to live.
type tableCache struct {
	ttl  time.Duration
	size int
	now  func() time.Time

	mu    sync.Mutex
	lru   list.List // of *cacheItem, most recent first
	items map[tableKey]*list.Element
}

type cacheItem struct {
	key   tableKey
	table *Table
}

func newTableCache(ttl time.Duration, size int, now func() time.Time) *tableCache {
	if ttl <= 0 {
		ttl = DefaultSchemaCacheTTL
	}
	if size <= 0 {
		size = DefaultSchemaCacheSize
	}
	return &tableCache{ttl: ttl, size: size, now: now, items: make(map[tableKey]*list.Element)}
}

// get returns the cached definition, or fetches it through cat. cached
// reports whether the snapshot came from the cache (and so may be stale).
func (c *tableCache) get(ctx context.Context, key tableKey, cat domain.Catalog) (t *Table, cached bool, err error) {
	now := c.now()
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		item := el.Value.(*cacheItem)
		if now.Sub(item.table.fetched) < c.ttl {
			c.lru.MoveToFront(el)
			c.mu.Unlock()
			return item.table, true, nil
		}
		c.lru.Remove(el)
		delete(c.items, key)
	}
	c.mu.Unlock()
	t, err = c.fetch(ctx, key, cat)
	return t, false, err
}

// fetch reads the definition through cat and caches it.
func (c *tableCache) fetch(ctx context.Context, key tableKey, cat domain.Catalog) (*Table, error) {
	info, err := cat.GetTable(ctx, key.path)
	if err != nil {
		if isTableOrDatabaseNotFound(err) {
			c.invalidate(key)
		}
		return nil, err
	}
	t := &Table{Info: info, fetched: c.now()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.lru.Remove(el)
	}
	c.items[key] = c.lru.PushFront(&cacheItem{key: key, table: t})
	for c.lru.Len() > c.size {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.items, last.Value.(*cacheItem).key)
	}
	return t, nil
}

// invalidate forgets a definition.
func (c *tableCache) invalidate(key tableKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.lru.Remove(el)
		delete(c.items, key)
	}
}

// len returns the number of cached definitions.
func (c *tableCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
