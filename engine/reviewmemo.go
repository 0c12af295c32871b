package engine

import (
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// A review is a function of what the engine gives its CUE and nothing
// else: the kind, the object, the request (operation and old object; the
// time is the mutators' alone), the release, the session's and the
// cluster's context objects, what the lookups found, and whether the API
// server checked the object's schema (the CRD's checks are then left out)
// or only the verdict is wanted. The
// review memo keeps a review's result under a hash of exactly those
// (reviewMemoKey), for every session of the engine: a hit gives what a
// fresh evaluation would, by construction, whoever asks (vet, a webhook,
// the controller). The engine is one policy, so a new policy starts
// afresh. The controller's cache of stored objects (reviewcache.go) is
// checked first: it saves the lookups as well.

// reviewMemoKey is the review memo's key for the admission, once its
// lookups have found what they name; "" when the engine keeps no memo.
func (ad *admission) reviewMemoKey() string {
	if !ad.memo || ad.s.e.reviewMemo == nil {
		return ""
	}
	c := value.NewContentHash()
	req := ad.req
	c.Value([]any{ad.doc.APIVersion(), ad.doc.Kind(), req.SchemaChecked, ad.unifySchema, req.VerdictOnly, ad.unchanged, req.Operation, ad.s.opts.Release})
	c.Value(ad.doc.Object)
	c.Value(req.OldObject) // nil when unchanged: the object is the old one
	if ad.runtime != nil {
		c.Str(ad.runtime.contentKey())
	} else {
		c.Value(nil)
	}
	c.Value(ad.found)
	objectsByField(c, ad.sessionContext)
	objectsByField(c, ad.listed)
	return c.Sum()
}

// objectsByField writes context objects by field and name.
func objectsByField(c *value.ContentHash, m map[string]map[string]any) {
	c.Tag('m', uint64(len(m)))
	for _, f := range value.SortedKeys(m) {
		c.Str(f)
		c.Value(m[f])
	}
}

// recall gives the carried values their tokens (carried.go), and ends the
// admission with a review the memo holds for its key, the values put back,
// or, for an evaluation that asks (evalMode.uncarried), with none when no
// value is a token.
func (ad *admission) recall() bool {
	ad.carry()
	if ad.uncarried != nil && ad.values == nil {
		*ad.uncarried = true
		return false
	}
	ad.memoKey = ad.reviewMemoKey()
	if ad.memoKey == "" {
		return true
	}
	cr, ok := ad.s.e.reviewMemo.Get(ad.memoKey)
	if !ok {
		return true
	}
	r, st := cr.use(ad.r.Doc, ad.runtime, ad.existing, ad.refs)
	// What the memo keeps has no token left over (keep).
	ad.r, ad.st, _ = ad.values.putBack(r, st)
	if ad.key != "" {
		ad.s.e.keepReview(ad.key, newCachedReview(ad.refs, ad.reads, cr.kept, ad.r))
	}
	return false
}

// carry gives the kind's carried values of the object, and of the old
// one with the same tokens, as tokens, as the admission's mode says. An
// object the API server's metadata checks refuse keeps its values: those
// checks are the engine's, and read them.
func (ad *admission) carry() {
	paths := ad.c.carriedFor(ad.doc.APIVersion(), ad.doc.Kind(), ad.entry)
	if ad.mode == carryNone || len(paths) == 0 {
		return
	}
	if !ad.req.SchemaChecked && len(k8s.ObjectMetaFindings(ad.doc.Object)) > 0 {
		return
	}
	k := newCarrying(ad.c, ad.s.e, ad.mode, paths)
	k.candidates(ad.doc.Object, ad.req.OldObject)
	if len(k.at) == 0 {
		return
	}
	// What else the review sees: the runtime, the other objects found,
	// the context objects.
	seen := []any{ad.found}
	for _, byName := range []map[string]map[string]any{ad.sessionContext, ad.listed} {
		for _, objs := range byName {
			seen = append(seen, objs)
		}
	}
	t := k.tokens(ad.runtime, seen...)
	if t == nil {
		return
	}
	ad.real, ad.values = ad.doc.Object, t
	ad.doc.Object, ad.req.OldObject = k.replace(t, ad.doc.Object), k.replace(t, ad.req.OldObject)
}

// realObject is the object with its carried values.
func (ad *admission) realObject() map[string]any {
	if ad.real != nil {
		return ad.real
	}
	return ad.doc.Object
}

// contextSnapshot is the session's context objects as they are now, for
// one review's key and its evaluation alike; it notes the read.
func (s *Session) contextSnapshot() map[string]map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.note(contextAdded)
	if len(s.context) == 0 {
		return nil
	}
	out := make(map[string]map[string]any, len(s.context))
	for f, objs := range s.context {
		out[f] = make(map[string]any, len(objs))
		for name, obj := range objs {
			out[f][name] = obj
		}
	}
	return out
}
