package engine

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
	if _, ok := c.lookups[doc.APIVersion()][doc.Kind()]; !ok {
		return nil
	}
	reads := s.e.lookupReads[doc.APIVersion()][doc.Kind()]
	input := project(doc.Object, reads)
	var old map[string]any
	switch {
	case unchanged:
		old = input
	case req.OldObject != nil:
		old = project(req.OldObject, reads)
	}
	memo := s.e.lookupMemo != nil
	var key string
	if memo {
		c := newContentHash()
		c.value([]any{doc.APIVersion(), doc.Kind(), req.Operation, s.opts.Controller, input, old})
		key = c.sum()
		if refs, ok := s.e.lookupMemo.get(key); ok {
			return refs
		}
	}
	a := s.e.opaque.aliases(nil)
	rctx := map[string]any{}
	if req.Operation != "" {
		rctx[fieldOperation] = req.Operation
	}
	if old != nil {
		rctx[fieldOld] = a.alias(old)
	}
	s.e.lookupsMade.Add(1)
	refs := s.lookupRefs(c, doc, c.ctx.Encode(a.alias(input)), rctx)
	if memo {
		s.e.lookupMemo.put(key, refs)
	}
	return refs
}
