package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/tokens"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
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
// an object without them (vet, `cuetrainer render`) is kept under its
// content instead (renderAlike, below).

// renderKey is the key of a render the engine may keep, "" for one it may
// not.
func (s *Session) renderKey(r Result, opts RenderOptions) string {
	if s.e.renderMemo == nil || r.Object == nil || opts.observer != nil {
		return ""
	}
	// Most renders without a memo are vet's, of objects without a uid:
	// they end here, before any key is written.
	if m := k8s.Meta(r.Object); k8s.Str(m["uid"]) == "" || k8s.Str(m["resourceVersion"]) == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(r.Doc.APIVersion() + "\x00" + r.Doc.Kind() + "\x00")
	if s.opts.Controller {
		b.WriteString("controller\x00")
	}
	identity := func(what string, obj map[string]any) bool {
		m := k8s.Meta(obj)
		uid, rv := k8s.Str(m["uid"]), k8s.Str(m["resourceVersion"])
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
	for _, id := range value.SortedKeys(r.existing) {
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

// Renders alike.
//
// Objects alike but for their carried values (carried.go: a TrainJob's
// name, uid, env values) render alike but for those values. So the render
// of an object is also kept under a hash of everything it reads, with the
// carried values as tokens (renderAlike), and each caller gets its own
// values back. Its generators run on each caller's copy, once the values
// are back (generate): two objects never share a key pair, and a seed is
// hashed from the value itself. What the render memo keeps under
// identities comes first.

// renderAlike renders r with its carried values given as mode says, from
// the memo when an object alike rendered before. An observed render (the
// load's trials: renderObserver) is neither taken from the memo nor kept
// in it: it evaluates more than a render after the load (renderChecks),
// its observer must see its objects, and it holds what a kept one does
// not (the plan's parts).
func (s *Session) renderAlike(r Result, opts RenderOptions, mode carryMode) Rendered {
	if mode == carryNone || r.Object == nil {
		return s.renderOnce(r, opts, false)
	}
	t, tokenized := s.carryRender(r, mode, "")
	memo := s.e.renderMemo != nil && opts.observer == nil
	var key string
	if memo {
		key = renderContentKey(tokenized, opts, s.opts.Controller)
		if kept, ok := s.e.renderMemo.Get(key); ok {
			restored, _ := t.putBackRendered(kept.rendered()) // kept only when they restore
			return restored.generate(s.e, r.runtime)
		}
	}
	out := s.renderOnce(tokenized, opts, true)
	kept, keep := keepRender(out)
	restored, ok := t.putBackRendered(out)
	if !ok {
		// A rule changed a token, or the tokens sort the objects otherwise:
		// rendered again with the values.
		return s.renderOnce(r, opts, false)
	}
	if memo && keep {
		s.e.renderMemo.Put(key, kept)
	}
	return restored.generate(s.e, r.runtime)
}

// carryRender is r with its object's carried values (those of one entry
// alone, when entry is set) as tokens, and the tokens; nil when none is
// carried. A value the render sees elsewhere (the runtime, what it reads
// of the existing objects) keeps its value.
func (s *Session) carryRender(r Result, mode carryMode, entry string) (*valueTokens, Result) {
	c := s.e.compiled()
	k := newCarrying(c, s.e, mode, c.carriedFor(r.Doc.APIVersion(), r.Doc.Kind(), entry))
	k.candidates(r.Object)
	t := k.tokens(r.runtime, r.existingRead)
	if t != nil {
		r.Object = k.replace(t, r.Object)
	}
	return t, r
}

// generate runs the generators a deferred render left (gens) on its
// objects, once the carried values are back: a key pair is made for each
// caller, never shared, and a seed is hashed from the value itself.
func (out Rendered) generate(e *core, runtime *stored) Rendered {
	source := yamlOf(e, runtime)
	for _, pg := range out.gens {
		i := slices.IndexFunc(out.Objects, func(o map[string]any) bool { return objectKey(o) == pg.object })
		if i < 0 {
			continue
		}
		if err := pg.g.Run(out.Objects[i], source); err != nil {
			out.Errors = append(out.Errors, Finding{Phase: contract.PhaseRender, Type: "Internal error", Detail: fmt.Sprintf("generating data of %s: %v", pg.object, err)})
		}
	}
	out.gens = nil
	return out
}

// renderContentKey hashes what a render reads: the kind, whether a
// controller renders, the object, its runtime's content, the paths of the
// existing objects it reads and the ids the caller says exist.
func renderContentKey(r Result, opts RenderOptions, controller bool) string {
	h := value.NewContentHash()
	h.Str("alike")
	h.Value([]any{r.Doc.APIVersion(), r.Doc.Kind(), controller, r.Object})
	if r.runtime != nil {
		h.Str(r.runtime.contentKey())
	} else {
		h.Value(nil)
	}
	h.Value(r.existingRead)
	ids := slices.Clone(opts.Existing)
	slices.Sort(ids)
	h.Value(anySlice(ids))
	return h.Sum()
}

// keptRender is a render as a memo keeps it: its objects packed, the rest
// copied.
type keptRender struct {
	out     Rendered       // without its Objects
	objects []value.Packed // nil when out had none
}

// keepRender is out as a memo keeps it; false when its objects' values do
// not pack (then it is not kept).
func keepRender(out Rendered) (keptRender, bool) {
	k := keptRender{out: out.copiedBesidesObjects()}
	if out.Objects != nil {
		k.objects = make([]value.Packed, len(out.Objects))
		for i, obj := range out.Objects {
			var ok bool
			if k.objects[i], ok = value.Pack(obj); !ok {
				return keptRender{}, false
			}
		}
	}
	return k, true
}

// rendered is a copy of the kept render, for a caller to change.
func (k keptRender) rendered() Rendered {
	c := k.out.copiedBesidesObjects()
	if k.objects != nil {
		c.Objects = make([]map[string]any, len(k.objects))
		for i, p := range k.objects {
			c.Objects[i], _ = p.Value().(map[string]any)
		}
	}
	return c
}

// copiedBesidesObjects is a copy of what the render holds besides its
// Objects, which it leaves out.
func (out Rendered) copiedBesidesObjects() Rendered {
	c := Rendered{Errors: slices.Clone(out.Errors), Warnings: slices.Clone(out.Warnings), applyOrder: slices.Clone(out.applyOrder), gens: slices.Clone(out.gens)}
	d := out.Controller
	d.ApplyPhase = maps.Clone(d.ApplyPhase)
	d.Status.Conditions = slices.Clone(d.Status.Conditions)
	d.Status.Fields, _ = value.DeepCopy(d.Status.Fields).(map[string]any)
	if d.Deadline != nil {
		dl := *d.Deadline
		dl.Conditions = slices.Clone(dl.Conditions)
		dl.Delete = slices.Clone(dl.Delete)
		d.Deadline = &dl
	}
	c.Controller = d
	return c
}

// putBackRendered returns a render with the carried values back in place
// of their tokens; false when a token's text is left over, or when the
// values sort the objects otherwise than the tokens did (a render's
// objects are sorted by name). out is the caller's, changed in place.
func (t *valueTokens) putBackRendered(out Rendered) (Rendered, bool) {
	if t == nil || len(t.values) == 0 {
		return out, true
	}
	ok := true
	for i, obj := range out.Objects {
		t.restoreInPlace(obj)
		if i > 0 && objectKey(out.Objects[i-1]) > objectKey(out.Objects[i]) {
			ok = false
		}
	}
	out.Errors = t.restoreFindings(out.Errors)
	out.Warnings = t.restoreFindings(out.Warnings)
	// The generators still to run, and the directives' strings.
	gens := make([]pendingGen, len(out.gens))
	for i, pg := range out.gens {
		g := pg.g
		g.Path = slices.Clone(g.Path)
		if g.SeedFrom != nil {
			seed := t.restoreString(*g.SeedFrom)
			g.SeedFrom = &seed
		}
		pg.object, pg.g = t.restoreString(pg.object), g
		gens[i] = pg
	}
	out.gens = gens
	texts := []*string{}
	for i := range gens {
		g := &gens[i].g
		texts = append(texts, &g.PrivateKey, &g.PublicKey, &g.Key, &g.From, &g.Seed, &g.Text)
		for j := range g.Path {
			texts = append(texts, &g.Path[j])
		}
	}
	d := &out.Controller
	texts = append(texts, &d.Skip)
	conditions := func(cs []Condition) []Condition {
		cs = slices.Clone(cs)
		for i := range cs {
			texts = append(texts, &cs[i].Type, &cs[i].Status, &cs[i].Reason, &cs[i].Message, &cs[i].LastTransitionTime)
		}
		return cs
	}
	d.Status.Conditions = conditions(d.Status.Conditions)
	if d.Status.Fields != nil {
		d.Status.Fields, _ = t.restore(d.Status.Fields).(map[string]any)
		ok = ok && !leftover(Result{Object: d.Status.Fields})
	}
	if d.Deadline != nil {
		dl := *d.Deadline
		dl.Conditions = conditions(dl.Conditions)
		dl.Delete = slices.Clone(dl.Delete)
		texts = append(texts, &dl.Since)
		for i := range dl.Delete {
			texts = append(texts, &dl.Delete[i].APIVersion, &dl.Delete[i].Kind, &dl.Delete[i].Name)
		}
		d.Deadline = &dl
	}
	for _, p := range texts {
		*p = t.restoreString(*p)
		ok = ok && !tokens.Contains(*p)
	}
	for _, pg := range gens {
		ok = ok && (pg.g.SeedFrom == nil || !tokens.Contains(*pg.g.SeedFrom)) && !tokens.Contains(pg.object)
	}
	if leftover(Result{Errors: out.Errors, Warnings: out.Warnings}) {
		return out, false
	}
	for _, obj := range out.Objects {
		if leftover(Result{Object: obj}) {
			return out, false
		}
	}
	return out, ok
}
