package meta

// This file holds the table cache: path → immutable Table snapshot (id,
// schema id, descriptor), loaded with GetMetadata, refreshed on DDL and
// after Options.MaxAge.

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/serde"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
	"github.com/fluss-gateway/fluss-gateway-go/internal/lru"
)

// Table is an immutable snapshot of one table's metadata. A reload produces
// a new snapshot; holders of an old one keep a consistent view.
type Table struct {
	Info domain.TableInfo
	// NumBuckets is the bucket count of the table (of each partition).
	NumBuckets int
	// Partitioned is true when the table has partition keys.
	Partitioned bool

	loadedAt time.Time
}

// Path is the table path.
func (t *Table) Path() domain.TablePath { return t.Info.Path }

// ID is the table id.
func (t *Table) ID() int64 { return t.Info.TableID }

// Property returns a `table.*` option of the table ("" when unset).
func (t *Table) Property(key string) string { return t.Info.Descriptor.Properties[key] }

// Table returns the metadata of path, loading it on first use. An unknown
// table fails with a table_not_found *domain.Error.
//
// An entry older than MaxAge is still served, and a reload starts in the
// background (one at a time per table): a table the writer and the lookup
// client know keeps working while the coordinator or the metadata are
// unreachable, for as long as its bucket leaders answer (their errors
// refresh the leaders, a dropped table answers table_not_found). The
// background reload replaces the entry when it succeeds.
func (c *Cache) Table(ctx context.Context, path domain.TablePath) (*Table, error) {
	c.mu.Lock()
	if e, ok := c.tables.Get(path); ok && e.table != nil {
		t := e.table
		stale := c.opts.Now().Sub(t.loadedAt) >= c.opts.MaxAge
		c.mu.Unlock()
		if stale {
			c.reloadInBackground(path)
		}
		return t, nil
	}
	c.mu.Unlock()
	return c.reloadFrom(ctx, path, Any(), true)
}

// reloadInBackground starts a reload of path unless one is in flight; its
// outcome only updates the cache.
func (c *Cache) reloadInBackground(path domain.TablePath) {
	key := "t:" + path.String()
	c.mu.Lock()
	_, busy := c.flights[key]
	c.mu.Unlock()
	if busy {
		return
	}
	go func() {
		_ = c.do(context.Background(), key, func(ctx context.Context) error {
			return c.fetchFrom(ctx, Any(), &flusspb.MetadataRequest{TablePath: []*flusspb.PbTablePath{pbPath(path)}}, path)
		})
	}()
}

// Expect drops what is cached about path and announces its current
// definition as the coordinator gave it right after this gateway's own DDL
// (GetTableInfo reads it from ZooKeeper). Metadata answers come from the
// answering server's own cache (apache/fluss RpcServiceBase
// processMetadataRequest), which the coordinator updates asynchronously; so
// until a load shows this table id with at least this schema id, Reload
// polls (at most Options.CatchUpWait) instead of caching an older
// definition.
func (c *Cache) Expect(path domain.TablePath, tableID int64, schemaID int32) {
	c.Invalidate(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expect[path] = version{tableID, schemaID}
}

// behind reports whether t is older than the definition announced for its
// path, and forgets the announcement once a load has caught up with it.
func (c *Cache) behind(path domain.TablePath, t *Table) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	want, ok := c.expect[path]
	if !ok {
		return false
	}
	if t.ID() == want.tableID && t.Info.SchemaID >= want.schemaID {
		delete(c.expect, path)
		return false
	}
	return true
}

// Reload fetches the metadata of path now (sharing a load in progress) and
// returns the new snapshot. Callers use it when a request names a newer
// schema or another table id than the cached one. After Expect it polls,
// 25 ms apart doubling to 200 ms, until the answer has caught up with the
// announced definition or Options.CatchUpWait has passed (then the
// announcement is dropped and the answer taken as it is).
func (c *Cache) Reload(ctx context.Context, path domain.TablePath) (*Table, error) {
	return c.reload(ctx, path, Any())
}

// reload is Reload with the metadata asked of to (Any() or Coordinator()).
func (c *Cache) reload(ctx context.Context, path domain.TablePath, to Dest) (*Table, error) {
	return c.reloadFrom(ctx, path, to, false)
}

// reloadFrom is reload; missing (Table's cache miss) makes its first load
// one that is skipped when the table is cached by the time it would start
// (a concurrent load filled the cache and finished after the miss).
func (c *Cache) reloadFrom(ctx context.Context, path domain.TablePath, to Dest, missing bool) (*Table, error) {
	deadline := c.opts.Now().Add(c.opts.CatchUpWait)
	wait := backoff.Policy{Initial: 25 * time.Millisecond, Max: 200 * time.Millisecond}.Start()
	for {
		t, err := c.reloadOnce(ctx, path, to, missing)
		missing = false
		if err != nil || !c.behind(path, t) {
			return t, err
		}
		if !c.opts.Now().Before(deadline) {
			c.mu.Lock()
			delete(c.expect, path)
			c.mu.Unlock()
			return t, nil
		}
		c.Invalidate(path)
		if !wait.Wait(ctx) {
			return nil, DomainError(ctx.Err(), fmt.Sprintf("table `%s`", path))
		}
	}
}

// reloadOnce is one Reload load, asked of to.
func (c *Cache) reloadOnce(ctx context.Context, path domain.TablePath, to Dest, missing bool) (*Table, error) {
	key := "t:" + path.String()
	if to.Kind == ToCoordinator {
		key = "c:" + path.String()
	}
	var cached func() bool
	if missing {
		cached = func() bool { e, ok := c.tables.Get(path); return ok && e.table != nil }
	}
	err := c.doUnless(ctx, key, cached, func(ctx context.Context) error {
		return c.fetchFrom(ctx, to, &flusspb.MetadataRequest{TablePath: []*flusspb.PbTablePath{pbPath(path)}}, path)
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.tables.Get(path); ok && e.table != nil {
		return e.table, nil
	}
	// Evicted between the load and now (a tiny cache under heavy churn).
	return nil, &domain.Error{Kind: domain.KindUnavailable, Retryable: true,
		Message: fmt.Sprintf("table `%s`: metadata was evicted while loading; retry", path)}
}

// TableByID returns the cached snapshot of the table with id, if any.
func (c *Cache) TableByID(id int64) (*Table, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[id]; ok && e.table != nil {
		return e.table, true
	}
	return nil, false
}

// fetch sends a MetadataRequest and merges the answer. path, when set, must
// be present in the answer (a missing table means the caller may not see it).
func (c *Cache) fetch(ctx context.Context, req *flusspb.MetadataRequest, path domain.TablePath) error {
	return c.fetchFrom(ctx, Any(), req, path)
}

// fetchFrom is fetch with the request sent to to.
func (c *Cache) fetchFrom(ctx context.Context, to Dest, req *flusspb.MetadataRequest, path domain.TablePath) error {
	var resp flusspb.MetadataResponse
	if err := c.call.Call(ctx, to, wire.KeyGetMetadata, req, &resp); err != nil {
		what := "metadata"
		if path != (domain.TablePath{}) {
			what = fmt.Sprintf("table `%s`", path)
		}
		if ErrorCode(err) == wire.CodeTableNotExist && path != (domain.TablePath{}) {
			c.Invalidate(path)
		}
		return DomainError(err, what)
	}
	return c.apply(&resp, path)
}

// apply merges a MetadataResponse into the cache.
func (c *Cache) apply(resp *flusspb.MetadataResponse, want domain.TablePath) error {
	now := c.opts.Now()
	type parsed struct {
		t       *Table
		leaders []int32
	}
	tables := make([]parsed, 0, len(resp.GetTableMetadata()))
	for _, tm := range resp.GetTableMetadata() {
		t, err := tableFromPB(tm, now)
		if err != nil {
			return err
		}
		var leaders []int32
		if !t.Partitioned {
			leaders = leadersFromPB(tm.GetBucketMetadata(), t.NumBuckets)
		}
		tables = append(tables, parsed{t, leaders})
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if len(resp.GetTabletServers()) > 0 {
		nodes := make(map[int32]ServerNode, len(resp.GetTabletServers()))
		for _, n := range resp.GetTabletServers() {
			nodes[n.GetNodeId()] = ServerNode{ID: n.GetNodeId(), Host: n.GetHost(), Port: n.GetPort(), Rack: n.GetRack()}
		}
		c.nodes = nodes
	}
	if cs := resp.GetCoordinatorServer(); cs != nil {
		c.coordinator = &ServerNode{ID: cs.GetNodeId(), Host: cs.GetHost(), Port: cs.GetPort(), Rack: cs.GetRack()}
	}
	found := want == (domain.TablePath{})
	for _, p := range tables {
		path := p.t.Info.Path
		found = found || path == want
		e, ok := c.tables.Get(path)
		if !ok || e.table == nil || e.table.ID() != p.t.ID() {
			if ok && e.table != nil && c.byID[e.table.ID()] == e {
				delete(c.byID, e.table.ID())
			}
			e = &tableEntry{
				path:    path,
				partIDs: make(map[int64]*partEntry),
				schemas: make(map[int32]domain.Schema),
			}
			e.parts = lru.New(c.opts.MaxPartitions, func(_ string, pe *partEntry) { delete(e.partIDs, pe.id) })
			c.tables.Put(path, e)
		}
		e.table = p.t
		e.schemas[p.t.Info.SchemaID] = p.t.Info.Descriptor.Schema
		if !p.t.Partitioned {
			e.leaders = p.leaders
		}
		c.byID[p.t.ID()] = e
	}
	for _, pm := range resp.GetPartitionMetadata() {
		e, ok := c.byID[pm.GetTableId()]
		if !ok || e.table == nil {
			continue
		}
		pe, ok := e.partIDs[pm.GetPartitionId()]
		if !ok {
			if old, ok := e.parts.Peek(pm.GetPartitionName()); ok {
				delete(e.partIDs, old.id) // re-created partition: new id
			}
			pe = &partEntry{id: pm.GetPartitionId(), name: pm.GetPartitionName()}
			e.parts.Put(pe.name, pe)
			e.partIDs[pe.id] = pe
		}
		pe.leaders = leadersFromPB(pm.GetBucketMetadata(), e.table.NumBuckets)
	}
	if !found {
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable,
			Message: fmt.Sprintf("table `%s` does not exist or is not visible", want)}
	}
	return nil
}

func tableFromPB(tm *flusspb.PbTableMetadata, now time.Time) (*Table, error) {
	path := domain.TablePath{Database: tm.GetTablePath().GetDatabaseName(), Table: tm.GetTablePath().GetTableName()}
	desc, err := serde.UnmarshalTableDescriptorJSON(tm.GetTableJson())
	if err != nil {
		return nil, &domain.Error{Kind: domain.KindBackend,
			Message: fmt.Sprintf("table `%s`: cannot read the table descriptor the server sent: %v", path, err), Cause: err}
	}
	t := &Table{
		Info: domain.TableInfo{
			Path: path, TableID: tm.GetTableId(), SchemaID: tm.GetSchemaId(), Descriptor: desc,
			CreatedTime: time.UnixMilli(tm.GetCreatedTime()), ModifiedTime: time.UnixMilli(tm.GetModifiedTime()),
		},
		NumBuckets:  desc.BucketCount,
		Partitioned: len(desc.PartitionKeys) > 0,
		loadedAt:    now,
	}
	if t.NumBuckets <= 0 {
		for _, b := range tm.GetBucketMetadata() {
			t.NumBuckets = max(t.NumBuckets, int(b.GetBucketId())+1)
		}
	}
	if t.NumBuckets <= 0 {
		return nil, &domain.Error{Kind: domain.KindBackend,
			Message: fmt.Sprintf("table `%s`: metadata gives no bucket count", path)}
	}
	return t, nil
}

func pbPath(p domain.TablePath) *flusspb.PbTablePath {
	return &flusspb.PbTablePath{DatabaseName: proto.String(p.Database), TableName: proto.String(p.Table)}
}

// Invalidate drops everything cached about path; the Catalog adapter calls it
// after DDL on the table (alter, drop, partition changes).
func (c *Cache) Invalidate(path domain.TablePath) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.tables.Remove(path); ok && e.table != nil && c.byID[e.table.ID()] == e {
		delete(c.byID, e.table.ID())
	}
}

// InvalidateDatabase drops every cached table of database; the Catalog
// adapter calls it after a database is dropped (with cascade, its tables go too).
func (c *Cache) InvalidateDatabase(database string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var paths []domain.TablePath
	c.tables.Each(func(p domain.TablePath, _ *tableEntry) {
		if p.Database == database {
			paths = append(paths, p)
		}
	})
	for _, p := range paths {
		if e, ok := c.tables.Remove(p); ok && e.table != nil && c.byID[e.table.ID()] == e {
			delete(c.byID, e.table.ID())
		}
	}
}
