package engine

import (
	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/cache"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// A review reads its runtime, which the engine hands in as context.runtime.
// Encoding a runtime into a CUE value costs a review some 300 to 700
// allocations, the same every time for the same runtime. So each CUE
// runtime keeps, per runtime content, the runtime encoded with its opaque
// keys' tokens, in a pool of values reviews share one at a time (memo.go's
// valuePool, as plans share theirs); a review gives its value back when it
// has decoded its findings. The review's tokens start from the shared
// value's, so that its keys mean the same. Options.NoMemo encodes afresh.

// sharedRuntime is one runtime's encoded values, for reviews to share.
type sharedRuntime struct {
	// aliases gave the runtime's opaque keys their tokens; nothing adds
	// to them after.
	aliases *k8s.KeyAliases
	values  cache.ValuePool
}

// sharedRuntime returns the shared values of a runtime, nil with
// Options.NoMemo.
func (c *compiled) sharedRuntime(e *core, runtime *stored) *sharedRuntime {
	if c.sharedRuntimes == nil {
		return nil
	}
	key := runtime.contentKey()
	if sr, ok := c.sharedRuntimes.Get(key); ok {
		return sr
	}
	a := e.decl.Opaque.Aliases(nil)
	aliased := a.Alias(runtime.doc.Object)
	sr := &sharedRuntime{aliases: a, values: cache.ValuePool{Make: func() cue.Value { return c.Ctx.Encode(aliased) }}}
	c.sharedRuntimes.Put(key, sr)
	return sr
}

// releaseRuntime gives the review's runtime value back, if it took one.
func (ad *admission) releaseRuntime() {
	if ad.shared != nil {
		ad.shared.values.Release(ad.runtimeValue)
	}
}
