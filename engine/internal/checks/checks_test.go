package checks

import "testing"

// TestHeuristicChecksWarn: a check that guesses what the admin meant may
// be wrong about a correct policy, so it never refuses the load (issue
// 42): every heuristic check warns.
func TestHeuristicChecksWarn(t *testing.T) {
	heuristic := 0
	for _, c := range All() {
		if c.Level == Heuristic {
			heuristic++
			if !c.Warns {
				t.Errorf("%s is heuristic and refuses the load: make it warn, or show the fact it rests on and make it sound", c.Name)
			}
		}
		if c.Suppressible() != (c.Level == Heuristic) {
			t.Errorf("%s: suppressible %v, level %s", c.Name, c.Suppressible(), c.Level)
		}
	}
	if heuristic == 0 {
		t.Error("no heuristic check: the test checks nothing")
	}
}
