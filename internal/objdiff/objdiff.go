// Package objdiff compares Kubernetes objects semantically, by the rules of
// the conformance corpus (test/conformance/testdata/README.md): objects are
// matched by kind, namespace and name; empty maps, empty lists and nulls are
// the same as an absent field; a list whose items all have a name is a map
// keyed by name; numbers and their string forms compare by text; the value
// "<generated>" matches any non-empty value; a ConfigMap value holding a
// whole object (the runtime snapshot) is compared as that object, without
// the metadata the API server sets.
package objdiff

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Wildcard in an expected object matches any non-empty value.
const Wildcard = "<generated>"

var serverSet = []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"}

// Key identifies an object.
type Key struct{ Kind, Namespace, Name string }

func (k Key) String() string {
	parts := []string{}
	for _, s := range []string{k.Kind, k.Namespace, k.Name} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "/")
}

// Index prepares objects for comparison, by key. A v1 List counts as its items.
func Index(objs []map[string]any) map[Key]any {
	out := map[Key]any{}
	for _, o := range objs {
		items := []any{o}
		if o["kind"] == "List" {
			items, _ = o["items"].([]any)
		}
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			md, _ := m["metadata"].(map[string]any)
			k := Key{Kind: str(m["kind"]), Namespace: str(md["namespace"]), Name: str(md["name"])}
			out[k] = prune(embedded(normalize(m)))
		}
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// normalize round-trips a value through JSON so that every number is a
// float64 or json.Number alike, whatever produced it.
func normalize(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return m
	}
	return out
}

func embedded(o map[string]any) map[string]any {
	data, ok := o["data"].(map[string]any)
	if o["kind"] != "ConfigMap" || !ok {
		return o
	}
	for k, v := range data {
		s, ok := v.(string)
		if !ok {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(s), &obj); err != nil || obj["kind"] == nil {
			continue
		}
		if md, ok := obj["metadata"].(map[string]any); ok {
			for _, f := range serverSet {
				delete(md, f)
			}
		}
		data[k] = obj
	}
	return o
}

func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, c := range x {
			c = prune(c)
			if !empty(c) {
				out[k] = c
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = prune(c)
		}
		return out
	}
	return v
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// Diff compares expected with actual objects and returns the differences,
// one line each; none when they are equal.
func Diff(expected, actual []map[string]any) []string {
	exp, act := Index(expected), Index(actual)
	keys := map[Key]bool{}
	for k := range exp {
		keys[k] = true
	}
	for k := range act {
		keys[k] = true
	}
	sorted := make([]Key, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].String() < sorted[j].String() })
	var out []string
	for _, k := range sorted {
		e, inExp := exp[k]
		a, inAct := act[k]
		switch {
		case !inAct:
			out = append(out, k.String()+": object missing")
		case !inExp:
			out = append(out, k.String()+": unexpected object")
		default:
			out = diff(e, a, k.String(), out)
		}
	}
	return out
}

// DiffValues compares two values (objects or parts of them) by the same rules.
func DiffValues(expected, actual any, path string) []string {
	return diff(prune(roundTrip(expected)), prune(roundTrip(actual)), path, nil)
}

func roundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

func named(v any) bool {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return false
	}
	for _, it := range l {
		m, ok := it.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["name"]; !ok {
			return false
		}
	}
	return true
}

func byName(l []any) map[string]any {
	out := map[string]any{}
	for _, it := range l {
		m := it.(map[string]any)
		out[fmt.Sprint(m["name"])] = m
	}
	return out
}

func diff(exp, act any, path string, out []string) []string {
	if exp == Wildcard {
		if act == nil || act == "" {
			out = append(out, path+": missing (expected a generated value)")
		}
		return out
	}
	em, eok := exp.(map[string]any)
	am, aok := act.(map[string]any)
	if eok && aok {
		keys := map[string]bool{}
		for k := range em {
			keys[k] = true
		}
		for k := range am {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			ev, inE := em[k]
			av, inA := am[k]
			switch {
			case !inA:
				out = append(out, fmt.Sprintf("%s.%s: missing, expected %s", path, k, short(ev)))
			case !inE:
				out = append(out, fmt.Sprintf("%s.%s: unexpected %s", path, k, short(av)))
			default:
				out = diff(ev, av, path+"."+k, out)
			}
		}
		return out
	}
	if named(exp) && named(act) {
		return diff(byName(exp.([]any)), byName(act.([]any)), path, out)
	}
	el, eok := exp.([]any)
	al, aok := act.([]any)
	if eok && aok {
		if len(el) != len(al) {
			return append(out, fmt.Sprintf("%s: length %d, expected %d: %s vs %s", path, len(al), len(el), short(al), short(el)))
		}
		for i := range el {
			out = diff(el[i], al[i], fmt.Sprintf("%s[%d]", path, i), out)
		}
		return out
	}
	if norm(exp) != norm(act) {
		out = append(out, fmt.Sprintf("%s: %s, expected %s", path, short(act), short(exp)))
	}
	return out
}

func norm(v any) any {
	switch x := v.(type) {
	case float64:
		return fmt.Sprint(x)
	case map[string]any, []any:
		return short(x)
	}
	return v
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func short(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	s := strings.TrimSpace(b.String())
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
