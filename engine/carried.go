package engine

import (
	"slices"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/tokens"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// Carried values.
//
// Objects that differ only in values the rules carry over and never look
// at (a name copied into a message, an env value copied into a
// container) would each miss the review memo. The CUE names such values
// (`carried`: a path of the input, and the constraint every value there
// meets for the rules to treat it alike); the engine gives the review each
// one as a token, keys the memo on the tokens, and puts the values back in
// everything it reads out, so that such objects share one review. A value
// outside its constraint, or one the CUE's sources hold as a literal (a
// rule may compare it with one), reaches the review as it is.
//
// Three checks keep `carried` honest. At load, the probes and the runtimes
// are reviewed with their values and with tokens, and a review that
// differs fails the load at the entry (checkCarried). A result that still
// holds a token's text once the values are back (a rule changed a token:
// its case, a part of it) is thrown away, and the object reviewed again
// with its values. And TestMemoChangesNothing and FuzzMemo compare every
// corpus with an engine that carries nothing.

// carryMode says which carried values an evaluation gives as tokens.
type carryMode int

const (
	// carryNone gives every value as it is.
	carryNone carryMode = iota
	// carryUnnamed gives as tokens the carried values that meet their
	// constraint and that the CUE's sources do not hold.
	carryUnnamed
	// carryAll gives as tokens every carried value that meets its
	// constraint: for the load's check, whose probes hold named values.
	carryAll
)

// carriedPath is one entry of `carried`: a path ("*" for every item of a
// list or every key of a map) and the constraint of its values.
type carriedPath struct {
	// id is apiVersion, kind and name: the entry among all kinds'.
	id   string
	name string
	path []string
	// value is the constraint; plain says it is `string` alone, which
	// every string meets.
	value cue.Value
	plain bool
}

// maxCarried bounds the tokens (tokens.Value) of one evaluation.
const maxCarried = tokens.Max

// valueTokens are the tokens of one evaluation's carried values.
type valueTokens struct {
	byValue map[string]string
	values  []string
}

// token is the value's token, the same for the same value.
func (t *valueTokens) token(v string) (string, bool) {
	if tok, ok := t.byValue[v]; ok {
		return tok, true
	}
	if len(t.values) >= maxCarried {
		return "", false
	}
	tok, _ := tokens.Value.Make(len(t.values))
	if t.byValue == nil {
		t.byValue = map[string]string{}
	}
	t.byValue[v] = tok
	t.values = append(t.values, v)
	return tok, true
}

// carrying is one evaluation's choice of the values it carries: those at
// a carried path that meet its constraint, that the CUE's sources do not
// hold (unless mode is carryAll), and that the review sees nowhere else
// (in another field, the old object's other fields, the runtime, the
// context objects): a rule may compare a value with another, and a value
// and its token compare alike only where they are the same value.
type carrying struct {
	c     *compiled
	e     *core
	mode  carryMode
	paths []carriedPath
	// at counts each candidate's places at carried paths; all counts every
	// string's places (values and keys) in the objects carried; order
	// lists the candidates as the walk first met them.
	at, all map[string]int
	order   []string
}

// candidates counts the values at the objects' carried paths, then each
// one's places anywhere in the objects (values and map keys).
func (k *carrying) candidates(objs ...map[string]any) {
	for _, obj := range objs {
		for _, p := range k.paths {
			if obj != nil {
				k.visit(obj, p, p.path)
			}
		}
	}
	if len(k.at) == 0 {
		return
	}
	for _, obj := range objs {
		countAmong(obj, k.at, k.all)
	}
}

func (k *carrying) visit(v any, p carriedPath, rest []string) {
	if len(rest) == 0 {
		s, ok := v.(string)
		if ok && !(k.mode == carryUnnamed && k.e.decl.Opaque.Named[s]) && k.c.meets(p, s) {
			if k.at[s] == 0 {
				k.order = append(k.order, s)
			}
			k.at[s]++
		}
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if rest[0] != "*" {
			if val, ok := x[rest[0]]; ok {
				k.visit(val, p, rest[1:])
			}
			return
		}
		for _, key := range value.SortedKeys(x) {
			k.visit(x[key], p, rest[1:])
		}
	case []any:
		if rest[0] == "*" {
			for _, val := range x {
				k.visit(val, p, rest[1:])
			}
		}
	}
}

// countAmong counts the places in v (values and map keys) of the strings
// of among.
func countAmong(v any, among, into map[string]int) {
	switch x := v.(type) {
	case string:
		if _, ok := among[x]; ok {
			into[x]++
		}
	case map[string]any:
		for key, val := range x {
			if _, ok := among[key]; ok {
				into[key]++
			}
			countAmong(val, among, into)
		}
	case []any:
		for _, val := range x {
			countAmong(val, among, into)
		}
	}
}

// countStrings counts the strings of v, its map keys among them.
func countStrings(v any, into map[string]int) {
	switch x := v.(type) {
	case string:
		into[x]++
	case map[string]any:
		for key, val := range x {
			into[key]++
			countStrings(val, into)
		}
	case []any:
		for _, val := range x {
			countStrings(val, into)
		}
	}
}

// newCarrying starts the choice of an evaluation's carried values.
func newCarrying(c *compiled, e *core, mode carryMode, paths []carriedPath) *carrying {
	return &carrying{c: c, e: e, mode: mode, paths: paths, at: map[string]int{}, all: map[string]int{}}
}

// carryInto gives the carried values of *input and *old, which hold all
// the evaluation sees, their tokens (the old object is the input when
// unchanged); nil when none is carried.
func carryInto(c *compiled, e *core, mode carryMode, paths []carriedPath, input, old *map[string]any, unchanged bool) *valueTokens {
	if len(paths) == 0 {
		return nil
	}
	k := newCarrying(c, e, mode, paths)
	if unchanged {
		k.candidates(*input)
	} else {
		k.candidates(*input, *old)
	}
	t := k.tokens(nil)
	if t == nil {
		return nil
	}
	*input = k.replace(t, *input)
	if unchanged {
		*old = *input
	} else {
		*old = k.replace(t, *old)
	}
	return t
}

// restoreRefs returns what lookups named with the values back in place of
// their tokens; false when a token's text is left over.
func (t *valueTokens) restoreRefs(r *lookupRefs) (*lookupRefs, bool) {
	if t == nil || len(t.values) == 0 || r == nil {
		return r, true
	}
	ok := true
	ref := func(l contract.LookupRef) contract.LookupRef {
		for _, f := range []*string{&l.Group, &l.Kind, &l.Namespace, &l.Name} {
			*f = t.restoreString(*f)
			ok = ok && !tokens.Contains(*f)
		}
		if l.Pinned != nil {
			p := *l.Pinned
			for _, f := range []*string{&p.Namespace, &p.Name, &p.Key} {
				*f = t.restoreString(*f)
				ok = ok && !tokens.Contains(*f)
			}
			l.Pinned = &p
		}
		return l
	}
	out := &lookupRefs{}
	if r.runtime != nil {
		rt := ref(*r.runtime)
		out.runtime = &rt
	}
	for _, m := range []struct {
		from, to *map[string]contract.LookupRef
	}{{&r.objects, &out.objects}, {&r.existing, &out.existing}} {
		if *m.from == nil {
			continue
		}
		*m.to = make(map[string]contract.LookupRef, len(*m.from))
		for k, l := range *m.from {
			(*m.to)[k] = ref(l)
		}
	}
	return out, ok
}

// tokens returns the tokens of the values to carry, nil when there is
// none: a candidate is carried only where the evaluation sees it nowhere
// else, in runtime (nil for none) or in seen (the other objects it reads),
// since a rule may compare two values.
func (k *carrying) tokens(runtime *stored, seen ...any) *valueTokens {
	others := map[string]int{}
	for _, v := range seen {
		countAmong(v, k.at, others)
	}
	// Numbered by where the walk met them (the entries in order, lists in
	// order, maps by key), not by their text: objects alike but for these
	// values get the same tokens in the same places.
	t := &valueTokens{}
	for _, v := range k.order {
		if k.all[v] == k.at[v] && others[v] == 0 && (runtime == nil || runtime.strings()[v] == 0) {
			t.token(v)
		}
	}
	if len(t.values) == 0 {
		return nil
	}
	return t
}

// carriedFor are the kind's carried entries, that of one name alone when
// entry is set (the load's check, entry by entry).
func (c *compiled) carriedFor(apiVersion, kind, entry string) []carriedPath {
	paths := c.carried[apiVersion][kind]
	if entry == "" {
		return paths
	}
	return slices.DeleteFunc(slices.Clone(paths), func(p carriedPath) bool { return p.name != entry })
}

// replace returns obj with the values t carries as their tokens, copying
// what it changes.
func (k *carrying) replace(t *valueTokens, obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	out := any(obj)
	for _, p := range k.paths {
		out, _ = t.replaceAt(out, p.path)
	}
	m, _ := out.(map[string]any)
	return m
}

func (t *valueTokens) replaceAt(v any, rest []string) (any, bool) {
	if len(rest) == 0 {
		if s, ok := v.(string); ok {
			if tok, ok := t.byValue[s]; ok {
				return tok, true
			}
		}
		return v, false
	}
	switch x := v.(type) {
	case map[string]any:
		return k8s.MapEntries(x, func(key string, val any) (any, bool) {
			if rest[0] != "*" && key != rest[0] {
				return val, false
			}
			return t.replaceAt(val, rest[1:])
		})
	case []any:
		if rest[0] != "*" {
			return v, false
		}
		return k8s.MapItems(x, func(v any) (any, bool) { return t.replaceAt(v, rest[1:]) })
	}
	return v, false
}

// meets reports whether s meets the entry's constraint.
func (c *compiled) meets(p carriedPath, s string) bool {
	if p.plain {
		return true
	}
	key := p.id + "\x00" + s
	if ok, kept := c.meetsCache.Get(key); kept {
		return ok
	}
	ok := p.value.Unify(c.Ctx.Encode(s)).Validate(cue.Concrete(true)) == nil
	c.meetsCache.Put(key, ok)
	return ok
}

// putBack returns r and st with the carried values back in place of
// their tokens, copied where they change; false when a token's text is
// left over (a rule changed a token), so that the result is not the
// object's.
func (t *valueTokens) putBack(r Result, st *stored) (Result, *stored, bool) {
	if t == nil || len(t.values) == 0 {
		return r, st, true
	}
	if r.Object != nil {
		r.Object, _ = t.restore(r.Object).(map[string]any)
	}
	if r.Summary != nil {
		r.Summary, _ = t.restore(r.Summary).(map[string]any)
	}
	r.Errors = t.restoreFindings(r.Errors)
	r.Warnings = t.restoreFindings(r.Warnings)
	if st != nil {
		kept := &stored{doc: st.doc, summary: r.Summary}
		kept.doc.Object = r.Object
		st = kept
	}
	return r, st, !leftover(r)
}

func (t *valueTokens) restore(v any) any {
	out, _ := t.restoreValue(v)
	return out
}

// restoreInPlace puts the values back in v's maps and lists themselves:
// v is a copy no one else holds.
func (t *valueTokens) restoreInPlace(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok {
				if r := t.restoreString(s); r != s {
					x[k] = r
				}
				continue
			}
			t.restoreInPlace(val)
		}
	case []any:
		for i, val := range x {
			if s, ok := val.(string); ok {
				x[i] = t.restoreString(s)
				continue
			}
			t.restoreInPlace(val)
		}
	}
}

func (t *valueTokens) restoreValue(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		s := t.restoreString(x)
		return s, s != x
	case map[string]any:
		return k8s.MapEntries(x, func(_ string, val any) (any, bool) { return t.restoreValue(val) })
	case []any:
		return k8s.MapItems(x, t.restoreValue)
	}
	return v, false
}

// restoreString puts back the tokens in s.
func (t *valueTokens) restoreString(s string) string {
	return tokens.Value.Replace(s, func(n int) (string, bool) {
		if n < len(t.values) {
			return t.values[n], true
		}
		return "", false
	})
}

// restoreFindings returns the findings with their values back, a new
// slice: the memo keeps the one it was given.
func (t *valueTokens) restoreFindings(fs []Finding) []Finding {
	return k8s.RewriteFindings(fs, tokens.Value.Prefix(), t.restoreString)
}

// leftover reports whether any text of r holds a token's nonce, in either
// case: a token a rule changed, which the values cannot be put back into.
func leftover(r Result) bool {
	has := tokens.Contains
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			return has(x)
		case map[string]any:
			for k, val := range x {
				if has(k) || walk(val) {
					return true
				}
			}
		case []any:
			for _, val := range x {
				if walk(val) {
					return true
				}
			}
		}
		return false
	}
	if walk(r.Object) || walk(r.Summary) {
		return true
	}
	for _, fs := range [][]Finding{r.Errors, r.Warnings} {
		for _, f := range fs {
			if has(f.Path) || has(f.Detail) || has(f.Rule) || has(string(f.Value)) || walk(anySlice(f.Supported)) {
				return true
			}
		}
	}
	return false
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// carriedPaths reads `carried`: each kind's entries, by name.
func (e *core) carriedPaths(c *compiled) (map[string]map[string][]carriedPath, error) {
	byKind, err := c.ByKind(e.src, contract.FieldCarried)
	if err != nil {
		return nil, err
	}
	str := c.Ctx.CompileString("string")
	out := map[string]map[string][]carriedPath{}
	for apiVersion, kinds := range byKind {
		out[apiVersion] = map[string][]carriedPath{}
		for kind, v := range kinds {
			it, err := v.Fields()
			if err != nil {
				return nil, e.cueError("reading carried", err)
			}
			for it.Next() {
				p := carriedPath{name: it.Selector().Unquoted(), value: it.Value().LookupPath(contract.PathCarriedValue)}
				p.id = apiVersion + "\x00" + kind + "\x00" + p.name
				if err := it.Value().LookupPath(contract.PathCarriedPath).Decode(&p.path); err != nil {
					return nil, e.cueError("reading carried", err)
				}
				if carry, err := it.Value().LookupPath(contract.PathCarriedCarry).Bool(); err == nil && !carry {
					continue // switched off (carry: false)
				}
				p.plain = !p.value.Exists() || str.Subsume(p.value) == nil && p.value.Subsume(str) == nil
				out[apiVersion][kind] = append(out[apiVersion][kind], p)
			}
		}
	}
	return out, nil
}
