package reach

import (
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

func parseFiles(t *testing.T, srcs ...string) []*ast.File {
	t.Helper()
	var files []*ast.File
	for i, src := range srcs {
		f, err := parser.ParseFile("f"+string(rune('a'+i))+".cue", "package schemas\n\n"+src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// TestReach: the paths a kind's crds entry reaches follow every way a
// declaration refers to another (a definition, through another file, an
// alias, a let, a sibling, a comprehension's value, a computed label),
// and no further; and an admin's declaration reaches a path when it is
// at, above or below it, or under a pattern, a computed label, an
// embedding or a comprehension above it.
func TestReach(t *testing.T) {
	embedded := parseFiles(t, `
crds: [kind=string]: #CRD & {plural: kind}
crds: A: schema: #A
crds: B: schema: _b.x
crds: C: {
	let l = #ViaLet
	schema: l
}
crds: D: {
	S=sibling: #ViaAlias
	schema: S
}
crds: E: {
	for k, v in #Source {schema: (k): v}
}
#A: spec: #ASpec
#Unreached: int
_b: x: #B
`, `
#CRD: {plural: string, schema: _}
#ASpec: replicas: int32
#B: string
#ViaLet: string
#ViaAlias: string
#Source: {}
`)
	r := NewReach(embedded)
	for _, tc := range []struct {
		kind      string
		want, not []string
	}{
		{"A", []string{"#A", "#ASpec", "#CRD", "int32"}, []string{"#Unreached", "#B"}},
		{"B", []string{"_b.x", "#B", "#CRD"}, []string{"#A", "#Unreached"}},
		{"C", []string{"#ViaLet"}, []string{"#ViaAlias", "#A"}},
		{"D", []string{"#ViaAlias"}, []string{"#ViaLet"}},
		{"E", []string{"#Source"}, []string{"#A"}},
	} {
		var tops []string
		for _, root := range r.RootsOf("crds", tc.kind) {
			tops = append(tops, strings.Join(root, "."))
		}
		for _, w := range tc.want {
			if !slices.Contains(tops, w) {
				t.Errorf("crds.%s: %q not among the paths it reaches, %q", tc.kind, w, tops)
			}
		}
		for _, n := range tc.not {
			if slices.Contains(tops, n) {
				t.Errorf("crds.%s: %q among the paths it reaches, %q", tc.kind, n, tops)
			}
		}
	}
	for _, tc := range []struct {
		policy string
		kind   string
		want   bool
	}{
		{"admission: x: policy: y: []", "A", false},
		{"#Unreached: 3", "A", false},
		{"crds: Z: schema: int", "A", false},
		{"#ASpec: replicas: 3", "A", true},
		{"#A: spec: extra?: string", "A", true},
		{"crds: A: plural: \"as\"", "A", true},
		{"crds: [string]: plural: string", "A", true},
		{"crds: (\"A\"): plural: string", "A", true},
		{"[=~\"^#\"]: _", "A", true},
		{"if true {#Unreached: 4}", "A", true},
		{"_b: x: string", "B", true},
		{"_b: y: string", "B", false},
		{"#ViaLet: \"x\"", "C", true},
		{"#ViaAlias: \"x\"", "D", true},
		{"#Source: a: int", "E", true},
		{"crds: A: {}", "A", true},
	} {
		if got := Reaches(r.Declared(parseFiles(t, tc.policy)), r.RootsOf("crds", tc.kind)); got != tc.want {
			t.Errorf("%s: reaches crds.%s %v, want %v", tc.policy, tc.kind, got, tc.want)
		}
	}
}

// TestEmbeddedReach: the embedded package parses, its files are those
// the loader compiles into the package an admin's files join (a file the
// reach did not read would be a declaration it cannot follow), and a
// kind's crds entry reaches its definition.
func TestEmbeddedReach(t *testing.T) {
	r := EmbeddedReach()
	if r == nil {
		t.Fatal("the embedded package does not parse")
	}
	files := map[string][]byte{}
	if err := source.Embedded(files, source.NewFiles()); err != nil {
		t.Fatal(err)
	}
	var compiled, read []string
	for _, inst := range source.Instances(files, "./"+schemasDir) {
		if inst.Err != nil {
			t.Fatal(inst.Err)
		}
		if inst.PkgName != schemasPackage {
			t.Fatalf("the instance of ./%s is package %s", schemasDir, inst.PkgName)
		}
		for _, f := range inst.Files {
			compiled = append(compiled, f.Filename)
		}
	}
	for _, f := range r.files {
		read = append(read, f.Filename)
	}
	slices.Sort(compiled)
	slices.Sort(read)
	if len(compiled) == 0 || !slices.Equal(compiled, read) {
		t.Errorf("the loader compiles %q into the package, the reach reads %q", compiled, read)
	}
	roots := r.RootsOf("crds", "TrainJob")
	if !slices.ContainsFunc(roots, func(p []string) bool { return slices.Equal(p, []string{"#TrainJob"}) }) {
		t.Errorf("crds.TrainJob does not reach #TrainJob: %q", roots)
	}
}

// TestReachComputedAndConjoined: a computed label that names a constant of
// the package is that constant, in the embedded files and in an admin's
// (which may declare constants of their own); one that names anything
// else, or a constant two files give two values, stands for every label.
// A struct conjoined with a definition (`#Review & {...}`) declares its
// fields where the conjunction is, and a reference to one of them reaches
// that field alone. A field `x: _` changes nothing where the embedded
// files declare x, and declares x elsewhere, or where they declare it
// optional.
func TestReachComputedAndConjoined(t *testing.T) {
	embedded := parseFiles(t, `
#V: "v1"
admission: (#V): K: #Review & {
	object: #Object
	#other: _
	policy: own: [if #other == _|_ {1}]
}
admission: (#V): K: opt?: #Opt
#Review: {object: _, policy: _}
#Object: int
#Opt: int
crdChecks: (#V): K: #Checks
#Checks: #Base & {object: _}
#Base: {input: _}
`)
	r := NewReach(embedded)
	// A field of the value a path is a conjunction of is a field there:
	// `x: _` over it declares nothing.
	for _, tc := range []struct {
		policy string
		want   int
	}{
		{"crdChecks: (#V): K: {object: _, input: _}", 0},
		{"crdChecks: (#V): K: {object: _, other: _}", 1},
		{"crdChecks: (#V): K: object: spec: _", 1},
		{"crdChecks: (#V): L: object: _", 1},
	} {
		if got := r.Declared(parseFiles(t, tc.policy)); len(got) != tc.want {
			t.Errorf("%q: declares %q, want %d paths", tc.policy, got, tc.want)
		}
	}
	object := r.RootsOf("admission", "v1", "K", "object")
	for _, want := range []string{"#Object", "#Review"} {
		if !slices.ContainsFunc(object, func(p []string) bool { return strings.Join(p, ".") == want }) {
			t.Errorf("admission.v1.K.object does not reach %s: %q", want, object)
		}
	}
	policy := r.RootsOf("admission", "v1", "K", "policy", "own")
	if !slices.ContainsFunc(policy, func(p []string) bool { return strings.Join(p, ".") == "admission.v1.K.#other" }) {
		t.Errorf("a reference to a field conjoined with #Review does not reach the field: %q", policy)
	}
	if slices.ContainsFunc(policy, func(p []string) bool { return len(p) <= 3 && p[0] == "admission" }) {
		t.Errorf("the review's rule reaches a path above the review: %q", policy)
	}
	for _, tc := range []struct {
		policy string
		want   bool
	}{
		{"admission: (#V): K: policy: mine: []", false},
		{"admission: \"v1\": K: policy: mine: []", false},
		{"#W: \"v1\"\nadmission: (#W): K: policy: mine: []", false},
		{"admission: (#V): K: {object: _, #other: _, policy: mine: []}", false},
		{"admission: (#V): K: object: 3", true},
		{"#Object: 3", true},
		{"admission: (#U): K: policy: mine: []", true},
		{"#V: \"v2\"\nadmission: (#V): K: policy: mine: []", true},
		{"admission: (#V): K: object?: _", true},
		{"admission: (#V): K: new: _", false},
	} {
		if got := Reaches(r.Declared(parseFiles(t, tc.policy)), object); got != tc.want {
			t.Errorf("%q: reaches admission.v1.K.object %v, want %v", tc.policy, got, tc.want)
		}
	}
	if opt := r.RootsOf("admission", "v1", "K", "opt"); !Reaches(r.Declared(parseFiles(t, "admission: (#V): K: opt: _")), opt) {
		t.Errorf("`opt: _` over an optional field does not reach it")
	}
}
