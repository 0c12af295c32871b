package k8s

import (
	"math"

	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// The API server drops, before defaulting and validation, the null value
// of a field whose schema is not nullable (apiextensions-apiserver's
// structural pruning: "null values for fields that either don't specify
// the nullable flag, or give it a false value, will be pruned before
// defaulting happens"): `numNodes: null` is no numNodes. A subtree the
// schema keeps whole (x-kubernetes-preserve-unknown-fields) keeps its
// nulls. It reads JSON numbers as float64s and takes a whole one where the
// schema wants an integer (kube-openapi's type validator), and what it
// stores, sends to webhooks and serves is that number written again, an
// integer: `numNodes: 2.0` is `numNodes: 2`. vet does the same; a
// schema-checked object comes so.

// fieldSchema is the schema of an object's field k, as the API server
// finds it: its property, else additionalProperties; nil where the schema
// says nothing.
func fieldSchema(s map[string]any, k string) map[string]any {
	props, _ := s["properties"].(map[string]any)
	if p, ok := props[k].(map[string]any); ok {
		return p
	}
	extra, _ := s["additionalProperties"].(map[string]any)
	return extra
}

// asServerReads is serverValue for an object of a kind whose CRD has
// schema: its metadata's nulls too, which the API server decodes as an
// ObjectMeta (labels: null is no labels) and the CRD's schema leaves
// untyped.
func AsServerReads(obj map[string]any, schema map[string]any) map[string]any {
	// Most objects hold no null and no float: they need no copy.
	if !hasNullOrFloat(obj) {
		return obj
	}
	return serverObject(obj, schema)
}

// hasNullOrFloat reports whether v holds a null or a float anywhere.
func hasNullOrFloat(v any) bool {
	switch x := v.(type) {
	case nil, float64:
		return true
	case map[string]any:
		for _, y := range x {
			if hasNullOrFloat(y) {
				return true
			}
		}
	case []any:
		for _, y := range x {
			if hasNullOrFloat(y) {
				return true
			}
		}
	}
	return false
}

func serverObject(obj map[string]any, schema map[string]any) map[string]any {
	if schema == nil {
		return obj
	}
	out, _ := serverValue(obj, schema).(map[string]any)
	if md, ok := out["metadata"].(map[string]any); ok {
		var nulls []string
		for k, v := range md {
			if v == nil {
				nulls = append(nulls, k)
			}
		}
		if len(nulls) > 0 {
			copied := make(map[string]any, len(md))
			for k, v := range md {
				copied[k] = v
			}
			for _, k := range nulls {
				delete(copied, k)
			}
			if value.SameMap(out, obj) {
				out = copyTop(obj)
			}
			out["metadata"] = copied
		}
	}
	return out
}

func copyTop(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// serverValue returns v as the API server reads it against the schema:
// without the null values of fields the schema does not make nullable,
// and with a whole float where it wants an integer as that integer,
// copying only what it changes.
func serverValue(v any, schema map[string]any) any {
	if schema == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		if schema["x-kubernetes-preserve-unknown-fields"] == true && schema["properties"] == nil {
			return v
		}
		return eachValue(x, func(k string, val any) (any, bool) {
			prop := fieldSchema(schema, k)
			switch {
			case prop == nil:
				return val, true // an unknown field: the schema says so
			case val == nil:
				return nil, prop["nullable"] == true
			}
			return serverValue(val, prop), true
		})
	case []any:
		items, _ := schema["items"].(map[string]any)
		return eachItem(x, func(val any) any { return serverValue(val, items) })
	case float64:
		// kube-openapi's whole float, which its type validator takes
		// for an integer (typeerrors.go's floatInt).
		if wantsInteger(schema) && x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	}
	return v
}

// wantsInteger says the schema's type is integer, or int-or-string.
func wantsInteger(schema map[string]any) bool {
	return schema["type"] == "integer" || schema["x-kubernetes-int-or-string"] == true
}

// same reports whether two values serverValue gave are the same value
// (not a copy): maps and lists by identity, others by value.
func same(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && value.SameMap(x, y)
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	}
	return a == b
}
