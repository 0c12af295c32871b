package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// Lists too long to evaluate. cuelang.org/go v0.17.1 adds a list's
// elements to a vertex whose arcs it searches one by one (adt's getArc), so
// a list of n items costs O(n²): 40,000 trainer.args take 3 s, 200,000 (a
// 1.8 MB document, well under the API server's 3 MiB request limit) several
// minutes, and the mutating webhook sees such an object before the API
// server checks the schema's maxItems. So before the CUE sees an object,
// its lists and maps are measured against its CRD's schema, as the API
// server measures them: a list longer than its maxItems is refused with the
// API server's error, and the rules (the CEL rules, the webhooks) are not
// run, as the API server does not run them on an object its schema
// refuses. A list or map that no schema bounds is refused past
// maxEvaluatedItems entries, and an object past maxEvaluatedEntries in all:
// cuetrainer's own limit, which no real runtime or TrainJob comes near.
const (
	maxEvaluatedItems   = 5000
	maxEvaluatedEntries = 5000
)

// sizeFindings are the findings of an object too big to evaluate, nil when
// it is not.
func sizeFindings(obj map[string]any, schema map[string]any) []Finding {
	// Most objects are small: counted without a path or an allocation,
	// they need no second look.
	var entries int
	if !oversized(obj, schema, &entries) && entries <= maxEvaluatedEntries {
		return nil
	}
	var m measure
	m.walk(obj, schema, nil)
	if m.entries > maxEvaluatedEntries {
		m.out = append(m.out, Finding{Phase: PhaseInput, Rule: "maxEvaluatedEntries",
			Detail: fmt.Sprintf("the object has %d list items and map entries: cuetrainer evaluates objects of at most %d", m.entries, maxEvaluatedEntries)})
	}
	if len(m.out) == 0 {
		return nil
	}
	sort.SliceStable(m.out, func(i, j int) bool { return m.out[i].Path < m.out[j].Path })
	return m.out
}

// oversized reports whether v has a list or map past its bound, and adds
// its entries to n.
func oversized(v any, s map[string]any, n *int) bool {
	switch x := v.(type) {
	case []any:
		if max, ok := s["maxItems"]; ok && int64(len(x)) > asInt64(max) || len(x) > maxEvaluatedItems {
			return true
		}
		*n += len(x)
		items, _ := s["items"].(map[string]any)
		for _, e := range x {
			if oversized(e, items, n) {
				return true
			}
		}
	case map[string]any:
		if len(x) > maxEvaluatedItems {
			return true
		}
		*n += len(x)
		for k, e := range x {
			if oversized(e, fieldSchema(s, k), n) {
				return true
			}
		}
	}
	return false
}

type measure struct {
	entries int
	out     []Finding
}

// walk measures v, whose schema is s (nil where the schema says nothing),
// at path.
func (m *measure) walk(v any, s map[string]any, path []string) {
	switch x := v.(type) {
	case []any:
		if max, ok := s["maxItems"]; ok && int64(len(x)) > asInt64(max) {
			m.out = append(m.out, Finding{Phase: PhaseCRD, Rule: "maxItems", Path: openAPIPath(path), HasPath: true, Type: "Too many",
				Value: jsonValue(len(x)), Detail: fmt.Sprintf("must have at most %d items", asInt64(max))})
			// The API server checks a map or set list's keys apart from
			// its schema, and says no more of it.
			m.duplicates(x, s, path)
			return
		}
		if len(x) > maxEvaluatedItems {
			m.tooLong(path, len(x), "list items")
			return
		}
		m.entries += len(x)
		items, _ := s["items"].(map[string]any)
		for i, e := range x {
			m.walk(e, items, append(path, strconv.Itoa(i)))
		}
	case map[string]any:
		if len(x) > maxEvaluatedItems {
			m.tooLong(path, len(x), "map entries")
			return
		}
		m.entries += len(x)
		for k, e := range x {
			m.walk(e, fieldSchema(s, k), append(path, k))
		}
	}
}

// duplicates reports the items of a list-type map or set list whose key
// (or value) an earlier item has, as the API server's list validation
// words them.
func (m *measure) duplicates(x []any, s map[string]any, path []string) {
	keys, _ := s["x-kubernetes-list-map-keys"].([]any)
	listType, _ := s["x-kubernetes-list-type"].(string)
	if listType != "map" && listType != "set" {
		return
	}
	seen := make(map[string]bool, len(x))
	for i, item := range x {
		var key any = item
		if listType == "map" {
			im, _ := item.(map[string]any)
			k := make(map[string]any, len(keys))
			for _, name := range keys {
				if v, ok := im[str(name)]; ok {
					k[str(name)] = v
				}
			}
			key = k
		}
		b, _ := json.Marshal(key)
		if seen[string(b)] {
			m.out = append(m.out, Finding{Phase: PhaseCRD, Rule: "listType", Path: openAPIPath(append(path, strconv.Itoa(i))), HasPath: true,
				Type: "Duplicate value", Value: b})
			continue
		}
		seen[string(b)] = true
	}
}

func (m *measure) tooLong(path []string, n int, what string) {
	m.out = append(m.out, Finding{Phase: PhaseInput, Rule: "maxEvaluatedItems", Path: openAPIPath(path), HasPath: len(path) > 0, Type: "Too many",
		Value: jsonValue(n), Detail: fmt.Sprintf("cuetrainer evaluates at most %d %s where the schema sets no bound", maxEvaluatedItems, what)})
}

func asInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}
