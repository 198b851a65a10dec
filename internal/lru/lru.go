// Package lru is a size-bounded map that evicts its least recently used
// entry: the one cache primitive of the gateway (the metadata cache of the
// Fluss adapter, the per-principal quotas of the HTTP adapter). It imports
// only the standard library, so that any layer may use it.
package lru

import "container/list"

// Cache maps keys to values and holds at most Max entries (0 means no bound);
// putting a new key into a full cache evicts the least recently used one.
// Get and Put mark an entry used, Peek does not. A Cache is not safe for
// concurrent use: callers guard it with their own lock.
type Cache[K comparable, V any] struct {
	max     int
	ll      list.List // of *entry[K, V], most recently used first
	items   map[K]*list.Element
	onEvict func(K, V)
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// New returns an empty cache bounded to max entries (0: unbounded). onEvict,
// when not nil, is called with every entry evicted to make room (not with
// entries removed by Remove or replaced by Put).
func New[K comparable, V any](max int, onEvict func(K, V)) *Cache[K, V] {
	return &Cache[K, V]{max: max, items: make(map[K]*list.Element), onEvict: onEvict}
}

// Get returns the value of k and marks it used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	if e, ok := c.items[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*entry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// Peek returns the value of k without marking it used.
func (c *Cache[K, V]) Peek(k K) (V, bool) {
	if e, ok := c.items[k]; ok {
		return e.Value.(*entry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// Put stores v under k, marks it used and evicts the least recently used
// entries beyond the bound.
func (c *Cache[K, V]) Put(k K, v V) {
	if e, ok := c.items[k]; ok {
		e.Value.(*entry[K, V]).val = v
		c.ll.MoveToFront(e)
		return
	}
	c.items[k] = c.ll.PushFront(&entry[K, V]{key: k, val: v})
	for c.max > 0 && c.ll.Len() > c.max {
		e := c.ll.Back()
		it := e.Value.(*entry[K, V])
		c.ll.Remove(e)
		delete(c.items, it.key)
		if c.onEvict != nil {
			c.onEvict(it.key, it.val)
		}
	}
}

// Remove deletes k and returns its value; it does not call onEvict.
func (c *Cache[K, V]) Remove(k K) (V, bool) {
	if e, ok := c.items[k]; ok {
		c.ll.Remove(e)
		delete(c.items, k)
		return e.Value.(*entry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// Len is the number of entries.
func (c *Cache[K, V]) Len() int { return c.ll.Len() }

// Each calls f for every entry, most recently used first, without marking
// any used. f must not modify the cache.
func (c *Cache[K, V]) Each(f func(K, V)) {
	for e := c.ll.Front(); e != nil; e = e.Next() {
		it := e.Value.(*entry[K, V])
		f(it.key, it.val)
	}
}
