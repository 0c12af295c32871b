package source

import "testing"

// TestProblemString: a problem prints at its position, with the name of
// its check after its message's first line (the lines after it are the
// positions that follow), and without one when it has none.
func TestProblemString(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{File: "p.cue", Line: 3, Column: 5, Message: "unknown top-level field x", Check: "top-level-field"}, "p.cue:3:5: unknown top-level field x (top-level-field)"},
		{Problem{File: "p.cue", Line: 3, Message: "conflicting values\n    schemas/x.cue:1:2", Check: "cue"}, "p.cue:3: conflicting values (cue)\n    schemas/x.cue:1:2"},
		{Problem{Message: "a defect", Check: "defect"}, "a defect (defect)"},
		{Problem{File: "p.cue", Line: 3, Message: "no check"}, "p.cue:3: no check"},
		{Problem{File: "p.cue", Check: "policy-file"}, "p.cue (policy-file)"},
		{Problem{File: "p.cue"}, "p.cue"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}
