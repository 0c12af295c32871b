package k8s

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
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
// refuses.
//
// Past that, cuetrainer's own limits, which no real runtime or TrainJob
// comes near (Kubeflow's largest shipped runtime has 108 list items and
// map entries in all, 29 of them list items):
//   - a list no schema bounds is refused past maxEvaluatedItems items, and
//     a map past maxEvaluatedEntries entries;
//   - an object past maxEvaluatedListItems list items in all, or past
//     maxEvaluatedEntries list items and map entries in all.
//
// The list items have a budget of their own because each costs the CUE
// its item schema, closed and with its defaults, whatever it holds: an
// empty volume (`volumes: [{}, {}, ...]`, core/v1's Volume and its 30
// sources) some 0.6 ms, an empty replicatedJob 0.35 ms, a container 0.4
// ms, where a map entry costs some 10 µs. 4,900 empty volumes, a 20 kB
// document within the entries' budget, took 2.6-3.4 s; at 1,000 list
// items the costliest object found takes 0.5-0.7 s
// (BenchmarkAdmitWorstWithinLimits).
const (
	maxEvaluatedItems     = 1000
	maxEvaluatedListItems = 1000
	maxEvaluatedEntries   = 5000
)

// sizeFindings are the findings of an object too big to evaluate, nil when
// it is not.
func SizeFindings(obj map[string]any, schema map[string]any) []Finding {
	// Most objects are small: counted without a path or an allocation,
	// they need no second look.
	var n count
	if !oversized(obj, schema, &n) && !n.over() {
		return nil
	}
	var m measure
	m.walk(obj, schema, nil)
	if m.listItems > maxEvaluatedListItems {
		m.out = append(m.out, Finding{Phase: contract.PhaseInput, Rule: "maxEvaluatedListItems",
			Detail: fmt.Sprintf("the object has %d list items: cuetrainer evaluates objects of at most %d", m.listItems, maxEvaluatedListItems)})
	}
	if m.entries > maxEvaluatedEntries {
		m.out = append(m.out, Finding{Phase: contract.PhaseInput, Rule: "maxEvaluatedEntries",
			Detail: fmt.Sprintf("the object has %d list items and map entries: cuetrainer evaluates objects of at most %d", m.entries, maxEvaluatedEntries)})
	}
	if len(m.out) == 0 {
		return nil
	}
	sort.SliceStable(m.out, func(i, j int) bool { return m.out[i].Path < m.out[j].Path })
	return m.out
}

// count is what an object holds: its list items, and its list items and
// map entries.
type count struct{ listItems, entries int }

func (n count) over() bool {
	return n.listItems > maxEvaluatedListItems || n.entries > maxEvaluatedEntries
}

// oversized reports whether v has a list or map past its bound, and adds
// what it holds to n.
func oversized(v any, s map[string]any, n *count) bool {
	switch x := v.(type) {
	case []any:
		if max, ok := s["maxItems"]; ok && int64(len(x)) > asInt64(max) || len(x) > maxEvaluatedItems {
			return true
		}
		n.listItems += len(x)
		n.entries += len(x)
		items, _ := s["items"].(map[string]any)
		for _, e := range x {
			if oversized(e, items, n) {
				return true
			}
		}
	case map[string]any:
		if len(x) > maxEvaluatedEntries {
			return true
		}
		n.entries += len(x)
		for k, e := range x {
			if oversized(e, fieldSchema(s, k), n) {
				return true
			}
		}
	}
	return false
}

type measure struct {
	count
	out []Finding
}

// walk measures v, whose schema is s (nil where the schema says nothing),
// at path.
func (m *measure) walk(v any, s map[string]any, path []string) {
	switch x := v.(type) {
	case []any:
		if max, ok := s["maxItems"]; ok && int64(len(x)) > asInt64(max) {
			m.out = append(m.out, Finding{Phase: contract.PhaseCRD, Rule: "maxItems", Path: openAPIPath(path), HasPath: true, Type: "Too many",
				Value: JSONValue(len(x)), Detail: fmt.Sprintf("must have at most %d items", asInt64(max))})
			// The API server checks a map or set list's keys apart from
			// its schema, and says no more of it.
			m.duplicates(x, s, path)
			return
		}
		if len(x) > maxEvaluatedItems {
			m.tooLong(path, len(x), maxEvaluatedItems, "list items")
			return
		}
		m.listItems += len(x)
		m.entries += len(x)
		items, _ := s["items"].(map[string]any)
		for i, e := range x {
			m.walk(e, items, append(path, strconv.Itoa(i)))
		}
	case map[string]any:
		if len(x) > maxEvaluatedEntries {
			m.tooLong(path, len(x), maxEvaluatedEntries, "map entries")
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
	if listType != "map" && listType != "set" || len(x) < 2 {
		return // a list of one item has no duplicate
	}
	seen := make(map[string]bool, len(x))
	for i, item := range x {
		var key any = item
		if listType == "map" {
			im, _ := item.(map[string]any)
			k := make(map[string]any, len(keys))
			for _, name := range keys {
				if v, ok := im[Str(name)]; ok {
					k[Str(name)] = v
				}
			}
			key = k
		}
		b, _ := json.Marshal(key)
		if seen[string(b)] {
			m.out = append(m.out, Finding{Phase: contract.PhaseCRD, Rule: "listType", Path: openAPIPath(append(path, strconv.Itoa(i))), HasPath: true,
				Type: "Duplicate value", Value: b})
			continue
		}
		seen[string(b)] = true
	}
}

// listTypeFindings are the API server's checks of an object's list-type
// map and set lists (x-kubernetes-list-type, from the markers of the Go
// types a CRD embeds: a runtime's replicatedJobs by name, a pod's volumes,
// a container's ports by port and protocol): an item whose key, or value,
// an earlier item has is a duplicate, wherever the list is.
func ListTypeFindings(obj map[string]any, schema map[string]any) []Finding {
	var m measure
	m.listTypes(obj, schema, nil)
	return m.out
}

// listTypes finds the duplicates of every list-type list in v, whose
// schema is s, at path.
func (m *measure) listTypes(v any, s map[string]any, path []string) {
	switch x := v.(type) {
	case []any:
		m.duplicates(x, s, path)
		items, _ := s["items"].(map[string]any)
		for i, e := range x {
			m.listTypes(e, items, append(path, strconv.Itoa(i)))
		}
	case map[string]any:
		for _, k := range value.SortedKeys(x) {
			m.listTypes(x[k], fieldSchema(s, k), append(path, k))
		}
	}
}

func (m *measure) tooLong(path []string, n, max int, what string) {
	m.out = append(m.out, Finding{Phase: contract.PhaseInput, Rule: "maxEvaluatedItems", Path: openAPIPath(path), HasPath: len(path) > 0, Type: "Too many",
		Value: JSONValue(n), Detail: fmt.Sprintf("cuetrainer evaluates at most %d %s where the schema sets no bound", max, what)})
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
