package engine

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// TestPack: a packed value unpacks to the value it was, its types kept
// (an int64 stays an int64, a nil map a nil map), for every object of the
// corpora the tests use and for values the readers do not make; each
// unpacking is a copy of its own; a value of another type is not packed.
func TestPack(t *testing.T) {
	values := []any{
		nil, true, false, "", "é\x00\u2028", int64(math.MinInt64), int64(math.MaxInt64), 7, -1.5, math.Copysign(0, -1),
		math.MaxFloat64, json.Number("1e400"), map[string]any{}, map[string]any(nil), []any{}, []any(nil),
		map[string]any{"": []any{nil, map[string]any(nil), []any(nil), int64(0), 0.0, map[string]any{"a": "b"}}},
	}
	objects := 0
	for _, docs := range memoCorpus(t) {
		for _, d := range docs {
			if d.Object != nil {
				values = append(values, d.Object)
				objects++
			}
		}
	}
	for _, v := range values {
		p, ok := value.Pack(v)
		if !ok {
			t.Fatalf("%#v: not packed", v)
		}
		got := p.Value()
		if !reflect.DeepEqual(got, v) || reflect.TypeOf(got) != reflect.TypeOf(v) {
			t.Fatalf("packed and unpacked:\n%#v\nwas\n%#v", got, v)
		}
		if m, ok := got.(map[string]any); ok && m != nil {
			m["changed"] = true
			if again := p.Value(); reflect.DeepEqual(again, got) {
				t.Fatalf("a change to one unpacked copy is in the next: %#v", again)
			}
		}
	}
	if objects < 200 {
		t.Fatalf("%d objects of the corpora: a pattern is wrong", objects)
	}
	for _, v := range []any{map[string]any{"a": int32(1)}, []any{struct{}{}}, []string{"a"}} {
		if _, ok := value.Pack(v); ok {
			t.Errorf("%#v packed: a type the engine's values do not hold", v)
		}
	}
}
