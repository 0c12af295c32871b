package k8s

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// Known keys.
//
// A label or annotation key means something to the rules only when spelt
// as they spell it: `trainer.kubeflow.org/suport: deprecated` deprecates
// nothing, and neither Kubeflow nor the API server says so. The CUE lists
// the keys with a meaning (`knownKeys`), by the maps they belong in; the
// engine warns of a key that is a slip of the keyboard from one of them,
// or one of them in another of the maps. The keys reach the rules as
// tokens (aliases.go), so this is a walk of the object, not a rule.

// knownKeyMap is one entry of knownKeys: the keys with a meaning of the
// maps at the end of a path.
type KnownKeyMap struct {
	At   []string        `json:"at"`
	Keys map[string]bool `json:"keys"`
	// Values are, of some keys, the values the rules read.
	Values map[string][]string `json:"values"`

	// name is the entry's; sorted its keys in order.
	name   string
	sorted []string
}

// knownKeys are the entries, in name order.
type KnownKeys []KnownKeyMap

// newKnownKeys orders the entries as the CUE declares them, by name.
func NewKnownKeys(byName map[string]KnownKeyMap) KnownKeys {
	var k KnownKeys
	for _, name := range value.SortedKeys(byName) {
		m := byName[name]
		m.name, m.sorted = name, value.SortedKeys(m.Keys)
		k = append(k, m)
	}
	return k
}

// readKnownKeys reads the knownKeys of the compiled package (schemas).
func ReadKnownKeys(schemas cue.Value) (KnownKeys, error) {
	var byName map[string]KnownKeyMap
	if err := schemas.LookupPath(contract.PathKnownKeys).Decode(&byName); err != nil {
		return nil, err
	}
	return NewKnownKeys(byName), nil
}

// valuesOf are the values with a meaning of the key a path ends with
// (its field names, indexes left out: ..., metadata, labels, key), and
// the key; ok false when no entry's map lists values for it.
func (k KnownKeys) ValuesOf(names []string) (values []string, key string, ok bool) {
	if len(names) == 0 {
		return nil, "", false
	}
	key, parent := names[len(names)-1], names[:len(names)-1]
	for _, m := range k {
		if v, found := m.Values[key]; found && EndsWith(parent, m.At) {
			return v, key, true
		}
	}
	return nil, "", false
}

// endsWith reports whether names ends with suffix, which is not empty.
func EndsWith(names, suffix []string) bool {
	return len(suffix) > 0 && len(names) >= len(suffix) && slices.Equal(names[len(names)-len(suffix):], suffix)
}

// findings are the warnings of obj's keys that mean nothing but look as if
// they should, in path order.
func (k KnownKeys) Findings(obj map[string]any) []Finding {
	if len(k) == 0 {
		return nil
	}
	w := keyWalk{known: k}
	w.path = w.buf[:0]
	w.walk(obj)
	slices.SortFunc(w.found, func(a, b Finding) int { return strings.Compare(a.Path, b.Path) })
	return w.found
}

// keyWalk walks an object for the maps knownKeys names; path is where it
// is.
type keyWalk struct {
	known KnownKeys
	path  []keyStep
	found []Finding
	// buf holds the path of an object nested as deep as most are.
	buf [16]keyStep
}

// keyStep is a key of a map, or (index ≥ 0) an item of a list.
type keyStep struct {
	key   string
	index int
}

func (w *keyWalk) walk(v any) {
	switch v := v.(type) {
	case map[string]any:
		for i := range w.known {
			if w.at(w.known[i].At) {
				w.check(i, v)
			}
		}
		for key, child := range v {
			if container(child) {
				w.path = append(w.path, keyStep{key: key, index: -1})
				w.walk(child)
				w.path = w.path[:len(w.path)-1]
			}
		}
	case []any:
		// A list of scalars (args, say; the schemas type every list's
		// items alike) holds no map.
		if len(v) > 0 && !container(v[0]) {
			return
		}
		for i, child := range v {
			if container(child) {
				w.path = append(w.path, keyStep{index: i})
				w.walk(child)
				w.path = w.path[:len(w.path)-1]
			}
		}
	}
}

// container reports whether v is a map or a list: a scalar holds no map.
func container(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// at reports whether the walk's path, indexes left out, ends with suffix.
func (w *keyWalk) at(suffix []string) bool {
	i := len(w.path)
	for j := len(suffix) - 1; j >= 0; j-- {
		for i > 0 && w.path[i-1].index >= 0 {
			i--
		}
		if i == 0 || w.path[i-1].key != suffix[j] {
			return false
		}
		i--
	}
	return len(suffix) > 0
}

// check finds m's keys that the i-th entry does not know but another entry
// does, or that are a slip from one it knows.
func (w *keyWalk) check(i int, m map[string]any) {
	own := w.known[i]
	for key, value := range m {
		if own.Keys[key] {
			w.checkValue(own, key, value)
			continue
		}
		var detail string
		if other := w.knownElsewhere(i, key); other != "" {
			detail = "no rule reads this key here: it has its meaning in " + other
		} else if meant := NearKey(key, own.sorted); meant != "" {
			detail = fmt.Sprintf("no rule reads this key: did you mean %q?", meant)
		} else {
			continue
		}
		w.found = append(w.found, Finding{Phase: contract.PhasePolicy, Rule: contract.FieldKnownKeys, Path: w.keyPath(key), HasPath: true, Detail: detail})
	}
}

// checkValue finds a known key's value that the entry does not list but
// that is a slip from one it does (values: support: deprecated).
func (w *keyWalk) checkValue(own KnownKeyMap, key string, value any) {
	values := own.Values[key]
	s, ok := value.(string)
	if len(values) == 0 || !ok || slices.Contains(values, s) {
		return
	}
	for _, v := range values {
		if strings.EqualFold(s, v) || source.EditDistance(strings.ToLower(s), v) <= max(1, len(v)/4) {
			detail := fmt.Sprintf("no rule reads the value %q of this key: did you mean %q?", s, v)
			w.found = append(w.found, Finding{Phase: contract.PhasePolicy, Rule: contract.FieldKnownKeys, Path: w.keyPath(key), HasPath: true, Detail: detail})
			return
		}
	}
}

// knownElsewhere names the map of another entry that knows key, by its
// path ("metadata.annotations"); "" when none does.
func (w *keyWalk) knownElsewhere(i int, key string) string {
	for j, other := range w.known {
		if j != i && other.Keys[key] {
			return strings.Join(other.At, ".")
		}
	}
	return ""
}

// keyPath is the field path of key in the map the walk is at.
func (w *keyWalk) keyPath(key string) string {
	p := ""
	for _, s := range w.path {
		if s.index >= 0 {
			p += "[" + strconv.Itoa(s.index) + "]"
		} else {
			p = childPath(p, s.key)
		}
	}
	return childPath(p, key)
}

// nearKey is the known key (of sorted) that key looks like a slip from:
// the same key in another case; the same domain (before the "/") and a
// name a letter or two away; or the same name under a domain a few letters
// away (trainer.kubeflow.com). "" when none is that near.
func NearKey(key string, sorted []string) string {
	domain, name := splitKey(strings.ToLower(key))
	for _, k := range sorted {
		kDomain, kName := splitKey(strings.ToLower(k))
		switch {
		case domain == kDomain && source.EditDistance(name, kName) <= max(1, len(kName)/4),
			name == kName && domain != "" && source.EditDistance(domain, kDomain) <= max(2, len(kDomain)/4):
			return k
		}
	}
	return ""
}

// splitKey splits a label key into its domain and its name; the domain
// is "" for a key without one.
func splitKey(key string) (domain, name string) {
	if d, n, ok := strings.Cut(key, "/"); ok {
		return d, n
	}
	return "", key
}
