// Package correct holds the corpus of correct policies: policy directories
// an admin could write that must load with no refusal (issue 42, item 5).
// Each is run through the cuetrainer binary, as an admin's CI runs it. The
// corpus is the other half of test/mistakes: a load check that refuses a
// case here refuses what is right, and must be made sound or a warning.
//
// Three sources:
//
//   - every shipped framework, scheduler and runtime file, copied into a
//     policy directory under new names (shippedCopies): a framework or
//     runtime of an admin's own, written as cuetrainer writes its own,
//     must load;
//   - the repository's example policies (examples/policies/*);
//   - testdata/*.txtar: common admission policies, in their allowlist and
//     denylist forms, each with documents it admits and refuses, in the
//     format of test/mistakes (its package doc): a `want` section holds
//     the exit code and what the command printed.
//
// A case passes when the policy loads (exit 0 or 1, never 2); a shipped
// copy or an example also prints no load warning, and a txtar case prints
// the golden output (load warnings included: a heuristic check may warn of
// a correct policy, and the golden shows where).
// UPDATE_GOLDEN=1 rewrites the want sections.
package correct

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/cuetrainer/cuetrainer/internal/testcli"
)

// root is the repository's root, relative to this package.
const root = "../.."

// minCases is the corpus issue 42 asks for: at least 40 correct policies.
const minCases = 40

// trainJob is a TrainJob on the runtime named, in the namespace team-a.
func trainJob(runtime string) string {
	return fmt.Sprintf(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: mnist
  namespace: team-a
spec:
  runtimeRef:
    name: %s
  trainer:
    numNodes: 2
`, runtime)
}

// copied is a shipped file, copied into a policy directory.
type copied struct {
	// from is the file's path in the repository; to, its name in the
	// policy directory.
	from, to string
	// words are renamed wherever a name begins with them, whatever their
	// case: each gets the prefix org (Org before a capital), so that the
	// copy's framework, definitions, rules and labels are its own.
	words []string
	// keep are the words that hold a renamed word and name something
	// the copy reads, not declares (an input of the plans, a table of
	// the contract): they stay as they are.
	keep []string
}

// copyCase is a policy directory of copies, and the runtime its TrainJob
// names.
type copyCase struct {
	name    string
	files   []copied
	runtime string
}

// renamed gives text with each word renamed, save those in keep.
func renamed(text string, words, keep []string) string {
	if len(words) == 0 {
		return text
	}
	var holds []string
	for i, k := range keep {
		hold := fmt.Sprintf("\x00%d\x00", i)
		holds = append(holds, hold)
		text = strings.ReplaceAll(text, k, hold)
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = regexp.QuoteMeta(w)
	}
	// A word begins a name or follows what is no letter: OMPI keeps its
	// MPI.
	re := regexp.MustCompile(`(?i)(^|[^a-z])(` + strings.Join(quoted, "|") + `)`)
	text = re.ReplaceAllStringFunc(text, func(m string) string {
		sub := re.FindStringSubmatch(m)
		if w := sub[2]; w[0] >= 'A' && w[0] <= 'Z' {
			return sub[1] + "Org" + w
		}
		return sub[1] + "org" + sub[2]
	})
	for i, k := range keep {
		text = strings.ReplaceAll(text, holds[i], k)
	}
	return text
}

// runtimeNames are the keys a runtime file declares its runtimes by.
var runtimeNames = regexp.MustCompile(`clusterTrainingRuntimes: "([^"]+)"`)

// runtimeCopy is a shipped runtime file in the policy's package, each of
// its runtimes renamed org-NAME.
func runtimeCopy(text string) string {
	text = strings.Replace(text, "package runtimes", "package schemas", 1)
	for _, m := range runtimeNames.FindAllStringSubmatch(text, -1) {
		text = strings.ReplaceAll(text, `"`+m[1]+`"`, `"org-`+m[1]+`"`)
	}
	return text
}

// shippedCopies are the cases made of the shipped files: each framework
// and scheduler file alone (with a file it needs), each runtime file with
// the shapes the runtimes share (runtimes.cue).
func shippedCopies(t *testing.T) []copyCase {
	cases := []copyCase{
		{name: "framework-torch", files: []copied{{from: "schemas/torch.cue", words: []string{"torch"}}}},
		{name: "framework-mpi", files: []copied{{from: "schemas/mpi.cue", words: []string{"mpi", "deepspeed", "mlx", "sshAuth"}, keep: []string{"mpiImplementations", "mpiFlavors", "mpiImplementation", "OpenMPI", "/etc/mpi/"}}}},
		{name: "framework-jax", files: []copied{{from: "schemas/jax.cue", words: []string{"jax"}}}},
		{name: "framework-xgboost", files: []copied{{from: "schemas/xgboost.cue", words: []string{"xgboost"}}}},
		{name: "framework-plainml", files: []copied{{from: "schemas/plainml.cue", words: []string{"plainml"}, keep: []string{"replacesPlainML"}}}},
		{name: "framework-flux", files: []copied{{from: "schemas/flux.cue", words: []string{"flux"}}, {from: "schemas/flux_scripts.cue", words: []string{"flux"}}}},
		{name: "scheduler-volcano", files: []copied{{from: "schemas/volcano.cue", words: []string{"volcano"}, keep: []string{"scheduling.volcano.sh"}}}},
		{name: "scheduler-coscheduling", files: []copied{{from: "schemas/coscheduling.cue", words: []string{"coscheduling"}, keep: []string{"scheduling.x-k8s.io"}}}},
	}
	for i := range cases {
		cases[i].runtime = "torch-distributed"
	}
	runtimes, err := filepath.Glob(filepath.Join(root, "runtimes", "*.cue"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range runtimes {
		base := filepath.Base(f)
		if base == "runtimes.cue" {
			continue
		}
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := runtimeNames.FindStringSubmatch(string(text))
		if m == nil {
			t.Fatalf("%s declares no runtime", f)
		}
		cases = append(cases, copyCase{
			name:    "runtime-" + strings.TrimSuffix(base, ".cue"),
			files:   []copied{{from: "runtimes/" + base}, {from: "runtimes/runtimes.cue"}},
			runtime: "org-" + m[1],
		})
	}
	return cases
}

// TestShippedFilesCopied: each shipped framework, scheduler and runtime
// file, copied into a policy directory under names of its own, loads with
// no refusal and no load warning, and admits a TrainJob (on the copied
// runtime, for a runtime file).
func TestShippedFilesCopied(t *testing.T) {
	cases := shippedCopies(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			policy := filepath.Join(dir, "policy")
			if err := os.MkdirAll(policy, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.files {
				text, err := os.ReadFile(filepath.Join(root, f.from))
				if err != nil {
					t.Fatal(err)
				}
				out := renamed(string(text), f.words, f.keep)
				if strings.HasPrefix(f.from, "runtimes/") {
					out = runtimeCopy(out)
				}
				if out == string(text) && !strings.HasPrefix(f.from, "runtimes/") {
					t.Fatalf("%s: the copy renames nothing", f.from)
				}
				name := "org_" + filepath.Base(f.from)
				if err := os.WriteFile(filepath.Join(policy, name), []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "input.yaml"), []byte(trainJob(tc.runtime)), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code, err := testcli.Run(t, root, dir, "vet", "--policy-dir", "policy", "--fail-on-builtin=false", "input.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if code != 0 || strings.Contains(stderr, "Warning:") || !strings.Contains(stdout+stderr, "1 admitted") {
				t.Errorf("exit %d, want 0 with the TrainJob admitted and no warning:\n%s%s", code, stderr, stdout)
			}
		})
	}
}

// TestExamplePolicies: the repository's example policies load with no
// refusal and no load warning.
func TestExamplePolicies(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(root, "examples", "policies", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no example policy")
	}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(d), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "input.yaml"), []byte(trainJob("torch-distributed")), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code, err := testcli.Run(t, root, dir, "vet", "--policy-dir", abs, "--fail-on-builtin=false", "input.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if code == 2 || strings.Contains(stderr, "Warning:") {
				t.Errorf("exit %d, want a load with no refusal and no warning:\n%s%s", code, stderr, stdout)
			}
		})
	}
}

// TestCorrectPolicies: the common admission policies of testdata load with
// no refusal, and give the golden verdicts and warnings.
func TestCorrectPolicies(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	examples, _ := filepath.Glob(filepath.Join(root, "examples", "policies", "*"))
	if n := len(files) + len(shippedCopies(t)) + len(examples); n < minCases {
		t.Errorf("the corpus holds %d policies, want at least %d", n, minCases)
	}
	sort.Strings(files)
	testcli.RunCases(t, files, func(t *testing.T, ar *txtar.Archive) string {
		// A load warning (a heuristic check's, which may be wrong about a
		// correct policy) shows in the golden output.
		got, code := run(t, ar)
		if code == 2 {
			t.Errorf("exit %d, want a load with no refusal:\n%s", code, got)
		}
		return got
	})
}

// run writes a case's files to a directory and vets its input there with
// its policy, as test/mistakes does: the output to compare, and the exit
// code.
func run(t *testing.T, ar *txtar.Archive) (string, int) {
	t.Helper()
	dir := t.TempDir()
	if !slices.ContainsFunc(ar.Files, func(f txtar.File) bool { return f.Name == "input.yaml" }) {
		t.Fatal("the case has no input.yaml: a correct policy is shown admitting and refusing")
	}
	testcli.WriteFiles(t, ar, dir, "want")
	stdout, stderr, code, err := testcli.Run(t, root, dir, "vet", "--policy-dir", "policy", "--fail-on-builtin=false", "input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := fmt.Sprintf("exit %d\n%s", code, strings.ReplaceAll(stderr, dir, "$WORK"))
	if stdout != "" {
		out += "[stdout]\n" + strings.ReplaceAll(stdout, dir, "$WORK")
	}
	return out, code
}

func TestMain(m *testing.M) {
	code := m.Run()
	testcli.Cleanup()
	os.Exit(code)
}
