package load

import (
	"reflect"
	"strings"

	"testing"

	"cuelang.org/go/cue"

	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// module lays out a module of two packages, schemas and runtimes, under
// source.Root: cuetrainer's files (shipped) and, in policy.cue, the
// admin's (policy) joining package schemas.
func module(t *testing.T, shipped, policy string) (*source.Files, map[string][]byte) {
	t.Helper()
	src := source.NewFiles()
	files := map[string][]byte{
		source.Root + "/cue.mod/module.cue": []byte("module: \"test.example/m@v0\"\nlanguage: version: \"v0.17.0\"\n"),
		source.Root + "/schemas/s.cue":      []byte("package schemas\n\n" + shipped),
		source.Root + "/runtimes/r.cue":     []byte("package runtimes\n"),
	}
	for name := range files {
		src.Add(name, strings.TrimPrefix(name, source.Root+"/"), false)
	}
	if policy != "" {
		// As the engine's load adds an admin's file to package schemas.
		name := source.Root + "/schemas/zz-policy0--policy.cue"
		files[name] = []byte("package schemas\n\n" + policy)
		src.Add(name, "policy.cue", true)
	}
	return src, files
}

// The fields Compile reads, empty.
const empty = `
admission: {}
crdChecks: {}
crdCheckParts: {}
lookups: {}
render: {}
plans: {}
controllers: {}
renderChecks: {}
declaredChecks: {}
refusals: {}
mutators: {}
probes: {}
renderParts: {}
`

// TestCompilePolicyCRD: a review is made once with its kind's CRD checks;
// a schema-checked request's review (Checked) is without them, but for a
// kind whose CRD checks an admin's file adds to: the API server's CRD does
// not hold those, so it is the review with them.
func TestCompilePolicyCRD(t *testing.T) {
	const shipped = empty + `
admission: "x/v1": {
	A: {object: _, seen: _}
	B: {object: _, seen: _}
}
crdChecks: "x/v1": {
	A: {crd: {shipped: []}, seen: "A's checks"}
	B: {crd: {shipped: []}, seen: "B's checks"}
}
`
	src, files := module(t, shipped, "crdChecks: \"x/v1\": B: crd: mine: []\n")
	p, problems, err := Compile(src, source.Instances(files, "./schemas", "./runtimes"))
	if problems != nil || err != nil {
		t.Fatal(problems, err)
	}
	if want := map[string]map[string]bool{"x/v1": {"B": true}}; !reflect.DeepEqual(p.PolicyCRD, want) {
		t.Errorf("policy CRD kinds %v, want %v", p.PolicyCRD, want)
	}
	seen := func(v cue.Value) string {
		s, _ := v.LookupPath(cue.ParsePath("seen")).String()
		return s
	}
	for kind, want := range map[string][2]string{"A": {"A's checks", ""}, "B": {"B's checks", "B's checks"}} {
		if got := [2]string{seen(p.Reviews["x/v1"][kind]), seen(p.Checked["x/v1"][kind])}; got != want {
			t.Errorf("%s: review and schema-checked review with %q, want %q", kind, got, want)
		}
	}
}

// TestCompileProblems: CUE's error in an admin's file is a problem at its
// line; a package that does not compile is no panic.
func TestCompileProblems(t *testing.T) {
	src, files := module(t, empty+"limit: int\n", "limit: \"ten\"\n")
	_, problems, err := Compile(src, source.Instances(files, "./schemas", "./runtimes"))
	if err != nil || len(problems) == 0 || problems[0].File != "policy.cue" || problems[0].Line != 3 {
		t.Errorf("problems %v, err %v: want the conflict at policy.cue:3", problems, err)
	}
	if _, _, err := Compile(src, source.Instances(files, "./schemas")); err == nil {
		t.Error("a compile of the schemas alone: no error")
	}
}
