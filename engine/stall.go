package engine

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"slices"
	"time"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// Stalls.
//
// CUE cannot be interrupted: a rule whose work does not grow with the
// object (nested comprehensions over list.Range, say) may evaluate for
// minutes, and neither cue nor the API server says why. A webhook has 10 s
// (its timeoutSeconds), so such a rule would time out every request of
// its kind. The load compiles the admin's CUE and evaluates its rules on
// probes (probe.go) under a guard: each evaluation may take evalLimit of
// work, and the load fails at the first that takes longer, naming it,
// rather than stall. Work is the CPU time of the load's thread
// (stall_linux.go; elsewhere the wall clock): a machine busy with other
// work makes no evaluation look stalled, and an evaluation that used
// evalLimit of CPU took at least as long on a webhook's wall clock. The
// evaluation under way is left to finish on the load's goroutine, which
// ends at the next evaluation it would begin.

// evalLimit is what one evaluation of the load's may take: a webhook's
// timeout. An engine's guard reads its own (Engine.evalLimit), which its
// tests may shorten.
const evalLimit = 10 * time.Second

// inTime reports, once the load's evaluations are done, whether each
// ended within evalLimit: the guard gave up on none, and the last, which
// the guard watches until the load ends, began less than evalLimit ago. A
// load without a guard (no policy) has none to judge: in time.
func (e *Engine) inTime() bool {
	g := e.guard.Load()
	if g == nil {
		return true
	}
	return !g.gaveUp.Load() && g.clock()-g.began.Load() <= int64(e.evalLimit)
}

// guarded runs fn, the load's evaluations, on a goroutine of its own,
// and fails the load when one of them takes longer than e.evalLimit. A
// panic of fn's fails the load as a defect (defect.go).
func (e *Engine) guarded(fn func() error) error {
	g := &evalGuard{}
	e.guard.Store(g)
	type outcome struct {
		err      error
		panicked *Defect
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		now, release := workClock()
		g.now.Store(&now)
		defer release()
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(gaveUp); ok {
					return
				}
				o.panicked = e.recovered(r, "the load", nil)
			}
			done <- o
		}()
		o.err = fn()
	}()
	tick := time.NewTicker(min(e.evalLimit/10, time.Second))
	defer tick.Stop()
	for {
		select {
		case o := <-done:
			e.guard.Store(nil)
			if o.panicked != nil {
				return defectLoadError(e.loadSummary(), o.panicked)
			}
			return o.err
		case <-tick.C:
			began := g.began.Load()
			if began == 0 || g.clock()-began <= int64(e.evalLimit) {
				continue
			}
			g.gaveUp.Store(true)
			return loadError(e.loadSummary(), []Problem{e.stalled(*g.what.Load())})
		}
	}
}

// stalled says that what did not end in time: at the first of the
// admin's comprehensions that may iterate far more than an object asks
// for, with the others, when there are any.
func (e *Engine) stalled(what string) (p Problem) {
	defer func() { p.Check = checks.Stall.Name }()
	msg := fmt.Sprintf("%s did not end in %s: a webhook has %s (its timeoutSeconds), so every request it evaluates would time out", what, e.evalLimit, e.evalLimit)
	suspects := e.nestedComprehensions()
	if len(suspects) == 0 {
		return Problem{Message: msg + "; the policy's CUE does far more work than its objects ask for"}
	}
	p = e.src.ProblemAt(suspects[0], "%s; this comprehension may iterate far more than any object asks for (nested for clauses, or one over a call such as list.Range)", msg)
	for _, pos := range suspects[1:] {
		p.Message += "\n        and " + e.src.ProblemAt(pos, "").Where()
	}
	return p
}

// nestedComprehensions are where the admin's files iterate in a
// comprehension within another's, or over what a call returns
// (list.Range): work whose size the object need not bound.
func (e *Engine) nestedComprehensions() []token.Pos {
	var out []token.Pos
	for _, name := range value.SortedKeys(e.policyFiles) {
		depth := 0
		ast.Walk(e.policyFiles[name].file, func(n ast.Node) bool {
			c, ok := n.(*ast.Comprehension)
			if !ok {
				return true
			}
			fors := 0
			for _, cl := range c.Clauses {
				if fc, ok := cl.(*ast.ForClause); ok {
					if _, call := fc.Source.(*ast.CallExpr); call || fors > 0 || depth > 0 {
						out = append(out, fc.Pos())
					}
					fors++
				}
			}
			if fors > 0 {
				depth++
			}
			return true
		}, func(n ast.Node) {
			if c, ok := n.(*ast.Comprehension); ok && slices.ContainsFunc(c.Clauses, func(cl ast.Clause) bool { _, ok := cl.(*ast.ForClause); return ok }) {
				depth--
			}
		})
	}
	return out
}
