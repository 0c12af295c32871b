package engine

import (
	"container/list"
	"runtime"
	"sync"

	"cuelang.org/go/cue"
)

// DefaultLookupMemoSize is how many lookups' results an engine keeps
// (lookupmemo.go), DefaultRenderMemoSize how many renders (rendermemo.go),
// DefaultReviewMemoSize how many reviews (reviewmemo.go),
// DefaultCRDPartMemoSize how many parts' CRD check errors (crdparts.go).
const (
	DefaultLookupMemoSize  = 4096
	DefaultRenderMemoSize  = 1024
	DefaultReviewMemoSize  = 2048
	DefaultCRDPartMemoSize = 8192
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

// clear drops every value; a nil lru (a memo switched off) has none.
func (c *lru[V]) clear() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.order.Init()
}

func (c *lru[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// valuePool holds the evaluated CUE values of one thing (a plan, a shared
// runtime) for evaluations to share. An evaluation that shares a value
// writes to it (CUE keeps evaluation state in the shared nodes), so one
// value serves one evaluation at a time: an evaluation takes one from the
// free values, or makes one more when all are in use, and gives it back.
type valuePool struct {
	make func() cue.Value

	mu   sync.Mutex
	free []cue.Value
}

// maxFreeValues bounds the values a pool keeps for evaluations to come:
// as many as can run at once.
var maxFreeValues = runtime.GOMAXPROCS(0)

// acquire returns a value for one evaluation's sole use.
func (p *valuePool) acquire() cue.Value {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		v := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return v
	}
	p.mu.Unlock()
	return p.make()
}

// release gives a value back once its evaluation is done.
func (p *valuePool) release(v cue.Value) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < maxFreeValues {
		p.free = append(p.free, v)
	}
}
