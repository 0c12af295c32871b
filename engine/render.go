package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/edit"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// Rendered is what rendering one admitted object gives: the objects to
// apply, sorted by apiVersion, kind and name, or the errors why not.
type Rendered struct {
	Objects  []map[string]any
	Errors   []Finding
	Warnings []Finding
	// Controller is what the controller does besides applying Objects.
	Controller ControllerDirectives

	// applyOrder is the indexes of Objects in the order to apply them.
	applyOrder []int
	// gens are the generators a deferred render did not run yet
	// (rendermemo.go): each is run on the caller's copy.
	gens []pendingGen
	// parts are the render parts the plan chose, in an observed render
	// (the load's trials: checkFollows).
	parts []string
	// defect is the panic that stopped the render, on the fallback too
	// (defect.go), whose finding is among Errors.
	defect *Defect
}

// pendingGen is a generator to run on the object of key (objectKey).
type pendingGen struct {
	object string
	g      edit.Generate
}

// InApplyOrder is the objects in the order a controller applies them: by
// the CUE's controller.applyPhase, then as Objects.
func (r Rendered) InApplyOrder() []map[string]any {
	if r.applyOrder == nil {
		return r.Objects
	}
	objs := make([]map[string]any, len(r.applyOrder))
	for i, j := range r.applyOrder {
		objs[i] = r.Objects[j]
	}
	return objs
}

// RenderOptions tell a render what exists already.
type RenderOptions struct {
	// Existing names the objects (by their id in the CUE's `objects`) that
	// exist in the cluster, so that rules that build an object only once
	// leave them alone.
	Existing []string

	// observer looks at the render's objects between its stages: the
	// load's trial renders have one (trialRenders), and every render
	// after the load none (renderObserver).
	observer renderObserver
}

// Render turns an admitted object into the objects a controller applies.
// A kind without a render gives nothing.
func (s *Session) Render(r Result, opts RenderOptions) Rendered {
	apiVersion, kind := r.Doc.APIVersion(), r.Doc.Kind()
	if s.e.fellBack(apiVersion, kind, sortRender) {
		return s.fallbackRender(r, opts)
	}
	out, d := s.tryRender(r, opts, s.e.cur.Load(), s.renderMemoized)
	if d == nil {
		return out
	}
	// CUE panicked: rendered again on the fallback, where the kind's
	// renders go from then on when it renders them (defect.go).
	out = s.fallbackRender(r, opts)
	if out.defect == nil {
		s.e.fallBack(apiVersion, kind, sortRender, d)
	}
	return out
}

// tryRender renders with render on c, or says how it panicked (the runtime
// replaced).
func (s *Session) tryRender(r Result, opts RenderOptions, c *compiled, render func(Result, RenderOptions) Rendered) (out Rendered, d *Defect) {
	defer func() {
		if p := recover(); p != nil {
			out, d = Rendered{}, s.e.recovered(p, "the render of "+tried(r), c)
		}
	}()
	return render(r, opts), nil
}

// fallbackRender renders on the fallback runtime, with none of the
// engine's optimisations; with a finding of PhaseDefect when it panics
// there too.
func (s *Session) fallbackRender(r Result, opts RenderOptions) Rendered {
	c, err := s.e.fallbackRuntime()
	var d *Defect
	var out Rendered
	if err != nil {
		d = &Defect{What: "the render of " + tried(r), Panic: "the fallback runtime does not compile: " + err.Error()}
	} else {
		pinned := *s
		pinned.pinned = c
		out, d = s.tryRender(r, opts, c, func(r Result, opts RenderOptions) Rendered {
			return pinned.checkBuiltMeta(pinned.renderOnce(r, opts, false))
		})
	}
	if d != nil {
		return Rendered{Errors: []Finding{defectFinding(d)}, defect: d}
	}
	return out
}

// renderMemoized renders with the engine's memos and carried values.
func (s *Session) renderMemoized(r Result, opts RenderOptions) Rendered {
	// A render kept under its inputs' identities (rendermemo.go), copied.
	key := s.renderKey(r, opts)
	if key != "" {
		if kept, ok := s.e.renderMemo.Get(key); ok {
			return s.checkBuiltMeta(kept.rendered())
		}
	}
	mode := carryNone
	if s.e.renderMemo != nil {
		mode = carryUnnamed
	}
	out := s.renderAlike(r, opts, mode)
	if key != "" {
		if kept, ok := keepRender(out); ok {
			s.e.renderMemo.Put(key, kept)
		}
	}
	return s.checkBuiltMeta(out)
}

// checkBuiltMeta finds, with a policy directory, the labels and
// annotations of the objects a render built, with the input's own values
// in them, that apimachinery refuses. The stages check the objects with
// the carried values as tokens (checkFit), which a policy's part may make
// labels of: "\(#name)-paddle-master" is a valid label of the token and
// one over 63 characters of a TrainJob's long name, which would make the
// JobSet's pods refused. Such a render fails for the input, with the
// object, the field and apimachinery's words, and builds nothing.
func (s *Session) checkBuiltMeta(out Rendered) Rendered {
	if !s.e.policyRenders || len(out.Errors) > 0 {
		return out
	}
	for _, obj := range out.Objects {
		d := Document{Object: obj}
		for _, e := range k8s.AllMetaErrors(obj, nil, nil) {
			out.Errors = append(out.Errors, Finding{Phase: contract.PhaseRender,
				Detail: fmt.Sprintf("the %s %s the policy's render builds of it would be refused: %s", d.Kind(), d.Name(), e.Error())})
		}
	}
	if len(out.Errors) > 0 {
		out.Objects, out.applyOrder = nil, nil
	}
	return out
}

// renderOnce renders with the opaque keys as tokens, and puts them back.
// With deferGens the generators are checked but not run (gens).
func (s *Session) renderOnce(r Result, opts RenderOptions, deferGens bool) Rendered {
	var a *k8s.KeyAliases
	out := s.render(r, opts, deferGens, &a)
	// Apart: the call sets a, which the receiver must be read after.
	out = restoreRendered(a, out)
	s.e.rendersMade.Add(1)
	return out
}

// render renders with the opaque keys as tokens (see k8s/aliases.go), and sets
// *aliases to the tokens it gave. It runs the stages below in order; each
// says whether the render goes on, and one that stops leaves its reason in
// the result's errors (or a controller's skip).
func (s *Session) render(r Result, opts RenderOptions, deferGens bool, aliases **k8s.KeyAliases) Rendered {
	c := s.runtime()
	renderer, ok := c.Renders[r.Doc.APIVersion()][r.Doc.Kind()]
	if !ok || r.Object == nil {
		return Rendered{}
	}
	s.e.begin("the render", r.Doc)
	rn := rendering{s: s, c: c, r: r, opts: opts, renderer: renderer, deferGens: deferGens,
		apiVersion: r.Doc.APIVersion(), kind: r.Doc.Kind(), runtime: r.runtime}
	defer rn.releasePlan()
	// The objects the render builds, by id (here, not in rn, so that the
	// map stays on the stack).
	objects := map[string]map[string]any{}
	_ = rn.mergeTemplate() &&
		rn.plan(aliases) &&
		rn.evaluate() &&
		rn.decodeOutputs() &&
		rn.buildObjects(objects) &&
		rn.applyEdits(objects) &&
		rn.edited(objects) &&
		rn.checkFit(objects) &&
		rn.fitted(objects) &&
		rn.checkIdentities(objects) &&
		rn.runGenerators(objects) &&
		rn.finish(objects)
	return rn.out
}

// A renderObserver looks at a render's objects between its stages: the
// load's trial renders have one (trialRenders, trialrender.go), which
// checks what only an admin's CUE can get wrong and a render after the
// load need not pay for. A render with an observer (RenderOptions) also
// evaluates the kind's renderChecks, keeps the parts the plan chose
// (Rendered.parts), and is neither taken from the render memo nor kept
// in it. Each method says whether the render goes on; one that stops it
// leaves its reason in the render's errors.
type renderObserver interface {
	// edited is shown the objects once the edits are made (applyEdits).
	edited(rn *rendering, objects map[string]map[string]any) bool
	// fitted is shown them once they fit their kinds (checkFit).
	fitted(rn *rendering, objects map[string]map[string]any) bool
}

// edited and fitted show the objects to the render's observer, if any.
func (rn *rendering) edited(objects map[string]map[string]any) bool {
	return rn.opts.observer == nil || rn.observe(objects, renderObserver.edited)
}

func (rn *rendering) fitted(objects map[string]map[string]any) bool {
	return rn.opts.observer == nil || rn.observe(objects, renderObserver.fitted)
}

// observe shows the observer a copy of the render and of its map of
// objects, and takes back what the copy's stages wrote (its errors): what
// an interface's method is given escapes to the heap, and a render
// without an observer keeps both on the stack.
func (rn *rendering) observe(objects map[string]map[string]any, stage func(renderObserver, *rendering, map[string]map[string]any) bool) bool {
	shown, shownObjects := *rn, make(map[string]map[string]any, len(objects))
	for id, obj := range objects {
		shownObjects[id] = obj
	}
	ok := stage(rn.opts.observer, &shown, shownObjects)
	rn.out = shown.out
	return ok
}

// rendering is one render under way: what its stages hand on.
type rendering struct {
	s                *Session
	c                *compiled
	r                Result
	opts             RenderOptions
	deferGens        bool
	apiVersion, kind string
	runtime          *stored
	// renderer is the kind's render, with the parts the plan names.
	renderer cue.Value

	// object and runtimeObject are the input and its runtime with their
	// typed parts as Kubeflow's controller reads them (k8s/typed.go).
	object, runtimeObject map[string]any
	// facts are the values whose quantities the CUE is told; merged the
	// strategic merges (aliased once the plan gave the tokens).
	facts  []any
	merged map[string]any
	// p is the runtime's plan, pv the value acquired from it (acquired
	// until released); planErr the plan's error, reported after the
	// controller's directives are read.
	p        *plan
	pv       cue.Value
	acquired bool
	planErr  error
	a        *k8s.KeyAliases
	// runtimeAliased is the runtime's object with the plan's tokens.
	runtimeAliased any

	// rv is the evaluated render, do what it tells the engine to do.
	rv cue.Value
	do outputs

	out Rendered
}

// fail stops the render with an internal error: CUE the engine could not
// read, or an edit it rejects.
func (rn *rendering) fail(what string, err error) bool {
	detail := rn.s.e.src.Details(err)
	if detail == "" {
		detail = err.Error() // not a CUE error: an edit the engine rejects
	}
	rn.out.Errors = append(rn.out.Errors, Finding{Phase: contract.PhaseRender, Type: "Internal error", Detail: fmt.Sprintf("rendering %s: %s", what, detail)})
	return false
}

// defect reports CUE output the engine cannot carry out (an edit with an
// unknown op, an object that does not decode): a defect of the rule that
// wrote it, at its place in the CUE (in the render, else in the plan).
func (rn *rendering) defect(rule string, at cue.Path, format string, args ...any) {
	f := Finding{Phase: contract.PhaseRuleError, Rule: rule, Detail: fmt.Sprintf(format, args...)}
	for _, v := range []cue.Value{rn.rv, rn.pv} {
		if f.Source = rn.s.e.src.SourceOf(v.LookupPath(at)); f.Source != "" {
			break
		}
	}
	rn.out.Errors = append(rn.out.Errors, f)
}

// undeclared reports what of the render's (an edit, a generator, a sum)
// names an object no render declares: the render skips it as it skips
// those of objects built once, but it would never be made. An id computed
// by the CUE escapes the load's checks of literal ids; this is where it is
// caught (at the load, when a probe's trial render makes it). Without
// the ids of every render (see core.renderObjects) it says nothing.
func (rn *rendering) undeclared(rule string, at cue.Path, what, id string) {
	ids := rn.s.e.renderObjects
	if ids == nil || slices.Contains(ids, id) {
		return
	}
	msg := fmt.Sprintf("%s names the object %q, which no render builds (%s), so it would never be made", what, id, strings.Join(ids, ", "))
	if sug := source.Suggest(id, ids); sug != "" {
		msg += fmt.Sprintf(": did you mean %s?", sug)
	}
	rn.defect(rule, at, "%s", msg)
}

// mergeTemplate makes the kind's strategic merges (merges in the CUE): the
// runtime's value at each base, patched by the input's values.
func (rn *rendering) mergeTemplate() bool {
	// What Kubeflow's controller reads of both (k8s/typed.go).
	rn.object = rn.s.e.typed(rn.r.Doc, rn.r.Object)
	if rn.runtime != nil {
		rn.runtimeObject = rn.runtime.typed(rn.s.e)
	}
	rn.facts = []any{rn.object}
	if rn.runtime != nil {
		rn.facts = append(rn.facts, rn.runtimeObject)
	}
	merges := rn.s.e.decl.Merges[rn.apiVersion][rn.kind]
	rn.merged = map[string]any{}
	for _, name := range value.SortedKeys(merges) {
		v, err := k8s.MergeInto(merges[name], rn.object, rn.runtimeObject)
		if err != nil {
			rn.out.Errors = append(rn.out.Errors, Finding{Phase: contract.PhaseRender, Type: "Internal error", Detail: fmt.Sprintf("merging %s: %v", name, err)})
			return false
		}
		rn.merged[name] = v
		rn.facts = append(rn.facts, v)
	}
	return true
}

// plan finds the runtime's plan (plan.go: evaluated once per runtime) and
// takes its tokens for the opaque keys, which it sets in *aliases; the
// render's parts are the ones the plan names.
func (rn *rendering) plan(aliases **k8s.KeyAliases) bool {
	rn.p = rn.s.planFor(rn.c, rn.apiVersion, rn.kind, rn.runtime, rn.object, rn.merged)
	if rn.p != nil {
		rn.a = rn.s.e.decl.Opaque.Aliases(rn.p.aliases)
	} else {
		rn.a = rn.s.e.decl.Opaque.Aliases(nil)
	}
	*aliases = rn.a
	if rn.p != nil && rn.p.err != nil {
		// The controller's directives may still apply (an unsupported
		// runtime kind fails the TrainJob): the render goes on without the
		// plan, and fails after reading them.
		rn.planErr, rn.p = rn.p.err, nil
	}
	rn.merged = rn.a.Alias(rn.merged).(map[string]any)
	var parts []string
	if rn.p != nil {
		parts = rn.p.out.parts
	}
	observed := rn.opts.observer != nil
	if observed {
		rn.out.parts = parts // the load's alone: a render memo keeps none
	}
	if len(parts) > 0 || rn.s.opts.Controller || observed {
		var err error
		if rn.renderer, err = rn.c.combine(rn.apiVersion, rn.kind, rn.renderer, parts, rn.s.opts.Controller, observed); err != nil {
			return rn.fail("the parts", err)
		}
	}
	return true
}

// releasePlan gives the plan's value back, once the render is done with it.
func (rn *rendering) releasePlan() {
	if rn.acquired {
		rn.p.values.Release(rn.pv)
	}
}

// evaluate unifies the render with the input and its context: the plan,
// evaluated once per runtime, and the runtime and merges as the plan holds
// them, shared rather than evaluated again. A controller's render stops
// here when its directives skip the object.
func (rn *rendering) evaluate() bool {
	existing := map[string]any{}
	for _, id := range rn.opts.Existing {
		existing[id] = map[string]any{}
	}
	for id, obj := range rn.r.existingRead {
		existing[id] = rn.a.Alias(obj)
	}
	cctx := map[string]any{contract.FieldMerged: rn.merged, contract.FieldQuantities: k8s.Quantities(rn.facts...), contract.FieldExisting: existing}
	if rn.runtime != nil {
		rn.runtimeAliased = rn.a.Alias(rn.runtimeObject)
		cctx[contract.FieldRuntime] = rn.runtimeAliased
	}
	if rn.p != nil {
		rn.pv, rn.acquired = rn.p.values.Acquire(), true
		cctx[contract.FieldPlan] = rn.pv
		if rn.runtime != nil {
			cctx[contract.FieldRuntime] = rn.pv.LookupPath(contract.PathPlanRuntime)
		}
		cctx[contract.FieldMerged] = rn.pv.LookupPath(contract.PathPlanMerged)
	}
	rn.rv = rn.renderer.Unify(rn.c.Ctx.Encode(map[string]any{contract.FieldInput: rn.a.Alias(rn.object), contract.FieldContext: cctx}))
	if rn.s.opts.Controller {
		var d ControllerDirectives // decoded apart: rn stays on the stack
		if err := value.DecodeJSON(rn.rv.LookupPath(contract.PathController), &d); err != nil {
			return rn.fail("controller", err)
		}
		rn.out.Controller = d
		if rn.out.Controller.Skip != "" {
			return false
		}
	}
	if rn.planErr != nil {
		return rn.fail("the plan", rn.planErr)
	}
	return true
}

// decodeOutputs reads what the render tells the engine to do (outputs.go),
// with the plan's part of it; the render's errors stop it here.
func (rn *rendering) decodeOutputs() bool {
	do, err := rn.s.e.decodeOutputs(rn.rv, false)
	if err != nil {
		rule := strings.ReplaceAll(err.what, " ", ".")
		rn.defect(rule, cue.ParsePath(rule), "%s does not decode: %s", rule, rn.s.e.src.Details(err.err))
		// A policy's value that breaks a shipped rule: the admin's line.
		if src := rn.s.e.src.PolicySource(err.err); src != "" {
			rn.out.Errors[len(rn.out.Errors)-1].Source = src
		}
		return false
	}
	if rn.p != nil {
		if err := do.resolve(rn.p.out.ops); err != nil {
			rn.defect("edits", contract.PathEdits, "%v", err)
			return false
		}
		do = rn.p.out.copy().add(do)
	}
	rn.do = do
	rn.out.Errors, rn.out.Warnings = do.errors, do.warnings
	return len(rn.out.Errors) == 0
}

// buildObjects decodes the objects the render builds, fills them in from
// the plan's skeletons and gives them the metadata every object gets, then
// copies the bases (a runtime's or a merge's values) into them.
func (rn *rendering) buildObjects(objects map[string]map[string]any) bool {
	it, ferr := rn.rv.LookupPath(contract.PathObjects).Fields()
	if ferr != nil {
		return rn.fail("objects", ferr)
	}
	for it.Next() {
		var obj map[string]any
		if err := value.DecodeJSON(it.Value(), &obj); err != nil {
			rn.defect("objects."+it.Selector().String(), cue.MakePath(contract.SelObjects, it.Selector()), "the object does not decode: %s", rn.s.e.src.Details(err))
			return false
		}
		id := it.Selector().Unquoted()
		if rn.p != nil {
			if skeleton, ok := rn.p.out.objects[id]; ok {
				obj = value.FillIn(obj, skeleton)
			}
		}
		if len(rn.do.metadata) > 0 {
			md, _ := obj["metadata"].(map[string]any)
			if md == nil {
				md = map[string]any{}
				obj["metadata"] = md
			}
			for k, v := range rn.do.metadata {
				if _, ok := md[k]; !ok {
					md[k] = value.Numbers(value.DeepCopy(v))
				}
			}
		}
		objects[id] = obj
	}
	// What a base may copy: the merges and the runtime, aliased.
	from := map[string]any{contract.FieldMerged: rn.merged}
	if rn.runtime != nil {
		from[contract.FieldRuntime] = rn.runtimeAliased
	}
	for _, id := range value.SortedKeys(rn.do.bases) {
		b := rn.do.bases[id]
		obj, ok := objects[id]
		if !ok || len(b.Path) == 0 {
			continue
		}
		m, err := edit.MapAt(obj, b.Path[:len(b.Path)-1])
		if err != nil {
			return rn.fail("bases", err)
		}
		m[b.Path[len(b.Path)-1]] = value.Numbers(value.DeepCopy(value.At(from, b.From)))
	}
	return true
}

// applyEdits carries out the render's edits (edit/edits.go), group by group in
// their order.
func (rn *rendering) applyEdits(objects map[string]map[string]any) bool {
	groups := rn.do.groups
	sort.SliceStable(groups, func(i, j int) bool {
		if groups[i].Order != groups[j].Order {
			return groups[i].Order < groups[j].Order
		}
		return groups[i].Name < groups[j].Name
	})
	for _, g := range groups {
		for _, e := range g.Ops {
			if e.Object == "" {
				rn.defect("edits."+g.Name, cue.MakePath(contract.SelEdits, cue.Str(g.Name)), "edit %s: an edit names the object it edits (object: the id of one of the render's objects)", g.Name)
				continue
			}
			obj, ok := objects[e.Object]
			if !ok {
				// An edit of an object this render does not build (one
				// built once), unless no render builds it.
				rn.undeclared("edits."+g.Name, cue.MakePath(contract.SelEdits, cue.Str(g.Name)), "edit "+g.Name, e.Object)
				continue
			}
			if err := e.Apply(obj); err != nil {
				rn.defect("edits."+g.Name, cue.MakePath(contract.SelEdits, cue.Str(g.Name)), "edit %s of %s: %v", g.Name, e.Object, err)
			}
		}
	}
	return true
}

// checkIdentities checks that each object the render builds has a name,
// and is in the namespace of the object it is owned by: the API server
// refuses an object without a name, and an owner reference does not
// cross namespaces (the garbage collector would delete the object).
func (rn *rendering) checkIdentities(objects map[string]map[string]any) bool {
	ok := true
	namespace := k8s.Str(rn.do.metadata["namespace"])
	for _, id := range value.SortedKeys(objects) {
		md := k8s.Meta(objects[id])
		at := cue.MakePath(contract.SelObjects, cue.Str(id))
		switch own := k8s.Str(md["namespace"]); {
		case k8s.Str(md["name"]) == "":
			rn.defect("objects."+id, at, "the object %s has no metadata.name, which the API server requires", id)
			ok = false
		case namespace != "" && own != namespace && md["ownerReferences"] != nil:
			rn.defect("objects."+id, at, "the object %s is in namespace %q, and owned by an object of namespace %q: an owner reference does not cross namespaces, so the garbage collector would delete it", id, own, namespace)
			ok = false
		}
	}
	return ok
}

// runGenerators runs what the CUE cannot compute (edit/generate.go), then the
// sums of quantities; a defect in any stops the render.
func (rn *rendering) runGenerators(objects map[string]map[string]any) bool {
	source := yamlOf(rn.s.e, rn.runtime)
	for _, id := range value.SortedKeys(rn.do.generate) {
		obj, ok := objects[id]
		if !ok {
			rn.undeclared("generate."+id, cue.MakePath(contract.SelGenerate, cue.Str(id)), "a generator", id)
			continue
		}
		for _, g := range rn.do.generate[id] {
			if rn.deferGens {
				if err := g.Check(obj, source); err != nil {
					rn.defect("generate."+id, cue.MakePath(contract.SelGenerate, cue.Str(id)), "generating %s: %v", id, err)
				}
				rn.out.gens = append(rn.out.gens, pendingGen{object: objectKey(obj), g: g})
				continue
			}
			if err := g.Run(obj, source); err != nil {
				rn.defect("generate."+id, cue.MakePath(contract.SelGenerate, cue.Str(id)), "generating %s: %v", id, err)
			}
		}
	}
	for _, sum := range rn.do.sums {
		obj, ok := objects[sum.Object]
		if !ok {
			rn.undeclared("sums", cue.MakePath(contract.SelSums), "a sum", sum.Object)
			continue
		}
		if err := sum.Apply(obj); err != nil {
			rn.defect("sums", cue.MakePath(contract.SelSums), "summing quantities of %s: %v", sum.Object, err)
		}
	}
	return len(rn.out.Errors) == 0
}

// yamlOf gives a context entry as YAML to a generator: the runtime only.
func yamlOf(e *core, runtime *stored) edit.YAMLSource {
	return func(name string) (string, error) {
		if name != contract.FieldRuntime || runtime == nil {
			return "", fmt.Errorf("no context entry %q to write as YAML", name)
		}
		return runtime.yaml(e)
	}
}

// finish writes the objects' quantities in canonical form and sorts them,
// with the order a controller applies them in.
func (rn *rendering) finish(objects map[string]map[string]any) bool {
	out := &rn.out
	phaseOf := make(map[string]int, len(objects))
	for id, obj := range objects {
		k8s.Canonicalize(obj)
		out.Objects = append(out.Objects, obj)
		phaseOf[objectKey(obj)] = out.Controller.ApplyPhase[id]
	}
	SortObjects(out.Objects)
	if len(out.Controller.ApplyPhase) > 0 {
		out.applyOrder = make([]int, len(out.Objects))
		for i := range out.applyOrder {
			out.applyOrder[i] = i
		}
		sort.SliceStable(out.applyOrder, func(i, j int) bool {
			return phaseOf[objectKey(out.Objects[out.applyOrder[i]])] < phaseOf[objectKey(out.Objects[out.applyOrder[j]])]
		})
	}
	return true
}

// SortObjects orders objects by apiVersion, kind, namespace and name.
func SortObjects(objs []map[string]any) {
	sort.SliceStable(objs, func(i, j int) bool { return objectKey(objs[i]) < objectKey(objs[j]) })
}

// objectKey identifies an object by apiVersion, kind, namespace and name.
func objectKey(o map[string]any) string {
	return strings.Join([]string{k8s.Str(o["apiVersion"]), k8s.Str(o["kind"]), k8s.Str(k8s.Meta(o)["namespace"]), k8s.Str(k8s.Meta(o)["name"])}, "\x00")
}

// restoreRendered puts back the tokens in a render's objects, findings and
// controller directives.
func restoreRendered(a *k8s.KeyAliases, out Rendered) Rendered {
	if a.Empty() {
		return out
	}
	for i, obj := range out.Objects {
		out.Objects[i], _ = a.Restore(obj).(map[string]any)
	}
	out.Errors = a.RestoreFindings(out.Errors)
	out.Warnings = a.RestoreFindings(out.Warnings)
	d := &out.Controller
	d.Skip = a.RestoreString(d.Skip)
	restoreConditions := func(cs []Condition) {
		for i := range cs {
			cs[i].Message = a.RestoreString(cs[i].Message)
			cs[i].Reason = a.RestoreString(cs[i].Reason)
		}
	}
	restoreConditions(d.Status.Conditions)
	if d.Status.Fields != nil {
		d.Status.Fields, _ = a.Restore(d.Status.Fields).(map[string]any)
	}
	if d.Deadline != nil {
		restoreConditions(d.Deadline.Conditions)
	}
	return out
}
