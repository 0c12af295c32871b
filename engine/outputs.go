package engine

import (
	"fmt"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/edit"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// outputs are what a render (or its plan) asks the engine to do besides
// building its objects: bases, edits, generate and sums, and its findings.
type outputs struct {
	errors, warnings []Finding
	bases            map[string]contract.Base
	groups           []edit.Group
	generate         map[string][]edit.Generate
	sums             []edit.QuantitySum
	// ops are a plan's edits by name, which a render's edits complete
	// (`use`).
	ops map[string]edit.Edit
	// objects are a plan's objects: the fields a render's object of the
	// same id leaves out.
	objects map[string]map[string]any
	// metadata are fields of every object's metadata (a render's).
	metadata map[string]any
	// parts are the render parts a plan chose, in name order.
	parts []string
}

// outputError says which output failed to decode.
type outputError struct {
	what string
	err  error
}

// decodeOutputs reads the outputs of an evaluated render or plan; absent
// fields are empty.
func (e *core) decodeOutputs(v cue.Value, plan bool) (outputs, *outputError) {
	var out outputs
	var err error
	if f := v.LookupPath(contract.PathErrors); f.Exists() {
		if out.errors, err = k8s.DecodeFindings(e.src, f, contract.PhaseRender); err != nil {
			return out, &outputError{"errors", err}
		}
	}
	if f := v.LookupPath(contract.PathWarnings); f.Exists() {
		if out.warnings, err = k8s.DecodeFindings(e.src, f, "warning"); err != nil {
			return out, &outputError{"warnings", err}
		}
		var broken []Finding
		out.warnings, broken = k8s.RuleErrorsApart(out.warnings)
		out.errors = append(out.errors, broken...)
	}
	if f := v.LookupPath(contract.PathBases); f.Exists() {
		if err := value.DecodeJSON(f, &out.bases); err != nil {
			return out, &outputError{"bases", err}
		}
	}
	if f := v.LookupPath(contract.PathEdits); f.Exists() {
		it, err := f.Fields()
		if err != nil {
			return out, &outputError{"edits", err}
		}
		for it.Next() {
			// The group's shape is the CUE's to check (#Render); its ops
			// the engine's. Many groups have nothing to do for a given
			// TrainJob: they cost no export.
			g := edit.Group{Name: it.Selector().Unquoted()}
			ops, err := it.Value().LookupPath(contract.PathOps).List()
			if err != nil {
				return out, &outputError{"edits " + it.Selector().String(), err}
			}
			for ops.Next() {
				var e edit.Edit
				if err := value.DecodeJSONStrict(ops.Value(), &e); err != nil {
					return out, &outputError{"edits " + it.Selector().String(), err}
				}
				g.Ops = append(g.Ops, e)
			}
			if len(g.Ops) == 0 {
				continue
			}
			order, err := it.Value().LookupPath(contract.PathOrder).Int64()
			if err != nil {
				return out, &outputError{"edits " + it.Selector().String(), err}
			}
			g.Order = int(order)
			out.groups = append(out.groups, g)
		}
	}
	if f := v.LookupPath(contract.PathMetadata); f.Exists() {
		if err := value.DecodeJSON(f, &out.metadata); err != nil {
			return out, &outputError{"metadata", err}
		}
		out.metadata, _ = value.Numbers(map[string]any(out.metadata)).(map[string]any)
	}
	if plan {
		if f := v.LookupPath(contract.PathParts); f.Exists() {
			var parts map[string]bool
			if err := f.Decode(&parts); err != nil {
				return out, &outputError{"parts", err}
			}
			for _, name := range value.SortedKeys(parts) {
				if parts[name] {
					out.parts = append(out.parts, name)
				}
			}
		}
		if f := v.LookupPath(contract.PathObjects); f.Exists() {
			if err := value.DecodeJSON(f, &out.objects); err != nil {
				return out, &outputError{"objects", err}
			}
			for id, o := range out.objects {
				out.objects[id], _ = value.Numbers(o).(map[string]any)
			}
		}
	}
	if f := v.LookupPath(contract.PathPlanOps); f.Exists() {
		if err := value.DecodeJSONStrict(f, &out.ops); err != nil {
			return out, &outputError{"ops", err}
		}
	}
	if f := v.LookupPath(contract.PathGenerate); f.Exists() {
		if err := value.DecodeJSON(f, &out.generate); err != nil {
			return out, &outputError{"generate", err}
		}
	}
	if f := v.LookupPath(contract.PathSums); f.Exists() {
		var byName map[string]edit.QuantitySum
		if err := value.DecodeJSON(f, &byName); err != nil {
			return out, &outputError{"sums", err}
		}
		for _, name := range value.SortedKeys(byName) {
			out.sums = append(out.sums, byName[name])
		}
	}
	return out, nil
}

// resolve completes the edits that use a plan's op: the op's fields, but
// those the edit sets.
func (o outputs) resolve(ops map[string]edit.Edit) error {
	for _, g := range o.groups {
		for i, e := range g.Ops {
			if e.Use == "" {
				continue
			}
			t, ok := ops[e.Use]
			if !ok {
				return fmt.Errorf("edit %s: no op %q in the plan", g.Name, e.Use)
			}
			if e.Object == "" {
				e.Object = t.Object
			}
			if e.Path == nil {
				e.Path = t.Path
			}
			if e.Op == "" {
				e.Op = t.Op
			}
			if e.By == nil {
				e.By = t.By
			}
			if e.Value == nil {
				e.Value = value.DeepCopy(t.Value)
			}
			if e.Items == nil {
				e.Items, _ = value.DeepCopy(t.Items).([]any)
			}
			e.Use = ""
			g.Ops[i] = e
		}
	}
	return nil
}

// copy gives outputs whose edits own their values, so that applying them
// leaves these (a plan's, kept for every render) as they are.
func (o outputs) copy() outputs {
	c := o
	c.groups = make([]edit.Group, len(o.groups))
	for i, g := range o.groups {
		ops := make([]edit.Edit, len(g.Ops))
		for j, op := range g.Ops {
			ops[j] = op.WithOwnValues()
		}
		c.groups[i] = edit.Group{Name: g.Name, Order: g.Order, Ops: ops}
	}
	return c
}

// add adds another's outputs to these: findings after these, bases and
// generate by id (a base of the same id replaces), edits and sums.
func (o outputs) add(x outputs) outputs {
	o.errors = append(append([]Finding(nil), o.errors...), x.errors...)
	o.warnings = append(append([]Finding(nil), o.warnings...), x.warnings...)
	bases := map[string]contract.Base{}
	for id, b := range o.bases {
		bases[id] = b
	}
	for id, b := range x.bases {
		bases[id] = b
	}
	o.bases = bases
	o.groups = append(o.groups, x.groups...)
	gens := map[string][]edit.Generate{}
	for id, g := range o.generate {
		gens[id] = append(gens[id], g...)
	}
	for id, g := range x.generate {
		gens[id] = append(gens[id], g...)
	}
	o.generate = gens
	o.sums = append(append([]edit.QuantitySum(nil), o.sums...), x.sums...)
	if x.metadata != nil {
		o.metadata = x.metadata
	}
	return o
}

func (e *outputError) Error() string { return fmt.Sprintf("%s: %v", e.what, e.err) }
