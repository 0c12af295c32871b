package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine"
)

const corpus = "../../test/conformance/testdata/kubeflow"

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestVetCorpus runs `cuetrainer vet -f CASE/input.yaml` on every case of
// the conformance corpus: exit 1 with every expected path and message for
// a rejection, exit 0 otherwise.
func TestVetCorpus(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(corpus, "cases", "*"))
	if len(dirs) < 50 {
		t.Fatalf("found %d cases, want 50", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			code, _, stderr := runCLI(t, "", "vet", "-f", filepath.Join(dir, "input.yaml"))
			data, err := os.ReadFile(filepath.Join(dir, "expected-errors.json"))
			if os.IsNotExist(err) {
				if code != 0 {
					t.Errorf("exit %d, want 0:\n%s", code, stderr)
				}
				return
			}
			if code != 1 {
				t.Errorf("exit %d, want 1:\n%s", code, stderr)
			}
			var want []struct {
				Path   *string
				Type   *string
				Detail string
			}
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			lower := strings.ToLower(stderr)
			for _, w := range want {
				if !strings.Contains(stderr, w.Detail) {
					t.Errorf("stderr lacks %q:\n%s", w.Detail, stderr)
				}
				if w.Path == nil && w.Type == nil {
					continue // a plain message, without a field
				}
				p := "<nil>"
				if w.Path != nil {
					p = *w.Path
				}
				if !strings.Contains(lower, ": "+strings.ToLower(p)+": ") {
					t.Errorf("stderr lacks the path %s:\n%s", p, stderr)
				}
			}
		})
	}
}

// TestExportedRuntimesVet: what `runtimes export` writes, vet admits
// without an error or a warning, and says so in its summary line.
func TestExportedRuntimesVet(t *testing.T) {
	code, exported, stderr := runCLI(t, "", "runtimes", "export")
	if code != 0 || stderr != "" {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	if n := strings.Count(exported, "kind: ClusterTrainingRuntime"); n != 9 {
		t.Errorf("exported %d runtimes, want 9", n)
	}
	for _, builtin := range [][]string{nil, {"--no-builtin-runtimes"}} {
		code, _, stderr = runCLI(t, exported, append([]string{"vet", "-"}, builtin...)...)
		if want := "cuetrainer vet: 9 documents: 9 admitted, 0 rejected; 0 warnings\n"; code != 0 || stderr != want {
			t.Errorf("vet %v of the exported runtimes: exit %d:\n%s", builtin, code, stderr)
		}
	}
}

// TestExportEqualsKubeflowManifests: the exported runtimes equal Kubeflow's
// manifests, as authored, by the corpus's comparison rules.
func TestExportEqualsKubeflowManifests(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, "", "runtimes", "export", "--dir", dir); code != 0 {
		t.Fatalf("export --dir: exit %d: %s", code, stderr)
	}
	manifests, _ := filepath.Glob(filepath.Join(corpus, "runtimes", "*.yaml"))
	if len(manifests) != 9 {
		t.Fatalf("found %d Kubeflow manifests, want 9", len(manifests))
	}
	for _, m := range manifests {
		want, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, filepath.Base(m)))
		if err != nil {
			t.Errorf("not exported: %v", err)
			continue
		}
		for _, d := range diffYAML(t, want, got) {
			t.Errorf("%s: %s", filepath.Base(m), d)
		}
	}
}

// TestBrokenPolicyExit2: a policy file that does not compile is a usage
// error (exit 2) naming its file:line:col.
func TestBrokenPolicyExit2(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.cue"), []byte("package schemas\n\nfoo: {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "vet", "--policy-dir", dir, "-")
	if code != 2 || !regexp.MustCompile(`bad\.cue:\d+:\d+`).MatchString(stderr) {
		t.Errorf("exit %d, stderr %q; want 2 and bad.cue:LINE:COL", code, stderr)
	}
}

// TestRefusedPolicyExit2: a policy that imports a tool package is refused
// at load, a usage error (exit 2) naming its file:line:col and the rule.
func TestRefusedPolicyExit2(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.cue"), []byte("package schemas\n\nimport \"tool/exec\"\n\nx: exec.Run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", "vet", "--policy-dir", dir, "-")
	want := filepath.Join(dir, "run.cue") + `:3:8: import "tool/exec": a policy may not import tool packages`
	if code != 2 || stdout != "" || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, want)
	}
}

// TestExitCodeOfDefect: a document cuetrainer could not evaluate (a panic
// it recovered, engine.PhaseDefect) exits 2, as one it could not read: it
// was neither admitted nor rejected by a rule.
func TestExitCodeOfDefect(t *testing.T) {
	for _, tc := range []struct {
		phase engine.Phase
		want  int
	}{{engine.PhasePolicy, exitRejected}, {engine.PhaseDefect, exitUsage}, {engine.PhaseRuleError, exitUsage}} {
		if got := exitCode([]engine.Finding{{Phase: engine.PhasePolicy}, {Phase: tc.phase}}); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.phase, got, tc.want)
		}
	}
	if _, ok := ruleDescriptions[engine.PhaseDefect]; !ok {
		t.Error("SARIF has no description of the defect phase")
	}
}
