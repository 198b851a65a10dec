package lru

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func keys(c *Cache[string, int]) []string {
	var out []string
	c.Each(func(k string, _ int) { out = append(out, k) })
	return out
}

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	var evicted []string
	c := New[string, int](2, func(k string, v int) { evicted = append(evicted, k) })
	c.Put("a", 1)
	c.Put("b", 2)
	v, ok := c.Get("a") // a is now the most recent
	require.True(t, ok)
	assert.Equal(t, 1, v)
	c.Put("c", 3)
	assert.Equal(t, []string{"b"}, evicted)
	assert.Equal(t, []string{"c", "a"}, keys(c))
	_, ok = c.Get("b")
	assert.False(t, ok)
	assert.Equal(t, 2, c.Len())
}

func TestPeekDoesNotMarkUsed(t *testing.T) {
	c := New[string, int](2, nil)
	c.Put("a", 1)
	c.Put("b", 2)
	v, ok := c.Peek("a")
	require.True(t, ok)
	assert.Equal(t, 1, v)
	c.Put("c", 3)
	_, ok = c.Peek("a")
	assert.False(t, ok, "a stayed the least recently used and was evicted")
	_, ok = c.Peek("zz")
	assert.False(t, ok)
}

func TestPutReplacesWithoutEviction(t *testing.T) {
	calls := 0
	c := New[string, int](2, func(string, int) { calls++ })
	c.Put("a", 1)
	c.Put("b", 2)
	c.Put("a", 10)
	assert.Zero(t, calls)
	assert.Equal(t, []string{"a", "b"}, keys(c))
	v, _ := c.Get("a")
	assert.Equal(t, 10, v)
}

func TestRemove(t *testing.T) {
	calls := 0
	c := New[string, int](2, func(string, int) { calls++ })
	c.Put("a", 1)
	v, ok := c.Remove("a")
	assert.True(t, ok)
	assert.Equal(t, 1, v)
	_, ok = c.Remove("a")
	assert.False(t, ok)
	assert.Zero(t, calls, "Remove does not call onEvict")
	assert.Zero(t, c.Len())
}

func TestUnbounded(t *testing.T) {
	c := New[int, int](0, nil)
	for i := range 1000 {
		c.Put(i, i)
	}
	assert.Equal(t, 1000, c.Len())
}

func TestZeroValueMiss(t *testing.T) {
	c := New[string, *int](1, nil)
	v, ok := c.Get("x")
	assert.False(t, ok)
	assert.Nil(t, v)
}
