package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	sigsjson "sigs.k8s.io/json"
)

// A policy's render edits write into objects whose kinds the API server
// knows: an edit whose path misspells a field (`envs`), or whose value has
// another type (`backoffLimit: "3"`), makes an object the API server
// prunes or refuses, or one the controller applies without what the edit
// meant. So, with a policy directory, each object a render builds of a
// kind whose Go type the engine carries is decoded into it strictly
// (sigs.k8s.io/json, as the API server's strict field validation): a field
// the kind has not, or a value of another type, is the policy's defect, at
// the edit group that made it.

// misfit says why obj does not fit its kind's Go type, "" when it does or
// when the engine carries no type for its kind.
func misfit(obj map[string]any) string {
	d := Document{Object: obj}
	newType, ok := fitTypes[d.APIVersion()+"\x00"+d.Kind()]
	if !ok {
		return ""
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return err.Error()
	}
	strict, err := sigsjson.UnmarshalStrict(data, newType(), sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	var whys []string
	if err != nil {
		whys = append(whys, err.Error())
	}
	for _, e := range strict {
		whys = append(whys, e.Error())
	}
	sort.Strings(whys)
	return strings.Join(whys, "; ")
}

// misfit is misfit, and also says of an object of a kind no render owns
// (owned: a Configmap, a core/v1 apiVersion) that the controller does not
// watch it, and that a kind the cluster has not fails its apply.
func (rn *rendering) misfit(obj map[string]any) string {
	d := Document{Object: obj}
	owned := rn.s.e.owned
	if !owned[d.APIVersion()][d.Kind()] {
		why := fmt.Sprintf("no render owns %s %s (owned): the controller does not watch it, and a kind the cluster has not fails its apply", d.APIVersion(), d.Kind())
		if kinds := sortedKeys(owned[d.APIVersion()]); len(kinds) > 0 {
			if s := suggest(d.Kind(), kinds); s != "" {
				why += fmt.Sprintf(": did you mean %s?", s)
			}
		} else if s := suggest(d.APIVersion(), sortedKeys(owned)); s != "" {
			why += fmt.Sprintf(": did you mean %s?", s)
		}
		return why
	}
	return misfit(obj)
}

// checkFit finds, with a policy directory, the objects a render built that
// do not fit their kinds, and what made each misfit: the objects are built
// again and the edit groups made one at a time, in applyEdits' order.
func (rn *rendering) checkFit(objects map[string]map[string]any) bool {
	if len(rn.s.e.policyFiles) == 0 {
		return true
	}
	pending := map[string]bool{}
	for id, obj := range objects {
		if rn.misfit(obj) != "" {
			pending[id] = true
		}
	}
	if len(pending) == 0 {
		return true
	}
	again := map[string]map[string]any{}
	if !rn.buildObjects(again) {
		return false
	}
	blame := func(rule string, at cue.Path, what string) {
		for _, id := range sortedKeys(pending) {
			if why := rn.misfit(again[id]); why != "" {
				rn.defect(rule, at, "%s the %v %s a misfit of its kind: %s", what, again[id]["kind"], id, why)
				delete(pending, id)
			}
		}
	}
	for _, id := range sortedKeys(pending) {
		blame("objects."+id, cue.MakePath(selObjects, cue.Str(id)), "the render's objects make")
	}
	// applyEdits sorted the groups in the order it made them.
	for _, g := range rn.do.groups {
		if len(pending) == 0 {
			break
		}
		for _, e := range g.Ops {
			if obj, ok := again[e.Object]; ok {
				_ = e.apply(obj)
			}
		}
		blame("edits."+g.Name, cue.MakePath(selEdits, cue.Str(g.Name)), "edit "+g.Name+" makes")
	}
	return false
}
