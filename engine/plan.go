package engine

import (
	"encoding/json"
	"strings"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/cache"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// DefaultPlanCacheSize is how many plans one CUE runtime keeps. A plan
// keeps up to GOMAXPROCS evaluated values (see plan), of some 0.4 MB each
// for the shipped runtimes.
const DefaultPlanCacheSize = 64

// plan is a render's per-runtime part (the CUE's `plans`): evaluated once
// per runtime and per value of the input paths it reads, and handed to
// every render of that runtime as context.plan, an evaluated CUE value that
// the render shares rather than evaluates again.
//
// An evaluation that shares a value writes to it (CUE keeps evaluation
// state in the shared nodes), so one plan value serves one render at a
// time: renders take one from the plan's free values, or evaluate one more
// when all are in use, and give it back.
type plan struct {
	// out are the plan's own outputs (edits, errors, ...), decoded once
	// and added to every render's.
	out outputs
	err error

	// aliases are the tokens the plan's evaluation gave opaque keys: a
	// render of the plan gives the same keys the same tokens.
	aliases *k8s.KeyAliases

	// values are the plan's evaluated values, for renders to share.
	values cache.ValuePool
}

// planCache keeps the plans of one CUE runtime (memo.go's LRU), the
// least recently used dropped first.
type planCache = cache.LRU[*plan]

func newPlanCache(max int) *planCache {
	if max <= 0 {
		max = DefaultPlanCacheSize
	}
	return cache.NewLRU[*plan](max)
}

// planFor returns the plan of a render: the kind's plan evaluated with the
// runtime, the merges and the input paths the plan reads, from the cache
// when that was evaluated before.
func (s *Session) planFor(c *compiled, apiVersion, kind string, runtime *stored, input map[string]any, merged map[string]any) *plan {
	pv, ok := c.Plans[apiVersion][kind]
	if !ok {
		return nil
	}
	read := value.Project(input, s.e.decl.PlanReads[apiVersion][kind])
	key := apiVersion + "/" + kind + "\x00"
	if runtime != nil {
		key += runtime.contentKey()
	}
	if len(read) > 0 {
		data, err := json.Marshal(read)
		if err != nil {
			return &plan{err: err}
		}
		key += "\x00" + string(data)
	}
	if p, ok := c.planCache.Get(key); ok {
		return p
	}
	a := s.e.decl.Opaque.Aliases(nil)
	ctx := map[string]any{contract.FieldMerged: a.Alias(merged)}
	facts := []any{}
	if runtime != nil {
		ctx[contract.FieldRuntime] = a.Alias(runtime.typed(s.e))
		facts = append(facts, runtime.typed(s.e))
	}
	for _, m := range merged {
		facts = append(facts, m)
	}
	ctx[contract.FieldQuantities] = k8s.Quantities(facts...)
	in := map[string]any{contract.FieldInput: a.Alias(read), contract.FieldContext: ctx}
	p := &plan{aliases: a, values: cache.ValuePool{Make: func() cue.Value { return pv.Unify(c.Ctx.Encode(in)) }}}
	v := p.values.Make()
	if p.err = v.Err(); p.err == nil {
		var oerr *outputError
		if p.out, oerr = s.e.decodeOutputs(v, true); oerr != nil {
			p.err = oerr
		}
	}
	p.values.Release(v)
	c.planCache.Put(key, p)
	return p
}

// combine returns the kind's render with the named parts (renderParts), for
// a controller with the kind's controller part (controllers), and with
// checks (an observed render: the load's trials) the kind's checks
// (renderChecks), unified once per set of parts and kept: a render then
// evaluates only the parts its plan chose, only a controller's what the
// controller reads, and only the load's the checks of the parts.
func (c *compiled) combine(apiVersion, kind string, render cue.Value, parts []string, controller, checks bool) (cue.Value, error) {
	key := apiVersion + "/" + kind + "\x00" + strings.Join(parts, "\x00")
	if controller {
		key += "\x00\x00controller"
	}
	if checks {
		key += "\x00\x00checks"
	}
	if v, ok := c.combined.Load(key); ok {
		return v.(cue.Value), nil
	}
	v := render
	for _, name := range parts {
		// A framework's part is chosen by its name; a framework may have
		// none (its render is the shared one's). A part a plan names
		// by hand exists: the load checks it (checkPlannedParts).
		if part, ok := c.Parts[apiVersion][kind][name]; ok {
			v = v.Unify(part)
		}
	}
	if ctl, ok := c.Controllers[apiVersion][kind]; ok && controller {
		v = v.Unify(ctl)
	}
	if rc, ok := c.RenderChecks[apiVersion][kind]; ok && checks {
		v = v.Unify(rc)
	}
	c.combined.Store(key, v)
	return v, nil
}
