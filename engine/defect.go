package engine

import (
	"fmt"
	"maps"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
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
func (e *Engine) recovered(r any, what string, c *compiled) *Defect {
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
func (e *Engine) replaceRuntime(c *compiled) {
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
		if fresh, err := e.compile(); err == nil {
			e.cur.CompareAndSwap(c, fresh)
		}
	}()
}

// forgetAll empties every memo and cache of evaluated results.
func (e *Engine) forgetAll() {
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
func (e *Engine) fallbackRuntime() (*compiled, error) {
	e.fallbackMu.Lock()
	defer e.fallbackMu.Unlock()
	if e.fallback != nil && e.fallback.evaluations.Add(1) < e.recycleAfter {
		return e.fallback, nil
	}
	c, err := e.compile(cuecontext.CUE_DEBUG("sharing=false"))
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
func (e *Engine) fellBack(apiVersion, kind, sort string) bool {
	if !e.anyFellBack.Load() {
		return false // no allocation on the way every evaluation takes
	}
	_, ok := e.fellBackBy.Load(apiVersion + "\x00" + kind + "\x00" + sort)
	return ok
}

// fallBack sends the kind's evaluations of a sort to the fallback: d
// panicked, and the fallback evaluated what it could not.
func (e *Engine) fallBack(apiVersion, kind, sort string, d *Defect) {
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

// Fallbacks are the kinds' evaluations that go to the fallback runtime, in
// order.
func (e *Engine) Fallbacks() []Fallback {
	var out []Fallback
	e.fellBackBy.Range(func(k, v any) bool {
		parts := strings.Split(k.(string), "\x00")
		out = append(out, Fallback{Kind: Kind{APIVersion: parts[0], Kind: parts[1]}, Sort: parts[2], Defect: v.(*Defect)})
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return a.Kind.APIVersion+a.Kind.Kind < b.Kind.APIVersion+b.Kind.Kind
		}
		return a.Sort < b.Sort
	})
	return out
}

// Defects counts the panics the engine recovered, for metrics and tests.
func (e *Engine) Defects() int64 { return e.defects.Load() }

// fallbackState is the engine's: the fallback runtime, and the sorts of
// evaluation that go to it.
type fallbackState struct {
	fallbackMu  sync.Mutex
	fallback    *compiled
	fellBackBy  sync.Map
	anyFellBack atomic.Bool
}

// policyRules are the rules the admin's files write of a kind's sort of
// evaluation (a review's blocks of rules, a mutator's mutations), as
// "block.rule", with where each is, in the CUE's order.
func (e *Engine) policyRules(c *compiled, k Kind, sort string) (names []string, at []token.Pos) {
	var blocks []cue.Value
	switch sort {
	case sortReview:
		review := c.Reviews[k.APIVersion][k.Kind]
		for _, p := range []cue.Path{contract.PathReview[contract.PhaseCRD], contract.PathReview[contract.PhaseWebhook], contract.PathReview[contract.PhasePolicy], contract.PathReviewWarnings} {
			blocks = append(blocks, review.LookupPath(p))
		}
	case sortMutation:
		blocks = append(blocks, c.Mutators[k.APIVersion][k.Kind].LookupPath(contract.PathMutations))
	}
	for _, block := range blocks {
		it, err := block.Fields()
		if err != nil {
			continue
		}
		sels := block.Path().Selectors()
		blockName := sels[len(sels)-1].Unquoted()
		for it.Next() {
			p := it.Value().Pos()
			if !p.IsValid() || !e.src.IsPolicyFile(p.Filename()) {
				p = e.src.WrittenAt(it.Value())
			}
			if p.IsValid() && e.src.IsPolicyFile(p.Filename()) {
				names = append(names, blockName+"."+it.Selector().Unquoted())
				at = append(at, p)
			}
		}
	}
	return names, at
}

// cueVersion is the version of cuelang.org/go the binary is built with.
func cueVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "cuelang.org/go" {
				return "cuelang.org/go " + dep.Version
			}
		}
	}
	return "cuelang.org/go"
}

// fallbackWarnings are the load's warnings of the kinds whose evaluations
// went to the fallback in its trials: at the admin's first rule of the
// kind, naming them all.
func (e *Engine) fallbackWarnings(c *compiled) []Problem {
	var out []Problem
	for _, f := range e.Fallbacks() {
		msg := fmt.Sprintf("CUE (%s) panicked in %s: %s. This is a defect of CUE's, not of the policy: the %s's %s are made without CUE's structure sharing, which evaluates them, and without cuetrainer's memos and carried values (right, and slower)", cueVersion(), f.Defect.What, f.Defect.Panic, f.Kind.Kind, f.Sort)
		names, pos, culprit := e.blamed(c, f.Kind, f.Sort, f.Defect)
		switch {
		case culprit:
			msg += fmt.Sprintf("; CUE panics on the policy's %s %s (without it, it does not): rewriting it, or reporting it, restores them", plural(len(names), "rule", "rules"), strings.Join(names, ", "))
		case len(names) > 0:
			msg += fmt.Sprintf("; the policy's %s of %s: %s (rewriting the one that meets CUE's defect, or reporting it, restores them)", plural(len(names), "rule", "rules"), f.Kind.Kind, strings.Join(names, ", "))
		}
		out = append(out, e.src.ProblemAt(pos, "%s", msg))
	}
	return out
}

// blamed are the rules a panic of the kind's sort of evaluation d is put
// on, and where the first is: those CUE panics on when culprits finds
// them (culprit), else every rule the admin writes of the kind (none, at
// no position, when they write none).
func (e *Engine) blamed(c *compiled, k Kind, sort string, d *Defect) (names []string, pos token.Pos, culprit bool) {
	names, at := e.policyRules(c, k, sort)
	if d != nil {
		if culprits, where := e.culprits(d, names); len(culprits) > 0 {
			return culprits, where[0], true
		}
	}
	if len(names) == 0 {
		return nil, token.NoPos, false
	}
	return names, at[0], false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// maxCulpritTries bounds the variants of a policy compiled to find the
// rule a panic needs (a compilation each).
const maxCulpritTries = 16

// culprits are the rules among names (the admin's of the kind of the
// review d, as block.rule) without which the review no longer panics with
// structure sharing on, with where each is written: each rule is switched
// off in turn (its list made `[if false {...}]`, which keeps what it
// references referenced), the policy compiled again and the review made
// on it. None when no one rule is to blame (two rules together, or none of
// the admin's), when the review is unknown, or past maxCulpritTries.
func (e *Engine) culprits(d *Defect, names []string) (culprits []string, at []token.Pos) {
	if d.again == nil || len(names) > maxCulpritTries {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			culprits, at = nil, nil // a search that fails finds none
		}
	}()
	for _, name := range names {
		block, rule, _ := strings.Cut(name, ".")
		files := maps.Clone(e.sources)
		var pos token.Pos
		for fname := range e.policyFiles {
			src, p, ok := ruleSwitchedOff(fname, e.sources[fname], block, rule)
			if ok {
				files[fname], pos = src, p
			}
		}
		if !pos.IsValid() {
			continue
		}
		if e.panicsWithout(files, d) {
			continue
		}
		culprits, at = append(culprits, name), append(at, pos)
	}
	if len(names) > 1 && len(culprits) == len(names) {
		return nil, nil // each alone stops it: no one of them is to blame
	}
	return culprits, at
}

// panicsWithout reports whether d's review still panics on the policy
// compiled from files.
func (e *Engine) panicsWithout(files map[string][]byte, d *Defect) (panics bool) {
	defer func() {
		if r := recover(); r != nil {
			panics = true // the compilation itself: still to blame
		}
	}()
	instances := source.Instances(files, "./schemas", "./runtimes")
	for _, inst := range instances {
		if inst.Err != nil {
			return true
		}
	}
	c, err := e.compileInstances(instances)
	if err != nil {
		return true
	}
	return d.again(c)
}

// ruleSwitchedOff is the policy file src with every rule field named rule
// directly under a field named block written `[if false {...}]`, and where
// the first is; false when the file has none.
func ruleSwitchedOff(name string, src []byte, block, rule string) ([]byte, token.Pos, bool) {
	f, err := parser.ParseFile(name, src, parser.ParseComments)
	if err != nil {
		return nil, token.NoPos, false
	}
	var labels []string
	var first token.Pos
	ast.Walk(f, func(n ast.Node) bool {
		fd, ok := n.(*ast.Field)
		if !ok {
			return true
		}
		label, _, _ := ast.LabelName(fd.Label)
		if label == rule && len(labels) > 0 && labels[len(labels)-1] == block {
			if !first.IsValid() {
				first = fd.Pos()
			}
			fd.Value = ast.NewList(&ast.Comprehension{
				Clauses: []ast.Clause{&ast.IfClause{Condition: ast.NewBool(false)}},
				Value:   &ast.StructLit{Elts: []ast.Decl{&ast.EmbedDecl{Expr: fd.Value}}},
			})
		}
		labels = append(labels, label)
		return true
	}, func(n ast.Node) {
		if _, ok := n.(*ast.Field); ok {
			labels = labels[:len(labels)-1]
		}
	})
	if !first.IsValid() {
		return nil, token.NoPos, false
	}
	out, err := format.Node(f)
	if err != nil {
		return nil, token.NoPos, false
	}
	return out, first, true
}
