package objdiff

import (
	"strings"
	"testing"
)

func TestDiffRules(t *testing.T) {
	cm := func(runtime string) map[string]any {
		return map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "s", "namespace": "a"}, "data": map[string]any{"runtime": runtime}}
	}
	for _, tc := range []struct {
		name      string
		exp, act  map[string]any
		wantDiffs []string
	}{
		{"empty equals absent",
			map[string]any{"kind": "A", "metadata": map[string]any{"name": "x"}, "spec": map[string]any{"resources": map[string]any{}, "l": []any{}, "n": nil}},
			map[string]any{"kind": "A", "metadata": map[string]any{"name": "x"}}, nil},
		{"number equals its text",
			map[string]any{"kind": "A", "metadata": map[string]any{"name": "x"}, "q": "4"},
			map[string]any{"kind": "A", "metadata": map[string]any{"name": "x"}, "q": 4}, nil},
		{"named lists are maps",
			map[string]any{"kind": "A", "metadata": map[string]any{"name": "x"}, "env": []any{map[string]any{"name": "a", "value": "1"}, map[string]any{"name": "b"}}},
			map[string]any{"kind": "A", "metadata": map[string]any{"name": "x"}, "env": []any{map[string]any{"name": "b"}, map[string]any{"name": "a", "value": "1"}}}, nil},
		{"other lists in order",
			map[string]any{"kind": "A", "metadata": map[string]any{"name": "x"}, "args": []any{"a", "b"}},
			map[string]any{"kind": "A", "metadata": map[string]any{"name": "x"}, "args": []any{"b", "a"}},
			[]string{"A/x.args[0]: \"b\", expected \"a\"", "A/x.args[1]: \"a\", expected \"b\""}},
		{"generated matches non-empty",
			map[string]any{"kind": "A", "metadata": map[string]any{"name": "x"}, "key": Wildcard},
			map[string]any{"kind": "A", "metadata": map[string]any{"name": "x"}, "key": "abc"}, nil},
		{"generated needs a value",
			map[string]any{"kind": "A", "metadata": map[string]any{"name": "x"}, "key": Wildcard},
			map[string]any{"kind": "A", "metadata": map[string]any{"name": "x"}},
			[]string{"A/x.key: missing, expected \"<generated>\""}},
		{"snapshot compared as an object",
			cm("kind: R\nmetadata:\n  name: r\nspec: {a: 1, b: []}\n"),
			cm("{\"kind\":\"R\",\"metadata\":{\"name\":\"r\",\"uid\":\"u\"},\"spec\":{\"a\":\"1\"}}"), nil},
		{"snapshot difference",
			cm("kind: R\nmetadata:\n  name: r\nspec: {a: 1}\n"),
			cm("kind: R\nmetadata:\n  name: r\nspec: {a: 2}\n"),
			[]string{"ConfigMap/a/s.data.runtime.spec.a: 2, expected 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff([]map[string]any{tc.exp}, []map[string]any{tc.act})
			if strings.Join(got, "\n") != strings.Join(tc.wantDiffs, "\n") {
				t.Errorf("Diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.wantDiffs, "\n"))
			}
		})
	}
	if got := Diff(nil, []map[string]any{{"kind": "A", "metadata": map[string]any{"name": "x"}}}); len(got) != 1 || got[0] != "A/x: unexpected object" {
		t.Errorf("extra object: %v", got)
	}
	if got := Diff([]map[string]any{{"kind": "A", "metadata": map[string]any{"name": "x"}}}, nil); len(got) != 1 || got[0] != "A/x: object missing" {
		t.Errorf("missing object: %v", got)
	}
}
