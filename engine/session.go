package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/edit"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"sigs.k8s.io/yaml"
)

// SessionOptions set what a session assumes about the cluster.
type SessionOptions struct {
	// Release is the Kubeflow Trainer release vetted for (vMAJOR.MINOR).
	Release string
	// NoBuiltinRuntimes leaves the shipped runtimes out.
	NoBuiltinRuntimes bool
	// Cluster, when set, is where the lookups find what the session has
	// not admitted, and where the context kinds are listed from.
	Cluster Cluster
	// Controller makes the session serve the controller, which renders
	// what it applies: lookups read an object's pinned copy first (see
	// #RuntimeLookup.pinned), and the objects a render may find existing.
	Controller bool
	// Mutate makes the kinds' mutations (mutators) to each document before
	// its review, as the API server has the mutating webhooks change an
	// object before the validating ones see it: for a session whose
	// documents have not been through them (vet, render). The mutators
	// are given the document as written, without its CRD's defaults.
	Mutate bool
}

// Session admits objects in order, like an API server with its webhooks:
// an admitted object exists for the objects after it.
type Session struct {
	e    *core
	opts SessionOptions
	// pinned is the runtime the session evaluates on, when not the one in
	// force: the fallback's (defect.go).
	pinned *compiled

	// mu guards objects, context, seen and the journal: AdmitAll's
	// evaluations read them while the documents before them are committed.
	mu *sync.RWMutex
	// objects holds every object admitted so far by identity, and where it
	// came from.
	objects map[string]*stored
	// context holds other groups' objects the rules read, by #Context field
	// and name.
	context map[string]map[string]any
	// seen holds where each identity was first given, admitted or not.
	seen map[string]Document
	// journal lists, in order, what the documents admitted so far added for
	// the documents after them: an identity key, or contextAdded.
	journal *[]string
	// reads, on the copy of a session that one of AdmitAll's evaluations
	// runs on, records what the evaluation read of the session.
	reads *reads
	// redone counts AdmitAll's evaluations made again in their turn.
	redone int
	// fetched holds what the session read from its cluster, by
	// group/kind/namespace/name (nil: not there); guarded by mu.
	fetched map[string]map[string]any
}

// contextAdded is the journal's entry for an object added to the context.
const contextAdded = "\x00context"

// reads is what one evaluation read of its session: the identities it
// looked up and whether it read the context, from which entry of the
// journal on.
type reads struct {
	from    int
	started bool
	keys    []string
	context bool
}

// note records a read; the caller holds s.mu.
func (s *Session) note(key string) {
	rd := s.reads
	if rd == nil {
		return
	}
	if !rd.started {
		rd.from, rd.started = len(*s.journal), true
	}
	if key == contextAdded {
		rd.context = true
		return
	}
	rd.keys = append(rd.keys, key)
}

// stale reports whether a document committed since rd's evaluation read the
// session added something that evaluation read. Only the committer calls
// it, and only the committer writes the journal.
func (s *Session) stale(rd *reads) bool {
	if !rd.started {
		return false
	}
	for _, added := range (*s.journal)[rd.from:] {
		if added == contextAdded && rd.context || slices.Contains(rd.keys, added) {
			return true
		}
	}
	return false
}

type stored struct {
	doc Document // its Object is the defaulted object
	// yamlText is the object as YAML, made once (the runtime snapshot).
	yamlOnce sync.Once
	yamlText string
	yamlErr  error
	// hash identifies the object's content (the plan cache's key).
	hashOnce sync.Once
	hash     string
	summary  map[string]any
	builtin  bool
	// strs counts the object's strings, keys among them, counted once
	// (carried.go).
	strsOnce sync.Once
	strs     map[string]int
	// tooBig says why a cluster's object was not evaluated: too big
	// (k8s/limits.go, core.existing); "" for one that was.
	tooBig string
	// typedObj is the object with its typed parts as Kubeflow reads them
	// (k8s/typed.go), made once.
	typedOnce sync.Once
	typedObj  map[string]any
}

// typed is the object with its typed parts as Kubeflow's controller reads
// them (core.typed), made once per stored object.
func (st *stored) typed(e *core) map[string]any {
	st.typedOnce.Do(func() { st.typedObj = e.typed(st.doc, st.doc.Object) })
	return st.typedObj
}

// strings counts the object's strings, its map keys among them.
func (st *stored) strings() map[string]int {
	st.strsOnce.Do(func() {
		st.strs = map[string]int{}
		countStrings(st.doc.Object, st.strs)
	})
	return st.strs
}

// Result is what admitting one document gives.
type Result struct {
	Doc Document
	// Object is the object with its defaults; nil when it was not evaluated.
	Object map[string]any
	// Summary is what listings show of the object, when its kind has one.
	Summary map[string]any
	// Errors reject the object; Warnings do not.
	Errors   []Finding
	Warnings []Finding
	// Context is true for another group's object kept for the rules;
	// Skipped for one nothing reads.
	Context bool
	Skipped bool

	// runtime is what the kind's lookup found, for the render, and
	// existing the render's objects found in the cluster, by id;
	// existingRead the same with the paths the render reads of each
	// alone (readOfExisting).
	runtime      *stored
	existing     map[string]any
	existingRead map[string]any
	// defect is the panic the evaluation recovered (defect.go), whose
	// finding is among Errors.
	defect *Defect
}

// Rejected reports whether any error was found.
func (r Result) Rejected() bool { return len(r.Errors) > 0 }

// Identity names the object as kubectl does: Kind ns/name or Kind name.
func (r Result) Identity() string {
	name := r.Doc.Name()
	if r.Object != nil {
		if ns := k8s.Str(k8s.Meta(r.Object)["namespace"]); ns != "" {
			name = ns + "/" + name
		}
	} else if ns := r.Doc.Namespace(); ns != "" {
		name = ns + "/" + name
	}
	return strings.TrimSpace(r.Doc.Kind() + " " + name)
}

// newSession is NewSession's work, the core's.
func (e *core) newSession(opts SessionOptions) *Session {
	s := newSession(e, opts)
	if !opts.NoBuiltinRuntimes {
		for _, st := range e.builtinRuntimes(opts.Release) {
			s.objects[st.key()] = st
		}
	}
	return s
}

func newSession(e *core, opts SessionOptions) *Session {
	return &Session{e: e, opts: opts, mu: &sync.RWMutex{}, objects: map[string]*stored{}, context: map[string]map[string]any{},
		seen: map[string]Document{}, journal: new([]string)}
}

// builtinRuntimes admits the shipped runtimes once per release the engine
// is asked about; sessions share the result, which nothing mutates.
func (e *core) builtinRuntimes(release string) []*stored {
	e.builtinMu.Lock()
	defer e.builtinMu.Unlock()
	if sts, ok := e.builtinByRelease[release]; ok {
		return sts
	}
	s := newSession(e, SessionOptions{Release: release})
	var sts []*stored
	var rejected []Result
	for _, doc := range e.builtin {
		r := Result{Doc: doc}
		var st *stored
		if pre, ok := s.precheck(doc); !ok {
			r = pre
		} else {
			r, st = s.evaluateRecovered(context.Background(), doc, Request{})
		}
		// Reported: what the rules find fault with or warn of (vet prints
		// both: an audit rule every runtime breaks shows), as a YAML
		// runtime's would.
		if len(r.Errors) > 0 || len(r.Warnings) > 0 {
			rejected = append(rejected, r)
		}
		if st != nil && !hasPhase(r.Errors, contract.PhaseSchema, contract.PhaseCRD, contract.PhaseWebhook) {
			st.builtin = true
			sts = append(sts, st)
		}
	}
	if e.builtinByRelease == nil {
		e.builtinByRelease = map[string][]*stored{}
		e.builtinReported = map[string][]Result{}
	}
	e.builtinByRelease[release] = sts
	e.builtinReported[release] = rejected
	return sts
}

// BuiltinFindings returns the runtimes that exist from the start (shipped,
// or declared by a policy) that the loaded rules find fault with (a
// policy's rule that they break) or warn of, as admitting them gave;
// empty for a session without them. A
// runtime rejected by a schema, CRD or webhook rule does not exist for
// the session's documents.
func (s *Session) BuiltinFindings() []Result {
	if s.opts.NoBuiltinRuntimes {
		return nil
	}
	s.e.builtinRuntimes(s.opts.Release)
	s.e.builtinMu.Lock()
	defer s.e.builtinMu.Unlock()
	return s.e.builtinReported[s.opts.Release]
}

// yaml returns the object as YAML, as sigs.k8s.io/yaml writes a typed
// object (sorted keys, quantities canonical, typed parts' zero values
// left out), made once per stored object.
func (st *stored) yaml(e *core) (string, error) {
	st.yamlOnce.Do(func() {
		// As a typed object marshals: quantities canonical (3.5 is 3500m).
		b, err := yaml.Marshal(k8s.CanonicalObject(st.typed(e)))
		st.yamlText, st.yamlErr = string(b), err
	})
	return st.yamlText, st.yamlErr
}

// contentKey identifies a stored object by its content, computed once.
func (st *stored) contentKey() string {
	st.hashOnce.Do(func() {
		c := value.NewContentHash()
		c.Value(st.doc.Object)
		st.hash = c.Sum()
	})
	return st.hash
}

func (st *stored) key() string {
	return identityKey(st.doc.APIVersion(), st.doc.Kind(), k8s.Str(k8s.Meta(st.doc.Object)["namespace"]), st.doc.Name())
}

// identityKey identifies an object by group (the core group is ""), kind,
// namespace and name, the way the runtime lookups name runtimes.
func identityKey(apiVersion, kind, namespace, name string) string {
	return k8s.GroupOf(apiVersion) + "/" + kind + "/" + namespace + "/" + name
}

// Admit checks one document and, when it is admitted, keeps it.
func (s *Session) Admit(doc Document) Result {
	return s.AdmitRequest(context.Background(), doc, Request{})
}

// AdmitRequest admits one document as an admission request does: an UPDATE
// sees the old object, and the mutating rules get the request's time.
func (s *Session) AdmitRequest(ctx context.Context, doc Document, req Request) Result {
	if r, ok := s.precheck(doc); !ok {
		return r
	}
	if s.e.admits(doc.APIVersion(), doc.Kind()) {
		r, st := s.evaluateRecovered(ctx, doc, req)
		return s.commit(r, st)
	}
	return s.keep(doc)
}

// AdmitAll admits the documents as Admit does one after another, with the
// same results, but evaluates up to workers of them at once. An evaluation
// runs ahead of its turn, on what the documents before it have added by
// then; in its turn, when one of them has since added an object it looked
// up (a runtime defined between, say) or a context object, it is made
// again. A session with a cluster admits one document after another.
func (s *Session) AdmitAll(ctx context.Context, docs []Document, workers int) []Result {
	out := make([]Result, len(docs))
	evaluated := func(d Document) bool {
		_, ok := s.precheck(d)
		return ok && s.e.admits(d.APIVersion(), d.Kind())
	}
	if workers < 2 || s.opts.Cluster != nil {
		for i, d := range docs {
			out[i] = s.AdmitRequest(ctx, d, Request{})
		}
		return out
	}
	type ahead struct {
		r     Result
		st    *stored
		reads *reads
	}
	slots := make([]chan ahead, len(docs))
	for i, d := range docs {
		if evaluated(d) {
			slots[i] = make(chan ahead, 1)
		}
	}
	jobs := make(chan int)
	// window bounds how far the evaluations run ahead of the commits.
	window := make(chan struct{}, 4*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				// A view of the session that records what it reads.
				v := &Session{e: s.e, opts: s.opts, mu: s.mu, objects: s.objects, context: s.context, seen: s.seen, journal: s.journal, reads: &reads{}}
				r, st := v.evaluateRecovered(ctx, docs[i], Request{})
				slots[i] <- ahead{r, st, v.reads}
			}
		})
	}
	go func() {
		defer close(jobs)
		for i := range docs {
			if slots[i] != nil {
				window <- struct{}{}
				jobs <- i
			}
		}
	}()
	for i, d := range docs {
		if slots[i] == nil {
			out[i] = s.AdmitRequest(ctx, d, Request{})
			continue
		}
		a := <-slots[i]
		<-window
		if s.stale(a.reads) {
			s.redone++
			a.r, a.st = s.evaluate(ctx, d, Request{})
		}
		out[i] = s.commit(a.r, a.st)
	}
	wg.Wait()
	return out
}

// evaluateRecovered evaluates doc: no panic escapes (defect.go), and one
// that evaluateAs did not recover is the document's defect.
func (s *Session) evaluateRecovered(ctx context.Context, doc Document, req Request) (r Result, st *stored) {
	defer func() {
		if p := recover(); p != nil {
			d := s.e.recovered(p, "the admission of "+tried(Result{Doc: doc}), nil)
			r, st = Result{Doc: doc, Errors: []Finding{defectFinding(d)}, defect: d}, nil
		}
	}()
	return s.evaluate(ctx, doc, req)
}

// precheck refuses what cannot be admitted at all: a document that did not
// read, or that is no object with a name.
func (s *Session) precheck(doc Document) (Result, bool) {
	if doc.Err != nil {
		return Result{Doc: doc, Errors: []Finding{{Phase: contract.PhaseRead, Detail: doc.Err.Error()}}}, false
	}
	r := Result{Doc: doc}
	switch {
	case doc.Kind() == "" || doc.APIVersion() == "":
		missing := "kind"
		if doc.APIVersion() == "" {
			missing = "apiVersion"
		}
		r.Errors = []Finding{{Phase: contract.PhaseInput, Path: missing, HasPath: true, Type: "Required value", Detail: "not a Kubernetes object: the document has no " + missing}}
		return r, false
	case k8s.Meta(doc.Object)["name"] != nil && doc.Name() == "":
		// name: y reads as a boolean, as kubectl reads it. A kind the
		// engine admits is a custom resource, whose metadata the API
		// server decodes first (k8s.MetadataDecodeError).
		if f := k8s.MetadataDecodeError(doc.APIVersion(), doc.Kind(), doc.Object); f != nil && s.e.admits(doc.APIVersion(), doc.Kind()) {
			r.Errors = []Finding{*f}
			return r, false
		}
		r.Errors = []Finding{{Phase: contract.PhaseInput, Path: "metadata.name", HasPath: true, Type: "Invalid value", Value: k8s.JSONValue(k8s.Meta(doc.Object)["name"]), Detail: "must be of type string"}}
		return r, false
	case doc.Name() == "" && k8s.Meta(doc.Object)["generateName"] == nil:
		r.Errors = []Finding{{Phase: contract.PhaseInput, Path: "metadata.name", HasPath: true, Type: "Required value", Detail: "name or generateName is required"}}
		return r, false
	}
	return r, true
}

// commit records an evaluated document in the session: its identity as
// given, and the object for the documents after it when it is admitted.
func (s *Session) commit(r Result, st *stored) Result {
	doc := r.Doc
	apiVersion, kind := doc.APIVersion(), doc.Kind()
	key := identityKey(apiVersion, kind, doc.Namespace(), doc.Name())
	if r.Object != nil {
		key = identityKey(apiVersion, kind, k8s.Str(k8s.Meta(r.Object)["namespace"]), doc.Name())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, dup := s.seen[key]; dup {
		r.Errors = append(r.Errors, Finding{Phase: contract.PhaseInput, Detail: fmt.Sprintf("%s is defined twice: first at %s:%d", r.Identity(), prev.File, prev.Line)})
		return r
	}
	// Only an admitted object takes its name: the cluster would create a
	// later one of the same name when an earlier was refused.
	if !r.Rejected() {
		s.seen[key] = doc
	}
	if st == nil {
		return r
	}
	if !hasPhase(r.Errors, contract.PhaseSchema, contract.PhaseCRD, contract.PhaseWebhook) {
		s.objects[st.key()] = st
		*s.journal = append(*s.journal, st.key())
	}
	return r
}

// keep handles a document of a kind the CUE does not admit: another group's
// object the rules read is kept as context; any other is skipped.
func (s *Session) keep(doc Document) Result {
	r := Result{Doc: doc}
	apiVersion, kind := doc.APIVersion(), doc.Kind()
	if s.e.decl.Groups[k8s.GroupOf(apiVersion)] {
		kinds := value.SortedKeys(s.e.cur.Load().Reviews[apiVersion])
		detail := fmt.Sprintf("no kind %q is registered for version %q", kind, apiVersion)
		if meant := source.Suggest(kind, kinds); meant != "" {
			detail += fmt.Sprintf(": did you mean %q?", meant)
		} else if len(kinds) == 0 {
			var served []string
			for av := range s.e.cur.Load().Reviews {
				if k8s.GroupOf(av) == k8s.GroupOf(apiVersion) {
					served = append(served, av)
				}
			}
			slices.Sort(served)
			detail += fmt.Sprintf(": the versions served are %s", strings.Join(served, ", "))
		}
		r.Errors = []Finding{{Phase: contract.PhaseInput, Path: "kind", HasPath: true, Type: "Unsupported value", Value: jsonString(kind),
			Supported: kinds, Detail: detail}}
		return r
	}
	hint := s.e.decl.GroupHints[k8s.GroupOf(apiVersion)]
	if served := s.servedAs(kind); len(served) > 0 {
		// One of our kinds in a group or version we do not serve: an
		// older API's document, which the cluster would not take.
		detail := fmt.Sprintf("%s is served as %s", kind, strings.Join(served, ", "))
		if hint != "" {
			detail += "; " + hint
		}
		r.Errors = []Finding{{Phase: contract.PhaseInput, Path: "apiVersion", HasPath: true, Type: "Unsupported value",
			Value: jsonString(apiVersion), Supported: served, Detail: detail}}
		return r
	}
	key := identityKey(apiVersion, kind, doc.Namespace(), doc.Name())
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, dup := s.seen[key]; dup {
		r.Errors = []Finding{{Phase: contract.PhaseInput, Detail: fmt.Sprintf("%s is defined twice: first at %s:%d", r.Identity(), prev.File, prev.Line)}}
		return r
	}
	s.seen[key] = doc
	if f, ok := s.e.decl.ContextKinds[apiVersion][kind]; ok {
		if s.context[f] == nil {
			s.context[f] = map[string]any{}
		}
		s.context[f][doc.Name()] = doc.Object
		*s.journal = append(*s.journal, contextAdded)
		r.Context = true
		return r
	}
	r.Skipped = true
	if hint != "" {
		r.Warnings = []Finding{{Phase: contract.PhaseInput, Detail: fmt.Sprintf("no rule reads %s: %s", apiVersion, hint)}}
	}
	// A context kind a slip from this one (contextKinds: Localqueue, or
	// v1beta for v1beta1): the rules that read it see none, and refuse in
	// the user's name; said here, where vet meets the object.
	if meant := s.e.nearContextKind(apiVersion, kind); meant != "" {
		r.Warnings = append(r.Warnings, Finding{Phase: contract.PhaseInput, Detail: fmt.Sprintf("no rule reads %s %s, but contextKinds names %s: did the policy mean this kind?", apiVersion, kind, meant)})
	}
	return r
}

// nearContextKind is the context kind (apiVersion and kind) a slip from
// the one given: the same apiVersion and a kind a letter or two away, or
// the same kind and an apiVersion a letter or two away; "" when none is.
func (e *core) nearContextKind(apiVersion, kind string) string {
	if meant := source.Suggest(kind, value.SortedKeys(e.decl.ContextKinds[apiVersion])); meant != "" {
		return apiVersion + " " + meant
	}
	var versions []string
	for av, kinds := range e.decl.ContextKinds {
		if _, ok := kinds[kind]; ok && k8s.GroupOf(av) == k8s.GroupOf(apiVersion) {
			versions = append(versions, av)
		}
	}
	slices.Sort(versions)
	if meant := source.Suggest(apiVersion, versions); meant != "" {
		return meant + " " + kind
	}
	return ""
}

// servedAs are the apiVersions that serve a kind of our groups, sorted.
func (s *Session) servedAs(kind string) []string {
	var served []string
	for apiVersion, kinds := range s.e.cur.Load().Reviews {
		if _, ok := kinds[kind]; ok && s.e.decl.Groups[k8s.GroupOf(apiVersion)] {
			served = append(served, apiVersion)
		}
	}
	slices.Sort(served)
	return served
}

func hasPhase(fs []Finding, phases ...Phase) bool {
	for _, f := range fs {
		for _, p := range phases {
			if f.Phase == p {
				return true
			}
		}
	}
	return false
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// evaluate runs a document through its review: one unification of the
// review with the object and its context. It returns the object to keep, or
// nil when the object did not get as far as the rules. It runs the stages
// below in order; each says whether the admission goes on, and one that
// stops leaves the result in ad.
func (s *Session) evaluate(ctx context.Context, doc Document, req Request) (Result, *stored) {
	doc = s.e.asServerHasIt(doc)
	if s.opts.Mutate {
		var failed *Result
		if doc, failed = s.mutated(doc, req); failed != nil {
			return *failed, nil
		}
	}
	memo := s.e.reviewMemo != nil
	mode := carryNone
	if memo {
		mode = carryUnnamed
	}
	r, st, ok := s.reviewAs(ctx, doc, req, evalMode{carry: mode, memo: memo})
	if !ok {
		// A rule changed a carried value's token (carried.go): the
		// object is reviewed again with its values.
		r, st, _ = s.reviewAs(ctx, doc, req, evalMode{memo: memo})
	}
	if req.SchemaChecked && hasPhase(r.Errors, contract.PhaseRuleError) {
		// A schema-checked review takes its input as the object, as the
		// API server sends it, checked and defaulted. One whose rules
		// cannot evaluate is not such an object (a value of the wrong
		// type, a default missing): it is reviewed with the kind's
		// schema, which says what is wrong in the API server's words.
		r, st, _ = s.reviewAs(ctx, doc, req, evalMode{memo: memo, unifySchema: true})
	}
	// A label or annotation key that means nothing but looks as if it
	// should (k8s/metakeys.go); the review's warnings may be a cache's.
	if found := s.e.decl.KnownKeys.Findings(doc.Object); len(found) > 0 {
		r.Warnings = append(slices.Clip(r.Warnings), found...)
	}
	return r, st
}

// evalMode says which carried values an evaluation gives as tokens (those
// of one entry of `carried` alone, when entry is set), and whether it uses
// the review memo.
type evalMode struct {
	carry carryMode
	entry string
	memo  bool
	// unifySchema unifies the kind's schema with a schema-checked object
	// too (context.schemaChecked false).
	unifySchema bool
	// fallback evaluates on the runtime without CUE's structure sharing,
	// with none of the engine's optimisations: no carried values, no
	// memo, no shared runtime values (defect.go).
	fallback bool
	// uncarried, when set, stops an evaluation that gives no carried value
	// as a token before its review, and is set: that review is the one
	// without tokens, which the load's check makes apart (checkCarried).
	uncarried *bool
}

// reviewAs evaluates as m says, on the fallback when the kind's reviews
// go there; one that panics is made again on the fallback, where the
// kind's reviews go from then on when it evaluates there (defect.go).
func (s *Session) reviewAs(ctx context.Context, doc Document, req Request, m evalMode) (Result, *stored, bool) {
	apiVersion, kind := doc.APIVersion(), doc.Kind()
	if s.e.fellBack(apiVersion, kind, sortReview) {
		return s.evaluateAs(ctx, doc, req, evalMode{fallback: true, unifySchema: m.unifySchema})
	}
	r, st, ok := s.evaluateAs(ctx, doc, req, m)
	if r.defect == nil {
		return r, st, ok
	}
	fr, fst, fok := s.evaluateAs(ctx, doc, req, evalMode{fallback: true, unifySchema: m.unifySchema})
	if fr.defect == nil {
		s.e.fallBack(apiVersion, kind, sortReview, r.defect)
	}
	return fr, fst, fok
}

// evaluateAs evaluates as m says; false when a token was left over. A
// panic is the result's defect, with a finding of PhaseDefect; the
// runtime that panicked is replaced (defect.go).
func (s *Session) evaluateAs(ctx context.Context, doc Document, req Request, m evalMode) (r Result, st *stored, ok bool) {
	s.e.begin("the review", doc)
	ad := admission{s: s, doc: doc, req: req, r: Result{Doc: doc}, mode: m.carry, entry: m.entry, memo: m.memo, unifySchema: m.unifySchema, fallback: m.fallback, uncarried: m.uncarried}
	if m.fallback {
		c, err := s.e.fallbackRuntime()
		if err != nil {
			d := &Defect{What: "the review of " + tried(Result{Doc: doc}), Panic: "the fallback runtime does not compile: " + err.Error()}
			return Result{Doc: doc, Errors: []Finding{defectFinding(d)}, defect: d}, nil, true
		}
		ad.c = c
	} else {
		ad.c = s.runtime()
	}
	defer ad.releaseRuntime()
	defer func() {
		if p := recover(); p != nil {
			ad.shared = nil // its value is not given back: its runtime panicked
			d := s.e.recovered(p, "the review of "+tried(Result{Doc: doc}), ad.c)
			if d.again == nil {
				// What panicked, to find the rule it needs by (culprits).
				d.again = func(c *compiled) bool {
					v := *s
					v.pinned = c
					r, _, _ := v.evaluateAs(context.Background(), doc, req, evalMode{})
					return r.defect != nil
				}
			}
			r, st, ok = Result{Doc: doc, Errors: []Finding{defectFinding(d)}, defect: d}, nil, true
		}
	}()
	_ = ad.inputs(ctx) &&
		ad.lookups(ctx) &&
		ad.recall() &&
		ad.review() &&
		ad.decode()
	return ad.r, ad.st, !ad.leftover
}

// admission is one evaluation under way: what its stages hand on.
type admission struct {
	s   *Session
	c   *compiled
	doc Document
	req Request

	// schema is the kind's CRD schema; kindReview the kind's review (without
	// the CRD's checks for a schema-checked request).
	schema     map[string]any
	kindReview cue.Value
	// unchanged: an update of the object to itself.
	unchanged bool
	// a gives the opaque keys their tokens; cx is the review's context;
	// sessionContext the session's context objects, listed those read from
	// the cluster.
	a              *k8s.KeyAliases
	cx             map[string]any
	sessionContext map[string]map[string]any
	listed         map[string]map[string]any

	// key is the review cache's key ("" when the review may not be kept),
	// reads what it depends on, cached what the cache held; memoKey the
	// review memo's (reviewmemo.go), when memo is set.
	key     string
	reads   string
	cached  *cachedReview
	memo    bool
	memoKey string
	// mode says which carried values the review is given as tokens
	// (carried.go); values are their tokens, real the object with its
	// values; leftover says a token was left in the result.
	mode        carryMode
	entry       string
	unifySchema bool
	fallback    bool
	uncarried   *bool
	values      *valueTokens
	real        map[string]any
	leftover    bool
	// input is the object with tokens, encoded its CUE value (nil and
	// unset until encode).
	input   any
	encoded cue.Value
	// refs are the lookups' references; runtime, found and existing what
	// they found.
	refs     *lookupRefs
	runtime  *stored
	found    map[string]any
	existing map[string]any

	// shared is the runtime as a value reviews share, runtimeValue the
	// one this review holds until it is done.
	shared       *sharedRuntime
	runtimeValue cue.Value

	// rv is the evaluated review.
	rv cue.Value

	r  Result
	st *stored
}

// inputs prepares what the review sees: refuses an object too big to
// evaluate (k8s/limits.go), drops what the API server checked or wrote itself
// from a schema-checked request, and reads the cluster's context objects.
func (ad *admission) inputs(ctx context.Context) bool {
	s, doc := ad.s, ad.doc
	ad.schema = s.e.crdSchema(doc.APIVersion(), doc.Kind())
	// An object too big to evaluate is refused as it is (k8s/limits.go).
	if size := k8s.SizeFindings(doc.Object, ad.schema); size != nil {
		ad.r.Errors = k8s.WithCELNote(size, ad.schema, contract.PhaseCRD)
		return false
	}
	ad.kindReview = ad.c.Reviews[doc.APIVersion()][doc.Kind()]
	// An update of the object to itself (the controller's review of a
	// stored object): the old object is the object, encoded once.
	ad.unchanged = value.SameMap(ad.req.OldObject, doc.Object)
	if ad.unchanged {
		ad.req.OldObject = nil
	}
	if ad.req.SchemaChecked {
		ad.kindReview = ad.c.Checked[doc.APIVersion()][doc.Kind()]
		// Nor are the fields the API server writes itself evaluated.
		ad.doc.Object = s.e.withoutServerManaged(doc.Object)
		if ad.req.OldObject != nil {
			ad.req.OldObject = s.e.withoutServerManaged(ad.req.OldObject)
		}
	}

	ad.sessionContext = s.contextSnapshot()
	if s.opts.Cluster != nil {
		var err error
		if ad.listed, err = s.clusterContext(ctx); err != nil {
			ad.r.Errors = append(ad.r.Errors, Finding{Phase: contract.PhaseInput, Type: "Internal error", Detail: err.Error()})
			return false
		}
	}
	return true
}

// aliasNamed gives other groups' objects, by name, their tokens: the
// objects' keys are aliased, not their names.
func (ad *admission) aliasNamed(objs map[string]any) map[string]any {
	out := make(map[string]any, len(objs))
	for name, obj := range objs {
		out[name] = ad.a.Alias(obj)
	}
	return out
}

// lookups finds the runtime and the other objects the kind's lookups name.
// A review the engine kept (see reviewcache.go) is used again, and ends the
// admission, while what it read is unchanged; its lookups' references in
// any case.
func (ad *admission) lookups(ctx context.Context) bool {
	s := ad.s
	ad.key = s.reviewKey(ad.doc, ad.req, ad.unchanged)
	if ad.key != "" {
		ad.cached = s.e.cachedReview(ad.key)
	}
	if !ad.req.SchemaChecked {
		// The nulls the API server drops before it validates, and the
		// whole floats it writes as integers (k8s/prune.go).
		ad.doc.Object = k8s.AsServerReads(ad.doc.Object, ad.schema)
	}
	if ad.cached != nil {
		ad.refs = ad.cached.refs
	} else {
		ad.refs = s.lookupsFor(ad.c, ad.doc, ad.req, ad.unchanged)
	}
	var err error
	if ad.runtime, ad.found, ad.existing, err = s.resolve(ctx, ad.doc, ad.refs); err != nil {
		return ad.internal("the lookups", err)
	}
	if ad.key != "" {
		var ok bool
		if ad.reads, ok = readsOf(ad.runtime, ad.found, ad.listed); !ok {
			ad.key = ""
		}
	}
	if ad.key != "" && ad.cached != nil && ad.cached.reads == ad.reads {
		ad.r, ad.st = ad.cached.use(ad.r.Doc, ad.runtime, ad.existing, ad.refs)
		return false
	}
	return true
}

// encode encodes the object and the old one once.
func (ad *admission) encode() {
	ad.input = ad.a.Alias(ad.doc.Object)
	ad.encoded = ad.c.Ctx.Encode(ad.input)
	if ad.unchanged {
		ad.cx[contract.FieldOld] = ad.encoded
	} else if old, ok := ad.cx[contract.FieldOld]; ok {
		ad.cx[contract.FieldOld] = ad.c.Ctx.Encode(old)
	}
}

// review unifies the kind's review with the input and its context: the
// request, the release, the session's and the cluster's context objects,
// what the lookups found (the runtime as a value reviews share,
// runtimevalue.go), and the quantities of the object and its runtime.
func (ad *admission) review() bool {
	s := ad.s
	// The objects reach the CUE with their opaque keys as tokens (see
	// k8s/aliases.go), those of the shared runtime's first; what comes back
	// gets the keys again.
	var parent *k8s.KeyAliases
	if ad.runtime != nil && !ad.fallback {
		if ad.shared = ad.c.sharedRuntime(s.e, ad.runtime); ad.shared != nil {
			ad.runtimeValue, parent = ad.shared.values.Acquire(), ad.shared.aliases
		}
	}
	ad.a = s.e.decl.Opaque.Aliases(parent)
	cx := requestContext(ad.req, ad.a)
	if ad.req.SchemaChecked && !ad.unifySchema {
		cx[contract.FieldSchemaChecked] = true
	}
	ad.cx = cx
	if s.opts.Release != "" {
		cx[contract.FieldRelease] = s.opts.Release
	}
	for f, objs := range ad.sessionContext {
		cx[f] = ad.aliasNamed(objs)
	}
	ad.encode()
	for f, objs := range ad.listed {
		cx[f] = ad.aliasNamed(objs)
	}
	facts := []any{ad.doc.Object}
	ad.r.runtime, ad.r.existing, ad.r.existingRead = ad.runtime, ad.existing, readOfExisting(ad.existing, ad.refs)
	if ad.runtime != nil {
		if ad.shared != nil {
			cx[contract.FieldRuntime] = ad.runtimeValue
		} else {
			cx[contract.FieldRuntime] = ad.a.Alias(ad.runtime.doc.Object)
		}
		facts = append(facts, ad.runtime.doc.Object)
	}
	for f, obj := range ad.found {
		cx[f] = ad.a.Alias(obj)
	}
	if merged := s.e.reviewMerges(ad.doc, ad.runtime); merged != nil {
		cx[contract.FieldMerged] = ad.a.Alias(merged)
		facts = append(facts, merged)
	}
	cx[contract.FieldQuantities] = k8s.Quantities(facts...)

	ad.s.e.reviewsMade.Add(1)
	ad.rv = ad.kindReview.Unify(ad.c.Ctx.Encode(map[string]any{contract.FieldInput: ad.encoded, contract.FieldContext: cx}))
	return true
}

// decode reads the review: the object with its defaults, then the findings
// by phase (schema errors and the CRD's rules stop it), the warnings and
// the summary. What it decodes is kept in the review cache.
func (ad *admission) decode() bool {
	s, a, r := ad.s, ad.a, &ad.r
	// The API server's checks of the metadata, which it makes with the
	// schema's (a schema-checked object passed them).
	var metaErrors []Finding
	if !ad.req.SchemaChecked {
		// Metadata that does not decode fails the request before
		// anything is validated, with the decoder's one error.
		if f := k8s.MetadataDecodeError(ad.doc.APIVersion(), ad.doc.Kind(), ad.realObject()); f != nil {
			r.Errors = []Finding{*f}
			return ad.keep(nil)
		}
		metaErrors = k8s.ObjectMetaFindings(ad.realObject())
	}
	object := ad.rv.LookupPath(contract.PathObject)
	if err := object.Validate(cue.Concrete(true)); err != nil {
		fs := k8s.SchemaFindings(err, []string{contract.FieldAdmission, ad.doc.APIVersion(), ad.doc.Kind(), contract.FieldObject}, ad.input.(map[string]any), object, ad.schema)
		if len(fs) == 0 && len(metaErrors) == 0 {
			// Each of CUE's errors is one the API server would not make
			// (its words drop them): the object is still not made, and the
			// document is not admitted without a word.
			return ad.internal("object", err)
		}
		r.Errors = append(metaErrors, a.RestoreFindings(fs)...)
		return ad.keep(nil)
	}
	parts := (!ad.req.SchemaChecked || ad.c.PolicyCRD[ad.doc.APIVersion()][ad.doc.Kind()]) && len(ad.c.crdParts[ad.doc.APIVersion()][ad.doc.Kind()]) > 0
	var decoded map[string]any
	if !ad.req.VerdictOnly || parts {
		if err := object.Decode(&decoded); err != nil {
			return ad.internal("object", err)
		}
		decoded, _ = a.Restore(decoded).(map[string]any)
	}
	if !ad.req.VerdictOnly {
		r.Object = decoded
	}
	crd, err := k8s.DecodeFindings(s.e.src, ad.rv.LookupPath(contract.PathReview[contract.PhaseCRD]), contract.PhaseCRD)
	if err != nil {
		return ad.internal("crd", err)
	}
	crd = append(metaErrors, a.RestoreFindings(crd)...)
	if parts {
		// The checks the CRD makes of parts of the object, after the
		// whole object's (crdparts.go).
		fs, err := ad.crdPartFindings(decoded)
		if err != nil {
			return ad.internal(contract.FieldCRDCheckParts, err)
		}
		crd = append(crd, fs...)
	}
	if !ad.req.SchemaChecked {
		// The API server's list-type checks, on the object with its
		// defaults (a key may be defaulted), where the CUE makes none.
		obj := decoded
		if obj == nil {
			obj = ad.realObject()
		}
		crd = withoutSaid(crd, k8s.ListTypeFindings(obj, ad.schema))
	}
	if hasPhase(crd, contract.PhaseCRD) && !ad.req.SchemaChecked {
		crd = k8s.WithCELNote(crd, ad.schema, contract.PhaseCRD)
	}
	if hasPhase(crd, contract.PhaseCRD) {
		r.Errors = crd
		return ad.keep(nil)
	}
	r.Errors = crd // the rule errors, if any
	for _, phase := range []Phase{contract.PhaseWebhook, contract.PhasePolicy} {
		fs, err := k8s.DecodeFindings(s.e.src, ad.rv.LookupPath(contract.PathReview[phase]), phase)
		if err != nil {
			return ad.internal(string(phase), err)
		}
		fs = a.RestoreFindings(fs)
		if phase == contract.PhaseWebhook {
			// Kubeflow's webhooks print typed values.
			fs = k8s.TypedValues(s.e.decl.TypedParts[ad.doc.APIVersion()][ad.doc.Kind()], fs)
		}
		r.Errors = append(r.Errors, fs...)
	}
	warnings, err := k8s.DecodeFindings(s.e.src, ad.rv.LookupPath(contract.PathReviewWarnings), "warning")
	if err != nil {
		return ad.internal("warnings", err)
	}
	warnings, broken := k8s.RuleErrorsApart(warnings)
	r.Errors = append(r.Errors, broken...)
	r.Warnings = a.RestoreFindings(warnings)
	if sum := ad.rv.LookupPath(contract.PathReviewSummary); sum.Exists() {
		if err := sum.Decode(&r.Summary); err != nil {
			return ad.internal("summary", err)
		}
		r.Summary, _ = a.Restore(r.Summary).(map[string]any)
	}
	if ad.req.VerdictOnly {
		return ad.keep(nil)
	}
	doc := ad.doc
	return ad.keep(&stored{doc: doc.WithObject(r.Object), summary: r.Summary})
}

// withoutSaid is fs with more, but for the findings of more at a path and
// of a type one of fs has.
func withoutSaid(fs, more []Finding) []Finding {
	for _, f := range more {
		said := slices.ContainsFunc(fs, func(g Finding) bool { return g.Path == f.Path && g.Type == f.Type })
		if !said {
			fs = append(fs, f)
		}
	}
	return fs
}

// keep ends the admission with st, the object to keep (nil for none), and
// keeps the review's result under its key, when it may be kept.
func (ad *admission) keep(st *stored) bool {
	ad.st = st
	// The memo keeps the result with the carried values' tokens; a copy:
	// the caller may change what it gets.
	var memoized *cachedReview
	if ad.memoKey != "" {
		memoized = newCachedReview(ad.refs, ad.reads, st != nil, ad.r)
	}
	if ad.values != nil {
		var ok bool
		if ad.r, ad.st, ok = ad.values.putBack(ad.r, ad.st); !ok {
			ad.leftover = true
			return false
		}
	}
	if memoized != nil {
		ad.s.e.reviewMemo.Put(ad.memoKey, memoized)
	}
	if ad.key != "" {
		ad.s.e.keepReview(ad.key, newCachedReview(ad.refs, ad.reads, st != nil, ad.r))
	}
	return false
}

// internal ends the admission with an internal error (not kept).
func (ad *admission) internal(what string, err error) bool {
	ad.r, ad.st = ad.s.internal(ad.r, what, err), nil
	if ad.values != nil {
		ad.r, _, _ = ad.values.putBack(ad.r, nil)
	}
	return false
}

// requestContext is what a request tells the CUE (#Context): the operation
// and the old object (its keys aliased by a).
func requestContext(req Request, a *k8s.KeyAliases) map[string]any {
	cx := map[string]any{}
	if req.Operation != "" {
		cx[contract.FieldOperation] = req.Operation
	}
	if req.OldObject != nil {
		cx[contract.FieldOld] = a.Alias(req.OldObject)
	}
	return cx
}

// Mutate works out a mutating webhook's changes to the object: the input
// with the kind's mutations (mutators) made, nil when they change nothing
// or the kind has none. It evaluates the mutator alone, not the review:
// whether the object is valid is the validating webhook's question.
func (s *Session) Mutate(doc Document, req Request) (map[string]any, error) {
	if doc.Err != nil || doc.Object == nil {
		return nil, nil
	}
	c := s.e.compiled()
	m, ok := c.Mutators[doc.APIVersion()][doc.Kind()]
	if !ok || s.e.mutatesNothing(doc.APIVersion(), doc.Kind(), req) {
		return nil, nil
	}
	s.e.begin("the mutation", doc)
	var now string
	if !req.Now.IsZero() {
		now = req.Now.UTC().Format(time.RFC3339)
	}
	// A mutation's edits are a function of the kind, the paths of the
	// object and of the old one that its mutator reads (the whole objects
	// when it does not say), the operation and the time (to the second)
	// alone: kept under their hash (the mutate memo), and made to each
	// caller's object.
	in, old := s.e.mutatorInput(doc, req.OldObject)
	var key string
	var ms *mutations
	if s.e.mutateMemo != nil {
		h := value.NewContentHash()
		h.Value([]any{doc.APIVersion(), doc.Kind(), req.Operation, now, in, old})
		key = h.Sum()
		ms, _ = s.e.mutateMemo.Get(key)
	}
	if ms == nil {
		if s.e.fellBack(doc.APIVersion(), doc.Kind(), sortMutation) {
			return s.fallbackMutations(doc, in, old, req.Operation, now).made(doc)
		}
		var d *Defect
		if ms, d = s.tryMutations(c, m, doc, in, old, req.Operation, now); d != nil {
			// CUE panicked: made again on the fallback, where the kind's
			// mutations go from then on when it makes them (defect.go).
			ms = s.fallbackMutations(doc, in, old, req.Operation, now)
			if ms.defect == nil {
				s.e.fallBack(doc.APIVersion(), doc.Kind(), sortMutation, d)
			}
			return ms.made(doc)
		}
		if key != "" {
			s.e.mutateMemo.Put(key, ms)
		}
	}
	return ms.made(doc)
}

// tryMutations makes the mutations on c, or says how it panicked (the
// runtime replaced).
func (s *Session) tryMutations(c *compiled, m cue.Value, doc Document, in, old map[string]any, op, now string) (ms *mutations, d *Defect) {
	defer func() {
		if r := recover(); r != nil {
			ms, d = nil, s.e.recovered(r, fmt.Sprintf("the mutations of %s", tried(Result{Doc: doc})), c)
		}
	}()
	return s.mutations(c, m, doc.Kind(), in, old, op, now), nil
}

// fallbackMutations makes the mutations on the fallback runtime; its
// defect when it panics there too.
func (s *Session) fallbackMutations(doc Document, in, old map[string]any, op, now string) *mutations {
	c, err := s.e.fallbackRuntime()
	if err != nil {
		return &mutations{defect: &Defect{What: fmt.Sprintf("the mutations of %s", tried(Result{Doc: doc})), Panic: "the fallback runtime does not compile: " + err.Error()}}
	}
	ms, d := s.tryMutations(c, c.Mutators[doc.APIVersion()][doc.Kind()], doc, in, old, op, now)
	if d != nil {
		return &mutations{defect: d}
	}
	return ms
}

// asServerHasIt is the document as the API server has it when it calls
// the webhooks: a cluster-scoped object's namespace cleared (a
// ClusterTrainingRuntime's YAML may carry one, which kubectl sends), as
// rest.EnsureObjectNamespaceMatchesRequestNamespace does. The object is
// copied, not changed.
func (e *core) asServerHasIt(doc Document) Document {
	md := k8s.Meta(doc.Object)
	if _, ok := md["namespace"]; !ok || !e.clusterScoped(k8s.GroupOf(doc.APIVersion()), doc.Kind()) {
		return doc
	}
	obj := maps.Clone(doc.Object)
	md = maps.Clone(md)
	delete(md, "namespace")
	obj["metadata"] = md
	doc.Object = obj
	return doc
}

// mutatesNothing says whether every mutation of a kind's mutator needs
// something of the request that req has not (mutatorNeeds): the mutator
// would make no edit.
func (e *core) mutatesNothing(apiVersion, kind string, req Request) bool {
	byMutation, ok := e.decl.MutatorNeeds[apiVersion][kind]
	if !ok {
		return false
	}
	lacks := func(need string) bool {
		return need == contract.FieldNow && req.Now.IsZero() || need == contract.FieldOld && req.OldObject == nil
	}
	for _, needs := range byMutation {
		if !slices.ContainsFunc(needs, lacks) {
			return false
		}
	}
	return true
}

// mutated is the document with the mutating webhook's changes made (see
// SessionOptions.Mutate), or a mutation's defect as the review's result:
// the policy's error, at the mutation.
func (s *Session) mutated(doc Document, req Request) (Document, *Result) {
	if req.Operation == "" {
		req.Operation = contract.OpCreate
	}
	out, err := s.Mutate(doc, req)
	if d := (*Defect)(nil); errors.As(err, &d) {
		return doc, &Result{Doc: doc, Errors: []Finding{defectFinding(d)}, defect: d}
	}
	if err != nil {
		f := Finding{Phase: contract.PhaseRuleError, Rule: "mutations", Detail: err.Error()}
		if mErr, ok := err.(*MutationError); ok {
			f.Source = mErr.Source
			if mErr.Rule != "" {
				f.Rule += "." + mErr.Rule
			}
		}
		return doc, &Result{Doc: doc, Errors: []Finding{f}}
	}
	if out != nil {
		doc.Object = out
	}
	return doc, nil
}

// mutations are a mutator's edits for one object and request, by rule,
// their opaque keys put back (what the mutate memo keeps), or the
// mutator's defect.
type mutations struct {
	rules []ruleEdits
	err   error
	// defect is the panic that stopped them, on the fallback too
	// (defect.go).
	defect *Defect
}

// ruleEdits are one mutation's edits, with its place in the CUE.
type ruleEdits struct {
	name, source string
	edits        []edit.Edit
}

// mutations evaluates the kind's mutator m for what it is given of the
// object and of the old one (mutatorInput) and decodes its edits.
func (s *Session) mutations(c *compiled, m cue.Value, kind string, in, old map[string]any, op, now string) *mutations {
	s.e.mutationsMade.Add(1)
	rv, a := s.mutatorValue(c, m, in, old, op, now)
	ms := &mutations{}
	v := rv.LookupPath(contract.PathMutations)
	if !v.Exists() {
		return ms
	}
	var rules map[string][]edit.Edit
	if err := value.DecodeJSON(v, &rules); err != nil {
		ms.err = &MutationError{Source: s.e.src.SourceOf(v), Detail: fmt.Sprintf("%s: mutations: %s", kind, s.e.src.Details(err))}
		return ms
	}
	for _, name := range value.SortedKeys(rules) {
		if len(rules[name]) == 0 {
			continue // its place in the CUE is looked up only for edits
		}
		r := ruleEdits{name: name, source: s.e.src.SourceOf(rv.LookupPath(cue.MakePath(contract.SelMutations, cue.Str(name))))}
		if r.source == "" {
			r.source = s.e.src.SourceOf(v)
		}
		for _, e := range rules[name] {
			if e.Object != contract.FieldInput {
				ms.err = &MutationError{Rule: name, Source: r.source, Detail: fmt.Sprintf("%s: mutations: mutation %s edits %q: a mutation edits the object \"input\"", kind, name, e.Object)}
				return ms
			}
			// Numbers as the reader and the API server give them (int64,
			// float64), not json.Numbers, which the CUE encoder takes as text.
			e.Path, _ = a.Restore(e.Path).([]any)
			e.Value = value.Numbers(a.Restore(e.Value))
			e.Items, _ = value.Numbers(a.Restore(e.Items)).([]any)
			r.edits = append(r.edits, e)
		}
		ms.rules = append(ms.rules, r)
	}
	return ms
}

// made is a copy of the object with the edits made, nil when there are
// none. The edits stay as they were: each is made with copies of its
// values (edit.withOwnValues).
func (ms *mutations) made(doc Document) (map[string]any, error) {
	if ms.defect != nil {
		return nil, ms.defect
	}
	if ms.err != nil {
		return nil, ms.err
	}
	var out map[string]any
	for _, r := range ms.rules {
		for _, e := range r.edits {
			if out == nil {
				out = value.DeepCopy(doc.Object).(map[string]any)
			}
			if err := e.WithOwnValues().Apply(out); err != nil {
				return nil, &MutationError{Rule: r.name, Source: r.source, Detail: fmt.Sprintf("%s: mutations: mutation %s: %v", doc.Kind(), r.name, err)}
			}
		}
	}
	return out, nil
}

// mutatorInput is what the kind's mutator is given of the object and of
// the old one: the paths its reads name, when it names them, else the
// whole objects.
func (e *core) mutatorInput(doc Document, old map[string]any) (map[string]any, map[string]any) {
	reads, ok := e.decl.MutatorReads[doc.APIVersion()][doc.Kind()]
	if !ok {
		return doc.Object, old
	}
	if old != nil {
		old = value.Project(old, reads)
	}
	return value.Project(doc.Object, reads), old
}

// mutatorValue is the kind's mutator m evaluated for in and old, the
// operation and the time, and the tokens of their opaque keys.
func (s *Session) mutatorValue(c *compiled, m cue.Value, in, old map[string]any, op, now string) (cue.Value, *k8s.KeyAliases) {
	a := s.e.decl.Opaque.Aliases(nil)
	cx := requestContext(Request{Operation: op, OldObject: old}, a)
	// A mutator alone is given the time (a review is the same whenever it
	// is asked).
	if now != "" {
		cx[contract.FieldNow] = now
	}
	return m.Unify(c.Ctx.Encode(map[string]any{contract.FieldInput: a.Alias(in), contract.FieldContext: cx})), a
}

// MutationError is a mutator that cannot be carried out: the CUE's defect,
// with the mutation it is in (Rule) and its place in the CUE (Source,
// FILE:LINE:COLUMN) when they are known.
type MutationError struct {
	Rule, Source, Detail string
}

func (e *MutationError) Error() string { return e.Detail }

// lookupRefs is what a kind's lookups name for one input and request: the
// runtime, and more objects by context field; for the controller, also the
// objects of the render that exist. They are computed from the input and
// the request alone (the operation, the old object), before the review.
type lookupRefs struct {
	runtime  *contract.LookupRef
	objects  map[string]contract.LookupRef
	existing map[string]contract.LookupRef
}

// lookupRefs evaluates the kind's lookups (nil when it has none). A lookup
// that does not decode names nothing: the review reports what is wrong with
// the input.
func (s *Session) lookupRefs(c *compiled, doc Document, input cue.Value, rctx map[string]any) *lookupRefs {
	v, ok := c.lookupsValue(doc, input, rctx)
	if !ok {
		return nil
	}
	return s.refsOf(v)
}

// lookupsValue is the kind's lookups evaluated for input (its values, or
// an encoded cue.Value) and rctx; ok false when the kind has none.
func (c *compiled) lookupsValue(doc Document, input any, rctx map[string]any) (v cue.Value, ok bool) {
	lk, ok := c.Lookups[doc.APIVersion()][doc.Kind()]
	if !ok {
		return cue.Value{}, false
	}
	return lk.Unify(c.Ctx.Encode(map[string]any{contract.FieldInput: input, contract.FieldContext: rctx})), true
}

// refsOf decodes what evaluated lookups v name.
func (s *Session) refsOf(v cue.Value) *lookupRefs {
	refs := &lookupRefs{objects: decodeRefs(v.LookupPath(contract.PathLookupObjects))}
	if ref := v.LookupPath(contract.PathLookupRuntime); ref.Exists() {
		var l contract.LookupRef
		if ref.Decode(&l) == nil {
			refs.runtime = &l
		}
	}
	if s.opts.Controller {
		refs.existing = decodeRefs(v.LookupPath(contract.PathLookupExisting))
	}
	return refs
}

// decodeRefs decodes a struct of lookups by field, nil when there is none
// or it does not decode.
func decodeRefs(v cue.Value) map[string]contract.LookupRef {
	if !v.Exists() {
		return nil
	}
	var refs map[string]contract.LookupRef
	if v.Decode(&refs) != nil {
		return nil
	}
	return refs
}

// resolve finds the objects refs name. What does not exist is left out
// (the rules say what that means); what cannot be read is an error.
func (s *Session) resolve(ctx context.Context, doc Document, refs *lookupRefs) (runtime *stored, found, existing map[string]any, err error) {
	if refs == nil {
		return nil, nil, nil, nil
	}
	if refs.runtime != nil {
		if runtime, err = s.find(ctx, doc.Object, *refs.runtime); err != nil {
			return nil, nil, nil, err
		}
	}
	if found, err = s.findAll(ctx, doc.Object, refs.objects); err != nil {
		return nil, nil, nil, err
	}
	if existing, err = s.findAll(ctx, doc.Object, refs.existing); err != nil {
		return nil, nil, nil, err
	}
	return runtime, found, existing, nil
}

// findAll finds the objects a struct of lookups names, by field.
func (s *Session) findAll(ctx context.Context, input map[string]any, refs map[string]contract.LookupRef) (map[string]any, error) {
	var found map[string]any
	for _, f := range value.SortedKeys(refs) {
		st, err := s.find(ctx, input, refs[f])
		if err != nil {
			return nil, err
		}
		if st != nil {
			if found == nil {
				found = map[string]any{}
			}
			found[f] = st.doc.Object
		}
	}
	return found, nil
}

// internal reports a failure of the CUE itself (a rule that does not
// evaluate), with the CUE positions.
func (s *Session) internal(r Result, what string, err error) Result {
	r.Errors = append(r.Errors, Finding{Phase: contract.PhaseInput, Type: "Internal error", Detail: fmt.Sprintf("evaluating %s: %s", what, s.e.src.Details(err))})
	return r
}

// Listed is an object the session holds that its kind summarises (a
// runtime): its defaulted form, its summary and where it came from.
type Listed struct {
	Object  map[string]any
	Summary map[string]any
	File    string
	Line    int
	Builtin bool
}

// Listed returns the objects with a summary, by kind, namespace and name.
func (s *Session) Listed() []Listed {
	var out []Listed
	for _, k := range value.SortedKeys(s.objects) {
		st := s.objects[k]
		if st.summary == nil {
			continue
		}
		out = append(out, Listed{Object: st.doc.Object, Summary: st.summary, File: st.doc.File, Line: st.doc.Line, Builtin: st.builtin})
	}
	return out
}

// admits reports whether the CUE has a review for the kind.
func (e *core) admits(apiVersion, kind string) bool {
	_, ok := e.cur.Load().Reviews[apiVersion][kind]
	return ok
}

// RuntimeSummary is the listed object's summary as a runtime's; zero for
// what no runtime review summarised.
func (l Listed) RuntimeSummary() RuntimeSummary {
	var s RuntimeSummary
	if data, err := json.Marshal(l.Summary); err == nil {
		_ = json.Unmarshal(data, &s)
	}
	return s
}

// tried names the object of r the load tried: a probe of a runtime as
// such.
func tried(r Result) string {
	if strings.HasPrefix(r.Doc.File, k8s.ProbeFile) {
		return fmt.Sprintf("%s, a probe of the runtime %s (see probes)", r.Identity(), strings.TrimPrefix(r.Doc.File, k8s.ProbeFile))
	}
	return r.Identity()
}

// runtime is the CUE runtime the session's evaluations use: the one in
// force, or the one it is pinned to (the fallback's, a variant's).
func (s *Session) runtime() *compiled {
	if s.pinned != nil {
		return s.pinned
	}
	return s.e.compiled()
}
