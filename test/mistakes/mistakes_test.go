// Package mistakes holds the corpus of admins' mistakes: each
// testdata/*.txtar is a policy directory with one mistake in it (or a valid
// policy that a mistake is easily confused with), run through the
// cuetrainer binary. A case passes when the command's exit code and output
// are the golden ones. The corpus holds the product's promise about an
// admin's CUE: a mistake is a load error (exit 2) naming the admin's file,
// line and what to do, or, where the policy is valid, the correct findings;
// never exit 0 with a rule silently off, never an error blamed on the
// user's document. Where a check cannot tell a mistake from what is meant
// (a heuristic check: alternatives anchored alone, a comparison that never
// holds, arguments that look swapped), it is a warning at the admin's line
// and the load goes on: the case shows the warning (exit 0 or 1), and
// test/correct holds a correct policy the check warns of.
//
// A case file is a comment (what the mistake is), then sections:
//
//	-- policy/NAME.cue --   the policy directory's files (any depth)
//	-- input.yaml --        the documents vetted (default: defaultInput)
//	-- args --              the command line, one argument a line
//	                        (default: vet --policy-dir policy input.yaml)
//	-- stdout-grep --       a regular expression: standard output is kept
//	                        to the lines that match (a CRD's few)
//	-- want --              exit code, standard error, then standard
//	                        output after a "[stdout]" line when any
//
// UPDATE_GOLDEN=1 rewrites the want sections from what the binary gives;
// CUETRAINER_BIN runs another binary (an older build, to compare).
package mistakes

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/testcli"
)

// defaultInput is what a case without input.yaml vets: a TrainJob on the
// shipped torch-distributed runtime.
const defaultInput = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: mnist
  namespace: team-a
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 2
`

// embeddedPosition is a position in cuetrainer's own CUE.
var embeddedPosition = regexp.MustCompile(`\b((?:schemas|runtimes)/[A-Za-z0-9_./-]+\.cue):\d+(?::\d+)?`)

// minCases is the corpus the issue asks for (issue 17: at least 30).
const minCases = 30

func TestMistakes(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < minCases {
		t.Errorf("found %d cases, want at least %d", len(files), minCases)
	}
	testcli.RunCases(t, files, run)
}

// run writes the case's files to a directory and runs the command there.
func run(t *testing.T, ar *txtar.Archive) string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"vet", "--policy-dir", "policy", "input.yaml"}
	input := []byte(defaultInput)
	var keep *regexp.Regexp
	for _, f := range ar.Files {
		switch {
		case f.Name == "want":
		case f.Name == "stdout-grep":
			keep = regexp.MustCompile(strings.TrimSpace(string(f.Data)))
		case f.Name == "args":
			args = strings.Fields(string(f.Data))
		case f.Name == "input.yaml":
			input = f.Data
		}
	}
	testcli.WriteFiles(t, ar, dir, "want", "stdout-grep", "args", "input.yaml")
	if err := os.WriteFile(filepath.Join(dir, "input.yaml"), input, 0o644); err != nil {
		t.Fatal(err)
	}
	stdoutText, stderr, code, err := testcli.Run(t, "../..", dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	// The admin's positions are the point; cuetrainer's own (schemas/,
	// runtimes/) keep their files but not their lines, which move as the
	// schemas change.
	clean := func(s string) string {
		return embeddedPosition.ReplaceAllString(strings.ReplaceAll(s, dir, "$WORK"), "$1")
	}
	out := fmt.Sprintf("exit %d\n%s", code, clean(stderr))
	if keep != nil {
		var kept []string
		for _, l := range strings.SplitAfter(stdoutText, "\n") {
			if keep.MatchString(strings.TrimSuffix(l, "\n")) {
				kept = append(kept, l)
			}
		}
		stdoutText = strings.Join(kept, "")
	}
	if stdoutText != "" {
		out += "[stdout]\n" + clean(stdoutText)
	}
	return out
}

// problemLine is the first line of a load problem at an admin's or
// cuetrainer's file, in a golden, or of a load warning at a line and
// column of an admin's CUE (a runtime it declares warns as a document
// does, at a line): the check that found it closes it.
var problemLine = regexp.MustCompile(`^(    [^ ]+\.(cue|yaml|yml|json)(:[0-9]+)*|Warning: policy/[^ ]+\.cue:[0-9]+:[0-9]+): `)

// TestLoadProblemsNamed: every load problem the corpus shows at a file
// names a check cuetrainer has (engine.Checks, docs/checks.md).
func TestLoadProblemsNamed(t *testing.T) {
	known := map[string]bool{}
	for _, c := range engine.Checks() {
		known[c.Name] = true
	}
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(` \(([a-z][a-z0-9-]*)\)$`)
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name != "want" {
				continue
			}
			for _, line := range strings.Split(string(f.Data), "\n") {
				if !problemLine.MatchString(line) {
					continue
				}
				if m := named.FindStringSubmatch(line); m == nil || !known[m[1]] {
					t.Errorf("%s: a load problem that names no check:\n%s", filepath.Base(file), line)
				}
			}
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	testcli.Cleanup()
	os.Exit(code)
}
