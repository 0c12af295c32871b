package engine

import (
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// An admin's render part whose edit makes every object of a kind one the
// cluster refuses (a volume mount naming no volume, a port's name over 15
// characters, an env entry's fieldRef the kubelet does not give) loads, and
// every TrainJob of its runtimes fails to start. The CUE says what the
// cluster refuses of a built object (refusals, by its apiVersion and kind),
// and the load's trial renders (the probes') check each object they build
// against it, when an edit group of the policy's is among the render's; a
// render after the load does not.

// checkRefusals finds, in a trial render with a policy's edit group, an
// object the cluster refuses for what an edit made, and makes it the
// defect of the first edit after which the object is refused for more
// than before it, at the edit. What the render's objects are refused for
// before any edit is the runtime's (declaredChecks say so of a runtime
// declared in CUE).
func (trialRenders) checkRefusals(rn *rendering, objects map[string]map[string]any) bool {
	if !rn.s.e.policyRenders || !policyEdits(rn) {
		return true
	}
	pending, again, ok := rn.failing(objects, func(obj map[string]any) bool { return len(refused(rn, obj)) > 0 })
	if again == nil || !ok {
		return ok
	}
	before := map[string][]string{}
	for id := range pending {
		before[id] = refusalTexts(refused(rn, again[id]))
	}
	// applyEdits sorted the groups in the order it made them.
	for _, g := range rn.do.groups {
		for i, e := range g.Ops {
			obj, ok := again[e.Object]
			if !ok {
				continue
			}
			_ = e.WithOwnValues().Apply(obj)
			if !pending[e.Object] {
				continue
			}
			var added []string
			for _, f := range refusalTexts(refused(rn, obj)) {
				if !slices.Contains(before[e.Object], f) {
					added = append(added, f)
				}
			}
			if len(added) > 0 {
				rn.defect("edits."+g.Name, cue.MakePath(contract.SelEdits, cue.Str(g.Name), contract.SelOps, cue.Index(i)), "edit %s makes the %v %s one the cluster refuses: %s", g.Name, obj["kind"], e.Object, strings.Join(added, "; "))
				return false
			}
		}
	}
	return true
}

// policyEdits says whether an edit group of the render is the policy's.
func policyEdits(rn *rendering) bool {
	for _, g := range rn.do.groups {
		if rn.s.e.src.FromPolicy(rn.rv.LookupPath(cue.MakePath(contract.SelEdits, cue.Str(g.Name)))) {
			return true
		}
	}
	return false
}

// refused is what the cluster refuses of obj (refusals), nothing for a
// kind the CUE says nothing of.
func refused(rn *rendering, obj map[string]any) []Finding {
	d := Document{Object: obj}
	checks, ok := rn.c.Refusals[d.APIVersion()][d.Kind()]
	if !ok {
		return nil
	}
	// An edit's numbers are json.Numbers, which CUE would take for text.
	fs, err := rn.s.e.objectChecks(checks, value.Numbers(value.DeepCopy(obj)).(map[string]any), contract.PhaseRender)
	if err != nil {
		return []Finding{{Phase: contract.PhaseRuleError, Rule: contract.FieldRefusals, Detail: rn.s.e.src.Details(err)}}
	}
	return fs
}

// refusalTexts are the findings as the load says them.
func refusalTexts(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

// objectChecks evaluates checks of an object, as declaredChecks and
// refusals hold them ({object, context: quantities, errors}): the object
// and its quantities filled in, the errors as findings of phase.
func (e *core) objectChecks(checks cue.Value, obj map[string]any, phase Phase) ([]Finding, error) {
	v := checks.FillPath(contract.PathObject, obj).FillPath(contract.PathDeclaredQuantities, k8s.Quantities(obj))
	return k8s.DecodeFindings(e.src, v.LookupPath(contract.PathErrors), phase)
}
