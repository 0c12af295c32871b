package lint

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"

	"github.com/cuetrainer/cuetrainer"
	"github.com/cuetrainer/cuetrainer/engine/internal/load"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// withPolicy is the load of cuetrainer's own CUE with an admin's file
// added (none when display is ""), as the engine loads a policy
// directory's (engine/policydir.go): under a loader name in the schemas'
// package, shown as display, parsed apart for the checks.
func withPolicy(t *testing.T, display, text string) *Input {
	t.Helper()
	if display == "" {
		return withPolicyFiles(t)
	}
	return withPolicyFiles(t, testFile{display: display, text: text})
}

// testFile is an admin's file of the policy directory dir.
type testFile struct {
	dir           int
	display, text string
}

// withPolicyFiles is the load of cuetrainer's own CUE with the admin's
// files added, each in its policy directory.
func withPolicyFiles(t *testing.T, added ...testFile) *Input {
	t.Helper()
	files, src := map[string][]byte{}, source.NewFiles()
	if err := source.Embedded(files, src); err != nil {
		t.Fatal(err)
	}
	policy := map[string]*ast.File{}
	for _, f := range added {
		name := source.PolicyFileName(f.dir, path.Base(f.display))
		files[name] = []byte(f.text)
		src.Add(name, f.display, true)
		pf, err := parser.ParseFile(f.display, f.text, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		policy[name] = pf
	}
	insts := source.Instances(files, "./schemas", "./runtimes")
	if insts[0].Err != nil {
		t.Fatal(insts[0].Err)
	}
	p, problems, err := load.Compile(src, insts)
	if problems != nil || err != nil {
		t.Fatal(problems, err)
	}
	in := &Input{Program: p, Src: src, Instances: insts, Files: policy, Decl: &load.Declarations{}}
	if err := in.Decl.ReadKinds(src, p.Schemas); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestShippedFieldsNotAdded: a field an admin's file declares in a
// definition cuetrainer ships is "added", and refused when every object
// would have to give it, only where cuetrainer's own files do not declare
// it as a regular field too: `object: _` in #RuntimeCRDChecks, as every
// framework file declares what its checks read, adds nothing, and a copy
// of a shipped framework file under another name loads; a new field, or
// a shipped optional one made regular, is refused.
// refusals are the problems the linter finds in a policy of one file,
// p.cue, whose message holds refusal.
func refusals(t *testing.T, text, refusal string) []string {
	t.Helper()
	var got []string
	for _, p := range Run(withPolicy(t, "p.cue", text)).Problems {
		if strings.Contains(p.Message, refusal) {
			got = append(got, p.String())
		}
	}
	return got
}

func TestShippedFieldsNotAdded(t *testing.T) {
	t.Parallel()
	const refusal = "a field with no default that every object must give"
	volcano, err := fs.ReadFile(cuetrainer.CUE, "schemas/volcano.cue")
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.NewReplacer("volcano", "orgvolcano", "Volcano", "OrgVolcano").Replace(string(volcano))
	for _, tc := range []struct {
		name, text, want string
	}{
		{"a check's object", "package schemas\n\n#RuntimeCRDChecks: {\n\tobject: _\n\tcrd: orgNodes: [if (*object.spec.mlPolicy.numNodes | 1) > 64 {path: \"spec.mlPolicy.numNodes\", type: \"Invalid value\", detail: \"at most 64\"}]\n}\n", ""},
		{"a shipped framework file, renamed", renamed, ""},
		{"a new field", "package schemas\n\n#TorchPolicy: queue: string\n", "p.cue:3:15: queue: " + refusal},
		{"a shipped optional field made regular", "package schemas\n\n#TorchPolicy: numProcPerNode: int32 | string\n", "p.cue:3:15: numProcPerNode: " + refusal},
	} {
		got := refusals(t, tc.text, refusal)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: %q, want no such refusal", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
