package cache

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

// TestLRUDropsTheLeastRecentlyUsed: past its bound the LRU drops the entry
// used longest ago, a Get or a Put counting as a use; a Put of a key it
// keeps replaces the value; Clear empties it, and a nil LRU clears.
func TestLRUDropsTheLeastRecentlyUsed(t *testing.T) {
	c := NewLRU[int](2)
	c.Put("a", 1)
	c.Put("b", 2)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("a: %d, %v", v, ok)
	}
	c.Put("c", 3) // b is the least recently used
	if _, ok := c.Get("b"); ok {
		t.Error("b kept past the bound, though a was used after it")
	}
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Errorf("a dropped: %d, %v", v, ok)
	}
	c.Put("c", 4)
	if v, _ := c.Get("c"); v != 4 || c.Len() != 2 {
		t.Errorf("c = %d, len %d: a second Put replaces", v, c.Len())
	}
	c.Put("d", 5) // a was used before c's Put
	if _, ok := c.Get("a"); ok {
		t.Error("a kept, though c was put after it was used")
	}
	c.Clear()
	if c.Len() != 0 {
		t.Errorf("%d entries after Clear", c.Len())
	}
	if _, ok := c.Get("c"); ok {
		t.Error("c kept after Clear")
	}
	var off *LRU[int]
	off.Clear()
}

// TestLRUConcurrent: Gets and Puts from many goroutines keep the bound
// (run with -race).
func TestLRUConcurrent(t *testing.T) {
	c := NewLRU[int](8)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				k := fmt.Sprint((g*7 + i) % 13)
				c.Put(k, i)
				c.Get(k)
			}
		})
	}
	wg.Wait()
	if c.Len() != 8 {
		t.Errorf("%d entries, bound 8", c.Len())
	}
}

// TestValuePool: a value acquired is made when none is free, given back
// by Release and handed out again, and the pool keeps no more free values
// than can run at once.
func TestValuePool(t *testing.T) {
	ctx := cuecontext.New()
	made := 0
	p := &ValuePool{Make: func() cue.Value { made++; return ctx.CompileString(fmt.Sprint(made)) }}
	a, b := p.Acquire(), p.Acquire()
	if made != 2 {
		t.Fatalf("made %d values for two evaluations at once", made)
	}
	p.Release(a)
	if c := p.Acquire(); made != 2 || c != a {
		t.Errorf("a released value was not used again (made %d)", made)
	}
	p.Release(b)
	for range maxFreeValues + 3 {
		p.Release(ctx.CompileString("0"))
	}
	if len(p.free) != maxFreeValues {
		t.Errorf("%d free values kept, bound %d", len(p.free), maxFreeValues)
	}
}

// TestLRUDeleteAndKeys: Delete drops one key alone; Keys lists what is
// kept, the most recently used first.
func TestLRUDeleteAndKeys(t *testing.T) {
	c := NewLRU[int](3)
	c.Put("a", 1)
	c.Put("b", 2)
	c.Put("c", 3)
	c.Get("a")
	if got, want := c.Keys(), []string{"a", "c", "b"}; !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	c.Delete("c")
	c.Delete("absent")
	if _, ok := c.Get("c"); ok || c.Len() != 2 {
		t.Errorf("after Delete(c): c kept %v, %d kept; want it gone, 2 kept", ok, c.Len())
	}
	c.Put("d", 4)
	c.Put("e", 5)
	if got, want := c.Keys(), []string{"e", "d", "a"}; !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v (b dropped, the least recently used)", got, want)
	}
}
