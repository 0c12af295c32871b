package engine

import (
	"maps"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// A kind's lookups are a function of the paths of the input they declare
// (`reads`), the operation and the same paths of the old object: the engine
// gives them only those, so a lookup cannot read anything else. Their
// references are kept (memoised) on exactly that, for every session of the
// engine: the engine is one policy, so a new policy starts afresh. The
// load tries each kind's lookups on the probes with the whole object too
// (checkLookupReads): a lookup that reads a path its reads do not name
// names other objects there, and fails the load.

// lookupsFor returns what the kind's lookups name for doc (nil when the
// kind has none), from the memo when the same reads were looked up before.
// unchanged says the request updates the object to itself.
func (s *Session) lookupsFor(c *compiled, doc Document, req Request, unchanged bool) *lookupRefs {
	if _, ok := c.Lookups[doc.APIVersion()][doc.Kind()]; !ok {
		return nil
	}
	reads := s.e.lookupPaths(doc.APIVersion(), doc.Kind(), req.Operation)
	input := value.Project(doc.Object, reads)
	old := realOld(doc, req, reads, unchanged)
	memo := s.e.lookupMemo != nil
	if !memo {
		return s.evaluateLookups(c, doc, req, input, old)
	}
	// The carried values reach the lookups as tokens too (carried.go),
	// so that objects alike but for them share what the lookups name.
	t := carryInto(c, s.e, carryUnnamed, c.carried[doc.APIVersion()][doc.Kind()], &input, &old, unchanged)
	h := value.NewContentHash()
	h.Value([]any{doc.APIVersion(), doc.Kind(), req.Operation, s.opts.Controller, input, old})
	key := h.Sum()
	if refs, ok := s.e.lookupMemo.Get(key); ok {
		restored, _ := t.restoreRefs(refs) // kept only when they restore
		return restored
	}
	refs := s.evaluateLookups(c, doc, req, input, old)
	restored, ok := t.restoreRefs(refs)
	if !ok {
		// A lookup changed a token: they are evaluated on the values.
		return s.evaluateLookups(c, doc, req, value.Project(doc.Object, reads), realOld(doc, req, reads, unchanged))
	}
	s.e.lookupMemo.Put(key, refs)
	return restored
}

// lookupPaths are the input paths the kind's lookups read on op: reads,
// and updateReads on an UPDATE.
func (e *core) lookupPaths(apiVersion, kind, op string) [][]string {
	if op == contract.OpUpdate {
		return e.decl.LookupReads[apiVersion][kind][contract.OpUpdate]
	}
	return e.decl.LookupReads[apiVersion][kind][contract.OpCreate]
}

// realOld is the old object's paths the lookups read.
func realOld(doc Document, req Request, reads [][]string, unchanged bool) map[string]any {
	switch {
	case unchanged:
		return value.Project(doc.Object, reads)
	case req.OldObject != nil:
		return value.Project(req.OldObject, reads)
	}
	return nil
}

// evaluateLookups evaluates the kind's lookups on the input's and the old
// object's paths they read.
func (s *Session) evaluateLookups(c *compiled, doc Document, req Request, input, old map[string]any) *lookupRefs {
	a := s.e.decl.Opaque.Aliases(nil)
	rctx := map[string]any{}
	if req.Operation != "" {
		rctx[contract.FieldOperation] = req.Operation
	}
	if old != nil {
		rctx[contract.FieldOld] = a.Alias(old)
	}
	s.e.lookupsMade.Add(1)
	return s.lookupRefs(c, doc, c.Ctx.Encode(a.Alias(input)), rctx)
}

// readOfExisting is what a render is given of the existing objects: of
// each, the paths its lookup's reads name (the whole object when it names
// none). An object without them still exists. The load checks the reads
// (checkExistingReads).
func readOfExisting(existing map[string]any, refs *lookupRefs) map[string]any {
	if len(existing) == 0 || refs == nil {
		return existing
	}
	var out map[string]any
	for id, obj := range existing {
		ref, ok := refs.existing[id]
		m, isMap := obj.(map[string]any)
		if !ok || ref.Reads == nil || !isMap {
			continue
		}
		if out == nil {
			out = maps.Clone(existing)
		}
		out[id] = value.Project(m, ref.Reads)
	}
	if out == nil {
		return existing
	}
	return out
}
