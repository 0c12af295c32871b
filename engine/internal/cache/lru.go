// Package cache holds the engine's one cache type, a bounded LRU map the
// memos, the plan cache and the lookups keep their results in, and the
// pool of evaluated CUE values that evaluations share one at a time.
package cache

import (
	"container/list"
	"runtime"
	"sync"

	"cuelang.org/go/cue"
)

// LRU is a bounded map of memoised results, the least recently used
// dropped first. It is safe for concurrent use. The plans of a CUE runtime
// (plan.go) and the lookups' references (lookupmemo.go) are kept in one.
type LRU[V any] struct {
	mu      sync.Mutex
	max     int
	entries map[string]*list.Element
	order   *list.List // of *lruItem[V], most recent first
}

type lruItem[V any] struct {
	key   string
	value V
}

// NewLRU returns an empty LRU that keeps at most max entries.
func NewLRU[V any](max int) *LRU[V] {
	return &LRU[V]{max: max, entries: map[string]*list.Element{}, order: list.New()}
}

// Get returns the value kept under key, and whether there is one.
func (c *LRU[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*lruItem[V]).value, true
	}
	var zero V
	return zero, false
}

// Put keeps value under key, dropping the least recently used past max.
func (c *LRU[V]) Put(key string, value V) {
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

// Delete drops the value kept under key, if any.
func (c *LRU[V]) Delete(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.order.Remove(el)
		delete(c.entries, key)
	}
}

// Keys are the keys of the values kept, the most recently used first.
func (c *LRU[V]) Keys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, c.order.Len())
	for el := c.order.Front(); el != nil; el = el.Next() {
		keys = append(keys, el.Value.(*lruItem[V]).key)
	}
	return keys
}

// Clear drops every value; a nil LRU (a memo switched off) has none.
func (c *LRU[V]) Clear() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.order.Init()
}

// Len is how many values the LRU keeps.
func (c *LRU[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// ValuePool holds the evaluated CUE values of one thing (a plan, a shared
// runtime) for evaluations to share. An evaluation that shares a value
// writes to it (CUE keeps evaluation state in the shared nodes), so one
// value serves one evaluation at a time: an evaluation takes one from the
// free values, or makes one more when all are in use, and gives it back.
type ValuePool struct {
	Make func() cue.Value

	mu   sync.Mutex
	free []cue.Value
}

// maxFreeValues bounds the values a pool keeps for evaluations to come:
// as many as can run at once.
var maxFreeValues = runtime.GOMAXPROCS(0)

// Acquire returns a value for one evaluation's sole use.
func (p *ValuePool) Acquire() cue.Value {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		v := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return v
	}
	p.mu.Unlock()
	return p.Make()
}

// Release gives a value back once its evaluation is done.
func (p *ValuePool) Release(v cue.Value) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < maxFreeValues {
		p.free = append(p.free, v)
	}
}
