package meta

import "sync"

// PerTable keeps one value per (table id, schema id) of the tables a Cache
// holds: the writer's and the lookup client's codecs. Values of tables the
// cache no longer holds (dropped through this gateway, found gone, or
// evicted from it) are dropped every pruneEvery puts, so that a gateway
// serving short-lived tables does not keep a codec per table it ever saw
// (issue 28: the one-hour soak creates, alters and drops a table every
// 10 s; their codecs were the bulk of ~28 KiB kept per cycle). At most Max
// values are kept: beyond, all are dropped and rebuilt on use. Safe for
// concurrent use.
type PerTable[V any] struct {
	cache TableHolder
	max   int

	mu   sync.Mutex
	m    map[tableSchema]V
	puts int
}

// TableHolder tells whether a table id is held (Cache.TableByID).
type TableHolder interface {
	TableByID(id int64) (*Table, bool)
}

type tableSchema struct {
	tableID  int64
	schemaID int32
}

// pruneEvery is how many puts pass between two prunes.
const pruneEvery = 32

// NewPerTable returns an empty PerTable whose values live as long as their
// tables are in cache, at most max of them (4096 when max <= 0).
func NewPerTable[V any](cache TableHolder, max int) *PerTable[V] {
	if max <= 0 {
		max = 4096
	}
	return &PerTable[V]{cache: cache, max: max, m: make(map[tableSchema]V)}
}

// Get returns the value of a table's schema.
func (p *PerTable[V]) Get(tableID int64, schemaID int32) (V, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.m[tableSchema{tableID, schemaID}]
	return v, ok
}

// Put stores the value of a table's schema.
func (p *PerTable[V]) Put(tableID int64, schemaID int32, v V) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.puts++
	if p.puts%pruneEvery == 0 || len(p.m) >= p.max {
		for k := range p.m {
			if _, ok := p.cache.TableByID(k.tableID); !ok {
				delete(p.m, k)
			}
		}
	}
	if len(p.m) >= p.max {
		clear(p.m)
	}
	p.m[tableSchema{tableID, schemaID}] = v
}

// Len returns the number of values kept.
func (p *PerTable[V]) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}
