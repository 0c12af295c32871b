package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue/parser"
)

const root = "../.."

// The committed copies are what the command makes of schemas/gen: run
// `make cue-gen` after changing either.
func TestGeneratedFileIsCurrent(t *testing.T) {
	want, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "schemas", "k8s_gen.cue"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("schemas/k8s_gen.cue is not what hack/cuelocal makes of schemas/gen: run `make cue-gen`")
	}
	for _, name := range []string{"_#jobsetJobSetSpec", "_#jobsetReplicatedJob", "_#batchv1JobTemplateSpec", "_#batchv1_labelPrefix"} {
		if !strings.Contains(string(want), "\n"+name+":") {
			t.Errorf("the copies declare no %s", name)
		}
	}
	// A reference to another copied package is to its copy; one to a
	// package not copied goes through a field, never its import.
	for _, ref := range []string{"template: _#batchv1JobTemplateSpec", "_corev1.#PodTemplateSpec", "_metav1.#ObjectMeta"} {
		if !strings.Contains(string(want), ref) {
			t.Errorf("the copies have no %q", ref)
		}
	}
	for _, ref := range []string{"batchv1.#", " corev1.#", " metav1.#", "\tcorev1.#", "\tmetav1.#"} {
		if strings.Contains(string(want), ref) {
			t.Errorf("the copies still read %q through an import", ref)
		}
	}
}

// No schema file imports a package that is copied: its types would be
// evaluated again on every request, and would meet the copies as different
// values.
func TestSchemasDoNotImportCopiedPackages(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "schemas", "*.cue"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schema files: %v", err)
	}
	for _, f := range files {
		file, err := parser.ParseFile(f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for spec := range file.ImportSpecs() {
			for _, p := range Packages {
				if path := strings.Trim(spec.Path.Value, `"`); path == p.ImportPath || path == GenPrefix+p.ImportPath {
					t.Errorf("%s imports %s: use its copy (_#%s...)", filepath.Base(f), p.ImportPath, p.Prefix)
				}
			}
		}
	}
}
