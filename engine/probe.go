package engine

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"cuelang.org/go/cue"
)

// tryPolicy runs a loaded policy's rules once, at load, on the runtimes the
// engine holds (the shipped ones and those the policy declares) and on the
// probes the CUE makes of each (a TrainJob of it), as vet would admit and
// render them. A runtime the policy declares that is not admitted, and a
// rule that cannot be evaluated, are the policy's mistakes, found here
// rather than on a user's document.
func (e *Engine) tryPolicy() []Problem {
	var problems []Problem
	// A rule that fails is said once, on the first document it fails on.
	failed := map[string]bool{}
	ruleFailed := func(f Finding, r Result) {
		if !failed[f.Rule] {
			failed[f.Rule] = true
			problems = append(problems, e.ruleProblem(f, r))
		}
	}
	admitted := e.builtinRuntimes("")
	e.builtinMu.Lock()
	rejected := e.builtinReported[""]
	e.builtinMu.Unlock()
	for _, r := range rejected {
		// Warnings are vet's to report (BuiltinFindings).
		for _, f := range r.Errors {
			switch {
			case f.Phase == PhaseRuleError:
				ruleFailed(f, r)
			case e.declared[r.Doc.Name()]:
				p := Problem{File: r.Doc.File, Line: r.Doc.Line, Message: r.Identity() + ": " + f.String()}
				if f.Phase == PhaseInput {
					p.Message = fmt.Sprintf("clusterTrainingRuntimes: %q: %s (a runtime declared in CUE is an object, as in YAML: it has its apiVersion, kind and metadata)", r.Doc.Name(), f.String())
				}
				if f.HasPath {
					p.Line = r.Doc.LineOf(f.Path)
				}
				problems = append(problems, p)
			}
		}
	}
	c := e.cur.Load()
	// The lookups are tried as a controller's session evaluates them, which
	// reads the existing objects too (checkLookupReads).
	lookups := e.NewSession(SessionOptions{Controller: true})
	for _, st := range admitted {
		for _, doc := range e.probes(c, st) {
			// A session of its own: the probes share a name.
			s := e.NewSession(SessionOptions{})
			// The mutating webhook's changes, on a create and on an update
			// of the object to itself.
			for _, req := range []Request{{Operation: "CREATE", Now: probeTime}, {Operation: "UPDATE", OldObject: doc.Object, Now: probeTime}} {
				var me *MutationError
				if _, err := s.Mutate(doc, req); errors.As(err, &me) && !failed["mutations."+me.Rule] {
					failed["mutations."+me.Rule] = true
					p := Problem{Message: fmt.Sprintf("the mutations cannot be carried out for %s, a probe of the runtime %s (see probes), on %s: %s", doc.Kind(), st.doc.Name(), req.Operation, me.Detail)}
					p.File, p.Line, p.Column = splitWhere(me.Source)
					problems = append(problems, p)
				}
			}
			if !failed[fieldLookups] {
				if p := e.checkLookupReads(c, lookups, doc); p != nil {
					failed[fieldLookups] = true
					problems = append(problems, *p)
				}
			}
			r := s.Admit(doc)
			for _, f := range r.Errors {
				if f.Phase == PhaseRuleError {
					ruleFailed(f, r)
				}
			}
			if r.Rejected() || r.Object == nil || !e.Renders(Kind{doc.APIVersion(), doc.Kind()}) {
				continue
			}
			out := s.Render(r, RenderOptions{})
			for _, f := range out.Errors {
				if f.Phase == PhaseRuleError {
					ruleFailed(f, r)
				}
			}
		}
	}
	return problems
}

// checkLookupReads evaluates the kind's lookups for a probe with the whole
// object and with the paths their reads name only, as lookupsFor gives
// them, on a create and on an update of the object to itself: a lookup
// that names other objects with the whole object reads a path its reads
// do not name, and the memo would keep what it named for objects that
// differ there.
func (e *Engine) checkLookupReads(c *compiled, s *Session, doc Document) *Problem {
	lk, ok := c.lookups[doc.APIVersion()][doc.Kind()]
	if !ok {
		return nil
	}
	a := e.opaque.aliases(nil)
	whole := a.alias(doc.Object)
	read := a.alias(project(doc.Object, e.lookupReads[doc.APIVersion()][doc.Kind()]))
	for _, update := range []bool{false, true} {
		ctxOf := func(obj any) map[string]any {
			if !update {
				return map[string]any{fieldOperation: "CREATE"}
			}
			return map[string]any{fieldOperation: "UPDATE", fieldOld: obj}
		}
		want := s.lookupRefs(c, doc, c.ctx.Encode(whole), ctxOf(whole))
		got := s.lookupRefs(c, doc, c.ctx.Encode(read), ctxOf(read))
		if !reflect.DeepEqual(want, got) {
			p := Problem{Message: fmt.Sprintf("lookups of %s read a path of the input that their reads do not name: for %s, a probe of the runtime %s (see probes), they name %s with the whole object and %s with the paths of reads; name the path under lookups: %q: %s: reads",
				doc.Kind(), doc.Kind(), strings.TrimPrefix(doc.File, probeFile), want, got, doc.APIVersion(), doc.Kind())}
			// At the lookup that differs, in the admin's file where it is.
			v := lk.Unify(c.ctx.Encode(map[string]any{fieldInput: whole, fieldContext: ctxOf(whole)}))
			p.File, p.Line, p.Column = splitWhere(e.sourceOf(v.LookupPath(firstDifference(want, got))))
			return &p
		}
	}
	return nil
}

// firstDifference is the path of the first lookup want names and got does
// not name the same: runtime, then objects and existing by name.
func firstDifference(want, got *lookupRefs) cue.Path {
	if want == nil || got == nil || !reflect.DeepEqual(want.runtime, got.runtime) {
		return pathLookupRuntime
	}
	for _, f := range sortedKeys(want.objects) {
		if g, ok := got.objects[f]; !ok || !reflect.DeepEqual(g, want.objects[f]) {
			return cue.MakePath(selObjects, cue.Str(f))
		}
	}
	for _, f := range sortedKeys(want.existing) {
		if g, ok := got.existing[f]; !ok || !reflect.DeepEqual(g, want.existing[f]) {
			return cue.MakePath(selExisting, cue.Str(f))
		}
	}
	return pathLookupObjects
}

// String is what lookups name, for messages.
func (r *lookupRefs) String() string {
	if r == nil {
		return "nothing"
	}
	var parts []string
	if r.runtime != nil {
		parts = append(parts, "runtime "+r.runtime.key())
	}
	for _, f := range sortedKeys(r.objects) {
		parts = append(parts, f+" "+r.objects[f].key())
	}
	for _, f := range sortedKeys(r.existing) {
		parts = append(parts, "existing "+f+" "+r.existing[f].key())
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// ruleProblem is a rule that failed on a document at load.
func (e *Engine) ruleProblem(f Finding, r Result) Problem {
	what := r.Identity()
	if strings.HasPrefix(r.Doc.File, probeFile) {
		what = fmt.Sprintf("%s, a probe of the runtime %s (see probes)", what, strings.TrimPrefix(r.Doc.File, probeFile))
	}
	p := Problem{Message: fmt.Sprintf("rule %s cannot be evaluated for %s: %s", f.Rule, what, f.Detail)}
	p.File, p.Line, p.Column = splitWhere(f.Source)
	return p
}

// probeTime is the time the probes' mutations are made at.
var probeTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// probeFile names the file of a probe document, before its runtime's name.
const probeFile = "probe of "

// probes are the documents the CUE makes to try the rules on a runtime:
// probes: [apiVersion]: [kind]: {runtime, documents}, for the runtime's
// kind.
func (e *Engine) probes(c *compiled, st *stored) []Document {
	p, ok := c.probes[st.doc.APIVersion()][st.doc.Kind()]
	if !ok {
		return nil
	}
	v := p.FillPath(pathProbeRuntime, st.doc.Object).LookupPath(pathProbeDocuments)
	var objs []map[string]any
	if err := v.Decode(&objs); err != nil {
		return nil
	}
	docs := make([]Document, len(objs))
	for i, obj := range objs {
		docs[i] = Document{File: probeFile + st.doc.Name(), Object: obj}
	}
	return docs
}

// splitWhere parses FILE:LINE:COLUMN (a Problem's Where).
func splitWhere(w string) (file string, line, col int) {
	i := strings.LastIndexByte(w, ':')
	if i < 0 {
		return w, 0, 0
	}
	j := strings.LastIndexByte(w[:i], ':')
	if j < 0 {
		return w, 0, 0
	}
	l, err1 := strconv.Atoi(w[j+1 : i])
	c, err2 := strconv.Atoi(w[i+1:])
	if err1 != nil || err2 != nil {
		return w, 0, 0
	}
	return w[:j], l, c
}
