package engine

import (
	"maps"
	"slices"
	"strings"
)

// A render is a function of the admitted object, its runtime, the objects
// its lookups found that exist (existing), the ids the caller says exist,
// and whether a controller renders: the CUE reads nothing else, and the
// policy is the engine's. The controller renders a stored TrainJob again on
// every reconcile, most of them brought by its JobSet's status, with all of
// those unchanged. So a render whose inputs all have identities that stand
// for their content (an object's uid and resourceVersion, which the API
// server changes with the content; a shipped runtime's content hash) is
// kept under them, and given again, copied, while they stay. A render of
// an object without them (vet, `cuetrainer render`) is not kept.

// renderKey is the key of a render the engine may keep, "" for one it may
// not.
func (s *Session) renderKey(r Result, opts RenderOptions) string {
	if s.e.renderMemo == nil || r.Object == nil {
		return ""
	}
	// Most renders without a memo are vet's, of objects without a uid:
	// they end here, before any key is written.
	if m := meta(r.Object); str(m["uid"]) == "" || str(m["resourceVersion"]) == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(r.Doc.APIVersion() + "\x00" + r.Doc.Kind() + "\x00")
	if s.opts.Controller {
		b.WriteString("controller\x00")
	}
	identity := func(what string, obj map[string]any) bool {
		m := meta(obj)
		uid, rv := str(m["uid"]), str(m["resourceVersion"])
		if uid == "" || rv == "" {
			return false
		}
		b.WriteString(what + "\x00" + uid + "\x00" + rv + "\x00")
		return true
	}
	if !identity("object", r.Object) {
		return ""
	}
	if rt := r.runtime; rt != nil {
		if !identity("runtime", rt.doc.Object) {
			if !rt.builtin {
				return ""
			}
			b.WriteString("runtime\x00" + rt.contentKey() + "\x00")
		}
	}
	for _, id := range sortedKeys(r.existing) {
		obj, _ := r.existing[id].(map[string]any)
		if !identity("existing\x00"+id, obj) {
			return ""
		}
	}
	ids := slices.Clone(opts.Existing)
	slices.Sort(ids)
	b.WriteString("ids\x00" + strings.Join(ids, "\x00"))
	return b.String()
}

// copied is a copy of a render that shares nothing a caller may change.
func (out Rendered) copied() Rendered {
	c := Rendered{Errors: slices.Clone(out.Errors), Warnings: slices.Clone(out.Warnings), applyOrder: slices.Clone(out.applyOrder)}
	if out.Objects != nil {
		c.Objects = make([]map[string]any, len(out.Objects))
		for i, obj := range out.Objects {
			c.Objects[i], _ = deepCopy(obj).(map[string]any)
		}
	}
	d := out.Controller
	d.ApplyPhase = maps.Clone(d.ApplyPhase)
	d.Status.Conditions = slices.Clone(d.Status.Conditions)
	d.Status.Fields, _ = deepCopy(d.Status.Fields).(map[string]any)
	if d.Deadline != nil {
		dl := *d.Deadline
		dl.Conditions = slices.Clone(dl.Conditions)
		dl.Delete = slices.Clone(dl.Delete)
		d.Deadline = &dl
	}
	c.Controller = d
	return c
}
