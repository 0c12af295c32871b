// Package edit is the engine's interpreter of what the CUE writes for a
// render or a mutator to do to objects: edits (set, merge, upsert, append
// at a path, which the CUE cannot do to a value it was given), sums of
// quantities, and generated data (keys, seeds: what the CUE cannot make).
// It imports the engine's value package only.
package edit

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The edits the CUE writes, decoded (the CUE's field names, matched as
// encoding/json matches them).

// Group is one group of edits (#EditGroup), made in Order.
type Group struct {
	Name  string
	Order int
	Ops   []Edit
}

// Edit is one #Edit of the CUE.
type Edit struct {
	// Use names a plan's op (#ops) that gives the fields the edit leaves out.
	Use    string
	Object string
	Path   []any
	Op     string
	Value  any
	Items  []any
	By     []string
}

// QuantitySum is one #QuantitySum of the CUE.
type QuantitySum struct {
	Object string
	Path   []string
	Terms  []struct {
		Resource string
		Quantity string
		Times    int64
	}
}

// Ops are the ops an edit makes (#Edit; Edit.Apply).
var Ops = []string{"set", "merge", "upsert", "append"}

// WithOwnValues is e with copies of the values apply puts into an object
// (its value and items), so that applying it leaves e's as they are (a
// plan's edits, a memo's); apply only reads the path.
func (e Edit) WithOwnValues() Edit {
	e.Value = value.DeepCopy(e.Value)
	e.Items, _ = value.DeepCopy(e.Items).([]any)
	return e
}

// Apply makes the edit to obj: its op at its path, the path's maps and
// lists made where they are missing (an error where a step cannot be).
func (e Edit) Apply(obj map[string]any) error {
	e.Path = Splice(e.Path)
	if len(e.Path) == 0 {
		return fmt.Errorf("empty path")
	}
	// The other ops' field in place of an op's own does nothing, or
	// writes null: a defect of the rule, not an edit to make.
	switch {
	case (e.Op == "set" || e.Op == "merge") && e.Value == nil && e.Items != nil:
		return fmt.Errorf("%s: %s takes a value, and this edit gives items (append's and upsert's)", PathString(e.Path), e.Op)
	case (e.Op == "append" || e.Op == "upsert") && e.Items == nil && e.Value != nil:
		return fmt.Errorf("%s: %s takes items, and this edit gives a value (set's and merge's)", PathString(e.Path), e.Op)
	}
	var cur any = obj
	for i, step := range e.Path[:len(e.Path)-1] {
		next, err := Descend(cur, step, true)
		if err != nil {
			return fmt.Errorf("%s: %v", PathString(e.Path[:i+1]), err)
		}
		cur = next
	}
	m, ok := cur.(map[string]any)
	last, isField := e.Path[len(e.Path)-1].(string)
	if !ok || !isField {
		return fmt.Errorf("%s: not a field of an object", PathString(e.Path))
	}
	switch e.Op {
	case "set":
		m[last] = e.Value
	case "merge":
		target, _ := m[last].(map[string]any)
		if target == nil {
			target = map[string]any{}
		}
		add, _ := e.Value.(map[string]any)
		for k, v := range add {
			target[k] = v
		}
		m[last] = target
	case "upsert", "append":
		if len(e.Items) == 0 {
			return nil // nothing to add: an absent list stays absent, not null
		}
		l, _ := m[last].([]any)
		if e.Op == "append" {
			m[last] = append(l, e.Items...)
			break
		}
		for i, item := range e.Items {
			// An item with none of the fields it is matched by would
			// match (absent with absent) the first such item and put
			// it out: a misspelt field in `by`, say.
			if !hasAnyField(item, e.By) {
				return fmt.Errorf("%s: upsert's item %d has none of the fields it is matched by (by: %s)", PathString(e.Path), i, strings.Join(e.By, ", "))
			}
			l = upsert(l, item, e.By)
		}
		m[last] = l
	default:
		return fmt.Errorf("unknown op %q (an edit makes one of %s)", e.Op, strings.Join(Ops, ", "))
	}
	return nil
}

// Splice flattens the lists in a path into it: a rule may build a path
// from a prefix it was given, [prefix, "env"].
func Splice(path []any) []any {
	nested := false
	for _, step := range path {
		if _, ok := step.([]any); ok {
			nested = true
			break
		}
	}
	if !nested {
		return path
	}
	var out []any
	for _, step := range path {
		if l, ok := step.([]any); ok {
			out = append(out, Splice(l)...)
		} else {
			out = append(out, step)
		}
	}
	return out
}

// MapAt returns the object at a path of fields, creating the ones missing.
func MapAt(obj map[string]any, path []string) (map[string]any, error) {
	var cur any = obj
	for _, p := range path {
		next, err := Descend(cur, p, true)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", strings.Join(path, "."), err)
		}
		cur = next
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not an object", strings.Join(path, "."))
	}
	return m, nil
}

// Descend takes one step of a path: a field (created when absent) or the
// list item whose fields equal the step's.
func Descend(cur any, step any, create bool) (any, error) {
	switch s := step.(type) {
	case string:
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("not an object")
		}
		next, ok := m[s]
		if !ok || next == nil {
			if !create {
				return nil, fmt.Errorf("no field %s", s)
			}
			next = map[string]any{}
			m[s] = next
		}
		return next, nil
	case map[string]any:
		l, ok := cur.([]any)
		if !ok {
			return nil, fmt.Errorf("not a list")
		}
		for _, item := range l {
			im, ok := item.(map[string]any)
			if !ok {
				continue
			}
			match := true
			for k, v := range s {
				if !reflect.DeepEqual(im[k], v) {
					match = false
				}
			}
			if match {
				return im, nil
			}
		}
		return nil, fmt.Errorf("no item of the list is %s", PathString([]any{s}))
	}
	return nil, fmt.Errorf("bad path step %v", step)
}

func PathString(p []any) string {
	var b strings.Builder
	for _, s := range p {
		switch x := s.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteString(".")
			}
			b.WriteString(x)
		case map[string]any:
			// An item by its fields' values: [name=node].
			b.WriteString("[")
			for i, k := range value.SortedKeys(x) {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, "%s=%v", k, x[k])
			}
			b.WriteString("]")
		default:
			fmt.Fprintf(&b, "%v", x)
		}
	}
	return b.String()
}

// hasAnyField reports whether item is an object with one of the fields.
func hasAnyField(item any, fields []string) bool {
	m, _ := item.(map[string]any)
	for _, f := range fields {
		if _, ok := m[f]; ok {
			return true
		}
	}
	return false
}

// upsert replaces the first item that matches item by any of the fields
// (two absent fields match, as Kubeflow's pointer comparison does), or
// appends it.
func upsert(l []any, item any, by []string) []any {
	im, _ := item.(map[string]any)
	for i, old := range l {
		om, _ := old.(map[string]any)
		for _, k := range by {
			a, aok := om[k]
			b, bok := im[k]
			if aok == bok && (!aok || reflect.DeepEqual(fmt.Sprint(a), fmt.Sprint(b))) {
				l[i] = item
				return l
			}
		}
	}
	return append(l, item)
}

func (s QuantitySum) Apply(obj map[string]any) error {
	totals := map[string]resource.Quantity{}
	var order []string
	for _, t := range s.Terms {
		q, err := resource.ParseQuantity(t.Quantity)
		if err != nil {
			return fmt.Errorf("%s: %v", t.Resource, err)
		}
		q.Mul(t.Times)
		cur, seen := totals[t.Resource]
		if !seen {
			order = append(order, t.Resource)
		}
		cur.Add(q)
		totals[t.Resource] = cur
	}
	out := map[string]any{}
	for _, r := range order {
		q := totals[r]
		out[r] = q.String()
	}
	if len(s.Path) == 0 {
		return fmt.Errorf("empty path")
	}
	m, err := MapAt(obj, s.Path[:len(s.Path)-1])
	if err != nil {
		return err
	}
	m[s.Path[len(s.Path)-1]] = out
	return nil
}
