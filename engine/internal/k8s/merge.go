package k8s

import (
	"fmt"
	"sort"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// Strategic merges: a kind's merges (`merges`) patch a runtime's value
// with an object's patches as the API server's strategic merge patch does
// for a Go type, which is how Kubeflow's controller merges a TrainJob's
// runtimePatches into its runtime's JobSet template.

// patchSchemas are the Go types whose strategic-merge metadata a merge of
// the CUE (see `merges`) may name.
var patchSchemas = map[string]any{
	"jobset.x-k8s.io/v1alpha2.JobSetSpec": jobsetv1alpha2.JobSetSpec{},
}

// StrategicMerge patches base with each patch in turn, as the API server's
// strategic merge patch does for the Go type the merge names, then puts
// the items of the keepOrder lists back in the base's order.
func StrategicMerge(base any, patches []any, m contract.Merge) (any, error) {
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
	cur, _ := value.AsJSON(base).(map[string]any)
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
		pm, ok := value.AsJSON(p).(map[string]any)
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

// MergeInto makes one merge: the object's patches (typed, as Kubeflow's
// controller reads them) into the runtime's value at the merge's base
// (typed; none without a runtime).
func MergeInto(m contract.Merge, object, runtimeObject map[string]any) (any, error) {
	var base any
	if runtimeObject != nil {
		base = value.At(runtimeObject, m.Base)
	}
	return StrategicMerge(base, value.Collect(object, m.Patches), m)
}
