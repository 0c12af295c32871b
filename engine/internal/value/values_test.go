package value

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestContentHashTellsTypesApart: two values hash alike exactly when the
// CUE would be given the same thing. An int64 1 is not a float64 1.0, a
// nil map is null, map order does not count, and no two sequences of
// strings or lists share a hash.
func TestContentHashTellsTypesApart(t *testing.T) {
	sum := func(vs ...any) string {
		c := NewContentHash()
		for _, v := range vs {
			c.Value(v)
		}
		return c.Sum()
	}
	differ := [][2][]any{
		{{int64(1)}, {1.0}},
		{{int64(1)}, {json.Number("1")}},
		{{"ab", "c"}, {"a", "bc"}},
		{{[]any{"a"}, []any{}}, {[]any{}, []any{"a"}}},
		{{map[string]any{}}, {map[string]any(nil)}},
		{{true}, {int64(1)}},
		{{int32(1)}, {int64(1)}},
	}
	for _, d := range differ {
		if sum(d[0]...) == sum(d[1]...) {
			t.Errorf("%#v and %#v hash alike", d[0], d[1])
		}
	}
	same := [][2][]any{
		{{map[string]any{"a": int64(1), "b": "x"}}, {map[string]any{"b": "x", "a": int64(1)}}},
		{{map[string]any(nil)}, {nil}},
		{{[]any(nil)}, {nil}},
		{{1}, {int64(1)}},
	}
	for _, s := range same {
		if sum(s[0]...) != sum(s[1]...) {
			t.Errorf("%#v and %#v hash apart", s[0], s[1])
		}
	}
	c := NewContentHash()
	c.Leaf = func(string) string { return "token" }
	c.Value(map[string]any{"key": "value"})
	if got, want := c.Sum(), sum(map[string]any{"key": "token"}); got != want {
		t.Error("Leaf is not applied to a string leaf, or is applied to a key")
	}
}

// TestDeepCopy: a copy shares no map or list with the value, keeps a nil
// map or list nil, and Numbers makes its json.Numbers int64 or float64.
func TestDeepCopy(t *testing.T) {
	v := map[string]any{"a": []any{map[string]any{"b": json.Number("2")}, json.Number("1.5")}, "n": map[string]any(nil)}
	c := DeepCopy(v).(map[string]any)
	if !reflect.DeepEqual(c, v) {
		t.Fatalf("copy %#v of %#v", c, v)
	}
	c["a"].([]any)[0].(map[string]any)["b"] = "changed"
	if At(v, []string{"a"}).([]any)[0].(map[string]any)["b"] != json.Number("2") {
		t.Error("the copy shares a map with the value")
	}
	if m, ok := c["n"].(map[string]any); !ok || m != nil {
		t.Errorf("a nil map copied as %#v", c["n"])
	}
	n := Numbers(DeepCopy(v)).(map[string]any)
	if got := n["a"].([]any); got[0].(map[string]any)["b"] != int64(2) || got[1] != 1.5 {
		t.Errorf("Numbers: %#v", got)
	}
	if got := Collect(map[string]any{"l": []any{map[string]any{"x": "1"}, map[string]any{}, map[string]any{"x": "2"}}}, []string{"l", "*", "x"}); !reflect.DeepEqual(got, []any{"1", "2"}) {
		t.Errorf("Collect: %#v", got)
	}
}
