package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"cuelang.org/go/cue"
	cueerrors "cuelang.org/go/cue/errors"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/edit"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/reach"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/tokens"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
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
	ruleFailed := func(f Finding, r Result, on string) {
		if !failed[f.Rule] {
			failed[f.Rule] = true
			problems = append(problems, e.ruleProblem(f, r, on))
		}
	}
	// rulesFailed says the rules among findings of r that failed.
	rulesFailed := func(findings []Finding, r Result, on string) {
		for _, f := range findings {
			switch key := "defect\x00" + r.Doc.APIVersion() + "\x00" + r.Doc.Kind(); {
			case f.Phase == contract.PhaseRuleError:
				ruleFailed(f, r, on)
			case f.Phase == contract.PhaseDefect && !failed[key]:
				// Said once for the kind: its other trials meet it too.
				failed[key] = true
				problems = append(problems, e.defectProblem(e.cur.Load(), r, f))
			}
		}
	}
	// The trials the admin's files can change, and no others
	// (trialScope).
	scope := e.trialScope(e.cur.Load())
	reviewed := scope.reviewed
	admitted := e.builtinRuntimes("")
	e.builtinMu.Lock()
	rejected := e.builtinReported[""]
	e.builtinMu.Unlock()
	for _, r := range rejected {
		// Warnings are vet's to report (BuiltinFindings), but for a key of
		// a declared runtime that means nothing: the admin's slip.
		if e.declared[r.Doc.Name()] {
			for _, f := range r.Warnings {
				if f.Rule == contract.FieldKnownKeys {
					problems = append(problems, declaredProblem(r, f))
				}
			}
		}
		for _, f := range r.Errors {
			switch {
			case f.Phase == contract.PhaseRuleError:
				ruleFailed(f, r, "")
			case e.declared[r.Doc.Name()]:
				p := declaredProblem(r, f)
				if f.Phase == contract.PhaseInput {
					p.Message = fmt.Sprintf("clusterTrainingRuntimes: %q: %s (a runtime declared in CUE is an object, as in YAML: it has its apiVersion, kind and metadata)", r.Doc.Name(), f.String())
				}
				problems = append(problems, p)
			}
		}
	}
	c := e.cur.Load()
	for _, st := range admitted {
		if e.declared[st.doc.Name()] {
			problems = append(problems, e.checkDeclared(c, st)...)
		}
	}
	problems = append(problems, e.checkCarriedTokens(c)...)
	problems = append(problems, e.checkPartPaths(c)...)
	problems = append(problems, e.checkReviewObjects(c)...)
	// A carried entry is said once, on the first document it fails on.
	carryFailed := func(p *Problem) {
		if p != nil && !failed[p.File+"\x00"+p.Message] {
			failed[contract.FieldCarried], failed[p.File+"\x00"+p.Message] = true, true
			problems = append(problems, *p)
		}
	}
	// The lookups are tried as a controller's session evaluates them, which
	// reads the existing objects too (checkLookupReads).
	lookups := e.NewSession(SessionOptions{Controller: true})
	// The carried values are checked on sessions that keep nothing: an
	// evaluation commits nothing to its session.
	alone, withRuntimes := e.NewSession(SessionOptions{NoBuiltinRuntimes: true}), e.NewSession(SessionOptions{})
	// An update of an object to itself, in a session of its own: the
	// rules that read the old object run only on an UPDATE.
	// created says the object was admitted on its create (a shipped
	// runtime may break an org's rule): a rule that refuses its update to
	// itself then refuses every update (refusesNoChange).
	tryUpdate := func(doc Document, old map[string]any, created bool) {
		if !reviewed(doc) {
			return
		}
		u := e.NewSession(SessionOptions{})
		r := u.AdmitRequest(context.Background(), doc, Request{Operation: contract.OpUpdate, OldObject: old, Now: probeTime})
		rulesFailed(r.Errors, r, "on an UPDATE of it to itself")
		// Said once for the rule, on the first object it refuses so.
		if p := e.refusesNoChange(r); created && p != nil && !failed[contract.OpUpdate+"\x00"+p.Where()] {
			failed[contract.OpUpdate+"\x00"+p.Where()] = true
			problems = append(problems, *p)
		}
	}
	// A runtime the policy declares that Kubeflow's rules refuse a probe
	// of (refusedForTheRuntime) is said once.
	refusedForTheRuntime := func(st *stored, r Result, findings []Finding) {
		key := "refused\x00" + st.doc.Name()
		if !e.declared[st.doc.Name()] || failed[key] {
			return
		}
		if p := e.refusedForTheRuntime(st, r, findings); p != nil {
			failed[key] = true
			problems = append(problems, *p)
		}
	}
	refusedOnCreate := map[string]bool{}
	for _, r := range rejected {
		refusedOnCreate[r.Identity()] = r.Rejected()
	}
	for _, st := range admitted {
		// The runtime in force: one that panicked was replaced (defect.go).
		c = e.cur.Load()
		tryUpdate(st.doc, st.doc.Object, !refusedOnCreate[(Result{Doc: st.doc, Object: st.doc.Object}).Identity()])
		if reviewed(st.doc) && !failed[contract.FieldCarried] {
			carryFailed(e.checkCarried(c, alone, st.doc, "the runtime "+st.doc.Name(), true, scope.renders))
		}
		docs, variants, follows, err := e.probes(c, st)
		if err != nil {
			// Said once for the kind: the entry is the same for its others.
			if key := contract.FieldProbes + "." + st.doc.APIVersion() + "." + st.doc.Kind(); !failed[key] {
				failed[key] = true
				problems = append(problems, e.probesProblems(st, err)...)
			}
			continue
		}
		for _, doc := range docs {
			// A probe is admitted for its review's trials, its mutations'
			// and its render's.
			review := reviewed(doc)
			if !review && !scope.renders && !scope.mutators && !scope.lookups {
				continue
			}
			if !failed[contract.FieldCarried] && (review || scope.renders) {
				carryFailed(e.checkCarried(c, withRuntimes, doc, fmt.Sprintf("%s, a probe of the runtime %s (see probes)", doc.Kind(), st.doc.Name()), review, scope.renders))
			}
			// A session of its own: the probes share a name.
			s := e.NewSession(SessionOptions{})
			var created map[string]any // by its create's mutations
			// The mutating webhook's changes, on a create and on an update
			// of the object to itself, which the reviews are given
			// (checkMutationsValid).
			for _, req := range []Request{{Operation: contract.OpCreate, Now: probeTime}, {Operation: contract.OpUpdate, OldObject: doc.Object, Now: probeTime}} {
				if !review && !scope.mutators {
					break
				}
				var me *MutationError
				made, err := s.Mutate(doc, req)
				if errors.As(err, &me) && !failed["mutations."+me.Rule] {
					failed["mutations."+me.Rule] = true
					p := Problem{Check: checks.Mutations.Name, Message: fmt.Sprintf("the mutations cannot be carried out for %s, a probe of the runtime %s (see probes), on %s: %s", doc.Kind(), st.doc.Name(), req.Operation, me.Detail)}
					p.File, p.Line, p.Column = splitWhere(me.Source)
					problems = append(problems, p)
				}
				if scope.mutators && !failed[contract.FieldMutators] {
					if p := e.checkMutatorReads(c, s, doc, req, st.doc.Name()); p != nil {
						failed[contract.FieldMutators] = true
						problems = append(problems, *p)
					}
				}
				if scope.mutators && made != nil && req.Operation == contract.OpCreate && !failed[contract.FieldMutators] {
					if p := e.checkMutationsIdempotent(c, s, doc, made, st.doc.Name()); p != nil {
						failed[contract.FieldMutators] = true
						problems = append(problems, *p)
					}
				}
				if made != nil && req.Operation == contract.OpCreate {
					created = made
				}
			}
			if scope.mutators && !failed[contract.FieldMutators] {
				if p := e.checkMutatorNeeds(c, s, doc, st.doc.Name()); p != nil {
					failed[contract.FieldMutators] = true
					problems = append(problems, *p)
				}
			}
			if scope.lookups && !failed[contract.FieldLookups] {
				if p := e.checkLookupReads(c, lookups, doc); p != nil {
					failed[contract.FieldLookups] = true
					problems = append(problems, *p)
				}
			}
			r := s.Admit(doc)
			rulesFailed(r.Errors, r, "")
			refusedForTheRuntime(st, r, r.Errors)
			if r.Object != nil && !r.Rejected() {
				tryUpdate(doc, r.Object, true)
				if created != nil && !failed[contract.FieldMutators] {
					if p := e.checkMutationsValid(c, doc, created, st.doc.Name()); p != nil {
						failed[contract.FieldMutators] = true
						problems = append(problems, *p)
					}
				}
			}
			if !scope.renders || r.Rejected() || r.Object == nil || !e.Renders(Kind{doc.APIVersion(), doc.Kind()}) {
				continue
			}
			out := s.Render(r, trialRender)
			rulesFailed(out.Errors, r, "")
			refusedForTheRuntime(st, r, out.Errors)
			if len(out.Errors) == 0 && !failed[contract.FieldRenderParts] {
				if p := e.checkFollows(c, st.doc, doc, out, follows); p != nil {
					failed[contract.FieldRenderParts] = true
					problems = append(problems, *p)
				}
			}
			if !failed[contract.FieldExisting] {
				if p := e.checkExistingReads(c, lookups, doc, r, out); p != nil {
					failed[contract.FieldExisting] = true
					problems = append(problems, *p)
				}
			}
		}
		// The variants after: a rule that fails on the runtime is said there.
		for _, v := range variants {
			e.tryVariant(v, scope, rulesFailed, tryUpdate)
		}
	}
	return problems
}

// tryVariant admits a variant of a runtime in a session of its own and,
// when it is admitted, again as an update of itself (tryUpdate), and
// admits and renders each of its documents in a session that holds it,
// reporting the rules that cannot be evaluated. A document is admitted
// when its kind's reviews are tried or the renders are (scope), and
// rendered when the renders are; the variant is left out when neither
// its runtime nor a document of it is.
func (e *Engine) tryVariant(v probeVariant, scope trialScope, rulesFailed func([]Finding, Result, string), tryUpdate func(Document, map[string]any, bool)) {
	if !scope.renders && !scope.reviewed(v.runtime) && !slices.ContainsFunc(v.documents, scope.reviewed) {
		return
	}
	base := e.NewSession(SessionOptions{})
	r, held := base.evaluate(context.Background(), v.runtime, Request{})
	r = base.commit(r, held)
	rulesFailed(r.Errors, r, "")
	if r.Rejected() || held == nil {
		return
	}
	tryUpdate(v.runtime, held.doc.Object, true)
	for _, doc := range v.documents {
		if !scope.reviewed(doc) && !scope.renders {
			continue
		}
		s := e.NewSession(SessionOptions{})
		s.objects[held.key()] = held
		r := s.Admit(doc)
		rulesFailed(r.Errors, r, "")
		if !scope.renders || r.Rejected() || r.Object == nil || !e.Renders(Kind{doc.APIVersion(), doc.Kind()}) {
			continue
		}
		rulesFailed(s.Render(r, trialRender).Errors, r, "")
	}
}

// reviewFields are the fields of the contract a kind's review is made of:
// its admission entry, and the CRD checks and parts it joins (a review
// evaluates the kind's crdChecks with it, and its crdCheckParts on the
// object's parts). Nothing else a trial evaluates reads them: a render is
// given the review's object, which the admission entry and the CRD checks
// make (the inputs' roots hold both), and the parts give findings alone.
var reviewFields = []string{contract.FieldAdmission, contract.FieldCRDChecks, contract.FieldCRDCheckParts}

// renderFields are the fields only a render evaluates (render.go,
// plan.go, refusals.go: the kind's render, its plan and the parts the
// plan chooses, the controller's parts, the trials' checks of renders and
// the cluster's refusals of what they build), and mutatorFields those
// only a mutation does (Session.Mutate: the kind's mutator, and the
// reads decoded from it, which key the mutate memo).
var (
	renderFields  = []string{contract.FieldRender, contract.FieldRenderParts, contract.FieldRenderChecks, contract.FieldPlans, contract.FieldControllers, contract.FieldRefusals}
	mutatorFields = []string{contract.FieldMutators}
)

// trialScope says which of a policy's trials its files can change. A
// trial evaluates the fields of its own (a kind's reviewFields, the
// renderFields, the mutatorFields) and what every trial is given: the
// probes, the runtimes, the lookups, the carried values, the opaque and
// known keys, the merges, the objects the reviews admit (the inputs,
// every other field of the contract and the reviews' objects). A trial
// whose fields and inputs the admin's files reach none of (package
// reach) evaluates the embedded CUE on the embedded probes and runtimes,
// and finds what the embedded CUE's own trials find: nothing
// (TestEmbeddedTrialsFindNothing). tryPolicy leaves it out.
type trialScope struct {
	// reviewed says whether a document's kind's reviews are tried: its
	// updates to itself, the reviews of its carried values, the rules
	// that fail on it.
	reviewed func(Document) bool
	// renders: the renders of the probes and the variants, and the
	// checks made of them (the numbers they follow, the existing
	// objects' reads, the carried values' renders); mutators: the
	// mutators' reads, needs and idempotence; lookups: the lookups'
	// reads.
	renders, mutators, lookups bool
}

// trialScope is the scope of the trials of the admin's files.
func (e *Engine) trialScope(c *compiled) trialScope {
	r := reach.EmbeddedReach()
	if len(e.policyDeclares) == 0 {
		return trialScope{reviewed: func(Document) bool { return false }}
	}
	if r == nil {
		return trialScope{reviewed: func(Document) bool { return true }, renders: true, mutators: true, lookups: true}
	}
	rootsOf := func(fields []string) [][]string {
		var roots [][]string
		for _, f := range fields {
			roots = append(roots, r.RootsOf(f)...)
		}
		return roots
	}
	var inputs [][]string
	for _, f := range contract.TopLevelFields {
		if !slices.Contains(reviewFields, f) && !slices.Contains(renderFields, f) && !slices.Contains(mutatorFields, f) {
			inputs = append(inputs, r.RootsOf(f)...)
		}
	}
	for apiVersion, kinds := range c.Checked {
		for kind := range kinds {
			inputs = append(inputs, r.RootsOf(contract.FieldAdmission, apiVersion, kind, contract.FieldObject)...)
			inputs = append(inputs, r.RootsOf(contract.FieldCRDChecks, apiVersion, kind, contract.FieldObject)...)
		}
	}
	all := reach.Reaches(e.policyDeclares, inputs)
	s := trialScope{
		lookups:  all,
		renders:  all || reach.Reaches(e.policyDeclares, rootsOf(renderFields)),
		mutators: all || reach.Reaches(e.policyDeclares, rootsOf(mutatorFields)),
	}
	if all {
		s.reviewed = func(Document) bool { return true }
		return s
	}
	reached := map[string]bool{}
	s.reviewed = func(doc Document) bool {
		key := doc.APIVersion() + "\x00" + doc.Kind()
		v, ok := reached[key]
		if !ok {
			var roots [][]string
			for _, f := range reviewFields {
				roots = append(roots, r.RootsOf(f, doc.APIVersion(), doc.Kind())...)
			}
			v = reach.Reaches(e.policyDeclares, roots)
			reached[key] = v
		}
		return v
	}
	return s
}

// checkDeclared evaluates its kind's declaredChecks on an object a policy
// declares: what the webhooks admit, and would fail every use of it. An
// error is the admin's, at the line of the field its path names; a check
// that cannot be evaluated, at its own.
func (e *Engine) checkDeclared(c *compiled, st *stored) []Problem {
	checks, ok := c.DeclaredChecks[st.doc.APIVersion()][st.doc.Kind()]
	if !ok {
		return nil
	}
	e.begin("the declared checks", st.doc)
	fs, err := e.objectChecks(checks, st.doc.Object, contract.PhaseWebhook)
	if err != nil {
		return e.src.CUEProblems(err)
	}
	var ps []Problem
	r := Result{Doc: st.doc}
	for _, f := range fs {
		if f.Phase == contract.PhaseRuleError {
			// Named by its place: declaredChecks' errors, not a webhook's.
			f.Rule = contract.FieldDeclaredChecks + "." + strings.TrimPrefix(f.Rule, string(contract.PhaseWebhook)+".")
			ps = append(ps, e.ruleProblem(f, r, ""))
			continue
		}
		ps = append(ps, declaredProblem(r, f))
	}
	return ps
}

// declaredProblem is a finding of a runtime declared in CUE as a load
// problem, at the line of its path in the admin's file (the runtime's own
// line for a finding of the whole object).
func declaredProblem(r Result, f Finding) Problem {
	p := Problem{Check: checks.DeclaredRuntime.Name, File: r.Doc.File, Line: r.Doc.Line, Message: r.Identity() + ": " + f.String()}
	if f.HasPath {
		p.Line = r.Doc.LineOf(f.Path)
	}
	return p
}

// probesProblems say that a probes entry's documents or variants cannot
// be made for a runtime, at the admin's line when the CUE error has one:
// the rules would go untried on it, in silence.
func (e *Engine) probesProblems(st *stored, err error) []Problem {
	var ps []Problem
	for _, p := range e.src.CUEProblems(err) {
		p.Message = fmt.Sprintf("the probes of the %s %s cannot be made: %s", st.doc.Kind(), st.doc.Name(), p.Message)
		p.Check = checks.Probes.Name
		ps = append(ps, p)
	}
	return ps
}

// checkLookupKinds checks the kinds a probe's lookups name (refs, decoded
// from lookups, evaluated for its create): a slip from a
// runtime kind, a kind renders create (owned), a context kind or a kind
// reviewed (Trainingruntime), an unknown kind of a group whose every kind
// is reviewed, or a group given with its version or as "core", is never
// found, and the review would take the object for absent, in silence.
func (e *Engine) checkLookupKinds(c *compiled, doc Document, refs *lookupRefs, lookups cue.Value) *Problem {
	if refs == nil {
		return nil
	}
	known := e.lookupKinds(c)
	type named struct {
		at  cue.Path
		ref contract.LookupRef
	}
	var all []named
	if refs.runtime != nil {
		all = append(all, named{contract.PathLookupRuntime, *refs.runtime})
	}
	for _, group := range []struct {
		at   cue.Path
		refs map[string]contract.LookupRef
	}{{contract.PathLookupObjects, refs.objects}, {contract.PathLookupExisting, refs.existing}} {
		for _, name := range value.SortedKeys(group.refs) {
			all = append(all, named{cue.MakePath(append(group.at.Selectors(), cue.Str(name))...), group.refs[name]})
		}
	}
	for _, n := range all {
		gk := groupKind(n.ref.Group, n.ref.Kind)
		if known[n.ref.Group][n.ref.Kind] {
			continue
		}
		var candidates []string
		for g, kinds := range known {
			for k := range kinds {
				candidates = append(candidates, groupKind(g, k))
			}
		}
		slices.Sort(candidates)
		// A kind of another group may be any the cluster serves; one of a
		// group whose every kind is reviewed, or a slip from a kind known,
		// or a group with a version, is a mistake.
		var why string
		switch near := source.Suggest(gk, candidates); {
		case strings.Contains(n.ref.Group, "/"):
			why = fmt.Sprintf("group %q is an apiVersion: a lookup names the group alone (%q)", n.ref.Group, strings.Split(n.ref.Group, "/")[0])
		case n.ref.Group == "core" || versionLike.MatchString(n.ref.Group):
			why = fmt.Sprintf("group %q: the core group (ConfigMap, Secret, ...) is named \"\"", n.ref.Group)
		case near != "":
			why = fmt.Sprintf("no runtime kind, kind a render creates (owned), context kind or kind reviewed is named so: did you mean %s?", near)
		case n.ref.Group == "" && !k8s.CoreKinds()[n.ref.Kind]:
			why = "the core group (v1) has no kind so named"
			if meant := source.Suggest(n.ref.Kind, value.SortedKeys(k8s.CoreKinds())); meant != "" {
				why += fmt.Sprintf(": did you mean %s?", meant)
			}
		case e.decl.Groups[n.ref.Group]:
			why = fmt.Sprintf("every kind of %s has a review, and none is named so", n.ref.Group)
		default:
			continue
		}
		p := Problem{Check: checks.LookupReads.Name, Message: fmt.Sprintf("%s: lookups of %s name %s, which the review would always take for absent: %s", n.at, doc.Kind(), gk, why)}
		e.atLookup(&p, lookups, cue.MakePath(append(n.at.Selectors(), contract.SelLookupKind)...))
		return &p
	}
	return nil
}

// versionLike is a version given for a group (v1, v1beta1).
var versionLike = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)

// lookupKinds are the kinds a lookup may name, by API group and kind.
func (e *Engine) lookupKinds(c *compiled) map[string]map[string]bool {
	known := map[string]map[string]bool{}
	add := func(group, kind string) {
		if known[group] == nil {
			known[group] = map[string]bool{}
		}
		known[group][kind] = true
	}
	for _, k := range e.decl.RuntimeKinds {
		add(k.Group, k.Kind)
	}
	for _, byKind := range []map[string]map[string]bool{e.decl.Owned, kindSet(e.decl.ContextKinds), kindSet(c.Reviews)} {
		for apiVersion, kinds := range byKind {
			group, _, _ := strings.Cut(apiVersion, "/")
			if !strings.Contains(apiVersion, "/") {
				group = "" // core: v1
			}
			for kind := range kinds {
				add(group, kind)
			}
		}
	}
	return known
}

// kindSet is the apiVersions and kinds of a map by apiVersion and kind.
func kindSet[V any](m map[string]map[string]V) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for av, kinds := range m {
		out[av] = map[string]bool{}
		for k := range kinds {
			out[av][k] = true
		}
	}
	return out
}

// groupKind is a kind as the API server names it: Kind.group, or Kind
// for core's.
func groupKind(group, kind string) string {
	if group == "" {
		return kind
	}
	return kind + "." + group
}

// checkLookupReads evaluates the kind's lookups for a probe with the whole
// object (and checks the kinds they name, checkLookupKinds) and with the
// paths their reads name only, as lookupsFor gives
// them, on a create and on an update of the object to itself: a lookup
// that names other objects with the whole object reads a path its reads
// do not name, and the memo would keep what it named for objects that
// differ there.
func (e *Engine) checkLookupReads(c *compiled, s *Session, doc Document) *Problem {
	if _, ok := c.Lookups[doc.APIVersion()][doc.Kind()]; !ok {
		return nil
	}
	a := e.decl.Opaque.Aliases(nil)
	whole := a.Alias(doc.Object)
	for _, update := range []bool{false, true} {
		op := contract.OpCreate
		if update {
			op = contract.OpUpdate
		}
		paths := e.lookupPaths(doc.APIVersion(), doc.Kind(), op)
		read := a.Alias(value.Project(doc.Object, paths))
		ctxOf := func(obj any) map[string]any {
			if !update {
				return map[string]any{contract.FieldOperation: contract.OpCreate}
			}
			return map[string]any{contract.FieldOperation: contract.OpUpdate, contract.FieldOld: obj}
		}
		lookups, _ := c.lookupsValue(doc, whole, ctxOf(whole))
		want := s.refsOf(lookups)
		if !update {
			if p := e.checkLookupsDecode(doc, lookups); p != nil {
				return p
			}
			// The kinds they name first: a lookup of a kind never found
			// names nothing with either.
			if p := e.checkLookupKinds(c, doc, want, lookups); p != nil {
				return p
			}
		}
		got := s.lookupRefs(c, doc, c.Ctx.Encode(read), ctxOf(read))
		if !reflect.DeepEqual(want, got) {
			p := Problem{Check: checks.LookupReads.Name, Message: fmt.Sprintf("lookups of %s read a path of the input that their reads do not name: for %s, a probe of the runtime %s (see probes), they name %s with the whole object and %s with the paths of reads; name the path under lookups: %q: %s: reads (updateReads, for a path read on an UPDATE alone)",
				doc.Kind(), doc.Kind(), strings.TrimPrefix(doc.File, k8s.ProbeFile), want, got, doc.APIVersion(), doc.Kind())}
			e.atLookup(&p, lookups, firstDifference(want, got))
			return &p
		}
		// And with the carried values as tokens, as the memo gives them.
		in, old := value.Project(doc.Object, paths), map[string]any(nil)
		t := carryInto(c, e.core, carryAll, c.carried[doc.APIVersion()][doc.Kind()], &in, &old, update)
		if t == nil {
			continue
		}
		tokens := a.Alias(in)
		got, ok := t.restoreRefs(s.lookupRefs(c, doc, c.Ctx.Encode(tokens), ctxOf(tokens)))
		if !ok || !reflect.DeepEqual(want, got) {
			p := Problem{Check: checks.LookupReads.Name, Message: fmt.Sprintf("lookups of %s look at a value the kind carries (see carried): for %s, a probe of the runtime %s (see probes), they name %s with its values and %s with tokens; a lookup may carry such a value into a name, or look at it through its entry's value, or the policy switches the entry off (carry: false)",
				doc.Kind(), doc.Kind(), strings.TrimPrefix(doc.File, k8s.ProbeFile), want, got)}
			e.atLookup(&p, lookups, firstDifference(want, got))
			return &p
		}
	}
	return nil
}

// checkLookupsDecode checks that each lookup a probe's lookups make is a
// whole reference (group, kind, namespace, name): one that is not names
// nothing, which a user's invalid object may do, but a probe's, valid,
// may not (a lookup without its namespace was never made, and every
// TrainJob was refused as if the object did not exist).
// v is the lookups evaluated for the probe's create.
func (e *Engine) checkLookupsDecode(doc Document, v cue.Value) *Problem {
	var at []cue.Path
	if v.LookupPath(contract.PathLookupRuntime).Exists() {
		at = append(at, contract.PathLookupRuntime)
	}
	for _, group := range []cue.Path{contract.PathLookupObjects, contract.PathLookupExisting} {
		it, err := v.LookupPath(group).Fields()
		for err == nil && it.Next() {
			at = append(at, cue.MakePath(append(group.Selectors(), it.Selector())...))
		}
	}
	for _, path := range at {
		var l contract.LookupRef
		err := v.LookupPath(path).Decode(&l)
		if err == nil {
			continue
		}
		p := Problem{Check: checks.LookupReads.Name, Message: fmt.Sprintf("%s: lookups of %s make a reference that is not whole for %s, a probe of the runtime %s (see probes), so it would name nothing: %s", path, doc.Kind(), doc.Kind(), strings.TrimPrefix(doc.File, k8s.ProbeFile), e.Details(err))}
		e.atLookup(&p, v, path)
		return &p
	}
	return nil
}

// checkMutatorReads evaluates a probe's mutations with the paths their
// mutator's reads name and with the whole object (the old one too):
// mutations that differ read a path the reads do not name, and would be
// made otherwise for objects that differ there. The problem is at the
// first such mutation, in the admin's file where it is.
func (e *Engine) checkMutatorReads(c *compiled, s *Session, doc Document, req Request, runtime string) *Problem {
	m, ok := c.Mutators[doc.APIVersion()][doc.Kind()]
	if _, declared := e.decl.MutatorReads[doc.APIVersion()][doc.Kind()]; !ok || !declared {
		return nil
	}
	now := req.Now.UTC().Format(time.RFC3339)
	in, old := e.mutatorInput(doc, req.OldObject)
	read, _ := s.mutatorValue(c, m, in, old, req.Operation, now)
	whole, _ := s.mutatorValue(c, m, doc.Object, req.OldObject, req.Operation, now)
	var want, got map[string]any
	wantErr, gotErr := value.DecodeJSON(whole.LookupPath(contract.PathMutations), &want), value.DecodeJSON(read.LookupPath(contract.PathMutations), &got)
	if reflect.DeepEqual(want, got) && fmt.Sprint(wantErr) == fmt.Sprint(gotErr) {
		return nil
	}
	where := contract.PathMutations
	for _, rule := range value.SortedKeys(want) {
		if !reflect.DeepEqual(want[rule], got[rule]) {
			where = cue.MakePath(contract.SelMutations, cue.Str(rule))
			break
		}
	}
	p := Problem{Check: checks.MutatorReads.Name, Message: fmt.Sprintf("%s: mutations of %s read a path of the input that their reads do not name: for %s, a probe of the runtime %s (see probes), on %s, they edit it otherwise with the whole object than with the paths of reads; name the path under mutators: %q: %s: reads",
		where, doc.Kind(), doc.Kind(), runtime, req.Operation, doc.APIVersion(), doc.Kind())}
	p.File, p.Line, p.Column = splitWhere(e.src.SourceOf(whole.LookupPath(where)))
	return &p
}

// checkMutatorNeeds evaluates a probe's mutations on a create without a
// time: a mutation that says it needs a time or an old object (#Mutator.
// needs) and edits the probe all the same would be made in the cluster,
// whose webhook has a time, and left out where the engine skips it (vet,
// render). The problem is at the mutation.
func (e *Engine) checkMutatorNeeds(c *compiled, s *Session, doc Document, runtime string) *Problem {
	m := c.Mutators[doc.APIVersion()][doc.Kind()]
	var needs map[string][]string
	if err := m.LookupPath(contract.PathNeeds).Decode(&needs); err != nil || len(needs) == 0 {
		return nil
	}
	in, _ := e.mutatorInput(doc, nil)
	ms := s.mutations(c, m, doc.Kind(), in, nil, contract.OpCreate, "")
	for _, r := range ms.rules {
		if len(needs[r.name]) > 0 && len(r.edits) > 0 {
			p := Problem{Check: checks.MutatorReads.Name, Message: fmt.Sprintf("mutations: %s: the mutation says it needs %s of the request (needs), and edits %s, a probe of the runtime %s (see probes), on a create without a time: where the engine skips it for lack of them (vet and render give no time), it would not be made, and in the cluster it would; take it out of needs, or guard it on what it needs (if context.now != _|_)",
				r.name, strings.Join(needs[r.name], " and "), doc.Kind(), runtime)}
			p.File, p.Line, p.Column = splitWhere(r.source)
			return &p
		}
	}
	return nil
}

// checkMutationsIdempotent makes a probe's mutations once more on the
// object its create's mutations made (created), as on an update of that
// object to itself: a mutation that changes it again (an append, a
// counter) would change the object on every update, since the API server
// calls a mutating webhook on each one, and calls it again when another
// webhook changed the object (reinvocationPolicy). The problem is at the
// first such mutation.
func (e *Engine) checkMutationsIdempotent(c *compiled, s *Session, doc Document, created map[string]any, runtime string) *Problem {
	again := Document{Object: created}
	in, old := e.mutatorInput(again, created)
	ms := s.mutations(c, c.Mutators[doc.APIVersion()][doc.Kind()], doc.Kind(), in, old, contract.OpUpdate, probeTime.UTC().Format(time.RFC3339))
	if ms.err != nil {
		return nil // said of the update of the probe to itself
	}
	for _, r := range ms.rules {
		out, err := (&mutations{rules: []ruleEdits{r}}).made(again)
		if err != nil || out == nil {
			continue
		}
		if at, what := valueDifference(created, out, ""); at != "" || what != "" {
			p := Problem{Check: checks.Mutations.Name, Message: fmt.Sprintf("mutations: %s: the mutation is not idempotent: for %s, a probe of the runtime %s (see probes), made again on the object its create made, as on an update of it, it changes %s again (%s); the API server calls a mutating webhook on every update of the object, so each would change it once more. Make the mutation leave an object it already made alone (an upsert by a key rather than an append, a guard on the value it sets)",
				r.name, doc.Kind(), runtime, orWhole(at), what)}
			p.File, p.Line, p.Column = splitWhere(r.source)
			return &p
		}
	}
	return nil
}

// checkMutationsValid admits the object a probe's create mutations made
// (created) of a probe that is admitted: one refused was made invalid by a
// mutation (a label value with spaces, a value its schema refuses), and the
// user's every object would be refused for it. The problem is at the first
// mutation that, made alone, makes the probe refused, with what refuses it
// (at the mutations when only some together do).
func (e *Engine) checkMutationsValid(c *compiled, doc Document, created map[string]any, runtime string) *Problem {
	admit := func(obj map[string]any) Result {
		s := e.NewSession(SessionOptions{})
		return s.Admit(Document{File: doc.File, Line: doc.Line, Object: obj})
	}
	together := admit(created)
	if !together.Rejected() {
		return nil
	}
	in, _ := e.mutatorInput(doc, nil)
	s := e.NewSession(SessionOptions{})
	ms := s.mutations(c, c.Mutators[doc.APIVersion()][doc.Kind()], doc.Kind(), in, nil, contract.OpCreate, probeTime.UTC().Format(time.RFC3339))
	for _, r := range ms.rules {
		out, err := (&mutations{rules: []ruleEdits{r}}).made(doc)
		if err != nil || out == nil {
			continue
		}
		if got := admit(out); got.Rejected() {
			p := Problem{Check: checks.Mutations.Name, Message: fmt.Sprintf("mutations: %s: the mutation makes %s, a probe of the runtime %s (see probes), invalid: the review refuses the object it made (%s), so every such object would be refused, after the mutating webhook, for what the mutation wrote",
				r.name, doc.Kind(), runtime, got.Errors[0].String())}
			p.File, p.Line, p.Column = splitWhere(r.source)
			return &p
		}
	}
	// No one mutation alone: they do together.
	p := Problem{Check: checks.Mutations.Name, Message: fmt.Sprintf("mutations: together they make %s, a probe of the runtime %s (see probes), invalid: the review refuses the object they made (%s)",
		doc.Kind(), runtime, together.Errors[0].String())}
	p.File, p.Line, p.Column = splitWhere(e.src.SourceOf(c.Mutators[doc.APIVersion()][doc.Kind()].LookupPath(contract.PathMutations)))
	return &p
}

// valueDifference is the first path (dotted, list indexes in brackets)
// where two decoded JSON values differ, and how; "", "" when they do not.
func valueDifference(a, b any, at string) (string, string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := value.SortedKeys(x)
		for _, k := range value.SortedKeys(y) {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			xv, xok := x[k]
			yv, yok := y[k]
			child := strings.TrimPrefix(at+"."+k, ".")
			switch {
			case !xok:
				return child, "a field is added"
			case !yok:
				return child, "the field is removed"
			}
			if p, what := valueDifference(xv, yv, child); p != "" || what != "" {
				return p, what
			}
		}
		return "", ""
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		for i := range min(len(x), len(y)) {
			if p, what := valueDifference(x[i], y[i], fmt.Sprintf("%s[%d]", at, i)); p != "" || what != "" {
				return p, what
			}
		}
		if len(x) != len(y) {
			return at, fmt.Sprintf("its length goes from %d to %d", len(x), len(y))
		}
		return "", ""
	}
	if reflect.DeepEqual(a, b) {
		return "", ""
	}
	return at, fmt.Sprintf("%s becomes %s", k8s.JSONText(a), k8s.JSONText(b))
}

// orWhole names a path, or the object when it is the root.
func orWhole(path string) string {
	if path == "" {
		return "the object"
	}
	return path
}

// checkExistingReads renders a probe again as a controller does once the
// objects of its first render exist (first's, each with a uid, a
// resourceVersion and a creationTimestamp of its own), with those objects
// whole and with the paths their lookups' reads name: a render that
// differs reads a path of an existing object its reads do not name, and
// the render memo would give it for objects that differ there. The
// problem is at the first such lookup, in the admin's file where it is.
func (e *Engine) checkExistingReads(c *compiled, s *Session, doc Document, r Result, first Rendered) *Problem {
	refs := s.lookupsFor(c, doc, Request{}, false)
	if refs == nil || len(refs.existing) == 0 {
		return nil
	}
	whole := existingAfter(refs, first)
	if len(whole) == 0 {
		return nil
	}
	render := func(read map[string]any) Rendered {
		rr := r
		rr.existing, rr.existingRead = whole, read
		return s.renderOnce(rr, RenderOptions{}, true)
	}
	want := render(whole)
	if hasPhase(want.Errors, contract.PhaseRuleError) {
		return nil // said as such (tryPolicy)
	}
	for _, id := range value.SortedKeys(whole) {
		if refs.existing[id].Reads == nil {
			continue
		}
		read := maps.Clone(whole)
		read[id] = value.Project(whole[id].(map[string]any), refs.existing[id].Reads)
		if renderDifference(want, render(read)) == "" {
			continue
		}
		p := Problem{Check: checks.ExistingReads.Name, Message: fmt.Sprintf("the render of %s, a probe of the runtime %s (see probes), reads a path of the existing object %q that the reads of its lookup do not name: rendered again once the objects of its first render exist, it differs when given that object with the paths of reads alone; name the path under lookups: %q: %s: existing: %s: reads",
			doc.Kind(), strings.TrimPrefix(doc.File, k8s.ProbeFile), id, doc.APIVersion(), doc.Kind(), id)}
		lookups, _ := c.lookupsValue(doc, e.decl.Opaque.Aliases(nil).Alias(doc.Object), map[string]any{contract.FieldOperation: contract.OpCreate})
		e.atLookup(&p, lookups, contract.PathLookupExisting.Append(cue.Str(id)).Append(contract.PathReads.Selectors()...))
		return &p
	}
	return nil
}

// existingAfter is what exists, by the lookups' existing ids, once the
// objects of a first render are applied: each as it rendered, with a uid,
// a resourceVersion and a creationTimestamp of its own.
func existingAfter(refs *lookupRefs, first Rendered) map[string]any {
	whole := map[string]any{}
	for _, id := range value.SortedKeys(refs.existing) {
		ref := refs.existing[id]
		for _, obj := range first.Objects {
			d := Document{Object: obj}
			if k8s.GroupOf(d.APIVersion()) != ref.Group || d.Kind() != ref.Kind || d.Name() != ref.Name || d.Namespace() != ref.Namespace {
				continue
			}
			o := value.DeepCopy(obj).(map[string]any)
			md, _ := o["metadata"].(map[string]any)
			if md == nil {
				md = map[string]any{}
				o["metadata"] = md
			}
			md["uid"], md["resourceVersion"], md["creationTimestamp"] = "probe-"+id, "1", probeTime.UTC().Format(time.RFC3339)
			whole[id] = o
		}
	}
	return whole
}

// firstDifference is the path of the first lookup want names and got does
// not name the same: runtime, then objects and existing by name.
func firstDifference(want, got *lookupRefs) cue.Path {
	if want == nil || got == nil || !reflect.DeepEqual(want.runtime, got.runtime) {
		return contract.PathLookupRuntime
	}
	for _, f := range value.SortedKeys(want.objects) {
		if g, ok := got.objects[f]; !ok || !reflect.DeepEqual(g, want.objects[f]) {
			return cue.MakePath(contract.SelObjects, cue.Str(f))
		}
	}
	for _, f := range value.SortedKeys(want.existing) {
		if g, ok := got.existing[f]; !ok || !reflect.DeepEqual(g, want.existing[f]) {
			return cue.MakePath(contract.SelExisting, cue.Str(f))
		}
	}
	return contract.PathLookupObjects
}

// String is what lookups name, for messages.
func (r *lookupRefs) String() string {
	if r == nil {
		return "nothing"
	}
	var parts []string
	if r.runtime != nil {
		parts = append(parts, "runtime "+r.runtime.Key())
	}
	for _, f := range value.SortedKeys(r.objects) {
		parts = append(parts, f+" "+r.objects[f].Key())
	}
	for _, f := range value.SortedKeys(r.existing) {
		parts = append(parts, "existing "+f+" "+r.existing[f].Key())
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// ruleProblem is a rule that failed on a document at load (on says on
// which request, when not its create).
func (e *Engine) ruleProblem(f Finding, r Result, on string) Problem {
	what := tried(r)
	if on != "" {
		what += ", " + on
	}
	p := Problem{Message: fmt.Sprintf("rule %s cannot be evaluated for %s: %s", f.Rule, what, f.Detail), Check: checks.RuleFails.Name}
	if strings.HasPrefix(f.Rule, contract.SelEdits.Unquoted()+".") {
		// An edit the trial renders found wrong (trialrender.go).
		p.Check = checks.RenderEdit.Name
	}
	p.File, p.Line, p.Column = splitWhere(f.Source)
	return p
}

// findingRule is the rule of the kind's review that made f, a finding of
// r, and whether an admin's file writes it (a rule of the shipped CUE is
// Kubeflow's).
func (e *Engine) findingRule(r Result, f Finding) (cue.Value, bool) {
	if f.Rule == "" {
		return cue.Value{}, false
	}
	v := e.cur.Load().Reviews[r.Doc.APIVersion()][r.Doc.Kind()].LookupPath(cue.MakePath(cue.Str(string(f.Phase)), cue.Str(f.Rule)))
	p := e.src.WrittenAt(v)
	return v, p.IsValid() && e.src.IsPolicyFile(p.Filename())
}

// refusedForTheRuntime is the problem of a runtime the policy declares
// (st) when Kubeflow's rules (the shipped CUE's, not an admin's) refuse or
// fail to render r, a probe of it that names the runtime and asks nothing
// else, so every TrainJob like it would be refused for the runtime (an
// envInjection target that is no job of it, an empty Volcano queue), and
// the user blamed for it. At the runtime, with Kubeflow's words.
func (e *Engine) refusedForTheRuntime(st *stored, r Result, findings []Finding) *Problem {
	if spec, _ := r.Doc.Object["spec"].(map[string]any); len(spec) != 1 || spec["runtimeRef"] == nil {
		return nil // a probe that asks for more: the runtime need not give it
	}
	for _, f := range findings {
		if f.Phase == contract.PhaseRuleError || f.Phase == contract.PhasePolicy {
			continue
		}
		if _, admins := e.findingRule(r, f); admins {
			continue // an admin's rule: the probe may well break it
		}
		p := Problem{Check: checks.DeclaredRuntime.Name, File: st.doc.File, Line: st.doc.Line, Message: fmt.Sprintf("clusterTrainingRuntimes: %q: Kubeflow's rules refuse %s, a TrainJob of it (see probes): %s; every TrainJob like it would be refused for the runtime, and its user told so",
			st.doc.Name(), r.Identity(), f.String())}
		return &p
	}
	return nil
}

// refusesNoChange is the problem of an admin's rule that refuses r, an
// UPDATE of an object its create admitted to itself: such a rule refuses
// every update of every such object, one that changes a label or a
// finalizer as much as one that changes what the rule is about (a test of
// the old value against the new that holds when they are equal: <=
// where < was meant). nil when no rule of an admin's file does.
func (e *Engine) refusesNoChange(r Result) *Problem {
	for _, f := range r.Errors {
		if f.Phase == contract.PhaseRuleError {
			continue
		}
		v, admins := e.findingRule(r, f)
		if !admins {
			continue
		}
		p := Problem{Check: checks.RefusesNoChange.Name, Message: fmt.Sprintf("rule %s.%s refuses an UPDATE of %s to itself, which changes nothing (%s): it would refuse every update of every such object, one that only adds a label or removes a finalizer too; refuse a change by comparing context.oldObject with the object where they differ (< where <= holds for equal values)",
			f.Phase, f.Rule, tried(r), f.String())}
		p.File, p.Line, p.Column = splitWhere(e.src.SourceOf(v))
		return &p
	}
	return nil
}

// probeTime is the time the probes' mutations are made at.
var probeTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// probeFollows is a number of the probes their renders must follow
// (probes' follows), and what a render part does to.
type probeFollows struct {
	Path []string `json:"path"`
	Does string   `json:"does"`
}

// checkFollows renders doc, which rendered as first, again with each
// number of follows one more: a render that builds the same objects does
// not follow it, and the first render part of the policy's that the
// render chose is to blame (a framework's part that never counts the
// trainer's pods, so that every TrainJob runs one whatever its numNodes).
// A document without the number, or refused with it one more, says
// nothing.
func (e *Engine) checkFollows(c *compiled, runtime, doc Document, first Rendered, follows []probeFollows) *Problem {
	var part string
	var at cue.Value
	for _, name := range first.parts {
		v := c.Schemas.LookupPath(cue.MakePath(contract.SelRenderParts, cue.Str(doc.APIVersion()), cue.Str(doc.Kind()), cue.Str(name)))
		if e.src.FromPolicy(v) {
			part, at = name, v
			break
		}
	}
	if part == "" {
		return nil
	}
	for _, f := range follows {
		obj, _ := value.Numbers(value.DeepCopy(doc.Object)).(map[string]any)
		v, _ := k8s.ValueAt(obj, f.Path)
		n, ok := v.(int64)
		path := make([]any, len(f.Path))
		for i, step := range f.Path {
			path[i] = step
		}
		if !ok || (edit.Edit{Object: "document", Path: path, Op: "set", Value: n + 1}).Apply(obj) != nil {
			continue
		}
		s := e.NewSession(SessionOptions{})
		r := s.Admit(Document{File: doc.File, Object: obj})
		if r.Rejected() || r.Object == nil {
			continue
		}
		again := s.Render(r, trialRender)
		if len(again.Errors) > 0 || !reflect.DeepEqual(value.AsJSON(first.Objects), value.AsJSON(again.Objects)) {
			continue
		}
		field := strings.Join(f.Path, ".")
		p := Problem{Check: checks.RenderFollows.Name, Message: fmt.Sprintf("renderParts.%s: the render part %s ignores %s: a probe %s of the runtime %s (see probes) renders the same objects with %d and with %d, so a user's %s would change nothing; %s",
			part, part, field, doc.Kind(), runtime.Name(), n, n+1, field, f.Does)}
		p.File, p.Line, p.Column = splitWhere(e.src.SourceOf(at))
		return &p
	}
	return nil
}

// probeVariant is a runtime made from another to try the rules on, and
// the documents tried on it.
type probeVariant struct {
	runtime   Document
	documents []Document
}

// probes are the documents the CUE makes to try the rules on a runtime,
// the variants of the runtime it makes with their documents, and the
// numbers their renders must follow: probes: [apiVersion]: [kind]:
// {runtime, documents, variants, follows}, for the runtime's kind. Each
// document's file names the runtime they come from.
func (e *Engine) probes(c *compiled, st *stored) ([]Document, []probeVariant, []probeFollows, error) {
	p, ok := c.Probes[st.doc.APIVersion()][st.doc.Kind()]
	if !ok {
		return nil, nil, nil, nil
	}
	e.begin("making the probes", st.doc)
	p = p.FillPath(contract.PathProbeRuntime, st.doc.Object)
	file := k8s.ProbeFile + st.doc.Name()
	var docs []map[string]any
	if err := p.LookupPath(contract.PathProbeDocuments).Decode(&docs); err != nil {
		return nil, nil, nil, err
	}
	var variants []struct {
		Name      string           `json:"name"`
		Edits     []edit.Edit      `json:"edits"`
		Documents []map[string]any `json:"documents"`
	}
	if v := p.LookupPath(contract.PathProbeVariants); v.Exists() {
		if err := v.Decode(&variants); err != nil {
			return nil, nil, nil, err
		}
	}
	out := make([]probeVariant, len(variants))
	for i, v := range variants {
		obj, _ := value.DeepCopy(st.doc.Object).(map[string]any)
		for j, ed := range v.Edits {
			if err := ed.WithOwnValues().Apply(obj); err != nil {
				// At the edit, which is the CUE's (an admin's variant).
				at := p.LookupPath(contract.PathProbeVariants).LookupPath(cue.MakePath(cue.Index(i), contract.SelEdits, cue.Index(j)))
				name := v.Name
				if name == "" {
					name = fmt.Sprintf("variants[%d]", i)
				}
				return nil, nil, nil, cueerrors.Newf(e.src.WrittenAt(at), "the variant %s: its %s edit cannot be made on the runtime: %v", name, ed.Op, err)
			}
		}
		// Its documents are said to be the runtime's, as the variant.
		variant := Document{File: file, Object: obj}
		as := Result{Doc: variant}.Identity()
		out[i] = probeVariant{runtime: variant, documents: documentsOf(file+" (as "+as+")", v.Documents)}
	}
	var follows []probeFollows
	if v := p.LookupPath(contract.PathProbeFollows); v.Exists() {
		if err := v.Decode(&follows); err != nil {
			return nil, nil, nil, err
		}
	}
	return documentsOf(file, docs), out, follows, nil
}

func documentsOf(file string, objs []map[string]any) []Document {
	docs := make([]Document, len(objs))
	for i, obj := range objs {
		docs[i] = Document{File: file, Object: obj}
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

// checkCarriedTokens finds the carried entries whose constraint the
// engine's tokens do not meet: the rules would see a token outside it.
func (e *Engine) checkCarriedTokens(c *compiled) []Problem {
	var problems []Problem
	sample, _ := tokens.Value.Make(0)
	for _, apiVersion := range value.SortedKeys(c.carried) {
		for _, kind := range value.SortedKeys(c.carried[apiVersion]) {
			for _, p := range c.carried[apiVersion][kind] {
				if len(p.path) == 0 {
					problems = append(problems, e.carriedProblem(c, apiVersion, kind, p.name, "its path is empty: name the field of the input whose values are carried"))
					continue
				}
				if !c.meets(p, sample) {
					problems = append(problems, e.carriedProblem(c, apiVersion, kind, p.name, fmt.Sprintf("the engine's tokens (lower-case letters and digits, such as %q) do not meet its value, so the rules would see a token where they never see a value: widen value, or carry nothing there", sample)))
				}
			}
		}
	}
	return problems
}

// checkCarried reviews doc with its values and with its carried values as
// tokens (the names the CUE's sources hold included: the probes' are), as
// a create. A review that differs looks at a value an entry carries: the
// memo would give objects that differ there one review. The problem is at
// the rule that differs, or at the first entry that differs alone. what
// names doc in the message. When the reviews do not differ, and render,
// the renders are checked so too (checkCarriedRender). Without review
// (its kind's reviews are not tried, trialScope), the review is made
// once, for the renders.
func (e *Engine) checkCarried(c *compiled, s *Session, doc Document, what string, review, render bool) *Problem {
	paths := c.carried[doc.APIVersion()][doc.Kind()]
	if len(paths) == 0 {
		return nil
	}
	ctx, req := context.Background(), Request{Operation: "CREATE"}
	want, _, _ := s.reviewAs(ctx, doc, req, evalMode{})
	if hasPhase(want.Errors, contract.PhaseRuleError, contract.PhaseDefect) || e.fellBack(doc.APIVersion(), doc.Kind(), sortReview) {
		// A rule that fails is said as such (tryPolicy); the reviews of a
		// kind that fell back carry nothing (defect.go).
		return nil
	}
	if !review {
		if !render {
			return nil
		}
		return e.checkCarriedRender(c, s, want, what)
	}
	var panicked *Defect
	differs := func(entry string) (string, *Finding) {
		// A review given no token is want's: it is not made again.
		var uncarried bool
		got, _, ok := s.evaluateAs(ctx, doc, req, evalMode{carry: carryAll, entry: entry, uncarried: &uncarried})
		if uncarried {
			return "", nil
		}
		if got.defect != nil {
			panicked = got.defect
			return "", nil
		}
		diff, rule := reviewDifference(want, got)
		if !ok {
			diff = "a rule changed the token (its case, a part of it)"
		}
		return diff, rule
	}
	diff, _ := differs("")
	if panicked != nil {
		// CUE panicked with the tokens, not without them: the kind's
		// reviews go to the fallback, which carries nothing, and the load
		// says so (defect.go).
		e.fallBack(doc.APIVersion(), doc.Kind(), sortReview, panicked)
		return nil
	}
	if diff == "" {
		if !render {
			return nil
		}
		return e.checkCarriedRender(c, s, want, what)
	}
	for _, p := range paths {
		diff, rule := differs(p.name)
		if diff == "" {
			continue
		}
		entry := fmt.Sprintf("carried: %q: %s: %s", doc.APIVersion(), doc.Kind(), p.name)
		review := fmt.Sprintf("the %s review of %s differs when the values at %s are tokens: %s", req.Operation, what, strings.Join(p.path, "."), diff)
		if rule == nil {
			pr := e.carriedProblem(c, doc.APIVersion(), doc.Kind(), p.name, review+". A rule looks at those values (a pattern, a length, a part, a comparison): carry nothing there, or give value the constraint the rule looks through")
			return &pr
		}
		// At the rule that looks at the values, where it is.
		pr := Problem{Check: checks.Carried.Name, Message: fmt.Sprintf("rule %s looks at values the review is given as tokens (%s, at %s): %s. A rule may carry such a value over, or look at it through the entry's value; one that looks otherwise switches the entry off, in a policy file: %s: carry: false",
			rule.Rule, entry, e.src.SourceOf(c.Schemas.LookupPath(cue.MakePath(cue.Str(contract.FieldCarried), cue.Str(doc.APIVersion()), cue.Str(doc.Kind()), cue.Str(p.name)))), review, entry)}
		where := rule.Source
		if where == "" {
			base, ok := contract.PathReview[rule.Phase]
			if !ok {
				base = contract.PathReviewWarnings
			}
			sels := append(base.Selectors(), cue.Str(rule.Rule))
			where = e.src.SourceOf(c.Reviews[doc.APIVersion()][doc.Kind()].LookupPath(cue.MakePath(sels...)))
		}
		pr.File, pr.Line, pr.Column = splitWhere(where)
		return &pr
	}
	// Only all the entries together differ (a rule compares two carried
	// values): at the kind's first entry.
	pr := e.carriedProblem(c, doc.APIVersion(), doc.Kind(), paths[0].name, fmt.Sprintf("the %s review of %s differs when all the values the kind carries are tokens, though not when one entry's are: a rule looks at two carried values together", req.Operation, what))
	return &pr
}

// checkCarriedRender renders an admitted probe with its values and with its
// carried values as tokens, its generators left unrun (they may make
// random data): a render that differs looks at a carried value.
func (e *Engine) checkCarriedRender(c *compiled, s *Session, r Result, what string) *Problem {
	if r.Rejected() || r.Object == nil || !e.Renders(Kind{r.Doc.APIVersion(), r.Doc.Kind()}) {
		return nil
	}
	apiVersion, kind := r.Doc.APIVersion(), r.Doc.Kind()
	if e.fellBack(apiVersion, kind, sortRender) {
		return nil // the fallback carries nothing (defect.go)
	}
	// A render that panics is the fallback's (defect.go): the trial's
	// Render of the probe says so, and the load with it.
	once := func(r Result) (Rendered, *Defect) {
		return s.tryRender(r, RenderOptions{}, e.cur.Load(), func(r Result, opts RenderOptions) Rendered { return s.renderOnce(r, opts, true) })
	}
	want, d := once(r)
	if d != nil || hasPhase(want.Errors, contract.PhaseRuleError) {
		return nil // said as such (tryPolicy)
	}
	var panicked *Defect
	differs := func(entry string) string {
		t, tokenized := s.carryRender(r, carryAll, entry)
		if t == nil {
			return "" // no token: the render is want's
		}
		out, d := once(tokenized)
		if d != nil {
			panicked = d
			return ""
		}
		got, ok := t.putBackRendered(out)
		if !ok {
			return "a rule changed the token (its case, a part of it), or the values sort the objects otherwise"
		}
		return renderDifference(want, got)
	}
	if differs("") == "" {
		if panicked != nil {
			// With the tokens alone: the kind's renders go to the
			// fallback, which carries nothing.
			e.fallBack(apiVersion, kind, sortRender, panicked)
		}
		return nil
	}
	paths := c.carried[r.Doc.APIVersion()][r.Doc.Kind()]
	for _, p := range paths {
		if diff := differs(p.name); diff != "" {
			pr := e.carriedProblem(c, r.Doc.APIVersion(), r.Doc.Kind(), p.name, fmt.Sprintf("the render of %s differs when the values at %s are tokens: %s. A render rule looks at those values (a pattern, a length, a part, a hash): carry the value into what it writes, hash it with a generator's seedFrom, or switch the entry off in a policy file (carry: false)", what, strings.Join(p.path, "."), diff))
			return &pr
		}
	}
	pr := e.carriedProblem(c, r.Doc.APIVersion(), r.Doc.Kind(), paths[0].name, fmt.Sprintf("the render of %s differs when all the values the kind carries are tokens, though not when one entry's are: a render rule looks at two carried values together", what))
	return &pr
}

// renderDifference says how two renders of one object differ, "" when
// they do not.
func renderDifference(want, got Rendered) string {
	switch {
	case !reflect.DeepEqual(want.Objects, got.Objects):
		return "its objects differ"
	case !reflect.DeepEqual(want.Errors, got.Errors) || !reflect.DeepEqual(want.Warnings, got.Warnings):
		return "its findings differ"
	case !reflect.DeepEqual(want.Controller, got.Controller):
		return "its directives to the controller differ"
	case !reflect.DeepEqual(want.gens, got.gens):
		return "its generators differ"
	}
	return ""
}

// atLookup puts p at path of a kind's evaluated lookups: in the admin's
// file, where the lookup is.
func (e *Engine) atLookup(p *Problem, lookups cue.Value, path cue.Path) {
	p.File, p.Line, p.Column = splitWhere(e.src.SourceOf(lookups.LookupPath(path)))
}

// reviewDifference says how two reviews of one object differ, "" when they
// do not, and the first finding that differs, nil when none does.
func reviewDifference(want, got Result) (string, *Finding) {
	for _, fs := range [][2][]Finding{{want.Errors, got.Errors}, {want.Warnings, got.Warnings}} {
		w, g := fs[0], fs[1]
		for i := range max(len(w), len(g)) {
			switch {
			case i >= len(w):
				return fmt.Sprintf("with tokens it finds %q", g[i].String()), &g[i]
			case i >= len(g):
				return fmt.Sprintf("with tokens it does not find %q", w[i].String()), &w[i]
			case !reflect.DeepEqual(w[i], g[i]):
				return fmt.Sprintf("with its values it finds %q, with tokens %q", w[i].String(), g[i].String()), &w[i]
			}
		}
	}
	if !reflect.DeepEqual(want.Object, got.Object) {
		return "the object with its defaults differs", nil
	}
	if !reflect.DeepEqual(want.Summary, got.Summary) {
		return "its summary differs", nil
	}
	return "", nil
}

// carriedProblem is a problem of one carried entry, at the entry.
func (e *Engine) carriedProblem(c *compiled, apiVersion, kind, name, msg string) Problem {
	p := Problem{Check: checks.Carried.Name, Message: fmt.Sprintf("carried: %q: %s: %s: %s", apiVersion, kind, name, msg)}
	v := c.Schemas.LookupPath(cue.MakePath(cue.Str(contract.FieldCarried), cue.Str(apiVersion), cue.Str(kind), cue.Str(name)))
	p.File, p.Line, p.Column = splitWhere(e.src.SourceOf(v))
	return p
}

// checkPartPaths checks each CRD check part's path against its kind's CRD
// schema: a field the object cannot have, or "*" where there is no list,
// would leave the part's checks off for every object, silently. A schema
// that keeps unknown fields says nothing of what is under it.
func (e *Engine) checkPartPaths(c *compiled) []Problem {
	var problems []Problem
	for _, apiVersion := range value.SortedKeys(c.crdParts) {
		for _, kind := range value.SortedKeys(c.crdParts[apiVersion]) {
			schema := e.crdSchema(apiVersion, kind)
			for _, part := range c.crdParts[apiVersion][kind] {
				if msg := partPathProblem(schema, part.path); msg != "" {
					p := Problem{Check: checks.CRDPart.Name, Message: fmt.Sprintf("crdCheckParts: %q: %s: %s: path %q: %s, so the part's checks would run on no object", apiVersion, kind, part.name, part.path, msg)}
					p.File, p.Line, p.Column = splitWhere(e.src.SourceOf(part.value.LookupPath(contract.PathCRDPartPath)))
					problems = append(problems, p)
					continue
				}
				// at holds an index per "*" of the path: a part that says
				// more reads an index it is never given (at: [int] beside
				// a path without "*", whose self is the whole list).
				stars := 0
				for _, seg := range part.path {
					if seg == "*" {
						stars++
					}
				}
				if n, err := part.value.LookupPath(contract.PathCRDPartAt).Len().Int64(); err == nil && int(n) != stars {
					p := Problem{Check: checks.CRDPart.Name, Message: fmt.Sprintf("crdCheckParts: %q: %s: %s: at names %d indexes, and path %q has %d \"*\" items, one per index: self is the value at the path (a whole list where the path does not say \"*\")", apiVersion, kind, part.name, n, part.path, stars)}
					p.File, p.Line, p.Column = splitWhere(e.src.SourceOf(part.value.LookupPath(contract.PathCRDPartAt)))
					problems = append(problems, p)
				}
			}
		}
	}
	return problems
}

// probeName is the name of the object checkReviewObjects gives a review.
const probeName = "cuetrainer-probe"

// checkReviewObjects checks that each review's object is made of its
// input: the engine fills input and reads back object, so a review of a
// kind of the policy's own that leaves object open (object: _, as the
// reviews of the shipped kinds declare it) reads nothing and admits every
// object, in silence. Each review a policy writes to is given an object
// of its kind with a name alone; one whose object lacks the name fails the
// load at object.
func (e *Engine) checkReviewObjects(c *compiled) []Problem {
	var problems []Problem
	for _, apiVersion := range value.SortedKeys(c.Reviews) {
		for _, kind := range value.SortedKeys(c.Reviews[apiVersion]) {
			review := c.Reviews[apiVersion][kind]
			if !e.src.FromPolicy(review) {
				continue // the shipped reviews make their objects of input
			}
			input := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": probeName, "namespace": "default"}}
			rv := review.Unify(c.Ctx.Encode(map[string]any{contract.FieldInput: input, contract.FieldContext: map[string]any{contract.FieldOperation: contract.OpCreate}}))
			if v := rv.LookupPath(contract.PathObjectName); v.Exists() {
				if name, err := v.String(); err != nil || name == probeName {
					continue // made of the input, or its schema says why not
				}
			}
			p := Problem{Check: checks.ReviewObject.Name, Message: fmt.Sprintf("admission: %q: %s: object: the review's object is not made of its input: the engine fills input with the object submitted and reads back object, with its defaults, for the rules to read; an object left open (object: _) reads nothing, and every %s would be admitted. Make it of the input: object: input (or your kind's schema & input)", apiVersion, kind, kind)}
			p.File, p.Line, p.Column = splitWhere(e.src.SourceOf(review.LookupPath(contract.PathObject)))
			problems = append(problems, p)
		}
	}
	return problems
}

// objectMetaSchema is the API server's ObjectMeta (apimachinery's
// metav1.ObjectMeta), as much as a path into it needs: its fields, and
// which are maps and which lists.
var objectMetaSchema = func() map[string]any {
	str := map[string]any{"type": "string"}
	stringMap := map[string]any{"type": "object", "additionalProperties": str}
	list := func(items map[string]any) map[string]any { return map[string]any{"type": "array", "items": items} }
	opaque := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	props := map[string]any{"labels": stringMap, "annotations": stringMap, "finalizers": list(str),
		"ownerReferences": list(opaque), "managedFields": list(opaque),
		"generation": map[string]any{"type": "integer"}, "deletionGracePeriodSeconds": map[string]any{"type": "integer"}}
	for _, f := range []string{"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"} {
		props[f] = str
	}
	return map[string]any{"type": "object", "properties": props}
}()

// partPathProblem says why path leads nowhere in schema (an OpenAPI
// schema as the CRD has it), "" when it may lead to a value.
func partPathProblem(schema map[string]any, path []string) string {
	s := schema
	at := "the object"
	for _, seg := range path {
		if s == nil || s["x-kubernetes-preserve-unknown-fields"] == true {
			return ""
		}
		if seg == "*" {
			items, _ := s["items"].(map[string]any)
			if _, isMap := s["additionalProperties"].(map[string]any); isMap {
				return at + " is a map, and \"*\" takes a list's items"
			}
			if s["type"] != "array" || items == nil {
				return at + " is not a list"
			}
			s, at = items, at+"[*]"
			continue
		}
		props, _ := s["properties"].(map[string]any)
		if props == nil && s["additionalProperties"] == nil {
			if at != "metadata" {
				return "" // an object the schema leaves to the API server
			}
			// The API server's ObjectMeta, which a CRD's schema leaves out.
			s, props = objectMetaSchema, objectMetaSchema["properties"].(map[string]any)
		}
		next, ok := props[seg].(map[string]any)
		if !ok {
			if extra, isMap := s["additionalProperties"].(map[string]any); isMap {
				s, at = extra, at+"."+seg
				continue
			}
			msg := fmt.Sprintf("%s has no field %s", at, seg)
			if hint := source.Suggest(seg, value.SortedKeys(props)); hint != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", hint)
			}
			return msg
		}
		s = next
		if at == "the object" {
			at = seg
		} else {
			at += "." + seg
		}
	}
	return ""
}

// defectProblem is the load's problem of an evaluation that panicked on
// the fallback too (a finding f of PhaseDefect of r, a trial): cuetrainer's
// or CUE's defect, which no evaluation of the kind can get past. It is at
// the admin's first rule of the kind, naming them all.
func (e *Engine) defectProblem(c *compiled, r Result, f Finding) (p Problem) {
	defer func() { p.Check = checks.Defect.Name }()
	k := Kind{r.Doc.APIVersion(), r.Doc.Kind()}
	names, pos, culprit := e.blamed(c, k, sortReview, r.defect)
	switch {
	case culprit:
		return e.src.ProblemAt(pos, "%s; it panics on the policy's %s %s (without it, it does not): rewriting it avoids the defect", f.Detail, plural(len(names), "rule", "rules"), strings.Join(names, ", "))
	case len(names) > 0:
		return e.src.ProblemAt(pos, "%s; the policy's %s of %s: %s (rewriting the one that meets the defect avoids it)", f.Detail, plural(len(names), "rule", "rules"), k.Kind, strings.Join(names, ", "))
	}
	return Problem{Message: f.Detail}
}
