package lint

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"

	"github.com/cuetrainer/cuetrainer"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/load"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// embedded is what the checks read of a load of cuetrainer's own CUE
// alone, compiled as the engine compiles it: the schemas' package, with
// no admin's file (most checks of the admin's CUE are in the engine's
// tests, on its loads; withPolicy adds one file).
func embedded(t *testing.T) *Input {
	t.Helper()
	in := withPolicy(t, "", "")
	if len(in.Decl.RuntimeKinds) == 0 {
		t.Fatal("no runtimeKinds")
	}
	return in
}

// The linter must find nothing in cuetrainer's own schemas: they are the
// largest body of valid rules there is, and every read, default and
// top-level field in them is meant. A check that flags one of them would
// flag an admin's valid policy too.
func TestLintFindsNothingInTheSchemas(t *testing.T) {
	t.Parallel()
	in := embedded(t)
	l := newLinter(in)
	files, err := fs.Glob(cuetrainer.CUE, "schemas/*.cue")
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	var parsed []*ast.File
	for _, name := range files {
		data, err := fs.ReadFile(cuetrainer.CUE, name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(path.Join(source.Root, name), data)
		if err != nil {
			t.Fatal(err)
		}
		l.walkDecls(f.Decls, lpath{ok: true}, true)
		l.checkRegexps(f)
		l.checkKeyLiterals(f)
		parsed = append(parsed, f)
	}
	for _, f := range parsed {
		l.checkDefinitionArgs(f)
	}
	l.checkDefaults()
	l.checkClosedFields()
	l.checkOpenRules()
	l.checkRenderRefs()
	if len(l.rules) < 30 || len(l.inDefinitions) < 500 || len(l.renderRefs) < 4 {
		t.Errorf("checked %d rules, %d fields of definitions and %d generators, bases and sums, want the schemas' forty-odd, hundreds and four", len(l.rules), len(l.inDefinitions), len(l.renderRefs))
	}
	l.checkUnread()
	l.checkListsOnce()
	l.checkListItems()
	reads = l.checked
	// No rule of the schemas reads the keys of an opaque map as data:
	// it would see tokens (and a policy's rule that does makes the map
	// transparent, TestKeyReadingRuleSeesTheKeys).
	var opaqueMaps [][]string
	if err := in.Schemas.LookupPath(contract.PathOpaqueMaps).Decode(&opaqueMaps); err != nil || len(opaqueMaps) == 0 {
		t.Fatalf("opaqueMaps %v: %v", opaqueMaps, err)
	}
	for _, p := range l.keyReads {
		for _, suffix := range opaqueMaps {
			if load.HasSuffix(p, suffix) {
				t.Errorf("the schemas read the keys of %v as data", p)
			}
		}
	}
	for _, p := range l.problems {
		t.Errorf("%s", p)
	}
	// The check must have looked at the schemas' reads, not skipped them.
	t.Logf("checked %d reads", reads)
	if reads < 80 {
		t.Errorf("checked %d reads against a closed schema, want the schemas' ninety-odd", reads)
	}
	if len(l.defaults) < 20 {
		t.Errorf("found %d defaults, want the schemas' dozens", len(l.defaults))
	}
}

// TestAnchorsSomeAlternatives: alternatives of which the first alone
// begins with ^ or the last alone ends with $ are found, each said as it
// matches; anchored alike, grouped or with one alternative, they are not.
func TestAnchorsSomeAlternatives(t *testing.T) {
	for re, want := range map[string]string{
		"^team-a|team-b$":     `"team-a" at its start or "team-b" at its end`,
		"^ab|cd|ef":           `"ab" at its start or "cd" anywhere or "ef" anywhere`,
		"x|^y$|z$":            `"x" anywhere or "y" whole or "z" at its end`,
		"^a$|^b$":             "",
		"^(team-a|team-b)$":   "",
		"^a|^b":               "",
		"a|b":                 "",
		"^[a-z]+$":            "",
		"^(a|b)|c":            "", // a group's | is not the top's: said of no such split
		"(^kube-)|(-system$)": "", // each alternative grouped: as eachGrouped writes it
	} {
		if got := strings.Join(anchorsSomeAlternatives(re), " or "); got != want {
			t.Errorf("%s: %q, want %q", re, got, want)
		}
	}
}
