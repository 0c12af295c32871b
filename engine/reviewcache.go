package engine

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// The controller reviews a stored object again on every reconcile, most of
// them brought by its owned objects' events (a JobSet's status changing as
// its pods start) while the object itself, its runtime and the context
// kinds' objects stay as they were. A review is a function of those alone
// (the CUE cannot read anything else), so it is kept by the object's
// identity, uid and resourceVersion, and used again while what its lookups
// found and the context kinds' objects keep the uids and resourceVersions
// they had. The lookups' references, a function of the object and the
// request alone, are kept with it. What the render reads besides (the
// objects that exist) is read again on every reconcile.

// reviewCacheSize bounds the reviews kept, the least recently used
// dropped first.
const reviewCacheSize = 1024

// cachedReview is one review kept (see reviewKey).
type cachedReview struct {
	// refs are what the lookups named; reads identifies what they found
	// and the context the review read (see readsOf).
	refs  *lookupRefs
	reads string
	// result is the review's findings; object and summary its Object with
	// its defaults and its Summary, packed (nil when it has none). kept
	// says whether evaluate gave it a stored copy.
	result          Result
	object, summary value.Packed
	kept            bool
}

// newCachedReview is r as a memo keeps it; nil when its values do not pack
// (then it is not kept).
func newCachedReview(refs *lookupRefs, reads string, kept bool, r Result) *cachedReview {
	cr := &cachedReview{refs: refs, reads: reads, kept: kept, result: Result{Errors: slices.Clone(r.Errors), Warnings: slices.Clone(r.Warnings)}}
	var ok bool
	if r.Object != nil {
		if cr.object, ok = value.Pack(r.Object); !ok {
			return nil
		}
	}
	if r.Summary != nil {
		if cr.summary, ok = value.Pack(r.Summary); !ok {
			return nil
		}
	}
	return cr
}

// reviewKey is the key of a review the engine may keep, "" for one it may
// not: only a controller's review of a stored object as an update to itself
// (the object has a uid and a resourceVersion), in a session
// that holds no objects or context of its own.
func (s *Session) reviewKey(doc Document, req Request, unchanged bool) string {
	if !s.opts.Controller || s.opts.Cluster == nil || !unchanged {
		return ""
	}
	s.mu.RLock()
	own := len(s.objects) > 0 || len(s.context) > 0
	s.mu.RUnlock()
	m := k8s.Meta(doc.Object)
	uid, rv := k8s.Str(m["uid"]), k8s.Str(m["resourceVersion"])
	if own || uid == "" || rv == "" {
		return ""
	}
	return strings.Join([]string{identityKey(doc.APIVersion(), doc.Kind(), doc.Namespace(), doc.Name()), uid, rv, req.Operation,
		strconv.FormatBool(req.SchemaChecked), strconv.FormatBool(req.VerdictOnly), s.opts.Release}, "\x00")
}

// readsOf identifies what a review read besides its object: the runtime and
// objects its lookups found and the context kinds' objects, each by uid and
// resourceVersion; false when one of them has neither, so that the review
// is not kept.
func readsOf(runtime *stored, found map[string]any, listed map[string]map[string]any) (string, bool) {
	var b strings.Builder
	add := func(what string, obj any) bool {
		o, _ := obj.(map[string]any)
		m := k8s.Meta(o)
		uid, rv := k8s.Str(m["uid"]), k8s.Str(m["resourceVersion"])
		if uid == "" || rv == "" {
			return false
		}
		b.WriteString(what)
		b.WriteByte(0)
		b.WriteString(uid)
		b.WriteByte(0)
		b.WriteString(rv)
		b.WriteByte(0)
		return true
	}
	if runtime != nil && !add("runtime", runtime.doc.Object) {
		return "", false
	}
	for _, f := range value.SortedKeys(found) {
		if !add("object\x00"+f, found[f]) {
			return "", false
		}
	}
	for _, f := range value.SortedKeys(listed) {
		b.WriteString("context\x00" + f + "\x00")
		for _, name := range value.SortedKeys(listed[f]) {
			if !add(name, listed[f][name]) {
				return "", false
			}
		}
	}
	return b.String(), true
}

// cachedReview returns the review kept under key, nil when there is none.
func (e *core) cachedReview(key string) *cachedReview {
	cr, _ := e.reviewCache.Get(key)
	return cr
}

// keepReview keeps a review, which nothing changes after.
func (e *core) keepReview(key string, cr *cachedReview) {
	if cr == nil {
		return
	}
	e.reviewCache.Put(key, cr)
}

// copied is a copy of the kept review's findings, Object and Summary,
// what a caller may change, without the document and what was read for it.
func (cr *cachedReview) copied() Result {
	c := Result{Errors: slices.Clone(cr.result.Errors), Warnings: slices.Clone(cr.result.Warnings)}
	if cr.object != nil {
		c.Object, _ = cr.object.Value().(map[string]any)
	}
	if cr.summary != nil {
		c.Summary, _ = cr.summary.Value().(map[string]any)
	}
	return c
}

// use gives the kept review's result for doc, a copy, with the runtime and
// existing objects read for this request (refs, its lookups, say what the
// render reads of them).
func (cr *cachedReview) use(doc Document, runtime *stored, existing map[string]any, refs *lookupRefs) (Result, *stored) {
	r := cr.copied()
	r.Doc, r.runtime, r.existing, r.existingRead = doc, runtime, existing, readOfExisting(existing, refs)
	if !cr.kept {
		return r, nil
	}
	return r, &stored{doc: doc.WithObject(r.Object), summary: r.Summary}
}
