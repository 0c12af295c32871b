package engine

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"cuelang.org/go/cue/parser"

	"github.com/cuetrainer/cuetrainer"
)

// The linter must find nothing in cuetrainer's own schemas: they are the
// largest body of valid rules there is, and every read, default and
// top-level field in them is meant. A check that flags one of them would
// flag an admin's valid policy too.
func TestLintFindsNothingInTheSchemas(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.cur.Load()
	l := newLinter(e, c)
	files, err := fs.Glob(cuetrainer.CUE, "schemas/*.cue")
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	for _, name := range files {
		data, err := fs.ReadFile(cuetrainer.CUE, name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(path.Join(root, name), data)
		if err != nil {
			t.Fatal(err)
		}
		l.walkDecls(f.Decls, lpath{ok: true}, true)
	}
	l.checkDefaults()
	reads = l.checked
	for _, p := range l.problems {
		t.Errorf("%s", p)
	}
	// The check must have looked at the schemas' reads, not skipped them.
	if reads < 80 {
		t.Errorf("checked %d reads against a closed schema, want the schemas' ninety-odd", reads)
	}
	if len(l.defaults) < 20 {
		t.Errorf("found %d defaults, want the schemas' dozens", len(l.defaults))
	}
}

func TestLintFindsNothingInTheExamples(t *testing.T) {
	for _, dir := range []string{"../examples/policies/tensorflow", "../examples/policies/ome"} {
		if _, err := New(Options{PolicyDirs: []string{dir}}); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
}

func TestSuggest(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"admision", "admission"},
		{"clusterTrainingRuntime", "clusterTrainingRuntimes"},
		{"resourcePerNode", "resourcesPerNode"},
		{"imageName", "image"},
		{"Trainjob", "TrainJob"},
		{"rules", ""},
		{"xyz", ""},
	} {
		got := suggest(c.name, []string{"admission", "clusterTrainingRuntimes", "resourcesPerNode", "image", "TrainJob", "groups", "owned"})
		if got != c.want {
			t.Errorf("suggest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if strings.Contains(suggest("a", []string{"b"}), "b") {
		t.Errorf("one letter suggested another")
	}
}
