package meta

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/serde"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/backoff"
	"github.com/fluss-gateway/fluss-gateway-go/internal/lru"
)

// NoPartition is the partition id of a bucket of a non-partitioned table.
const NoPartition int64 = -1

// NoLeader marks a bucket whose leader is not known.
const NoLeader int32 = -1

// Defaults of Options.
const (
	DefaultMaxTables     = 1024
	DefaultMaxPartitions = 4096
	DefaultMaxAge        = 5 * time.Minute
	DefaultLoadTimeout   = 30 * time.Second
	DefaultCatchUpWait   = 2 * time.Second
)

// Options configure a Cache. The zero value takes every default.
type Options struct {
	// MaxTables bounds the number of cached tables (DefaultMaxTables).
	MaxTables int
	// MaxPartitions bounds the cached partitions of one table
	// (DefaultMaxPartitions).
	MaxPartitions int
	// MaxAge is how long a table's descriptor is trusted before a use
	// reloads it in the background (DefaultMaxAge); the cached one is
	// served meanwhile. Leaders are refreshed on errors, not by age.
	MaxAge time.Duration
	// LoadTimeout bounds one shared load, independently of the callers
	// waiting for it (DefaultLoadTimeout).
	LoadTimeout time.Duration
	// PartitionCreateWait bounds how long Partition polls the metadata for
	// a partition it has just created (default 10 s, within ctx).
	PartitionCreateWait time.Duration
	// CatchUpWait bounds how long Reload polls a server whose metadata is
	// still behind a definition announced with Expect (DefaultCatchUpWait,
	// within ctx).
	CatchUpWait time.Duration
	// Now returns the current time (time.Now); tests replace it.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.MaxTables <= 0 {
		o.MaxTables = DefaultMaxTables
	}
	if o.MaxPartitions <= 0 {
		o.MaxPartitions = DefaultMaxPartitions
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.LoadTimeout <= 0 {
		o.LoadTimeout = DefaultLoadTimeout
	}
	if o.PartitionCreateWait <= 0 {
		o.PartitionCreateWait = 10 * time.Second
	}
	if o.CatchUpWait <= 0 {
		o.CatchUpWait = DefaultCatchUpWait
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// ServerNode is one server of the cluster as metadata lists it.
type ServerNode struct {
	ID   int32
	Host string
	Port int32
	Rack string
}

// Addr is host:port.
func (n ServerNode) Addr() string { return net.JoinHostPort(n.Host, strconv.Itoa(int(n.Port))) }

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

// tableEntry is the mutable cache state of one table path, guarded by Cache.mu.
type tableEntry struct {
	path    domain.TablePath
	table   *Table
	leaders []int32 // per bucket, nil when unknown (non-partitioned tables)
	parts   *lru.Cache[string, *partEntry]
	partIDs map[int64]*partEntry
	schemas map[int32]domain.Schema
}

type partEntry struct {
	id      int64
	name    string
	leaders []int32 // nil when unknown
}

// Cache is the metadata cache of one cluster connection.
type Cache struct {
	call Caller
	opts Options

	mu          sync.Mutex
	tables      *lru.Cache[domain.TablePath, *tableEntry]
	byID        map[int64]*tableEntry
	nodes       map[int32]ServerNode
	coordinator *ServerNode
	flights     map[string]*flight
	expect      map[domain.TablePath]version // see Expect
}

// version is a table id and a schema id.
type version struct {
	tableID  int64
	schemaID int32
}

type flight struct {
	done chan struct{}
	err  error
}

// New returns an empty cache that loads through call.
func New(call Caller, opts Options) *Cache {
	c := &Cache{
		call:    call,
		opts:    opts.withDefaults(),
		byID:    make(map[int64]*tableEntry),
		nodes:   make(map[int32]ServerNode),
		flights: make(map[string]*flight),
		expect:  make(map[domain.TablePath]version),
	}
	c.tables = lru.New(c.opts.MaxTables, func(_ domain.TablePath, e *tableEntry) {
		if e.table != nil && c.byID[e.table.ID()] == e {
			delete(c.byID, e.table.ID())
		}
	})
	return c
}

// do runs load once for key: concurrent callers with the same key wait for
// the same run. The run uses a context detached from the callers' (bounded by
// LoadTimeout), so that one caller giving up does not fail the others.
func (c *Cache) do(ctx context.Context, key string, load func(context.Context) error) error {
	c.mu.Lock()
	f, ok := c.flights[key]
	if !ok {
		f = &flight{done: make(chan struct{})}
		c.flights[key] = f
		go func() {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.LoadTimeout)
			defer cancel()
			f.err = load(lctx)
			c.mu.Lock()
			delete(c.flights, key)
			c.mu.Unlock()
			close(f.done)
		}()
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return DomainError(ctx.Err(), "metadata")
	}
}

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
	return c.Reload(ctx, path)
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
	deadline := c.opts.Now().Add(c.opts.CatchUpWait)
	wait := backoff.Policy{Initial: 25 * time.Millisecond, Max: 200 * time.Millisecond}.Start()
	for {
		t, err := c.reloadOnce(ctx, path, to)
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
func (c *Cache) reloadOnce(ctx context.Context, path domain.TablePath, to Dest) (*Table, error) {
	key := "t:" + path.String()
	if to.Kind == ToCoordinator {
		key = "c:" + path.String()
	}
	err := c.do(ctx, key, func(ctx context.Context) error {
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

func leadersFromPB(bms []*flusspb.PbBucketMetadata, n int) []int32 {
	leaders := make([]int32, n)
	for i := range leaders {
		leaders[i] = NoLeader
	}
	for _, b := range bms {
		if id := int(b.GetBucketId()); id >= 0 && id < n && b.LeaderId != nil {
			leaders[id] = b.GetLeaderId()
		}
	}
	return leaders
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

// InvalidateLeaders forgets the bucket leaders of one physical table
// (partition NoPartition for a non-partitioned table), so that the next
// Leader call reports them unknown and the caller refreshes them.
func (c *Cache) InvalidateLeaders(tableID, partitionID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[tableID]
	if !ok {
		return
	}
	if partitionID == NoPartition {
		e.leaders = nil
	} else if pe, ok := e.partIDs[partitionID]; ok {
		pe.leaders = nil
	}
}

// Leader returns the leader node of a bucket; ok is false when the table,
// partition or leader is unknown or the leader's address is not known.
func (c *Cache) Leader(tableID, partitionID int64, bucket int32) (ServerNode, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[tableID]
	if !ok {
		return ServerNode{}, false
	}
	leaders := e.leaders
	if partitionID != NoPartition {
		pe, ok := e.partIDs[partitionID]
		if !ok {
			return ServerNode{}, false
		}
		leaders = pe.leaders
	}
	if int(bucket) < 0 || int(bucket) >= len(leaders) || leaders[bucket] == NoLeader {
		return ServerNode{}, false
	}
	n, ok := c.nodes[leaders[bucket]]
	return n, ok
}

// AvailableBuckets appends to dst the buckets of a physical table that have
// a known leader (for sticky assignment of key-less log rows).
func (c *Cache) AvailableBuckets(dst []int32, tableID, partitionID int64) []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[tableID]
	if !ok {
		return dst
	}
	leaders := e.leaders
	if partitionID != NoPartition {
		if pe, ok := e.partIDs[partitionID]; ok {
			leaders = pe.leaders
		} else {
			leaders = nil
		}
	}
	for b, l := range leaders {
		if _, known := c.nodes[l]; l != NoLeader && known {
			dst = append(dst, int32(b))
		}
	}
	return dst
}

// RefreshLeaders fetches the bucket metadata of one physical table. A
// partition that no longer exists is forgotten and reported as
// partition_not_found; a table that no longer exists (or was re-created with
// another id) as table_not_found.
func (c *Cache) RefreshLeaders(ctx context.Context, tableID, partitionID int64) error {
	c.mu.Lock()
	e, ok := c.byID[tableID]
	var path domain.TablePath
	if ok {
		path = e.path
	}
	c.mu.Unlock()
	if !ok {
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable,
			Message: fmt.Sprintf("table id %d is not in the metadata cache", tableID)}
	}
	key := fmt.Sprintf("l:%d/%d", tableID, partitionID)
	err := c.do(ctx, key, func(ctx context.Context) error {
		req := &flusspb.MetadataRequest{TablePath: []*flusspb.PbTablePath{pbPath(path)}}
		if partitionID != NoPartition {
			req.PartitionsId = []int64{partitionID}
		}
		var resp flusspb.MetadataResponse
		err := c.call.Call(ctx, Any(), wire.KeyGetMetadata, req, &resp)
		switch ErrorCode(err) {
		case wire.CodePartitionNotExists:
			c.mu.Lock()
			if pe, ok := e.partIDs[partitionID]; ok {
				delete(e.partIDs, partitionID)
				e.parts.Remove(pe.name)
			}
			c.mu.Unlock()
		case wire.CodeTableNotExist:
			c.Invalidate(path)
		}
		if err != nil {
			return DomainError(err, fmt.Sprintf("table `%s`", path))
		}
		err = c.apply(&resp, path)
		return err
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.byID[tableID]; !ok || cur.table == nil || cur.table.ID() != tableID {
		return &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable,
			Message: fmt.Sprintf("table `%s` with id %d no longer exists", path, tableID)}
	}
	return nil
}

// PartitionName returns the name of a cached partition.
func (c *Cache) PartitionName(tableID, partitionID int64) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[tableID]; ok {
		if pe, ok := e.partIDs[partitionID]; ok {
			return pe.name, true
		}
	}
	return "", false
}

// Partition resolves a partition name of table t to its id, fetching its
// metadata when it is not cached. When the partition does not exist and
// create is true it is created on the coordinator (ignoring a concurrent
// creation), as the Java client's dynamic partition creation does; otherwise
// the error is a partition_not_found *domain.Error.
func (c *Cache) Partition(ctx context.Context, t *Table, name string, create bool) (int64, error) {
	if !t.Partitioned {
		return NoPartition, domain.InvalidArgument("table `%s` is not partitioned", t.Path())
	}
	if id, ok := c.cachedPartition(t.ID(), name); ok {
		return id, nil
	}
	// A name Fluss cannot give a partition (an empty value, "..", other
	// characters) is refused before any request: the server answers such
	// metadata requests with internal errors, not PARTITION_NOT_EXISTS.
	spec, err := domain.ParsePartitionName(t.Info.Descriptor.PartitionKeys, name)
	if err != nil {
		return NoPartition, err
	}
	what := fmt.Sprintf("partition `%s` of table `%s`", name, t.Path())
	key := fmt.Sprintf("p:%d/%s/%t", t.ID(), name, create)
	err = c.do(ctx, key, func(ctx context.Context) error {
		err := c.fetchPartition(ctx, t, name)
		if err == nil || !create || ErrorCode(err) != wire.CodePartitionNotExists {
			return DomainError(err, what)
		}
		if err := c.createPartition(ctx, t, spec); err != nil {
			return DomainError(err, "creating "+what)
		}
		// The coordinator tells the tablet servers asynchronously; poll.
		deadline := c.opts.Now().Add(c.opts.PartitionCreateWait)
		wait := backoff.Policy{Initial: 50 * time.Millisecond, Max: 500 * time.Millisecond}.Start()
		for {
			err := c.fetchPartition(ctx, t, name)
			if err == nil || ErrorCode(err) != wire.CodePartitionNotExists || c.opts.Now().After(deadline) {
				return DomainError(err, what)
			}
			if !wait.Wait(ctx) {
				return DomainError(ctx.Err(), what)
			}
		}
	})
	if err != nil {
		return NoPartition, err
	}
	if id, ok := c.cachedPartition(t.ID(), name); ok {
		return id, nil
	}
	return NoPartition, &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourcePartition,
		Message: what + " does not exist"}
}

func (c *Cache) cachedPartition(tableID int64, name string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[tableID]; ok {
		if pe, ok := e.parts.Get(name); ok {
			return pe.id, true
		}
	}
	return NoPartition, false
}

// fetchPartition asks for the metadata of one partition by name; it returns
// the raw call error so that callers can see PARTITION_NOT_EXISTS.
func (c *Cache) fetchPartition(ctx context.Context, t *Table, name string) error {
	path := t.Path()
	req := &flusspb.MetadataRequest{
		TablePath: []*flusspb.PbTablePath{pbPath(path)},
		PartitionsPath: []*flusspb.PbPhysicalTablePath{{
			DatabaseName: proto.String(path.Database), TableName: proto.String(path.Table), PartitionName: proto.String(name),
		}},
	}
	var resp flusspb.MetadataResponse
	if err := c.call.Call(ctx, Any(), wire.KeyGetMetadata, req, &resp); err != nil {
		return err
	}
	return c.apply(&resp, path)
}

func (c *Cache) createPartition(ctx context.Context, t *Table, spec domain.PartitionSpec) error {
	pbSpec := &flusspb.PbPartitionSpec{}
	for _, pv := range spec {
		pbSpec.PartitionKeyValues = append(pbSpec.PartitionKeyValues,
			&flusspb.PbKeyValue{Key: proto.String(pv.Key), Value: proto.String(pv.Value)})
	}
	req := &flusspb.CreatePartitionRequest{
		TablePath:         pbPath(t.Path()),
		PartitionSpec:     pbSpec,
		IgnoreIfNotExists: proto.Bool(true), // means "ignore if it already exists"
	}
	return c.call.Call(ctx, Coordinator(), wire.KeyCreatePartition, req, &flusspb.CreatePartitionResponse{})
}

// Schema returns the schema with schemaID of table t: the cached current one,
// or an older one fetched with GetTableSchema and cached.
func (c *Cache) Schema(ctx context.Context, t *Table, schemaID int32) (domain.Schema, error) {
	if schemaID == t.Info.SchemaID {
		return t.Info.Descriptor.Schema, nil
	}
	c.mu.Lock()
	if e, ok := c.byID[t.ID()]; ok {
		if s, ok := e.schemas[schemaID]; ok {
			c.mu.Unlock()
			return s, nil
		}
	}
	c.mu.Unlock()
	what := fmt.Sprintf("schema %d of table `%s`", schemaID, t.Path())
	var out domain.Schema
	err := c.do(ctx, fmt.Sprintf("s:%d/%d", t.ID(), schemaID), func(ctx context.Context) error {
		var resp flusspb.GetTableSchemaResponse
		req := &flusspb.GetTableSchemaRequest{TablePath: pbPath(t.Path()), SchemaId: proto.Int32(schemaID)}
		if err := c.call.Call(ctx, Any(), wire.KeyGetTableSchema, req, &resp); err != nil {
			return DomainError(err, what)
		}
		s, err := serde.UnmarshalSchemaJSON(resp.GetSchemaJson())
		if err != nil {
			return &domain.Error{Kind: domain.KindBackend, Message: what + ": " + err.Error(), Cause: err}
		}
		c.mu.Lock()
		if e, ok := c.byID[t.ID()]; ok {
			e.schemas[schemaID] = s
		}
		c.mu.Unlock()
		return nil
	})
	if err != nil {
		return out, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[t.ID()]; ok {
		if s, ok := e.schemas[schemaID]; ok {
			return s, nil
		}
	}
	return out, &domain.Error{Kind: domain.KindUnavailable, Retryable: true, Message: what + ": evicted while loading; retry"}
}

// RefreshNodes fetches the node list (an empty MetadataRequest).
func (c *Cache) RefreshNodes(ctx context.Context) error {
	return c.do(ctx, "n:", func(ctx context.Context) error {
		return c.fetch(ctx, &flusspb.MetadataRequest{}, domain.TablePath{})
	})
}

// Node returns the address of a node by id (tablet servers and coordinator).
func (c *Cache) Node(id int32) (ServerNode, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.nodes[id]; ok {
		return n, true
	}
	if c.coordinator != nil && c.coordinator.ID == id {
		return *c.coordinator, true
	}
	return ServerNode{}, false
}

// Coordinator returns the coordinator node, if metadata named one.
func (c *Cache) Coordinator() (ServerNode, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.coordinator == nil {
		return ServerNode{}, false
	}
	return *c.coordinator, true
}

// TabletServers returns the live tablet servers from the last metadata answer.
func (c *Cache) TabletServers() []ServerNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]ServerNode, 0, len(c.nodes))
	for _, n := range c.nodes {
		out = append(out, n)
	}
	return out
}

// Len returns the number of cached tables.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tables.Len()
}

// AwaitLeaders polls the metadata of the table at path (a fresh load from
// the coordinator each time, 50 ms apart doubling to 500 ms; see
// BucketsWithoutLeader for why the coordinator) until every bucket has a leader whose
// address is known, so that a table just created is writable when its
// creation is answered. It gives up at until, or when ctx ends, with a
// KindUnavailable *domain.Error naming the table and how many buckets still
// had no leader. A table the metadata does not show yet counts as having no
// leaders. Partitioned tables return at once: their buckets come with their
// partitions.
func (c *Cache) AwaitLeaders(ctx context.Context, path domain.TablePath, until time.Time) error {
	start := c.opts.Now()
	waits := backoff.Policy{Initial: 50 * time.Millisecond, Max: 500 * time.Millisecond}.Start()
	for {
		missing, total, err := c.leaderless(ctx, path)
		switch {
		case err == nil && missing == 0:
			return nil
		case err != nil && domain.KindOf(err) != domain.KindNotFound && domain.KindOf(err) != domain.KindUnavailable:
			return err
		}
		wait := min(waits.Next(), until.Sub(c.opts.Now()))
		if wait <= 0 || ctx.Err() != nil {
			msg := fmt.Sprintf("table `%s` was created, but after %s not every bucket has a leader", path, c.opts.Now().Sub(start).Round(time.Millisecond))
			if total > 0 {
				msg += fmt.Sprintf(" (%d of %d without one)", missing, total)
			} else if err != nil {
				msg += " (the metadata does not show the table yet)"
			}
			return &domain.Error{Kind: domain.KindUnavailable, Resource: domain.ResourceTable, Retryable: true, Cause: err,
				Message: msg + "; writes and lookups fail until Fluss assigns them"}
		}
		backoff.Sleep(ctx, wait) // an ended ctx is reported by the next round
	}
}

// leaderless reloads path and counts its buckets without a known leader.
func (c *Cache) leaderless(ctx context.Context, path domain.TablePath) (missing, total int, err error) {
	_, missing, total, err = c.BucketsWithoutLeader(ctx, path)
	return missing, total, err
}

// BucketsWithoutLeader reloads the metadata of the table at path from the
// coordinator (a fresh load, as AwaitLeaders does) and returns its table id,
// how many of its buckets have no leader whose address is known, and its
// bucket count. A partitioned table reports 0 of 0: its buckets come with
// its partitions. Errors are those of Reload (KindNotFound while the
// metadata does not show the table).
//
// Only the coordinator's answer is believed here: right after a table is
// dropped and created again at the same path, a tablet server of Fluss
// 0.9.1 answers with the new table's info (read from ZooKeeper) but the
// bucket leaders of the dropped one, still in its cache under the old table
// id (TabletServerMetadataCache#getTableMetadata takes the id from its
// snapshot and the TableInfo from ZooKeeper), so a table whose buckets have
// no leader yet, or never will, looks ready. The coordinator answers from
// its own context (leaders only once it processed the creation) or from
// ZooKeeper.
func (c *Cache) BucketsWithoutLeader(ctx context.Context, path domain.TablePath) (tableID int64, missing, total int, err error) {
	t, err := c.reload(ctx, path, Coordinator())
	if err != nil {
		return 0, 0, 0, err
	}
	if t.Partitioned {
		return t.ID(), 0, 0, nil
	}
	have := len(c.AvailableBuckets(nil, t.ID(), NoPartition))
	return t.ID(), t.NumBuckets - have, t.NumBuckets, nil
}
