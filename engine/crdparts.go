package engine

import (
	"fmt"
	"slices"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/tokens"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// CRD checks by part.
//
// A kind's CRD checks (crdChecks) are evaluated with its review, on the
// whole object, so two objects that differ anywhere evaluate all of them
// again. Most of them read one part of the object alone, as a CRD's CEL
// rule reads its `self`: a TrainJob's trainer, one replicatedJob of a
// runtime patch. Such checks may be written as parts (crdCheckParts): the
// part at a path ("*" for every item of a list) is given to its rules as
// `self`, with its defaults, and the items' indexes as `at`. The engine
// evaluates each part apart from the review, after it, and keeps its
// errors under the part's value (the parts' memo), so that objects alike
// there share them whatever else they hold.
//
// A part reads nothing but self and at, for it is given nothing else: a
// rule that names the object or the review's context refers to nothing,
// a load error at its line (TestCRDCheckPartReadsSelfAlone). Its key holds
// the part's value as the review's object has it, defaults and carried
// values' tokens in, so that a memo hit is what an evaluation would give.

// crdPart is one entry of crdCheckParts.
type crdPart struct {
	name string
	// path leads from the object's root to the part; "*" is every item of
	// a list.
	path  []string
	value cue.Value
}

// crdPartsOf reads a kind's crdCheckParts in the CUE's order, which is the
// order of their findings.
func (e *core) crdPartsOf(v cue.Value) ([]crdPart, error) {
	it, err := v.Fields()
	if err != nil {
		return nil, e.cueError("reading crdCheckParts", err)
	}
	var parts []crdPart
	for it.Next() {
		p := crdPart{name: it.Selector().Unquoted(), value: it.Value()}
		if err := it.Value().LookupPath(contract.PathCRDPartPath).Decode(&p.path); err != nil {
			return nil, e.cueError("reading crdCheckParts "+p.name, err)
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// partTokens number the carried values' tokens a part holds in the order
// they first appear in it (a map's entries in key order). An object's
// tokens are numbered over the whole object, so a part alike in two
// objects may hold other numbers: the memo keys and keeps a part's errors
// with the part's own numbers, and gives them back with the object's.
type partTokens struct {
	part   map[int]int // the object's number to the part's
	object []int       // the part's number to the object's
}

func newPartTokens(data any) *partTokens {
	t := &partTokens{part: map[int]int{}}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			tokens.Value.Replace(x, func(n int) (string, bool) {
				if _, seen := t.part[n]; !seen {
					t.part[n] = len(t.object)
					t.object = append(t.object, n)
				}
				return "", false
			})
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, k := range value.SortedKeys(x) {
				walk(x[k])
			}
		}
	}
	walk(data)
	return t
}

// toPart gives s the part's numbers for the object's tokens.
func (t *partTokens) toPart(s string) string {
	return tokens.Value.Replace(s, func(n int) (string, bool) {
		if i, ok := t.part[n]; ok {
			return tokens.Part.Make(i)
		}
		return "", false
	})
}

// toObject gives s the object's tokens for the part's numbers.
func (t *partTokens) toObject(s string) string {
	return tokens.Part.Replace(s, func(i int) (string, bool) {
		if i < len(t.object) {
			return tokens.Value.Make(t.object[i])
		}
		return "", false
	})
}

// partAt is one place a part's path leads to in an object: its value,
// the indexes of the path's items, and the path's map keys (the opaque
// keys' place).
type partAt struct {
	data any
	at   []any
	keys []string
}

// partsAt finds the places path leads to in object, in order.
func partsAt(object any, path []string) []partAt {
	out := []partAt{{data: object}}
	for _, seg := range path {
		var next []partAt
		for _, p := range out {
			if seg != "*" {
				m, ok := p.data.(map[string]any)
				if v, found := m[seg]; ok && found {
					next = append(next, partAt{v, p.at, append(slices.Clone(p.keys), seg)})
				}
				continue
			}
			items, _ := p.data.([]any)
			for i, item := range items {
				next = append(next, partAt{item, append(slices.Clone(p.at), i), p.keys})
			}
		}
		out = next
	}
	return out
}

// crdPartFindings are the errors of the kind's CRD check parts, each part
// in turn and its places in order, with the opaque keys put back: from
// the parts' memo, or evaluated and kept there. object is the review's
// object as data, with its defaults and tokens.
func (ad *admission) crdPartFindings(object map[string]any) ([]Finding, error) {
	e := ad.s.e
	var out []Finding
	for _, part := range ad.c.crdParts[ad.doc.APIVersion()][ad.doc.Kind()] {
		for _, p := range partsAt(object, part.path) {
			var key string
			var numbers *partTokens
			if e.crdPartMemo != nil {
				numbers = newPartTokens(p.data)
				h := value.NewContentHash()
				h.Leaf = numbers.toPart
				h.Value([]any{ad.doc.APIVersion(), ad.doc.Kind(), part.name, p.at, p.data})
				key = h.Sum()
				if kept, ok := e.crdPartMemo.Get(key); ok {
					out = append(out, k8s.RewriteFindings(kept, tokens.Part.Prefix(), numbers.toObject)...)
					continue
				}
			}
			e.crdPartsMade.Add(1)
			// The part as data, its opaque keys as the review's tokens: a
			// value of the review's own would be evaluated again, schema
			// and all.
			self, _ := ad.a.AliasAt(p.data, p.keys)
			v := part.value.Unify(ad.c.Ctx.Encode(map[string]any{contract.FieldSelf: self, contract.FieldAt: p.at}))
			fs, err := k8s.DecodeFindings(e.src, v.LookupPath(contract.PathReview[contract.PhaseCRD]), contract.PhaseCRD)
			if err != nil {
				return nil, fmt.Errorf("part %s: %w", part.name, err)
			}
			fs = ad.a.RestoreFindings(fs)
			if key != "" && !hasPhase(fs, contract.PhaseRuleError) {
				e.crdPartMemo.Put(key, k8s.RewriteFindings(fs, tokens.Value.Prefix(), numbers.toPart))
			}
			out = append(out, fs...)
		}
	}
	return out, nil
}
