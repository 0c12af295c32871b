package engine

import (
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// reviewMerges are the kind's merges (`merges`) for a review of doc on
// runtime, by name, as a render computes them (mergeTemplate): nil when
// the input has no patch to merge, so that a review without any sees the
// runtime alone. A merge that fails is left out; the render reports it.
func (e *core) reviewMerges(doc Document, runtime *stored) map[string]any {
	if runtime == nil {
		return nil
	}
	var out map[string]any
	var object map[string]any // typed, once a merge has patches
	merges := e.decl.Merges[doc.APIVersion()][doc.Kind()]
	for _, name := range value.SortedKeys(merges) {
		m := merges[name]
		if len(value.Collect(doc.Object, m.Patches)) == 0 {
			continue
		}
		if object == nil {
			object = e.typed(doc, doc.Object)
		}
		v, err := k8s.MergeInto(m, object, runtime.typed(e))
		if err != nil {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[name] = v
	}
	return out
}
