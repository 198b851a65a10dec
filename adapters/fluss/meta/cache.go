package meta

// This file holds the Cache itself: its options, its state (one entry per
// table path, guarded by one mutex) and the single-flight loads every
// other file goes through (do). The caches it holds live beside it:
// tables.go (table snapshots), leaders.go (bucket leaders), partitions.go
// (partition names and ids), schemas.go (older schemas) and nodes.go (the
// cluster's servers); caller.go and rpccaller.go are the RPC seam.

import (
	"context"
	"sync"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/defaults"
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
	o.MaxTables = defaults.Positive(o.MaxTables, DefaultMaxTables)
	o.MaxPartitions = defaults.Positive(o.MaxPartitions, DefaultMaxPartitions)
	o.MaxAge = defaults.Positive(o.MaxAge, DefaultMaxAge)
	o.LoadTimeout = defaults.Positive(o.LoadTimeout, DefaultLoadTimeout)
	o.PartitionCreateWait = defaults.Positive(o.PartitionCreateWait, 10*time.Second)
	o.CatchUpWait = defaults.Positive(o.CatchUpWait, DefaultCatchUpWait)
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

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
	return c.doUnless(ctx, key, nil, load)
}

// doUnless is do, except that when no run for key is in flight and done
// (called with mu held) reports true, nothing is loaded: a caller that
// found the cache empty and a concurrent run that filled it in the
// meantime (and left) cost one load, not two.
func (c *Cache) doUnless(ctx context.Context, key string, done func() bool, load func(context.Context) error) error {
	c.mu.Lock()
	f, ok := c.flights[key]
	if !ok && done != nil && done() {
		c.mu.Unlock()
		return nil
	}
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

// Len returns the number of cached tables.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tables.Len()
}
