package meta

import "container/list"

// lru is a map with a size bound that evicts the least recently used key. It
// is not safe for concurrent use; the Cache guards it with its mutex.
type lru[K comparable, V any] struct {
	max   int
	ll    *list.List
	items map[K]*list.Element
	// onEvict, when set, is told about every evicted entry.
	onEvict func(K, V)
}

type lruItem[K comparable, V any] struct {
	key K
	val V
}

func newLRU[K comparable, V any](max int, onEvict func(K, V)) *lru[K, V] {
	return &lru[K, V]{max: max, ll: list.New(), items: make(map[K]*list.Element), onEvict: onEvict}
}

// get returns the value of k and marks it used.
func (c *lru[K, V]) get(k K) (V, bool) {
	if e, ok := c.items[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*lruItem[K, V]).val, true
	}
	var zero V
	return zero, false
}

// peek returns the value of k without marking it used.
func (c *lru[K, V]) peek(k K) (V, bool) {
	if e, ok := c.items[k]; ok {
		return e.Value.(*lruItem[K, V]).val, true
	}
	var zero V
	return zero, false
}

// put stores v under k, marks it used and evicts the oldest entries beyond max.
func (c *lru[K, V]) put(k K, v V) {
	if e, ok := c.items[k]; ok {
		e.Value.(*lruItem[K, V]).val = v
		c.ll.MoveToFront(e)
		return
	}
	c.items[k] = c.ll.PushFront(&lruItem[K, V]{key: k, val: v})
	for c.max > 0 && c.ll.Len() > c.max {
		c.removeElement(c.ll.Back())
	}
}

// remove deletes k; it does not call onEvict.
func (c *lru[K, V]) remove(k K) (V, bool) {
	if e, ok := c.items[k]; ok {
		it := e.Value.(*lruItem[K, V])
		c.ll.Remove(e)
		delete(c.items, k)
		return it.val, true
	}
	var zero V
	return zero, false
}

func (c *lru[K, V]) removeElement(e *list.Element) {
	it := e.Value.(*lruItem[K, V])
	c.ll.Remove(e)
	delete(c.items, it.key)
	if c.onEvict != nil {
		c.onEvict(it.key, it.val)
	}
}

func (c *lru[K, V]) len() int { return c.ll.Len() }

// each calls f for every entry, most recently used first.
func (c *lru[K, V]) each(f func(K, V)) {
	for e := c.ll.Front(); e != nil; e = e.Next() {
		it := e.Value.(*lruItem[K, V])
		f(it.key, it.val)
	}
}
