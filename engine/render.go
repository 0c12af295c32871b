package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// patchSchemas are the Go types whose strategic-merge metadata a merge of
// the CUE (see `merges`) may name.
var patchSchemas = map[string]any{
	"jobset.x-k8s.io/v1alpha2.JobSetSpec": jobsetv1alpha2.JobSetSpec{},
}

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

// ControllerDirectives are the CUE's `controller` of a render.
type ControllerDirectives struct {
	// Skip says why the controller applies nothing; a controller's session
	// then renders no objects.
	Skip string `json:"skip,omitempty"`
	// ApplyPhase orders the objects to apply by their ids: lower first.
	ApplyPhase map[string]int `json:"applyPhase,omitempty"`
	Status     struct {
		// Conditions to set, by type.
		Conditions []Condition `json:"conditions"`
		// Fields of the status to set.
		Fields map[string]any `json:"fields"`
	} `json:"status"`
	// Deadline, when set, fails the object at a time.
	Deadline *Deadline `json:"deadline,omitempty"`
}

// Deadline is the CUE's controller.deadline: Seconds after Since (a time,
// or "now"), set Conditions and delete Delete.
type Deadline struct {
	Since      string      `json:"since"`
	Seconds    int64       `json:"seconds"`
	Conditions []Condition `json:"conditions"`
	Delete     []struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Name       string `json:"name"`
	} `json:"delete"`
}

// Condition is a status condition to set (#ConditionUpdate); an empty
// LastTransitionTime means now when the status changes.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// RenderOptions tell a render what exists already.
type RenderOptions struct {
	// Existing names the objects (by their id in the CUE's `objects`) that
	// exist in the cluster, so that rules that build an object only once
	// leave them alone.
	Existing []string
}

// merge is one strategic merge a render needs (#merges in the CUE).
type merge struct {
	Base      []string
	Patches   []string
	Schema    string
	KeepOrder []string
}

// Render turns an admitted object into the objects a controller applies.
// A kind without a render gives nothing.
func (s *Session) Render(r Result, opts RenderOptions) Rendered {
	var a *keyAliases
	out := s.render(r, opts, &a)
	return a.restoreRendered(out)
}

// render renders with the opaque keys as tokens (see aliases.go), and sets
// *aliases to the tokens it gave.
func (s *Session) render(r Result, opts RenderOptions, aliases **keyAliases) Rendered {
	var out Rendered
	apiVersion, kind := r.Doc.APIVersion(), r.Doc.Kind()
	c := s.e.compiled()
	renderer, ok := c.renders[apiVersion][kind]
	if !ok || r.Object == nil {
		return out
	}
	fail := func(what string, err error) Rendered {
		detail := s.e.Details(err)
		if detail == "" {
			detail = err.Error() // not a CUE error: an edit the engine rejects
		}
		out.Errors = append(out.Errors, Finding{Phase: PhaseRender, Type: "Internal error", Detail: fmt.Sprintf("rendering %s: %s", what, detail)})
		return out
	}
	// rv is the render, with the TrainJob; pv its plan, when it has one.
	var rv, pv cue.Value
	// defect reports CUE output the engine cannot carry out (an edit with
	// an unknown op, an object that does not decode): a defect of the
	// rule that wrote it, at its place in the CUE (in the render, else in
	// the plan).
	defect := func(rule string, at cue.Path, format string, args ...any) {
		f := Finding{Phase: PhaseRuleError, Rule: rule, Detail: fmt.Sprintf(format, args...)}
		for _, v := range []cue.Value{rv, pv} {
			if f.Source = s.e.sourceOf(v.LookupPath(at)); f.Source != "" {
				break
			}
		}
		out.Errors = append(out.Errors, f)
	}
	ctx := map[string]any{}
	facts := []any{r.Object}
	runtime := r.runtime
	if runtime != nil {
		facts = append(facts, runtime.doc.Object)
	}
	merged := map[string]any{}
	for _, name := range sortedKeys(s.e.merges[apiVersion][kind]) {
		m := s.e.merges[apiVersion][kind][name]
		var base any
		if runtime != nil {
			base = at(runtime.doc.Object, m.Base)
		}
		v, err := strategicMerge(base, collect(r.Object, m.Patches), m)
		if err != nil {
			out.Errors = append(out.Errors, Finding{Phase: PhaseRender, Type: "Internal error", Detail: fmt.Sprintf("merging %s: %v", name, err)})
			return out
		}
		merged[name] = v
		facts = append(facts, v)
	}
	p := s.planFor(c, apiVersion, kind, runtime, r.Object, merged)
	// The opaque keys the plan gave tokens keep them.
	var a *keyAliases
	if p != nil {
		a = s.e.opaque.aliases(p.aliases)
	} else {
		a = s.e.opaque.aliases(nil)
	}
	*aliases = a
	var planErr error
	if p != nil && p.err != nil {
		// The controller's directives may still apply (an unsupported
		// runtime kind fails the TrainJob): the render goes on without the
		// plan, and fails after reading them.
		planErr, p = p.err, nil
	}
	merged = a.alias(merged).(map[string]any)
	ctx[fieldMerged] = merged
	existing := map[string]any{}
	for _, id := range opts.Existing {
		existing[id] = map[string]any{}
	}
	for id, obj := range r.existing {
		existing[id] = a.alias(obj)
	}
	// The CUE's context: the plan, evaluated once per runtime, and the
	// runtime and merges as the plan holds them, shared rather than
	// evaluated again.
	cctx := map[string]any{fieldMerged: merged, fieldQuantities: quantities(facts...), fieldExisting: existing}
	if runtime != nil {
		ctx[fieldRuntime] = a.alias(runtime.doc.Object)
		cctx[fieldRuntime] = ctx[fieldRuntime]
	}
	if p != nil {
		pv = p.acquire()
		defer p.release(pv)
		cctx[fieldPlan] = pv
		if runtime != nil {
			cctx[fieldRuntime] = pv.LookupPath(pathPlanRuntime)
		}
		cctx[fieldMerged] = pv.LookupPath(pathPlanMerged)
	}

	var parts []string
	if p != nil {
		parts = p.out.parts
	}
	if len(parts) > 0 || s.opts.Controller {
		var err error
		if renderer, err = c.combine(apiVersion, kind, renderer, parts, s.opts.Controller); err != nil {
			return fail("the parts", err)
		}
	}
	rv = renderer.Unify(c.ctx.Encode(map[string]any{fieldInput: a.alias(r.Object), fieldContext: cctx}))
	if s.opts.Controller {
		if err := decodeJSON(rv.LookupPath(pathController), &out.Controller); err != nil {
			return fail("controller", err)
		}
		if out.Controller.Skip != "" {
			return out
		}
	}
	if planErr != nil {
		return fail("the plan", planErr)
	}
	do, err := s.e.decodeOutputs(rv, false)
	if err != nil {
		rule := strings.ReplaceAll(err.what, " ", ".")
		defect(rule, cue.ParsePath(rule), "%s does not decode: %s", rule, s.e.Details(err.err))
		return out
	}
	if p != nil {
		if err := do.resolve(p.out.ops); err != nil {
			defect("edits", pathEdits, "%v", err)
			return out
		}
		do = p.out.copy().add(do)
	}
	out.Errors, out.Warnings = do.errors, do.warnings
	if len(out.Errors) > 0 {
		return out
	}

	objects := map[string]map[string]any{}
	it, ferr := rv.LookupPath(pathObjects).Fields()
	if ferr != nil {
		return fail("objects", ferr)
	}
	for it.Next() {
		var obj map[string]any
		if err := decodeJSON(it.Value(), &obj); err != nil {
			defect("objects."+it.Selector().String(), cue.MakePath(selObjects, it.Selector()), "the object does not decode: %s", s.e.Details(err))
			return out
		}
		id := it.Selector().Unquoted()
		if p != nil {
			if skeleton, ok := p.out.objects[id]; ok {
				obj = fillIn(obj, skeleton)
			}
		}
		if len(do.metadata) > 0 {
			md, _ := obj["metadata"].(map[string]any)
			if md == nil {
				md = map[string]any{}
				obj["metadata"] = md
			}
			for k, v := range do.metadata {
				if _, ok := md[k]; !ok {
					md[k] = copyJSON(v)
				}
			}
		}
		objects[id] = obj
	}

	for _, id := range sortedKeys(do.bases) {
		b := do.bases[id]
		obj, ok := objects[id]
		if !ok || len(b.Path) == 0 {
			continue
		}
		m, err := mapAt(obj, b.Path[:len(b.Path)-1])
		if err != nil {
			return fail("bases", err)
		}
		m[b.Path[len(b.Path)-1]] = copyJSON(at(ctx, b.From))
	}

	sort.SliceStable(do.groups, func(i, j int) bool {
		if do.groups[i].Order != do.groups[j].Order {
			return do.groups[i].Order < do.groups[j].Order
		}
		return do.groups[i].Name < do.groups[j].Name
	})
	for _, g := range do.groups {
		for _, e := range g.Ops {
			obj, ok := objects[e.Object]
			if !ok {
				continue // an edit of an object this render does not build
			}
			if err := e.apply(obj); err != nil {
				defect("edits."+g.Name, cue.MakePath(selEdits, cue.Str(g.Name)), "edit %s of %s: %v", g.Name, e.Object, err)
			}
		}
	}

	yamlOf := func(name string) (string, error) {
		if name != fieldRuntime || runtime == nil {
			return "", fmt.Errorf("no context entry %q to write as YAML", name)
		}
		return runtime.yaml()
	}
	for _, id := range sortedKeys(do.generate) {
		for _, g := range do.generate[id] {
			if obj, ok := objects[id]; ok {
				if err := g.run(obj, yamlOf); err != nil {
					defect("generate."+id, cue.MakePath(selGenerate, cue.Str(id)), "generating %s: %v", id, err)
				}
			}
		}
	}
	for _, sum := range do.sums {
		if obj, ok := objects[sum.Object]; ok {
			if err := sum.apply(obj); err != nil {
				defect("sums", cue.MakePath(selSums), "summing quantities of %s: %v", sum.Object, err)
			}
		}
	}
	if len(out.Errors) > 0 {
		return out
	}
	phaseOf := make(map[string]int, len(objects))
	for id, obj := range objects {
		canonicalize(obj)
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
	return out
}

// SortObjects orders objects by apiVersion, kind, namespace and name.
func SortObjects(objs []map[string]any) {
	sort.SliceStable(objs, func(i, j int) bool { return objectKey(objs[i]) < objectKey(objs[j]) })
}

// objectKey identifies an object by apiVersion, kind, namespace and name.
func objectKey(o map[string]any) string {
	return strings.Join([]string{str(o["apiVersion"]), str(o["kind"]), str(meta(o)["namespace"]), str(meta(o)["name"])}, "\x00")
}

// decodeJSON decodes a CUE value as JSON, numbers as json.Number.
func decodeJSON(v cue.Value, x any) error {
	data, err := v.MarshalJSON()
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(x)
}

// decodeJSONStrict decodes like decodeJSON, and fails on fields x does not
// have.
func decodeJSONStrict(v cue.Value, x any) error {
	data, err := v.MarshalJSON()
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	return dec.Decode(x)
}

// at returns the value at a path of fields, nil when there is none.
func at(v any, path []string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// collect returns the values at a path where "*" stands for every item of
// a list, in order.
func collect(v any, path []string) []any {
	if len(path) == 0 {
		if v == nil {
			return nil
		}
		return []any{v}
	}
	if path[0] == "*" {
		l, _ := v.([]any)
		var out []any
		for _, item := range l {
			out = append(out, collect(item, path[1:])...)
		}
		return out
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return collect(m[path[0]], path[1:])
}

// strategicMerge patches base with each patch in turn, as the API server's
// strategic merge patch does for the Go type the merge names, then puts
// the items of the keepOrder lists back in the base's order.
func strategicMerge(base any, patches []any, m merge) (any, error) {
	if len(patches) == 0 {
		return base, nil
	}
	schema, ok := patchSchemas[m.Schema]
	if !ok {
		return nil, fmt.Errorf("no Go type %q for a strategic merge", m.Schema)
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(schema)
	if err != nil {
		return nil, err
	}
	cur, _ := roundTrip(base).(map[string]any)
	if cur == nil {
		cur = map[string]any{}
	}
	order := map[string]map[string]int{}
	for _, field := range m.KeepOrder {
		order[field] = map[string]int{}
		l, _ := cur[field].([]any)
		for i, item := range l {
			if im, ok := item.(map[string]any); ok {
				order[field][fmt.Sprint(im["name"])] = i
			}
		}
	}
	for _, p := range patches {
		pm, ok := roundTrip(p).(map[string]any)
		if !ok {
			continue
		}
		if cur, err = strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta(cur, pm, meta); err != nil {
			return nil, err
		}
	}
	for field, idx := range order {
		l, _ := cur[field].([]any)
		sort.SliceStable(l, func(i, j int) bool {
			a, _ := l[i].(map[string]any)
			b, _ := l[j].(map[string]any)
			return idx[fmt.Sprint(a["name"])] < idx[fmt.Sprint(b["name"])]
		})
	}
	return cur, nil
}

// roundTrip gives a deep copy of a JSON-like value, with integers as int64
// and other numbers as float64 (what the CUE encoder takes as numbers).
func roundTrip(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil
	}
	return numbers(out)
}

// fillIn adds to obj, field by field, what skeleton has and obj has not,
// copied.
func fillIn(obj, skeleton map[string]any) map[string]any {
	if obj == nil {
		obj = map[string]any{}
	}
	for k, sv := range skeleton {
		ov, ok := obj[k]
		if !ok {
			obj[k] = copyJSON(sv)
			continue
		}
		om, oIsMap := ov.(map[string]any)
		sm, sIsMap := sv.(map[string]any)
		if oIsMap && sIsMap {
			obj[k] = fillIn(om, sm)
		}
	}
	return obj
}

// copyJSON is roundTrip for values that are JSON-like already (maps,
// lists, strings, bools, numbers), without the encoding.
func copyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return nil
		}
		m := make(map[string]any, len(x))
		for k, c := range x {
			m[k] = copyJSON(c)
		}
		return m
	case []any:
		if x == nil {
			return nil
		}
		l := make([]any, len(x))
		for i, c := range x {
			l[i] = copyJSON(c)
		}
		return l
	case string, bool, nil, int64, float64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case json.Number:
		return numbers(x)
	}
	return roundTrip(v)
}

// numbers turns json.Numbers into int64 or float64.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = numbers(c)
		}
	case []any:
		for i, c := range x {
			x[i] = numbers(c)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// edit is one #Edit of the CUE.
type edit struct {
	// Use names a plan's op (#ops) that gives the fields the edit leaves out.
	Use    string
	Object string
	Path   []any
	Op     string
	Value  any
	Items  []any
	By     []string
}

func (e edit) apply(obj map[string]any) error {
	e.Path = splice(e.Path)
	if len(e.Path) == 0 {
		return fmt.Errorf("empty path")
	}
	var cur any = obj
	for i, step := range e.Path[:len(e.Path)-1] {
		next, err := descend(cur, step, true)
		if err != nil {
			return fmt.Errorf("%s: %v", pathString(e.Path[:i+1]), err)
		}
		cur = next
	}
	m, ok := cur.(map[string]any)
	last, isField := e.Path[len(e.Path)-1].(string)
	if !ok || !isField {
		return fmt.Errorf("%s: not a field of an object", pathString(e.Path))
	}
	switch e.Op {
	case "set":
		m[last] = e.Value
	case "merge":
		target, _ := m[last].(map[string]any)
		if target == nil {
			target = map[string]any{}
		}
		add, _ := e.Value.(map[string]any)
		for k, v := range add {
			target[k] = v
		}
		m[last] = target
	case "upsert", "append":
		if len(e.Items) == 0 {
			return nil // nothing to add: an absent list stays absent, not null
		}
		l, _ := m[last].([]any)
		if e.Op == "append" {
			m[last] = append(l, e.Items...)
			break
		}
		for _, item := range e.Items {
			l = upsert(l, item, e.By)
		}
		m[last] = l
	default:
		return fmt.Errorf("unknown op %q", e.Op)
	}
	return nil
}

// splice flattens the lists in a path into it: a rule may build a path
// from a prefix it was given, [prefix, "env"].
func splice(path []any) []any {
	nested := false
	for _, step := range path {
		if _, ok := step.([]any); ok {
			nested = true
			break
		}
	}
	if !nested {
		return path
	}
	var out []any
	for _, step := range path {
		if l, ok := step.([]any); ok {
			out = append(out, splice(l)...)
		} else {
			out = append(out, step)
		}
	}
	return out
}

// mapAt returns the object at a path of fields, creating the ones missing.
func mapAt(obj map[string]any, path []string) (map[string]any, error) {
	var cur any = obj
	for _, p := range path {
		next, err := descend(cur, p, true)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", strings.Join(path, "."), err)
		}
		cur = next
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not an object", strings.Join(path, "."))
	}
	return m, nil
}

// descend takes one step of a path: a field (created when absent) or the
// list item whose fields equal the step's.
func descend(cur any, step any, create bool) (any, error) {
	switch s := step.(type) {
	case string:
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("not an object")
		}
		next, ok := m[s]
		if !ok || next == nil {
			if !create {
				return nil, fmt.Errorf("no field %s", s)
			}
			next = map[string]any{}
			m[s] = next
		}
		return next, nil
	case map[string]any:
		l, ok := cur.([]any)
		if !ok {
			return nil, fmt.Errorf("not a list")
		}
		for _, item := range l {
			im, ok := item.(map[string]any)
			if !ok {
				continue
			}
			match := true
			for k, v := range s {
				if !reflect.DeepEqual(im[k], v) {
					match = false
				}
			}
			if match {
				return im, nil
			}
		}
		return nil, fmt.Errorf("no item %v", s)
	}
	return nil, fmt.Errorf("bad path step %v", step)
}

func pathString(p []any) string {
	var b strings.Builder
	for _, s := range p {
		switch x := s.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteString(".")
			}
			b.WriteString(x)
		default:
			fmt.Fprintf(&b, "%v", x)
		}
	}
	return b.String()
}

// upsert replaces the first item that matches item by any of the fields
// (two absent fields match, as Kubeflow's pointer comparison does), or
// appends it.
func upsert(l []any, item any, by []string) []any {
	im, _ := item.(map[string]any)
	for i, old := range l {
		om, _ := old.(map[string]any)
		for _, k := range by {
			a, aok := om[k]
			b, bok := im[k]
			if aok == bok && (!aok || reflect.DeepEqual(fmt.Sprint(a), fmt.Sprint(b))) {
				l[i] = item
				return l
			}
		}
	}
	return append(l, item)
}

// quantitySum is one #QuantitySum of the CUE.
type quantitySum struct {
	Object string
	Path   []string
	Terms  []struct {
		Resource string
		Quantity string
		Times    int64
	}
}

func (s quantitySum) apply(obj map[string]any) error {
	totals := map[string]resource.Quantity{}
	var order []string
	for _, t := range s.Terms {
		q, err := resource.ParseQuantity(t.Quantity)
		if err != nil {
			return fmt.Errorf("%s: %v", t.Resource, err)
		}
		q.Mul(t.Times)
		cur, seen := totals[t.Resource]
		if !seen {
			order = append(order, t.Resource)
		}
		cur.Add(q)
		totals[t.Resource] = cur
	}
	out := map[string]any{}
	for _, r := range order {
		q := totals[r]
		out[r] = q.String()
	}
	if len(s.Path) == 0 {
		return fmt.Errorf("empty path")
	}
	m, err := mapAt(obj, s.Path[:len(s.Path)-1])
	if err != nil {
		return err
	}
	m[s.Path[len(s.Path)-1]] = out
	return nil
}

// canonicalQuantity is a quantity's canonical text, as resource.Quantity
// marshals it; ok false for what is no quantity.
func canonicalQuantity(v any) (string, bool) {
	var text string
	switch q := v.(type) {
	case string:
		text = q
	case json.Number:
		text = q.String()
	case int64:
		text = strconv.FormatInt(q, 10)
	case int:
		text = strconv.Itoa(q)
	case float64:
		text = strconv.FormatFloat(q, 'f', -1, 64)
	default:
		return "", false
	}
	q, err := resource.ParseQuantity(text)
	if err != nil {
		return "", false
	}
	return q.String(), true
}

// canonicalObject is a copy of an object with every quantity it holds in
// canonical form, as its typed Go object marshals: those of resource lists
// (limits, requests), and a volume's sizeLimit and an env's divisor.
func canonicalObject(obj map[string]any) map[string]any {
	out := deepCopy(obj).(map[string]any)
	canonicalize(out)
	return out
}

// canonicalize writes the quantities of obj in canonical form, in place
// (canonicalObject).
func canonicalize(obj map[string]any) {
	canonicalQuantities(obj, false)
	var fields func(v any)
	fields = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				switch k {
				case "sizeLimit", "divisor":
					if q, ok := canonicalQuantity(c); ok {
						x[k] = q
						continue
					}
				case "metadata", "data", "stringData", "binaryData":
					continue // names and data, not quantities
				}
				fields(c)
			}
		case []any:
			for _, c := range x {
				fields(c)
			}
		}
	}
	fields(obj)
}

// canonicalQuantities writes every quantity of a resource list (a map
// under `limits` or `requests`) in its canonical form, as the typed objects
// of a controller marshal them.
func canonicalQuantities(v any, resources bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if resources {
				if q, ok := canonicalQuantity(c); ok {
					x[k] = q
				}
				continue
			}
			canonicalQuantities(c, k == "limits" || k == "requests")
		}
	case []any:
		for _, c := range x {
			canonicalQuantities(c, false)
		}
	}
}
