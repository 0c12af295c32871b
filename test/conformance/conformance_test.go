// Package conformance checks cuetrainer against what Kubeflow Trainer itself
// did with each input of the conformance corpus (testdata/README.md).
package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/objdiff"
	"github.com/cuetrainer/cuetrainer/test/conformance/corpus"
)

var (
	engineOnce sync.Once
	eng        *engine.Engine
	engErr     error
)

func loadEngine(t testing.TB) *engine.Engine {
	t.Helper()
	engineOnce.Do(func() { eng, engErr = engine.New(engine.Options{}) })
	if engErr != nil {
		t.Fatalf("loading the engine: %v", engErr)
	}
	return eng
}

// Case and ExpectedError are the corpus's.
type (
	Case          = corpus.Case
	ExpectedError = corpus.ExpectedError
)

func cases(t *testing.T) []Case {
	t.Helper()
	cs, err := corpus.Cases()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// admit runs a case's input through a session and returns every result.
func admit(t *testing.T, e *engine.Engine, c Case, opts engine.SessionOptions) []engine.Result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(c.Dir, "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession(opts)
	var results []engine.Result
	for _, doc := range engine.ReadYAML("input.yaml", data) {
		results = append(results, s.Admit(doc))
	}
	return results
}

// matches reports whether a finding is the expected error: same field path
// (case-insensitively, as Kubeflow spells spec.RuntimeRef once), same type
// and same detail.
func matches(f engine.Finding, want ExpectedError) bool {
	if want.Path == nil {
		if f.HasPath {
			return false
		}
	} else if !f.HasPath || !strings.EqualFold(f.Path, *want.Path) {
		return false
	}
	if want.Type == nil {
		if f.Type != "" {
			return false
		}
	} else if f.Type != *want.Type {
		return false
	}
	return f.Detail == want.Detail
}

func TestConformanceAdmission(t *testing.T) {
	e := loadEngine(t)
	all := cases(t)
	var rejected, rendered int
	for _, c := range all {
		if c.Errors != nil {
			rejected++
		} else {
			rendered++
		}
		for _, mode := range []struct {
			name string
			opts engine.SessionOptions
		}{{"builtin", engine.SessionOptions{}}, {"no-builtin", engine.SessionOptions{NoBuiltinRuntimes: true}}} {
			t.Run(c.Name+"/"+mode.name, func(t *testing.T) {
				results := admit(t, e, c, mode.opts)
				var errs, warnings []engine.Finding
				for _, r := range results {
					errs = append(errs, r.Errors...)
					warnings = append(warnings, r.Warnings...)
				}
				if c.Errors == nil {
					for _, r := range results {
						for _, f := range r.Errors {
							t.Errorf("false rejection: %s: %s", r.Identity(), f)
						}
					}
				} else {
					if len(errs) == 0 {
						t.Fatalf("admitted; Kubeflow rejects it")
					}
					for _, want := range c.Errors {
						found := false
						for _, f := range errs {
							if matches(f, want) {
								found = true
								break
							}
						}
						if !found {
							p := "<nil>"
							if want.Path != nil {
								p = *want.Path
							}
							t.Errorf("missing error %s: %s", p, want.Detail)
							for _, f := range errs {
								t.Logf("  got: %s", f)
							}
						}
					}
				}
				for _, want := range c.Warnings {
					found := false
					for _, w := range warnings {
						if w.Detail == want {
							found = true
						}
					}
					if !found {
						t.Errorf("missing warning %q", want)
					}
				}
			})
		}
	}
	// The corpus this test was written for: a refresh that loses cases
	// should not pass unnoticed.
	if rejected < 19 || rendered < 31 {
		t.Errorf("corpus has %d rejection and %d rendered cases, want at least 19 and 31", rejected, rendered)
	}
}

// TestConformanceRuntimeDefaults checks that a runtime comes out of
// admission with every CRD default, exactly: Kubeflow's runtime snapshot
// ConfigMap (data.runtime in expected.yaml) is the runtime as the API
// server stored it.
func TestConformanceRuntimeDefaults(t *testing.T) {
	e := loadEngine(t)
	checked := 0
	for _, c := range cases(t) {
		if c.Errors != nil {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			var snapshot map[string]any
			for _, obj := range expectedObjects(t, c) {
				if obj["kind"] == "ConfigMap" && strings.HasSuffix(obj["metadata"].(map[string]any)["name"].(string), "-runtime-snapshot") {
					if err := yaml.Unmarshal([]byte(obj["data"].(map[string]any)["runtime"].(string)), &snapshot); err != nil {
						t.Fatal(err)
					}
				}
			}
			if snapshot == nil {
				t.Fatal("expected.yaml has no runtime snapshot")
			}
			md := snapshot["metadata"].(map[string]any)
			var defaulted map[string]any
			for _, r := range admit(t, e, c, engine.SessionOptions{NoBuiltinRuntimes: true}) {
				if r.Doc.Kind() == snapshot["kind"] && r.Doc.Name() == md["name"] {
					defaulted = r.Object
				}
			}
			if defaulted == nil {
				t.Fatalf("the input defines no %s %v", snapshot["kind"], md["name"])
			}
			for _, d := range objdiff.DiffValues(snapshot, defaulted, "runtime") {
				t.Error(d)
			}
			checked++
		})
	}
	if checked < 31 {
		t.Errorf("checked %d runtime snapshots, want 31", checked)
	}
}

// render admits a case's input and renders every admitted TrainJob.
func render(t *testing.T, e *engine.Engine, c Case) ([]map[string]any, []engine.Finding) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(c.Dir, "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession(engine.SessionOptions{})
	var objs []map[string]any
	var warnings []engine.Finding
	for _, doc := range engine.ReadYAML("input.yaml", data) {
		r := s.Admit(doc)
		if r.Rejected() {
			t.Fatalf("%s rejected: %v", r.Identity(), r.Errors)
		}
		out := s.Render(r, engine.RenderOptions{})
		for _, f := range out.Errors {
			t.Errorf("render %s: %s", r.Identity(), f)
		}
		objs = append(objs, out.Objects...)
		warnings = append(warnings, out.Warnings...)
	}
	return objs, warnings
}

// TestConformanceRender renders each admitted case and compares the objects
// with what Kubeflow created, by the corpus's rules.
func TestConformanceRender(t *testing.T) {
	e := loadEngine(t)
	passed := 0
	for _, c := range cases(t) {
		if c.Errors != nil {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			got, _ := render(t, e, c)
			diffs := objdiff.Diff(expectedObjects(t, c), got)
			for _, d := range diffs {
				t.Error(d)
			}
			if len(diffs) == 0 && !t.Failed() {
				passed++
			}
		})
	}
	t.Logf("%d rendered cases equal Kubeflow's objects", passed)
	if passed < 31 {
		t.Errorf("%d of 31 rendered cases pass", passed)
	}
}

// expectedObjects reads the objects Kubeflow created for a case.
func expectedObjects(t *testing.T, c Case) []map[string]any {
	t.Helper()
	objs, err := c.Expected()
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
