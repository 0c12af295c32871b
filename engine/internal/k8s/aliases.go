package k8s

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/tokens"
)

// Opaque keys.
//
// cuelang.org/go v0.17 keeps every label it has ever seen in one table of
// the process (internal/core/runtime/index.go, cue-lang/cue#1424): a fresh
// CUE runtime does not free it, so recycling the engine cannot either. A
// controller that evaluates objects whose label keys never repeat (a label
// per job, say) would grow by each key for ever.
//
// So the keys of the maps the CUE calls opaque (`opaqueMaps`: the objects'
// labels and annotations) reach an evaluation as tokens, unless the CUE's
// sources name them: the rules read such maps only by the keys they name
// (a framework label, the support label), or carry them over whole, and a
// token carries over as well as its key. The tokens of one evaluation are
// numbered from 0, so the table holds as many as the most keys one
// evaluation has had, not one per key ever seen; the engine puts the keys
// back in everything it decodes.
//
// A rule that looks at the text of an opaque key it does not name (a
// prefix, a pattern) sees the token: such a map must not be called opaque.

// KeyAliases is the tokens (tokens.Key) of one evaluation. Its parent,
// when set, holds tokens another evaluation gave data this one shares (a
// render's plan): they keep their tokens, and new keys are numbered after
// them. A KeyAliases with children is not changed again.
type KeyAliases struct {
	opaque *OpaqueKeys
	parent *KeyAliases
	// base is the number of this one's first token (the parent's count);
	// keys[i] is the key of token base+i.
	base  int
	byKey map[string]string
	keys  []string
}

// opaqueKeys says which maps are opaque and which of their keys the CUE
// names.
type OpaqueKeys struct {
	// suffixes are the paths (map keys only, list indexes left out) that an
	// opaque map's path ends with.
	Suffixes [][]string
	// named are the strings the CUE's sources hold, as labels or literals.
	Named map[string]bool
}

func (o *OpaqueKeys) Aliases(parent *KeyAliases) *KeyAliases {
	return &KeyAliases{opaque: o, parent: parent, base: parent.count()}
}

func (a *KeyAliases) count() int {
	if a == nil {
		return 0
	}
	return a.base + len(a.keys)
}

// token is the key's token; past tokens.Max tokens, the key itself.
func (a *KeyAliases) token(key string) string {
	for p := a; p != nil; p = p.parent {
		if t, ok := p.byKey[key]; ok {
			return t
		}
	}
	t, ok := tokens.Key.Make(a.count())
	if !ok {
		return key
	}
	if a.byKey == nil {
		a.byKey = map[string]string{}
	}
	a.byKey[key] = t
	a.keys = append(a.keys, key)
	return t
}

// keyOf is the key of the nth token.
func (a *KeyAliases) keyOf(n int) (string, bool) {
	for p := a; p != nil; p = p.parent {
		if n >= p.base && n < p.count() {
			return p.keys[n-p.base], true
		}
	}
	return "", false
}

// alias returns v with the keys of its opaque maps that the CUE does not
// name replaced by tokens. What it changes it copies; v stays as it is.
func (a *KeyAliases) Alias(v any) any {
	if a == nil || len(a.opaque.Suffixes) == 0 {
		return v
	}
	out, _ := a.AliasAt(v, make([]string, 0, 16))
	return out
}

func (a *KeyAliases) AliasAt(v any, path []string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		if a.isOpaque(path) {
			var out map[string]any
			for k, val := range x {
				if a.opaque.Named[k] {
					continue
				}
				if out == nil {
					out = maps.Clone(x)
				}
				delete(out, k)
				out[a.token(k)] = val
			}
			if out == nil {
				return x, false
			}
			return out, true
		}
		return MapEntries(x, func(k string, val any) (any, bool) { return a.AliasAt(val, append(path, k)) })
	case []any:
		return MapItems(x, func(v any) (any, bool) { return a.AliasAt(v, path) })
	}
	return v, false
}

// mapItems returns x with f applied to each item, copied only when f
// changes one (alias and restore leave their inputs as they are).
func MapItems(x []any, f func(any) (any, bool)) ([]any, bool) {
	var out []any
	for i, val := range x {
		nv, changed := f(val)
		if !changed {
			continue
		}
		if out == nil {
			out = slices.Clone(x)
		}
		out[i] = nv
	}
	if out == nil {
		return x, false
	}
	return out, true
}

func (a *KeyAliases) isOpaque(path []string) bool {
	for _, s := range a.opaque.Suffixes {
		if len(s) > len(path) {
			continue
		}
		tail := path[len(path)-len(s):]
		match := true
		for i := range s {
			if s[i] != tail[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// empty reports whether the evaluation gave no tokens: nothing to put back.
func (a *KeyAliases) Empty() bool { return a.count() == 0 }

// restore returns v with the tokens put back: map keys, and tokens inside
// strings (an error's path, a message). What it changes it copies.
func (a *KeyAliases) Restore(v any) any {
	if a.Empty() {
		return v
	}
	out, _ := a.restoreValue(v)
	return out
}

func (a *KeyAliases) restoreValue(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		s := a.RestoreString(x)
		return s, s != x
	case map[string]any:
		var out map[string]any
		for k, val := range x {
			nk := a.RestoreString(k)
			nv, changed := a.restoreValue(val)
			if nk == k && !changed {
				continue
			}
			if out == nil {
				out = maps.Clone(x)
			}
			if nk != k {
				delete(out, k)
			}
			out[nk] = nv
		}
		if out == nil {
			return x, false
		}
		return out, true
	case []any:
		return MapItems(x, a.restoreValue)
	}
	return v, false
}

// restoreString puts back the tokens in s.
func (a *KeyAliases) RestoreString(s string) string {
	if a.Empty() {
		return s
	}
	return tokens.Key.Replace(s, a.keyOf)
}

// restoreFindings puts back the tokens in findings' text.
func (a *KeyAliases) RestoreFindings(fs []Finding) []Finding {
	if a.Empty() {
		return fs
	}
	return RewriteFindings(fs, tokens.Key.Prefix(), a.RestoreString)
}

// rewriteFindings returns the findings with text applied to their text
// and to each string (key or value) of their value that holds marker. It
// returns a new slice and leaves fs as it was: a memo may hold it.
func RewriteFindings(fs []Finding, marker string, text func(string) string) []Finding {
	if len(fs) == 0 {
		return fs
	}
	out := make([]Finding, len(fs))
	for i, f := range fs {
		f.Path, f.Detail, f.Rule = text(f.Path), text(f.Detail), text(f.Rule)
		if len(f.Supported) > 0 {
			sup := make([]string, len(f.Supported))
			for j, v := range f.Supported {
				sup[j] = text(v)
			}
			f.Supported = sup
		}
		if f.Value != nil && bytes.Contains(f.Value, []byte(marker)) {
			f.Value = RewriteJSONStrings(f.Value, marker, text)
		}
		out[i] = f
	}
	return out
}

// rewriteJSONStrings returns the JSON text with text applied to each
// string literal that holds marker, and every other byte as it was: the
// fields keep their order (the CUE's), which decoding and encoding again
// would sort. A rewritten string is escaped as CUE escapes one (no HTML
// escapes).
func RewriteJSONStrings(data []byte, marker string, text func(string) string) []byte {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	for i := 0; i < len(data); {
		if data[i] != '"' {
			out.WriteByte(data[i])
			i++
			continue
		}
		end := i + 1
		for end < len(data) && data[end] != '"' {
			if data[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(data) {
			return data // not JSON: left as it is
		}
		lit := data[i : end+1]
		var s string
		if !bytes.Contains(lit, []byte(marker)) || json.Unmarshal(lit, &s) != nil {
			out.Write(lit)
		} else if err := enc.Encode(text(s)); err != nil {
			return data
		} else {
			out.Truncate(out.Len() - 1) // the Encoder's newline
		}
		i = end + 1
	}
	return out.Bytes()
}

// mapEntries returns x with f applied to each entry's value, copied only
// when f changes one, as mapItems does for a list.
func MapEntries(x map[string]any, f func(k string, v any) (any, bool)) (map[string]any, bool) {
	var out map[string]any
	for k, val := range x {
		nv, changed := f(k, val)
		if !changed {
			continue
		}
		if out == nil {
			out = maps.Clone(x)
		}
		out[k] = nv
	}
	if out == nil {
		return x, false
	}
	return out, true
}

// namedStrings collects what the CUE of the instances names: identifiers
// and string literals, wherever they are.
func NamedStrings(insts []*build.Instance) map[string]bool {
	named := map[string]bool{}
	for _, inst := range insts {
		for _, f := range inst.Files {
			ast.Walk(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.Ident:
					named[x.Name] = true
				case *ast.BasicLit:
					if x.Kind == token.STRING {
						if s, err := literal.Unquote(x.Value); err == nil {
							named[s] = true
						}
					}
				}
				return true
			}, nil)
		}
	}
	return named
}
