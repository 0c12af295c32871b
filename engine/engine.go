// Package engine evaluates cuetrainer's CUE: it loads the embedded schemas and
// runtimes and an admin's policy directories once, then admits objects, one
// CUE unification per object. It knows no framework and no rule: the CUE
// declares the kinds it admits, the rules, and the lookups it needs.
package engine

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"slices"
	"sort"
	"strings"
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
// An Engine is a load's outcome around its serving core (core.go): the
// load compiles the CUE, checks the admin's files and tries their rules
// (probe.go), and keeps here what only it reads; sessions, their reviews
// and renders reach the core alone.
type Engine struct {
	*core
	instances []*build.Instance
	// trialCacheDir keeps the trials' outcomes across processes
	// (keptrials.go).
	trialCacheDir string
	// evalLimit is the work each of the load's evaluations may take
	// (stall.go).
	evalLimit time.Duration
	// warnings are the load's (Warnings).
	warnings []Problem
	// sources are the loaded files, by the loader's names: a variant of
	// the policy compiles from them (defect.go's culprits).
	sources map[string][]byte

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

// New loads and compiles the CUE. A broken CUE file fails here, with its
// file, line and column.
func New(opts Options) (_ *Engine, err error) {
	e := &Engine{core: &core{src: source.NewFiles(), declared: map[string]bool{}, recycleAfter: int64(opts.RecycleAfter), planCacheMax: opts.PlanCacheSize,
		pinnedCopies:  cache.NewLRU[map[string]any](pinnedCopiesSize),
		existingCache: cache.NewLRU[*stored](existingCacheSize),
		reviewCache:   cache.NewLRU[*cachedReview](reviewCacheSize)},
		policyFiles: map[string]*policyFile{}, policyPaths: map[string]bool{}, trialCacheDir: opts.TrialCacheDir, evalLimit: evalLimit}
	e.recompile = e.compile
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
	e.policyRenders = len(e.policyFiles) > 0
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
		e.warnings = append(e.warnings, r.Warnings...)
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
					p.Check = checks.DeclaredRuntime.Name
					problems = append(problems, p)
				}
				continue
			}
			if i == 1 && doc.Kind() != "" && !slices.Contains(clusterWide, doc.Kind()) {
				problems = append(problems, Problem{Check: checks.DeclaredRuntime.Name, File: doc.File, Line: doc.LineOf("kind"), Message: fmt.Sprintf("%s: %q is a %s, which belongs to a namespace: a runtime declared in CUE exists from the start, cluster-wide, as a %s", contract.FieldClusterTrainingRuntimes, doc.Name(), doc.Kind(), strings.Join(clusterWide, " or "))})
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

// Details prints a CUE error the way the cue command does, with the file
// names a user knows.
func (e *Engine) Details(err error) string { return e.src.Details(err) }

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

// markerFile is the loader's name of the file of the policies' markers.
const markerFile = root + "/schemas/zz-policy-markers.cue"

// NewSession starts an empty cluster, holding the shipped runtimes unless
// told otherwise.
func (e *Engine) NewSession(opts SessionOptions) *Session { return e.core.newSession(opts) }

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

// Recycled reports how many times the engine swapped in a fresh CUE runtime.
func (e *Engine) Recycled() int64 { return e.recycled.Load() }

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
