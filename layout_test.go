package cuetrainer

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoFrameworkInGo keeps the Go generic: no non-test Go file under cmd/,
// engine/ or controller/ names a framework or a TrainJob step. Those live in
// the CUE.
func TestNoFrameworkInGo(t *testing.T) {
	names := regexp.MustCompile(`(?i)\b(torch|torchrun|torchtune|mpi|openmpi|deepspeed|mlx|jax|xgboost|flux|plainml|dataset-initializer|model-initializer|launcher|ancestor)\b`)
	checked := eachGoLine(t, []string{"cmd", "engine", "controller"}, func(p string, i int, line string) {
		if m := names.FindString(line); m != "" {
			t.Errorf("%s:%d names %q: %s", p, i, m, strings.TrimSpace(line))
		}
	})
	if checked < 5 {
		t.Errorf("checked %d Go files, want the engine's and the CLI's", checked)
	}
}

// eachGoLine calls fn with every line (numbered from 1) of the non-test Go
// files under dirs, and says how many files it read.
func eachGoLine(t *testing.T, dirs []string, fn func(path string, n int, line string)) int {
	t.Helper()
	files := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if os.IsNotExist(err) {
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			for i, line := range strings.Split(string(data), "\n") {
				fn(p, i+1, line)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestNoAddedFrameworkInGo: the frameworks and APIs that policy directories
// add (examples/policies) are not named by the Go either.
func TestNoAddedFrameworkInGo(t *testing.T) {
	names := regexp.MustCompile(`(?i)(\btensorflow\b|\belasticPolicy\b|\bome\.io\b)`)
	eachGoLine(t, []string{"cmd", "engine", "controller"}, func(p string, i int, line string) {
		if m := names.FindString(line); m != "" {
			t.Errorf("%s:%d names %q: %s", p, i, m, strings.TrimSpace(line))
		}
	})
}

// TestFrameworkByCUEOnly builds cuetrainer from a copy of the tree without
// examples/, then vets and renders a TrainJob on TensorFlow with the example
// policy directory: the framework is CUE only, read at run time.
func TestFrameworkByCUEOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	files, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	tree := t.TempDir()
	for _, f := range strings.Fields(string(files)) {
		if strings.HasPrefix(f, "examples/") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			continue // deleted in the work tree
		}
		dst := filepath.Join(tree, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "cuetrainer")
	build := exec.Command("go", "build", "-o", bin, "./cmd/cuetrainer")
	build.Dir = tree
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building without examples/: %v\n%s", err, out)
	}
	job := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(job, []byte(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: mnist, namespace: team}
spec:
  runtimeRef: {name: tensorflow-distributed}
  trainer: {numNodes: 2}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	policy, _ := filepath.Abs(filepath.Join("examples", "policies", "tensorflow"))
	run := func(args ...string) (string, error) {
		out, err := exec.Command(bin, args...).CombinedOutput()
		return string(out), err
	}
	if out, err := run("vet", job); err == nil {
		t.Errorf("vet without the policy admitted the TrainJob: %s", out)
	}
	if out, err := run("vet", "--policy-dir", policy, job); err != nil {
		t.Errorf("vet with the policy: %v\n%s", err, out)
	}
	out, err := run("render", "--policy-dir", policy, job)
	if err != nil || !strings.Contains(out, "TF_CONFIG") || !strings.Contains(out, "mnist-node-0-1.mnist") {
		t.Errorf("render with the policy: %v\n%s", err, out)
	}
}

// TestCUEPathsInTheContractOnly: outside engine/ (where
// TestContractInOneFile checks every file but contract.go), no non-test Go
// file names a CUE field: none evaluates CUE (imports cuelang.org/go's cue
// package) or reads a review's summary by key. They read the engine's
// structs (engine.RuntimeSummary, engine.ControllerDirectives). hack/
// holds build tools that edit CUE source, not the contract.
func TestCUEPathsInTheContractOnly(t *testing.T) {
	evaluates := regexp.MustCompile(`"cuelang\.org/go/cue(/cuecontext|/load)?"`)
	byKey := regexp.MustCompile(`\.Summary\[`)
	checked := eachGoLine(t, []string{"cmd", "controller", "internal", "test"}, func(p string, i int, line string) {
		code, _, _ := strings.Cut(line, "//")
		if m := evaluates.FindString(code); m != "" {
			t.Errorf("%s:%d imports %s: CUE is the engine's, its fields named in engine/contract.go", p, i, m)
		}
		if byKey.MatchString(code) {
			t.Errorf("%s:%d reads a summary's field by its CUE name: decode it into a struct in engine/contract.go: %s", p, i, strings.TrimSpace(line))
		}
	})
	if checked < 20 {
		t.Errorf("checked %d Go files, want the commands', the controller's and the tools'", checked)
	}
}
