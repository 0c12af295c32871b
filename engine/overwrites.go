package engine

import (
	"reflect"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/edit"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// A policy's edit that sets a field a later edit group sets again to
// another value does nothing: an admin's `replicas: 2` at order 20, which
// the shipped group that counts the pods writes at a later order, never
// reaches the JobSet, in silence. The load's trial renders (the probes')
// look for it; a render after the load does not.

// checkOverwrites finds, in a trial render with a policy, the first set of
// an admin's edit group to a scalar that a later group changes, and makes
// it the group's defect, at the op, naming the group that changes it.
func (trialRenders) checkOverwrites(rn *rendering, objects map[string]map[string]any) bool {
	if !rn.s.e.policyRenders {
		return true
	}
	groups := rn.do.groups // in applyEdits' order
	for gi, g := range groups {
		at := cue.MakePath(contract.SelEdits, cue.Str(g.Name))
		if !rn.s.e.src.FromPolicy(rn.rv.LookupPath(at)) {
			continue
		}
		for i, e := range g.Ops {
			if e.Op != "set" || !isScalar(e.Value) {
				continue
			}
			if got, ok := editValueAt(objects[e.Object], e.Path); ok && reflect.DeepEqual(got, e.Value) {
				continue
			}
			later, got := overwriter(rn, gi, e)
			if later == "" {
				continue
			}
			rn.defect("edits."+g.Name, at.Append(contract.SelOps, cue.Index(i)), "edit %s sets %s of %s to %s, and edit %s, made after it (by order, then name), sets it to %s: the value never reaches the object; give the edit an order after %s's, or leave the field to it",
				g.Name, edit.PathString(edit.Splice(e.Path)), e.Object, k8s.JSONText(e.Value), later, k8s.JSONText(got), later)
			return false
		}
	}
	return true
}

// overwriter replays the groups from the first on objects built again and
// names the first group after groups[gi] that leaves e's path with
// another value than e's, and the value; "" when none does.
func overwriter(rn *rendering, gi int, e edit.Edit) (string, any) {
	again := map[string]map[string]any{}
	if !rn.buildObjects(again) {
		return "", nil
	}
	for hi, h := range rn.do.groups {
		for _, op := range h.Ops {
			if obj, ok := again[op.Object]; ok {
				_ = op.WithOwnValues().Apply(obj)
			}
		}
		if hi <= gi {
			continue
		}
		if got, ok := editValueAt(again[e.Object], e.Path); !ok || !reflect.DeepEqual(got, e.Value) {
			return h.Name, got
		}
	}
	return "", nil
}

// editValueAt is the value at an edit's path of obj; ok false when there is
// none.
func editValueAt(obj map[string]any, path []any) (any, bool) {
	path = edit.Splice(path)
	if obj == nil || len(path) == 0 {
		return nil, false
	}
	var cur any = obj
	for _, step := range path[:len(path)-1] {
		next, err := edit.Descend(cur, step, false)
		if err != nil {
			return nil, false
		}
		cur = next
	}
	m, ok := cur.(map[string]any)
	last, isField := path[len(path)-1].(string)
	if !ok || !isField {
		return nil, false
	}
	v, ok := m[last]
	return v, ok
}

// isScalar reports whether a decoded JSON value is no list or object.
func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any, nil:
		return false
	}
	return true
}
