package edit

import (
	"strings"
	"testing"
)

// TestEditOpFieldMismatch: an edit that gives the other ops' field in
// place of its op's own (append with a value, set with items) is a defect
// the engine refuses, not an edit that adds nothing or writes null.
func TestEditOpFieldMismatch(t *testing.T) {
	for _, c := range []struct {
		e    Edit
		want string
	}{
		{Edit{Op: "append", Path: []any{"env"}, Value: []any{"x"}}, "append takes items"},
		{Edit{Op: "upsert", Path: []any{"env"}, Value: map[string]any{"name": "A"}, By: []string{"name"}}, "upsert takes items"},
		{Edit{Op: "set", Path: []any{"env"}, Items: []any{"x"}}, "set takes a value"},
		{Edit{Op: "merge", Path: []any{"labels"}, Items: []any{map[string]any{"a": "b"}}}, "merge takes a value"},
		{Edit{Op: "set", Path: []any{"env"}, Value: []any{"x"}}, ""},
		{Edit{Op: "append", Path: []any{"env"}, Items: []any{"x"}}, ""},
	} {
		err := c.e.Apply(map[string]any{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.e, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: got %v, want %q", c.e, err, c.want)
		}
	}
}
