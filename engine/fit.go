package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/edit"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// A policy's render edits write into objects whose kinds the API server
// knows: an edit whose path misspells a field (`envs`), or whose value has
// another type (`backoffLimit: "3"`), makes an object the API server
// prunes or refuses, or one the controller applies without what the edit
// meant. So, with a policy directory, each object a render builds of a
// kind whose Go type the engine carries is decoded into it strictly
// (sigs.k8s.io/json, as the API server's strict field validation): a field
// the kind has not, a value of another type, or a label or annotation that
// apimachinery refuses (a label value with spaces) is the policy's defect,
// at the edit that made it (checkFit).

// misfit is misfit with its metadata's checks (allMetaErrors), and also
// says of an object of a kind no render owns (owned: a Configmap, a
// core/v1 apiVersion) that the controller does not
// watch it, and that a kind the cluster has not fails its apply.
func (rn *rendering) misfit(obj map[string]any) string {
	d := Document{Object: obj}
	owned := rn.s.e.decl.Owned
	if !owned[d.APIVersion()][d.Kind()] {
		why := fmt.Sprintf("no render owns %s %s (owned): the controller does not watch it, and a kind the cluster has not fails its apply", d.APIVersion(), d.Kind())
		if kinds := value.SortedKeys(owned[d.APIVersion()]); len(kinds) > 0 {
			if s := source.Suggest(d.Kind(), kinds); s != "" {
				why += fmt.Sprintf(": did you mean %s?", s)
			}
		} else if s := source.Suggest(d.APIVersion(), value.SortedKeys(owned)); s != "" {
			why += fmt.Sprintf(": did you mean %s?", s)
		}
		return why
	}
	why := k8s.Misfit(obj)
	// Its metadata's and its templates' label and annotation keys and
	// values, which the API server (for a template, the controller that
	// creates its pods) refuses in apimachinery's words.
	for _, e := range k8s.AllMetaErrors(obj, nil, rn.a) {
		why = strings.TrimPrefix(why+"; "+e.Error(), "; ")
	}
	return why
}

// checkFit finds, with a policy directory, the objects a render built that
// do not fit their kinds, and what made each misfit: the objects are built
// again and the edit groups made one at a time, in applyEdits' order.
func (rn *rendering) checkFit(objects map[string]map[string]any) bool {
	if !rn.s.e.policyRenders {
		return true
	}
	pending, again, ok := rn.failing(objects, func(obj map[string]any) bool { return rn.misfit(obj) != "" })
	if again == nil || !ok {
		return ok
	}
	blame := func(rule string, at cue.Path, what string) {
		for _, id := range value.SortedKeys(pending) {
			if why := rn.misfit(again[id]); why != "" {
				rn.defect(rule, at, "%s the %v %s a misfit of its kind: %s", what, again[id]["kind"], id, why)
				delete(pending, id)
			}
		}
	}
	for _, id := range value.SortedKeys(pending) {
		blame("objects."+id, cue.MakePath(contract.SelObjects, cue.Str(id)), "the render's objects make")
	}
	// applyEdits sorted the groups in the order it made them. Each is
	// blamed at the op that made the misfit, where the value it writes
	// comes from (an admin's part may give the value a shipped group
	// writes: #podLabels).
	for _, g := range rn.do.groups {
		for i, e := range g.Ops {
			if len(pending) == 0 {
				return false
			}
			obj, ok := again[e.Object]
			if !ok {
				continue
			}
			before := value.DeepCopy(obj).(map[string]any)
			_ = e.Apply(obj)
			at := cue.MakePath(contract.SelEdits, cue.Str(g.Name), contract.SelOps, cue.Index(i))
			if pending[e.Object] && rn.misfit(obj) != "" {
				at = rn.misfitPart(at, e, before)
			}
			blame("edits."+g.Name, at, "edit "+g.Name+" makes")
		}
	}
	return false
}

// failing are the ids of the objects that fail test and, when any does,
// the objects built again, before any edit, for a stage that replays the
// edits to blame the one that made the failure (checkFit,
// checkRefusals): again is nil when none fails, and ok false when the
// objects cannot be built again.
func (rn *rendering) failing(objects map[string]map[string]any, test func(map[string]any) bool) (pending map[string]bool, again map[string]map[string]any, ok bool) {
	pending = map[string]bool{}
	for id, obj := range objects {
		if test(obj) {
			pending[id] = true
		}
	}
	if len(pending) == 0 {
		return nil, nil, true
	}
	again = map[string]map[string]any{}
	return pending, again, rn.buildObjects(again)
}

// misfitPart narrows the blame for the op e at (made on before) to the
// field of its value, or the item, without which the object would fit:
// where that comes from is where the mistake is (a part's #podLabels,
// which a shipped group writes). It is at when no one part is to blame.
func (rn *rendering) misfitPart(at cue.Path, e edit.Edit, before map[string]any) cue.Path {
	fits := func(trial edit.Edit) bool {
		obj := value.DeepCopy(before).(map[string]any)
		return trial.WithOwnValues().Apply(obj) == nil && rn.misfit(obj) == ""
	}
	if m, ok := e.Value.(map[string]any); ok {
		for _, k := range value.SortedKeys(m) {
			trial := e
			trial.Value = maps.Clone(m)
			delete(trial.Value.(map[string]any), k)
			if fits(trial) {
				return at.Append(contract.SelValue, cue.Str(k))
			}
		}
	}
	for i := range e.Items {
		trial := e
		trial.Items = slices.Delete(slices.Clone(e.Items), i, i+1)
		if fits(trial) {
			return at.Append(contract.SelItems, cue.Index(i))
		}
	}
	return at
}
