package engine

import (
	"fmt"
	"sync"
	"sync/atomic"

	"cuelang.org/go/cue/cuecontext"

	"github.com/cuetrainer/cuetrainer/engine/internal/cache"
	"github.com/cuetrainer/cuetrainer/engine/internal/crd"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/load"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// core is what serving reads and keeps: the compiled CUE in force, the
// declarations decoded from it, the shipped runtimes admitted, and the
// memos and caches every session of the engine shares. Sessions, their
// reviews, mutations and renders (the files of layers 4 and 5 in
// docs/engine.md) reach the core alone, never the load's state
// (TestServingReachesTheCoreAlone): what the load made them, the core
// holds; what the load does while they evaluate (its guard, a fresh
// compilation), it hands the core as a function.
//
// After recycleAfter evaluations the core compiles its CUE afresh into a
// new runtime, and swaps it in; evaluations under way finish on the old.
// That bounds what a CUE runtime keeps per evaluation. CUE's table of
// labels belongs to the process, not to a runtime: opaque keys
// (k8s/aliases.go) keep it from growing with the objects' label keys.
type core struct {
	cur          atomic.Pointer[compiled]
	recycleAfter int64
	planCacheMax int
	rebuilding   atomic.Bool
	// recompile compiles the loaded CUE into a fresh runtime, as the load
	// did (Engine.compile): for recycling and for replacing a runtime that
	// panicked.
	recompile func(opts ...cuecontext.Option) (*compiled, error)
	// guard is the load's, while it runs (stall.go): each evaluation
	// begins under it.
	guard atomic.Pointer[evalGuard]
	// recycled counts the swaps, for metrics and tests; defects the panics
	// recovered (defect.go).
	recycled atomic.Int64
	defects  atomic.Int64
	// fallbackState holds the runtime evaluations that panicked go to.
	fallbackState

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
	// policyRenders says the admin's files are loaded: their renders'
	// objects are checked against their kinds and apimachinery's checks of
	// metadata (fit.go, checkBuiltMeta), which the tests keep the embedded
	// CUE's renders to.
	policyRenders bool
	// builtin are the shipped runtimes and those policies declare, as
	// authored, in name order; builtinByRelease the same admitted, per
	// release vetted for, and builtinReported those the rules find fault
	// with or warn of (BuiltinFindings).
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

// compiled returns the CUE runtime to evaluate one object with, and
// starts a fresh one when this one has served its share.
func (e *core) compiled() *compiled {
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
			if fresh, err := e.recompile(); err == nil {
				e.cur.CompareAndSwap(c, fresh)
				e.recycled.Add(1)
			}
		}()
	}
	return c
}

// Evaluations count what the engine evaluated, not what its memos served:
// the reviews, the lookups, the renders, the mutators' edits and the CRD
// check parts. With the requests answered they give the memos' hits.
type Evaluations struct {
	Reviews, Lookups, Renders, Mutations, CRDParts int64
}

// typed is obj, an object of the kind the document names, with its typed
// parts as Kubeflow's controller reads them (k8s/typed.go).
func (e *core) typed(doc Document, obj map[string]any) map[string]any {
	parts := e.decl.TypedParts[doc.APIVersion()][doc.Kind()]
	if len(parts) == 0 || obj == nil {
		return obj
	}
	return k8s.TypedView(obj, parts)
}

// cueError words a CUE error with the positions of its CUE sources.
func (e *core) cueError(what string, err error) error {
	return fmt.Errorf("%s: %s", what, e.src.Details(err))
}

// Kind names a kind by apiVersion and kind.
type Kind struct{ APIVersion, Kind string }

// withoutServerManaged returns obj without the fields the API server manages
// (serverManaged), copying only the maps on their paths; obj is unchanged.
func (e *core) withoutServerManaged(obj map[string]any) map[string]any {
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

// crdSchema is the openAPIV3Schema of the kind's CRD, nil when it has none
// (crd.Schemas).
func (e *core) crdSchema(apiVersion, kind string) map[string]any {
	return e.schemas.Of(e.cur.Load().Schemas, apiVersion, kind)
}
