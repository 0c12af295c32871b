package engine

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"cuelang.org/go/cue/cuecontext"
)

// Defects.
//
// CUE's evaluator may panic on CUE it accepts: cuelang.org/go v0.17.1
// dereferences nil in its disjunctions (internal/core/adt, initArcs) for
// some correct policies, when it shares structure between values. Such a
// panic is neither the admin's mistake nor the object's, and none escapes
// the engine: every place where it evaluates CUE (the load and its guard's
// goroutine, a review, a mutation, a render, the CRDs, a CUE document, a
// recompile, the document workers) recovers it as a *Defect.
//
// After one, the CUE runtime that panicked is not used again (its
// evaluator's state is unknown): the engine compiles a fresh one and
// empties every memo, which may hold what that runtime made
// (replaceRuntime). The evaluation is made again on the fallback: a
// runtime without CUE's structure sharing, with none of the engine's own
// optimisations (carried values as tokens, the memos, shared runtime
// values). When the fallback evaluates it, the kind's evaluations of that
// sort go to the fallback from then on (fallBack): slower, right, and a
// panic paid once. The load's trials meet such panics first, and the load
// says so in a warning (fallbackWarnings). One that panics on the fallback
// too is a finding of PhaseDefect, which rejects the object (a webhook
// that cannot decide refuses), and at load a problem that says whose
// defect it is.

// recovered is the defect of a recovered panic's value r while evaluating
// what, counted. The runtime c that panicked is replaced (nil: no runtime
// is to blame, a compilation panicked). The load's guard ending its
// goroutine (gaveUp) is no defect: it panics on.
func (e *core) recovered(r any, what string, c *compiled) *Defect {
	if _, ok := r.(gaveUp); ok {
		panic(r)
	}
	d, ok := r.(*Defect)
	if !ok {
		d = &Defect{What: what, Panic: fmt.Sprint(r), Stack: string(debug.Stack())}
	}
	e.defects.Add(1)
	if c != nil {
		e.replaceRuntime(c)
	}
	return d
}

// replaceRuntime puts a fresh CUE runtime in place of c and empties the
// memos: c panicked, and what it made may be wrong. The fallback runtime
// is dropped, to be compiled again when next needed; the one in force is
// compiled again now. A runtime already replaced is left alone; a fresh
// one that does not compile leaves c in force, its memos emptied all the
// same.
func (e *core) replaceRuntime(c *compiled) {
	e.forgetAll()
	e.fallbackMu.Lock()
	if e.fallback == c {
		e.fallback = nil
		e.fallbackMu.Unlock()
		return
	}
	e.fallbackMu.Unlock()
	if e.cur.Load() != c {
		return
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				e.recovered(r, "a fresh compilation", nil)
			}
		}()
		if fresh, err := e.recompile(); err == nil {
			e.cur.CompareAndSwap(c, fresh)
		}
	}()
}

// forgetAll empties every memo and cache of evaluated results.
func (e *core) forgetAll() {
	e.lookupMemo.Clear()
	e.renderMemo.Clear()
	e.reviewMemo.Clear()
	e.mutateMemo.Clear()
	e.crdPartMemo.Clear()
	e.pinnedCopies.Clear()
	e.reviewCache.Clear()
	e.existingCache.Clear()
}

// fallbackRuntime is the runtime without CUE's structure sharing,
// compiled when first needed and again after it served its share of
// evaluations (as the one in force is, compiled).
func (e *core) fallbackRuntime() (*compiled, error) {
	e.fallbackMu.Lock()
	defer e.fallbackMu.Unlock()
	if e.fallback != nil && e.fallback.evaluations.Add(1) < e.recycleAfter {
		return e.fallback, nil
	}
	c, err := e.recompile(cuecontext.CUE_DEBUG("sharing=false"))
	if err != nil {
		return nil, err
	}
	e.fallback = c
	return c, nil
}

// A sort of evaluation that may fall back: a kind's reviews, mutations or
// renders (as the load's warnings name them).
const (
	sortReview   = "reviews"
	sortMutation = "mutations"
	sortRender   = "renderings"
)

// fellBack reports whether the kind's evaluations of a sort go to the
// fallback.
func (e *core) fellBack(apiVersion, kind, sort string) bool {
	if !e.anyFellBack.Load() {
		return false // no allocation on the way every evaluation takes
	}
	_, ok := e.fellBackBy.Load(apiVersion + "\x00" + kind + "\x00" + sort)
	return ok
}

// fallBack sends the kind's evaluations of a sort to the fallback: d
// panicked, and the fallback evaluated what it could not.
func (e *core) fallBack(apiVersion, kind, sort string, d *Defect) {
	e.fellBackBy.LoadOrStore(apiVersion+"\x00"+kind+"\x00"+sort, d)
	e.anyFellBack.Store(true)
}

// Fallback is a kind's sort of evaluation that CUE could not make with
// structure sharing, and what panicked first.
type Fallback struct {
	Kind   Kind
	Sort   string
	Defect *Defect
}

// fallbackState is the engine's: the fallback runtime, and the sorts of
// evaluation that go to it.
type fallbackState struct {
	fallbackMu  sync.Mutex
	fallback    *compiled
	fellBackBy  sync.Map
	anyFellBack atomic.Bool
}
