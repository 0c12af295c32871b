package load

import (
	"reflect"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// compile compiles one file of CUE as an admin's, p.cue.
func compile(t *testing.T, src string) (cue.Value, *source.Files) {
	t.Helper()
	files := source.NewFiles()
	files.Add("/policy/p.cue", "p.cue", true)
	v := cuecontext.New().CompileString(src, cue.Filename("/policy/p.cue"))
	if err := v.Err(); err != nil {
		t.Fatal(err)
	}
	return v, files
}

// kindsOf are the values of a field by apiVersion and kind.
func kindsOf(t *testing.T, v cue.Value, field string) map[string]map[string]cue.Value {
	t.Helper()
	out := map[string]map[string]cue.Value{}
	it, err := v.LookupPath(cue.ParsePath(field)).Fields()
	if err != nil {
		t.Fatal(err)
	}
	for it.Next() {
		kinds, err := it.Value().Fields()
		if err != nil {
			t.Fatal(err)
		}
		out[it.Selector().Unquoted()] = map[string]cue.Value{}
		for kinds.Next() {
			out[it.Selector().Unquoted()][kinds.Selector().Unquoted()] = kinds.Value()
		}
	}
	return out
}

// TestMutatorNeedsOfNoMutation: a mutator's need named after no mutation of
// it would hold for none: the admin's mistake, at its line, with the
// mutation meant; what every mutation needs is read by mutation, and a
// mutator one of whose mutations needs nothing has no needs (it is
// evaluated for every request).
func TestMutatorNeedsOfNoMutation(t *testing.T) {
	v, src := compile(t, `
mutators: "x/v1": {
	A: {
		mutations: {defaults: _, labels: _}
		needs: defualts: ["object", "spec"]
		reads: {}
	}
	B: {
		mutations: {defaults: _, labels: _}
		needs: {defaults: ["object", "spec"], labels: ["oldObject"]}
		reads: spec: ["spec"]
	}
	C: {
		mutations: {defaults: _, labels: _}
		needs: defaults: ["object"]
	}
}
`)
	var d Declarations
	mutators := kindsOf(t, v, "mutators")
	problems, err := d.ReadInputReads(src, nil, nil, map[string]map[string]cue.Value{"x/v1": {"A": mutators["x/v1"]["A"]}})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || !strings.HasPrefix(problems[0].String(), "p.cue:5:") || !strings.Contains(problems[0].Message, "needs: defualts is no mutation of mutators") || !strings.Contains(problems[0].Message, "did you mean defaults?") {
		t.Fatalf("problems %v, want one at p.cue:5 with the mutation meant", problems)
	}

	d = Declarations{}
	delete(mutators["x/v1"], "A")
	if problems, err := d.ReadInputReads(src, nil, nil, mutators); err != nil || problems != nil {
		t.Fatalf("%v %v", problems, err)
	}
	if want := map[string]map[string][][]string{"x/v1": {"B": {{"object", "spec"}, {"oldObject"}}}}; !reflect.DeepEqual(d.MutatorNeeds, want) {
		t.Errorf("needs %v, want %v (C's labels need nothing)", d.MutatorNeeds, want)
	}
	if want := map[string]map[string][][]string{"x/v1": {"B": {{"spec"}}}}; !reflect.DeepEqual(d.MutatorReads, want) {
		t.Errorf("reads %v, want %v (C says none)", d.MutatorReads, want)
	}
}

// TestLookupReadsByOperation: an UPDATE's lookups read what a CREATE's do,
// and their updateReads too; each kind's reads in the order of their names.
func TestLookupReadsByOperation(t *testing.T) {
	v, src := compile(t, `
lookups: "x/v1": K: {
	reads: {b: ["spec", "b"], a: ["spec", "a"]}
	updateReads: old: ["oldObject", "spec"]
}
plans: "x/v1": K: reads: r: ["spec", "r"]
`)
	var d Declarations
	if problems, err := d.ReadInputReads(src, kindsOf(t, v, "plans"), kindsOf(t, v, "lookups"), nil); err != nil || problems != nil {
		t.Fatalf("%v %v", problems, err)
	}
	want := map[string][][]string{
		"CREATE": {{"spec", "a"}, {"spec", "b"}},
		"UPDATE": {{"spec", "a"}, {"spec", "b"}, {"oldObject", "spec"}},
	}
	if got := d.LookupReads["x/v1"]["K"]; !reflect.DeepEqual(got, want) {
		t.Errorf("lookup reads %v, want %v", got, want)
	}
	if got := d.PlanReads["x/v1"]["K"]; !reflect.DeepEqual(got, [][]string{{"spec", "r"}}) {
		t.Errorf("plan reads %v", got)
	}
}

// TestClusterKinds: a runtime kind not namespaced and a kind whose CRD has
// scope Cluster are cluster-scoped, by kind and group; the others are not.
func TestClusterKinds(t *testing.T) {
	v, src := compile(t, `
runtimeKinds: {
	"ClusterRuntime.x.io": {group: "x.io", kind: "ClusterRuntime", namespaced: false}
	"Runtime.x.io": {group: "x.io", kind: "Runtime", namespaced: true}
}
crds: {
	Thing: {group: "y.io", scope: "Cluster"}
	Other: {group: "y.io", scope: "Namespaced"}
}
`)
	var d Declarations
	if err := d.ReadKinds(src, v); err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"ClusterRuntime.x.io": true, "Thing.y.io": true}; !reflect.DeepEqual(d.ClusterKinds, want) {
		t.Errorf("cluster kinds %v, want %v", d.ClusterKinds, want)
	}
	if d.RuntimeKinds["Runtime.x.io"] != (RuntimeKind{Group: "x.io", Kind: "Runtime", Namespaced: true}) {
		t.Errorf("runtime kinds %v", d.RuntimeKinds)
	}
}

// TestReadServing: the opaque maps whose keys an admin's rule reads as
// data are no longer opaque; a typed part of a type the engine does not
// carry, and an empty server-managed path, are errors naming them.
func TestReadServing(t *testing.T) {
	const rest = `
merges: {}
groups: {}
groupHints: {}
knownKeys: {}
contextKinds: {}
owned: {}
opaqueMaps: [["metadata", "labels"], ["metadata", "annotations"]]
`
	v, src := compile(t, rest+"typedParts: {}\nserverManaged: [[\"status\"]]\n")
	var d Declarations
	if err := d.ReadServing(src, v, nil, [][]string{{"spec", "template", "metadata", "labels"}}); err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"metadata", "annotations"}}; !reflect.DeepEqual(d.Opaque.Suffixes, want) {
		t.Errorf("opaque maps %v, want %v: the labels' keys are read", d.Opaque.Suffixes, want)
	}
	if !reflect.DeepEqual(d.ServerManaged, [][]string{{"status"}}) {
		t.Errorf("server-managed %v", d.ServerManaged)
	}

	v, src = compile(t, rest+"typedParts: \"x/v1\": K: p: {path: [\"spec\"], type: \"NoSuchType\"}\nserverManaged: []\n")
	if err := d.ReadServing(src, v, nil, nil); err == nil || !strings.Contains(err.Error(), `typedParts: x/v1 K p: no Go type "NoSuchType"`) {
		t.Errorf("a typed part of no Go type: %v", err)
	}
	v, src = compile(t, rest+"typedParts: {}\nserverManaged: [[]]\n")
	if err := d.ReadServing(src, v, nil, nil); err == nil || !strings.Contains(err.Error(), "serverManaged: an empty path") {
		t.Errorf("an empty server-managed path: %v", err)
	}
}
