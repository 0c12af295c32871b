package engine

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"maps"
	"runtime/debug"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// Culprits: the load's account of a defect (defect.go). When its trials
// meet a panic of CUE's, the load names the admin's rules of the kind's
// sort of evaluation that went to the fallback (fallbackWarnings), and, by
// compiling the policy again without each in turn, the rules the panic
// needs (culprits), so that the admin can rewrite them.

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
		p := e.src.ProblemAt(pos, "%s", msg)
		p.Check = checks.Fallback.Name
		out = append(out, p)
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
