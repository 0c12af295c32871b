package controller

import (
	"sync"
	"time"
)

// appliedWindow is how long an object the controller applied is read from
// the API server when the cache does not have it yet. An informer catches
// up in well under a second; the window only bounds what is remembered.
const appliedWindow = time.Minute

// objectKey names an object the way the engine's lookups do.
type objectKey struct{ group, kind, namespace, name string }

// applied remembers the objects the controller applied a moment ago, so a
// reconcile that follows at once does not take the cache's "not found" for
// the truth: the render decides on what exists (a runtime snapshot is made
// only when there is none), and one made again from a runtime edited in
// between would be wrong. This is client-go's expectations, for reads.
// The zero value is unusable; a nil *applied remembers nothing.
type applied struct {
	mu   sync.Mutex
	at   map[objectKey]time.Time
	now  func() time.Time
	next time.Time // when to forget the expired ones
}

func newApplied(now func() time.Time) *applied {
	if now == nil {
		now = time.Now
	}
	return &applied{at: map[objectKey]time.Time{}, now: now}
}

// note records that the object was applied now.
func (a *applied) note(k objectKey) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if now.After(a.next) {
		for key, t := range a.at {
			if now.Sub(t) > appliedWindow {
				delete(a.at, key)
			}
		}
		a.next = now.Add(appliedWindow)
	}
	a.at[k] = now
}

// recent says whether the object was applied within the window.
func (a *applied) recent(k objectKey) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.at[k]
	return ok && a.now().Sub(t) <= appliedWindow
}
