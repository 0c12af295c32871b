package engine

import (
	"container/list"
	"sync"
)

// DefaultLookupMemoSize is how many lookups' results an engine keeps
// (lookupmemo.go), DefaultRenderMemoSize how many renders (rendermemo.go).
const (
	DefaultLookupMemoSize = 4096
	DefaultRenderMemoSize = 1024
)

// lru is a bounded map of memoised results, the least recently used
// dropped first. It is safe for concurrent use. The plans of a CUE runtime
// (plan.go) and the lookups' references (lookupmemo.go) are kept in one.
type lru[V any] struct {
	mu      sync.Mutex
	max     int
	entries map[string]*list.Element
	order   *list.List // of *lruItem[V], most recent first
}

type lruItem[V any] struct {
	key   string
	value V
}

func newLRU[V any](max int) *lru[V] {
	return &lru[V]{max: max, entries: map[string]*list.Element{}, order: list.New()}
}

// get returns the value kept under key, and whether there is one.
func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*lruItem[V]).value, true
	}
	var zero V
	return zero, false
}

// put keeps value under key, dropping the least recently used past max.
func (c *lru[V]) put(key string, value V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		el.Value.(*lruItem[V]).value = value
		c.order.MoveToFront(el)
		return
	}
	c.entries[key] = c.order.PushFront(&lruItem[V]{key, value})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.entries, last.Value.(*lruItem[V]).key)
	}
}

func (c *lru[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
