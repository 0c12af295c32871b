package source

import (
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/load"
)

// TestProblemsAtTheAdminsFile: a CUE error between an admin's file and an
// embedded one is a problem at the admin's file, by its display name, the
// embedded file's position on a line after it; a position outside the
// load's files keeps the loader's name.
func TestProblemsAtTheAdminsFile(t *testing.T) {
	overlay := map[string]load.Source{
		"/m/cue.mod/module.cue": load.FromString(`module: "x.example/m"` + "\nlanguage: version: \"v0.17.0\"\n"),
		"/m/shipped.cue":        load.FromString("package p\n\nlimit: int & <=10\n"),
		"/m/policy.cue":         load.FromString("package p\n\nlimit: 20\n"),
	}
	inst := load.Instances([]string{"."}, &load.Config{Dir: "/m", Overlay: overlay})[0]
	v := cuecontext.New().BuildInstance(inst)
	err := v.Validate()
	if err == nil {
		t.Fatal("no error: the test's CUE is wrong")
	}
	f := NewFiles()
	f.Add("/m/shipped.cue", "schemas/shipped.cue", false)
	f.Add("/m/policy.cue", "policy/org.cue", true)
	ps := f.CUEProblems(err)
	if len(ps) != 1 {
		t.Fatalf("%d problems: %v", len(ps), ps)
	}
	p := ps[0]
	if p.File != "policy/org.cue" || p.Line != 3 {
		t.Errorf("at %s, not the admin's file policy/org.cue:3", p.Where())
	}
	if !strings.Contains(p.Message, "\n    schemas/shipped.cue:3:") {
		t.Errorf("the embedded position is not on a line after the message: %q", p.Message)
	}
	if got := f.Position("/elsewhere.cue", 1, 2); got != "/elsewhere.cue:1:2" {
		t.Errorf("Position of a file not the load's: %s", got)
	}
	if !f.IsPolicyFile("/m/policy.cue") || f.IsPolicyFile("/m/shipped.cue") {
		t.Error("IsPolicyFile does not tell the admin's file from the shipped one")
	}
	if got := f.PolicySource(err); !strings.HasPrefix(got, "policy/org.cue:3:") {
		t.Errorf("PolicySource = %q", got)
	}
}

// TestSuggest: a slip of a letter or two, or of case, suggests the name
// meant; a name that is a candidate, or far from every one, suggests
// nothing.
func TestSuggest(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"numNode", "numNodes"},
		{"nmuNodes", "numNodes"},
		{"Image", "image"},
		{"image", ""},
		{"completelyDifferent", ""},
	} {
		if got := Suggest(c.name, []string{"numNodes", "image", "command"}); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
