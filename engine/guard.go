package engine

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// The evaluations under a load's guard (stall.go): every evaluation of a
// session begins under the guard the load put in the core while it runs,
// and under none after.

// evalGuard is a load's guard: when the evaluation under way began and
// what it is, and whether the load gave up on it.
type evalGuard struct {
	// now reads the clock of the load's work (workClock), set before
	// the first evaluation begins.
	now    atomic.Pointer[func() int64]
	began  atomic.Int64
	what   atomic.Pointer[string]
	gaveUp atomic.Bool
}

// gaveUp ends the goroutine of a load that gave up (a panic's value).
type gaveUp struct{}

// begin marks an evaluation beginning, of doc when it has one, under the
// guard of a load (else it does nothing, and allocates nothing). It ends
// the goroutine of a load that gave up.
func (e *core) begin(what string, doc Document) {
	if g := e.guard.Load(); g != nil {
		g.mark(what, doc)
	}
}

// mark is begin's work under a guard: apart, so that begin's own what
// does not move to the heap on every call.
func (g *evalGuard) mark(what string, doc Document) {
	if g.gaveUp.Load() {
		panic(gaveUp{})
	}
	if doc.Object != nil {
		name := doc.Name()
		if ns := doc.Namespace(); ns != "" {
			name = ns + "/" + name
		}
		what = fmt.Sprintf("%s of %s %s", what, doc.Kind(), name)
		if runtime, ok := strings.CutPrefix(doc.File, k8s.ProbeFile); ok {
			what += fmt.Sprintf(", a probe of the runtime %s (see probes)", runtime)
		}
	}
	g.what.Store(&what)
	g.began.Store(g.clock())
}

// clock reads the clock of the load's work, the wall clock until the
// load's goroutine set it.
func (g *evalGuard) clock() int64 {
	if now := g.now.Load(); now != nil {
		return (*now)()
	}
	return wallClock()
}

// wallClock is the wall clock, in nanoseconds.
func wallClock() int64 { return time.Now().UnixNano() }
