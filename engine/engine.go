// Package engine evaluates cuetrainer's CUE: it loads the embedded schemas and
// runtimes and an admin's policy directories once, then admits objects, one
// CUE unification per object. It knows no framework and no rule: the CUE
// declares the kinds it admits, the rules, and the lookups it needs.
package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"

	"github.com/cuetrainer/cuetrainer/engine/internal/cache"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/crd"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/load"
	"github.com/cuetrainer/cuetrainer/engine/internal/reach"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
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

// root is where the embedded module is laid out for the CUE loader.
const root = source.Root

// Options say what to load besides the embedded CUE.
type Options struct {
	// PolicyDirs are directories of an admin's CUE files (package schemas),
	// added to the schemas package: new frameworks, rules and runtimes.
	PolicyDirs []string
	// RecycleAfter is how many evaluations one CUE runtime serves; 0 means
	// DefaultRecycleAfter. The controller's --engine-recycle-after: fewer
	// bound what a runtime keeps tighter, at the cost of a compilation.
	RecycleAfter int
	// PlanCacheSize is how many render plans (one per runtime content) one
	// CUE runtime keeps; 0 means DefaultPlanCacheSize. The controller's
	// --engine-plan-cache-size: a cluster of more runtimes than that
	// plans some renders again.
	PlanCacheSize int
	// NoMemo evaluates every review, lookup, render and mutation afresh
	// rather than from the memos (reviewmemo.go, lookupmemo.go,
	// rendermemo.go, the mutate memo), gives no carried value as a token
	// (carried.go), and encodes every review's runtime (runtimevalue.go).
	// The results are the same (TestMemoChangesNothing), only slower: a
	// debugging switch (--no-memo), to tell a memo's defect from a rule's.
	NoMemo bool
	// TrialCacheDir is a directory where loads keep their policy trials'
	// outcomes for other processes (keptrials.go); "" keeps them in this
	// process's memory only. cuetrainer's CLI gives the user's cache
	// directory; the controller, whose root filesystem is read-only, none.
	TrialCacheDir string
}

// Engine is the compiled CUE. It is safe for concurrent use.
//
// After RecycleAfter evaluations the engine compiles its CUE afresh into a
// new runtime, and swaps it in; evaluations under way finish on the old.
// That bounds what a CUE runtime keeps per evaluation. CUE's table of
// labels belongs to the process, not to a runtime: opaque keys (k8s/aliases.go)
// keep it from growing with the objects' label keys.
type Engine struct {
	cur          atomic.Pointer[compiled]
	instances    []*build.Instance
	recycleAfter int64
	planCacheMax int
	// trialCacheDir keeps the trials' outcomes across processes
	// (keptrials.go).
	trialCacheDir string
	rebuilding    atomic.Bool
	// guard is the load's, while it runs (stall.go); evalLimit is the
	// work each of the load's evaluations may take.
	guard     atomic.Pointer[evalGuard]
	evalLimit time.Duration
	// Recycled counts the swaps, for metrics and tests; defects the panics
	// recovered (defect.go).
	recycled atomic.Int64
	defects  atomic.Int64
	// fallbackState holds the runtime evaluations that panicked go to.
	fallbackState
	// warnings are the load's (Warnings).
	warnings []Problem
	// sources are the loaded files, by the loader's names: a variant of
	// the policy compiles from them (defect.go's culprits).
	sources map[string][]byte

	// existingCache holds objects read from a cluster with their defaults,
	// by identity, uid and resourceVersion (see existing).
	existingCache *cache.LRU[*stored]
	// pinnedCopies holds the objects parsed from pinned copies, by the
	// ConfigMap's uid, resourceVersion and data key (see pinnedCopy).
	pinnedCopies *cache.LRU[map[string]any]
	// reviewCache holds the controller's reviews of stored objects (see
	// reviewKey); reviewsMade counts the reviews evaluated (Evaluations).
	reviewCache *cache.LRU[*cachedReview]
	reviewsMade atomic.Int64
	// lookupsMade counts the lookups evaluated (not from the memo),
	// rendersMade the renders, mutationsMade the mutations and
	// crdPartsMade the CRD check parts (Evaluations).
	lookupsMade   atomic.Int64
	rendersMade   atomic.Int64
	mutationsMade atomic.Int64
	crdPartsMade  atomic.Int64

	// decl are the compiled CUE's declarations, decoded (internal/load).
	decl load.Declarations
	// memos is !Options.NoMemo. lookupMemo keeps the lookups' references,
	// renderMemo the renders (by identities, and alike by content),
	// reviewMemo the reviews and mutateMemo the mutations (all nil with
	// NoMemo); each CUE runtime keeps the shared runtime values.
	memos      bool
	lookupMemo *cache.LRU[*lookupRefs]
	renderMemo *cache.LRU[keptRender]
	reviewMemo *cache.LRU[*cachedReview]
	mutateMemo *cache.LRU[*mutations]
	// crdPartMemo keeps the errors of CRD check parts (crdparts.go), nil
	// with NoMemo.
	crdPartMemo *cache.LRU[[]Finding]
	// renderObjects are the ids of the objects the renders, their parts and
	// plans declare, sorted; nil when not all are known (no policy files,
	// whose own renders the tests keep in step; an id under a computed
	// label). A render's edit, generator or sum of another id is a defect.
	renderObjects []string
	// builtin are the shipped runtimes and those policies declare, as
	// authored, in name order; builtinByRelease the same admitted, per
	// release vetted for, and builtinReported those the rules find fault with or warn of (BuiltinFindings).
	builtin          []Document
	builtinMu        sync.Mutex
	builtinByRelease map[string][]*stored
	builtinReported  map[string][]Result
	// declared names the runtimes a policy declares (in package schemas).
	declared map[string]bool

	// schemas are the kinds' CRD schemas, for pruning nulls (k8s/prune.go)
	// and the API server's checks (crd/crdschemas.go).
	schemas *crd.Schemas

	// src names the loader's files: the files on disk (policy files) or
	// in the repository (embedded files), and which are the admin's.
	src *source.Files
	// policyDeclares are the paths the admin's files declare
	// (reach.Declared), nil for none.
	policyDeclares [][]string
	// policyFiles are the admin's files, parsed, by loader file name.
	policyFiles map[string]*policyFile
	// policyPaths are the policy directories' files read, by their path
	// with links resolved.
	policyPaths map[string]bool
	// manifests are the policy directories' YAML and JSON files, which
	// the load checks for objects put there to be loaded (checkManifests).
	manifests []policyManifest
	// markerBounds are the validation markers of the admin's fields, which
	// the engine makes CUE constraints too (crd/markers.go).
	markerBounds []crd.MarkerBound
}

// compiled is the CUE compiled into one runtime.
type compiled struct {
	// Program is the compiled CUE and the values read out of it
	// (internal/load).
	*load.Program
	// crdParts are each kind's CRD check parts (crdparts.go), in the
	// CUE's order.
	crdParts map[string]map[string][]crdPart
	// carried are the input paths each kind's review only carries over
	// (carried.go).
	carried map[string]map[string][]carriedPath
	// meetsCache keeps whether a value meets a carried entry's constraint.
	meetsCache *cache.LRU[bool]
	planCache  *planCache
	// sharedRuntimes are the runtimes encoded for reviews to share
	// (runtimevalue.go), by content; nil with Options.NoMemo.
	sharedRuntimes *cache.LRU[*sharedRuntime]
	// combined are the renders with the parts a plan chose, by apiVersion,
	// kind and the parts' names.
	combined    sync.Map
	evaluations atomic.Int64
}

// pinnedCopiesSize bounds the pinned copies kept parsed (cluster.go), as
// many as the cluster objects kept with their defaults.
const pinnedCopiesSize = 1024

// existingCacheSize bounds the objects read from a cluster and kept with
// their defaults (cluster.go's existing), the least recently used dropped
// first.
const existingCacheSize = 1024

// DefaultRecycleAfter is how many evaluations an engine's CUE runtime serves
// before the engine compiles a fresh one.
const DefaultRecycleAfter = 20000

// New loads and compiles the CUE. A broken CUE file fails here, with its
// file, line and column.
func New(opts Options) (_ *Engine, err error) {
	e := &Engine{src: source.NewFiles(), policyFiles: map[string]*policyFile{}, policyPaths: map[string]bool{}, declared: map[string]bool{}, recycleAfter: int64(opts.RecycleAfter), planCacheMax: opts.PlanCacheSize, trialCacheDir: opts.TrialCacheDir, evalLimit: evalLimit,
		pinnedCopies:  cache.NewLRU[map[string]any](pinnedCopiesSize),
		existingCache: cache.NewLRU[*stored](existingCacheSize),
		reviewCache:   cache.NewLRU[*cachedReview](reviewCacheSize)}
	if e.memos = !opts.NoMemo; e.memos {
		e.lookupMemo = cache.NewLRU[*lookupRefs](DefaultLookupMemoSize)
		e.renderMemo = cache.NewLRU[keptRender](DefaultRenderMemoSize)
		e.reviewMemo = cache.NewLRU[*cachedReview](DefaultReviewMemoSize)
		e.mutateMemo = cache.NewLRU[*mutations](DefaultReviewMemoSize)
		e.crdPartMemo = cache.NewLRU[[]Finding](DefaultCRDPartMemoSize)
	}
	if e.recycleAfter <= 0 {
		e.recycleAfter = DefaultRecycleAfter
	}
	// No panic escapes a load (defect.go).
	defer func() {
		if r := recover(); r != nil {
			err = defectLoadError(e.loadSummary(), e.recovered(r, "the load", nil))
		}
	}()
	files := map[string][]byte{}
	if err := source.Embedded(files, e.src); err != nil {
		return nil, err
	}
	embedded := make(map[string]bool, len(files))
	for name := range files {
		embedded[name] = true
	}
	for i, dir := range opts.PolicyDirs {
		if err := e.addPolicyDir(files, i, dir); err != nil {
			return nil, err
		}
	}
	if src := crd.MarkerSource(e.markerBounds); src != nil {
		files[markerFile] = src
		e.src.Add(markerFile, "(the policy's validation markers)", false)
	}

	e.sources = files
	e.instances = source.Instances(files, "./schemas", "./runtimes")
	for _, inst := range e.instances {
		if inst.Err != nil {
			return nil, loadError(e.loadSummary(), e.src.CUEProblems(inst.Err))
		}
	}
	if err := e.checkBuildAttributes(); err != nil {
		return nil, err
	}
	// What the files added to the embedded ones declare (package reach):
	// a kind's CRD schema is the one made ahead unless they reach it, and
	// so are some of the trials' outcomes (trialScope).
	var added []*ast.File
	for _, inst := range e.instances {
		for _, f := range inst.Files {
			if !embedded[f.Filename] {
				added = append(added, f)
			}
		}
	}
	e.policyDeclares = reach.Declared(added)
	e.schemas = crd.NewSchemas(e.src, e.policyDeclares)
	build := e.build
	if len(e.policyFiles) > 0 {
		// The admin's CUE may evaluate for as long as it says: the load
		// fails rather than stall (stall.go).
		build = func() error { return e.guarded(e.build) }
	}
	if err := build(); err != nil {
		return nil, err
	}
	return e, nil
}

// build compiles the loaded instances, reads the declarations, lints the
// admin's CUE, admits the runtimes and tries the rules on probes.
func (e *Engine) build() error {
	e.begin("the compilation", Document{})
	c, err := e.compile()
	if err != nil {
		return err
	}
	if err := e.decl.ReadKinds(e.src, c.Schemas); err != nil {
		return err
	}
	if err := e.checkManifests(c); err != nil {
		return err
	}
	if problems, err := e.decl.ReadInputReads(e.src, c.Plans, c.Lookups, c.Mutators); err != nil {
		return err
	} else if err := loadError(e.loadSummary(), problems); err != nil {
		return err
	}
	var keyReads [][]string
	if len(e.policyFiles) > 0 {
		e.begin("the lint", Document{})
		r := e.lintPolicy(c)
		keyReads, e.renderObjects = r.KeyReads, r.ObjectIDs
		if err := loadError(e.loadSummary(), r.Problems); err != nil {
			return err
		}
	}
	e.cur.Store(c)
	// A map whose keys a policy's rule reads as data (iterates them,
	// matches them) reaches the rules with its keys.
	if err := e.decl.ReadServing(e.src, c.Schemas, e.instances, keyReads); err != nil {
		return err
	}
	if err := e.loadBuiltin(c); err != nil {
		return err
	}
	if len(e.policyFiles) > 0 {
		if err := loadError(e.loadSummary(), e.triedPolicy()); err != nil {
			return err
		}
		e.warnings = append(e.warnings, e.fallbackWarnings(e.cur.Load())...)
	}
	return nil
}

// Warnings are what the load found that does not stop it: each at the
// admin's file and line, with what it means for the policy.
func (e *Engine) Warnings() []Problem { return e.warnings }

// compile builds the loaded instances into a fresh CUE runtime, made
// with opts.
func (e *Engine) compile(opts ...cuecontext.Option) (*compiled, error) {
	return e.compileInstances(e.instances, opts...)
}

// compileInstances builds instances (the loaded ones, or a variant of
// them: defect.go's culprits) into a fresh CUE runtime.
func (e *Engine) compileInstances(instances []*build.Instance, opts ...cuecontext.Option) (*compiled, error) {
	p, problems, err := load.Compile(e.src, instances, opts...)
	if problems != nil {
		return nil, loadError(e.loadSummary(), problems)
	}
	if err != nil {
		return nil, err
	}
	c := &compiled{Program: p, planCache: newPlanCache(e.planCacheMax), meetsCache: cache.NewLRU[bool](DefaultLookupMemoSize)}
	if e.memos {
		c.sharedRuntimes = cache.NewLRU[*sharedRuntime](max(e.planCacheMax, DefaultPlanCacheSize))
	}
	c.crdParts = map[string]map[string][]crdPart{}
	for apiVersion, kinds := range p.CRDCheckParts {
		c.crdParts[apiVersion] = map[string][]crdPart{}
		for kind, v := range kinds {
			if c.crdParts[apiVersion][kind], err = e.crdPartsOf(v); err != nil {
				return nil, err
			}
		}
	}
	if c.carried, err = e.carriedPaths(c); err != nil {
		return nil, err
	}
	e.withoutPolicyReads(c.carried)
	return c, nil
}

// compiled returns the CUE runtime to evaluate one object with, and
// starts a fresh one when this one has served its share.
func (e *Engine) compiled() *compiled {
	c := e.cur.Load()
	if c.evaluations.Add(1) == e.recycleAfter && e.rebuilding.CompareAndSwap(false, true) {
		go func() {
			defer e.rebuilding.Store(false)
			// A panic of the compilation's leaves this runtime in force.
			defer func() {
				if r := recover(); r != nil {
					e.recovered(r, "a fresh compilation", nil)
				}
			}()
			if fresh, err := e.compile(); err == nil {
				e.cur.CompareAndSwap(c, fresh)
				e.recycled.Add(1)
			}
		}()
	}
	return c
}

// Recycled reports how many times the engine swapped in a fresh CUE runtime.
func (e *Engine) Recycled() int64 { return e.recycled.Load() }

// Evaluations count what the engine evaluated, not what its memos served:
// the reviews, the lookups, the renders, the mutators' edits and the CRD
// check parts. With the requests answered they give the memos' hits.
type Evaluations struct {
	Reviews, Lookups, Renders, Mutations, CRDParts int64
}

// Evaluations reports what the engine evaluated since it loaded, for
// metrics (cuetrainer_engine_evaluations_total).
func (e *Engine) Evaluations() Evaluations {
	return Evaluations{
		Reviews:   e.reviewsMade.Load(),
		Lookups:   e.lookupsMade.Load(),
		Renders:   e.rendersMade.Load(),
		Mutations: e.mutationsMade.Load(),
		CRDParts:  e.crdPartsMade.Load(),
	}
}

// typed is obj, an object of the kind the document names, with its typed
// parts as Kubeflow's controller reads them (k8s/typed.go).
func (e *Engine) typed(doc Document, obj map[string]any) map[string]any {
	parts := e.decl.TypedParts[doc.APIVersion()][doc.Kind()]
	if len(parts) == 0 || obj == nil {
		return obj
	}
	return k8s.TypedView(obj, parts)
}

// loadBuiltin reads the shipped runtimes out of the runtimes package.
// A policy directory may add runtimes too, under the same field of package
// schemas; one of the name of a shipped runtime replaces it.
func (e *Engine) loadBuiltin(c *compiled) error {
	byName := map[string]Document{}
	var problems []Problem
	// A runtime that exists from the start is of a cluster-wide runtime
	// kind: the load has no namespace for another.
	var clusterWide []string
	for _, key := range value.SortedKeys(e.decl.RuntimeKinds) {
		if k := e.decl.RuntimeKinds[key]; !k.Namespaced {
			clusterWide = append(clusterWide, k.Kind)
		}
	}
	for i, pkg := range []cue.Value{c.Runtimes, c.Schemas} {
		v := pkg.LookupPath(contract.PathClusterTrainingRuntimes)
		if !v.Exists() {
			continue
		}
		it, err := v.Fields()
		if err != nil {
			return loadError(e.loadSummary(), e.src.CUEProblems(err))
		}
		for it.Next() {
			doc, err := k8s.DocumentFromValue(e.src, it.Value(), "")
			if err != nil {
				// A runtime is an object: every field has its value.
				if verr := it.Value().Validate(cue.Concrete(true)); verr != nil {
					err = verr
				}
				for _, p := range e.src.CUEProblems(err) {
					p.Message += "\n    (a runtime declared in CUE is an object, as in YAML: give every field its value)"
					problems = append(problems, p)
				}
				continue
			}
			if i == 1 && doc.Kind() != "" && !slices.Contains(clusterWide, doc.Kind()) {
				problems = append(problems, Problem{File: doc.File, Line: doc.LineOf("kind"), Message: fmt.Sprintf("%s: %q is a %s, which belongs to a namespace: a runtime declared in CUE exists from the start, cluster-wide, as a %s", contract.FieldClusterTrainingRuntimes, doc.Name(), doc.Kind(), strings.Join(clusterWide, " or "))})
				continue
			}
			byName[doc.Name()] = doc
			if i == 1 {
				e.declared[doc.Name()] = true
			}
		}
	}
	if err := loadError(e.loadSummary(), problems); err != nil {
		return err
	}
	for _, name := range value.SortedKeys(byName) {
		e.builtin = append(e.builtin, byName[name])
	}
	return nil
}

// Builtin returns the shipped runtimes and those the policies declare, as
// authored.
func (e *Engine) Builtin() []Document { return e.builtin }

// Declared reports whether a policy declares the runtime of that name
// (rather than cuetrainer shipping it).
func (e *Engine) Declared(name string) bool { return e.declared[name] }

// loadSummary says what does not load: an admin's policy, or (a defect of
// cuetrainer's) the embedded CUE.
func (e *Engine) loadSummary() string {
	if len(e.policyFiles) > 0 {
		return "the policy does not load"
	}
	return "the embedded CUE does not load"
}

// cueError words a CUE error with the positions of its CUE sources.
func (e *Engine) cueError(what string, err error) error {
	return fmt.Errorf("%s: %s", what, e.Details(err))
}

// Details prints a CUE error the way the cue command does, with the file
// names a user knows.
func (e *Engine) Details(err error) string { return e.src.Details(err) }

// Kind names a kind by apiVersion and kind.
type Kind struct{ APIVersion, Kind string }

// Admitted returns the kinds the engine admits (has a review for), sorted.
func (e *Engine) Admitted() []Kind {
	var out []Kind
	reviews := e.cur.Load().Reviews
	for _, av := range value.SortedKeys(reviews) {
		for _, k := range value.SortedKeys(reviews[av]) {
			out = append(out, Kind{av, k})
		}
	}
	return out
}

// Renders reports whether the engine renders objects of the kind.
func (e *Engine) Renders(k Kind) bool {
	_, ok := e.cur.Load().Renders[k.APIVersion][k.Kind]
	return ok
}

// Owned returns the kinds renders create, sorted.
func (e *Engine) Owned() []Kind {
	var out []Kind
	for _, av := range value.SortedKeys(e.decl.Owned) {
		for _, k := range value.SortedKeys(e.decl.Owned[av]) {
			out = append(out, Kind{av, k})
		}
	}
	return out
}

// Mutates reports whether the kind has a mutator (a mutating webhook).
func (e *Engine) Mutates(k Kind) bool {
	_, ok := e.cur.Load().Mutators[k.APIVersion][k.Kind]
	return ok
}

// Summarized returns the kinds whose review summarises them for listings (the
// runtimes), sorted.
func (e *Engine) Summarized() []Kind {
	var out []Kind
	for _, k := range e.Admitted() {
		if e.cur.Load().Reviews[k.APIVersion][k.Kind].LookupPath(contract.PathReviewSummary).Exists() {
			out = append(out, k)
		}
	}
	return out
}

// withoutServerManaged returns obj without the fields the API server manages
// (serverManaged), copying only the maps on their paths; obj is unchanged.
func (e *Engine) withoutServerManaged(obj map[string]any) map[string]any {
	for _, p := range e.decl.ServerManaged {
		obj = without(obj, p)
	}
	return obj
}

// without returns m without the field at path, sharing what is off the path.
func without(m map[string]any, path []string) map[string]any {
	v, ok := m[path[0]]
	if !ok {
		return m
	}
	var rest any
	if len(path) > 1 {
		sub, isMap := v.(map[string]any)
		if !isMap {
			return m
		}
		if rest = without(sub, path[1:]); len(rest.(map[string]any)) == len(sub) {
			return m // nothing to drop below
		}
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	if len(path) == 1 {
		delete(out, path[0])
	} else {
		out[path[0]] = rest
	}
	return out
}

// markerFile is the loader's name of the file of the policies' markers.
const markerFile = root + "/schemas/zz-policy-markers.cue"
