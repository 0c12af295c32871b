// Package value holds what the engine does with JSON-like values (maps of
// string to any, lists of any, strings, numbers as json.Number, int64 or
// float64, booleans and nil), the form documents, findings and rendered
// objects take in Go: decoding a CUE value into one, the one deep copy,
// paths into them, packing them into one byte slice for the memos to keep
// (pack.go), and the content hash the memos key them by (contenthash.go).
// It imports nothing of the engine's.
package value

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"

	"cuelang.org/go/cue"
)

// DecodeJSON decodes a CUE value as JSON, numbers as json.Number.
func DecodeJSON(v cue.Value, x any) error {
	data, err := v.MarshalJSON()
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(x)
}

// DecodeJSONStrict decodes like DecodeJSON, and fails on fields x does not
// have.
func DecodeJSONStrict(v cue.Value, x any) error {
	data, err := v.MarshalJSON()
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	return dec.Decode(x)
}

// At returns the value at a path of fields, nil when there is none.
func At(v any, path []string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// Collect returns the values at a path where "*" stands for every item of
// a list, in order.
func Collect(v any, path []string) []any {
	if len(path) == 0 {
		if v == nil {
			return nil
		}
		return []any{v}
	}
	if path[0] == "*" {
		l, _ := v.([]any)
		var out []any
		for _, item := range l {
			out = append(out, Collect(item, path[1:])...)
		}
		return out
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return Collect(m[path[0]], path[1:])
}

// FillIn adds to obj, field by field, what skeleton has and obj has not,
// copied.
func FillIn(obj, skeleton map[string]any) map[string]any {
	if obj == nil {
		obj = map[string]any{}
	}
	for k, sv := range skeleton {
		ov, ok := obj[k]
		if !ok {
			obj[k] = Numbers(DeepCopy(sv))
			continue
		}
		om, oIsMap := ov.(map[string]any)
		sm, sIsMap := sv.(map[string]any)
		if oIsMap && sIsMap {
			obj[k] = FillIn(om, sm)
		}
	}
	return obj
}

// Numbers turns json.Numbers into int64 or float64.
func Numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = Numbers(c)
		}
	case []any:
		for i, c := range x {
			x[i] = Numbers(c)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// DeepCopy is the engine's one deep copy of a JSON-like value: its maps
// and lists are copied, its leaves kept as they are (a nil map or list
// stays nil). Numbers(DeepCopy(v)) is a copy with json.Numbers as int64 or
// float64, as the objects the reader and the API server give hold them.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		m := make(map[string]any, len(x))
		for k, c := range x {
			m[k] = DeepCopy(c)
		}
		return m
	case []any:
		if x == nil {
			return x
		}
		l := make([]any, len(x))
		for i, c := range x {
			l[i] = DeepCopy(c)
		}
		return l
	}
	return v
}

// SameMap says whether a and b are the same map (not equal ones).
func SameMap(a, b map[string]any) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// AsJSON is v as encoding/json writes and reads it back: a conversion
// of any Go value (a typed object, say) to a JSON-like one, and so a copy,
// with integers as int64 and other numbers as float64 (what the CUE encoder
// takes as numbers). DeepCopy copies what is JSON-like already.
func AsJSON(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil
	}
	return Numbers(out)
}

// Project is the part of v at the paths, as a tree of the same shape: what
// a part of the CUE that declares its reads (a plan, the lookups) is
// given. A path v lacks is left out.
func Project(v map[string]any, paths [][]string) map[string]any {
	out := map[string]any{}
	for _, path := range paths {
		if len(path) == 0 {
			continue
		}
		x := At(v, path)
		if x == nil {
			continue
		}
		m := out
		for _, p := range path[:len(path)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[path[len(path)-1]] = x
	}
	return out
}

// SortedKeys returns a map's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
