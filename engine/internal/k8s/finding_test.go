package k8s

import (
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// TestOpenRuleIsARuleError: a rule whose comprehension waits on a value
// CUE leaves incomplete (a default over an absent optional field, read
// in one expression) comes out of the contract's type of findings as an
// open list, which would find nothing whatever the object: it is a rule
// error at the rule, not silence. A rule that finds nothing (an empty
// list) and one that finds something are read as they are.
func TestOpenRuleIsARuleError(t *testing.T) {
	v := cuecontext.New().CompileString(`
#Finding: {path?: string, detail: string}
object: {metadata: {labels?: {[string]: string}}}
object: metadata: {}
errors: [string]: [...#Finding]
errors: {
	pending: [if (*object.metadata.labels | {}).team == _|_ {detail: "team"}]
	bound: {
		let labels = *object.metadata.labels | {}
		[if labels.team == _|_ {detail: "team"}]
	}
	none: [if object.metadata.labels != _|_ {detail: "labels"}]
}
`, cue.Filename("rules.cue"))
	if err := v.Err(); err != nil {
		t.Fatal(err)
	}
	src := source.NewFiles()
	src.Add("rules.cue", "rules.cue", true)
	fs, err := DecodeFindings(src, v.LookupPath(cue.ParsePath("errors")), contract.PhasePolicy)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, string(f.Phase)+" "+f.Rule+" "+f.Detail)
		if f.Rule == "policy.pending" && !strings.HasPrefix(f.Source, "rules.cue:7:") {
			t.Errorf("the open rule's error is at %q, want rules.cue:7", f.Source)
		}
	}
	want := []string{
		string(contract.PhaseRuleError) + " policy.pending the rule is an open list here",
		string(contract.PhasePolicy) + " bound team",
	}
	if len(got) != len(want) {
		t.Fatalf("findings %q, want %d: %q", got, len(want), want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("finding %d: %q, want %q...", i, got[i], want[i])
		}
	}
}
