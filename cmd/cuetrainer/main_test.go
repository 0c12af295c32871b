package main

import "testing"

func TestRunsOnce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"vet", "a.yaml"}, true},
		{[]string{"render", "-f", "a.yaml"}, true},
		{[]string{"export", "crds"}, true},
		{[]string{"controller", "--leader-elect"}, false},
		{[]string{}, false},
		{[]string{"no-such-command"}, false},
	} {
		if got := runsOnce(tc.args); got != tc.want {
			t.Errorf("runsOnce(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
