package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine"
)

// mistakesDir is the corpus of admins' mistakes, whose goldens show each
// load problem with the name of its check.
const mistakesDir = "../../test/mistakes/testdata"

// noMistakesCase are the checks the mistakes corpus cannot hold a case of,
// and why.
var noMistakesCase = map[string]string{
	"defect":   "a panic of CUE or cuetrainer on a policy: each one found is fixed, so no policy is known to make one (engine's defect_test.go injects them)",
	"fallback": "a panic of CUE that the engine works around: no policy is known to make one with CUE v0.17.1 (engine's defect_test.go injects them)",
}

// namedProblem is a load problem's first line in a golden: its position,
// its message, and its check's name in parentheses.
var namedProblem = regexp.MustCompile(`\(([a-z][a-z0-9-]*)\)$`)

// correctDir is the corpus of correct policies, whose goldens show the
// heuristic checks' warnings of them.
const correctDir = "../../test/correct/testdata"

// checkCases are the cases of a corpus (test/mistakes, test/correct)
// whose goldens show a problem of each check, by check.
func checkCases(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the corpus %s: %v", dir, err)
	}
	cases := map[string][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, want, ok := bytes.Cut(data, []byte("\n-- want --\n"))
		if !ok {
			continue
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(string(want), "\n") {
			if m := namedProblem.FindStringSubmatch(line); m != nil && !seen[m[1]] {
				if _, known := checkOf(m[1]); known {
					seen[m[1]] = true
					cases[m[1]] = append(cases[m[1]], strings.TrimSuffix(filepath.Base(f), ".txtar"))
				}
			}
		}
	}
	return cases
}

// checksDoc is docs/checks.md as the checks and the corpus make it.
func checksDoc(t *testing.T) string {
	cases, correct := checkCases(t, mistakesDir), checkCases(t, correctDir)
	var b strings.Builder
	b.WriteString(`# The checks of a policy's CUE

<!-- Written by TestChecksDoc (cmd/cuetrainer) from engine/internal/checks: UPDATE_GOLDEN=1 rewrites it. -->

A policy directory is checked as it loads. Each problem the load finds is one check's, and
carries its name: printed after the message's first line (` + "`policy/org.cue:7:36: ... (absent-read)`" + `),
in ` + "`-o json`" + `'s ` + "`check`" + ` field, and as the rule id of ` + "`-o sarif`" + `. ` + "`cuetrainer vet --list-checks`" + ` lists them.

A check is **sound** when what it finds is a fact of CUE, of cuetrainer's contract or of the
schemas (a field the schema has not, a value of the wrong type, an entry the engine never reads):
what it refuses is wrong whatever was meant. It is **heuristic** when it guesses what the admin
meant (an allow- or a denylist, an anchor, a comparison that can never hold), and may be wrong
about a correct policy. A check either **refuses** the load (exit 2, the admin's file and line)
or **warns** (the load goes on; ` + "`--policy-warnings=error`" + ` makes warnings fatal). Every
heuristic check warns: a check that may be wrong about a correct policy never refuses it. The
corpus of correct policies (` + "`test/correct`" + `), which no check may refuse, holds one that each
heuristic check warns of where one is known.

## Silencing a heuristic check

Where a heuristic check's finding is meant, say so beside it, with the check's name and why, as
staticcheck's ` + "`//lint:ignore`" + ` does:

` + "```cue" + `
// cuetrainer:ignore regexp-as-text the annotation holds a pattern: ".*" is the one that allows every image
policy: allowsEverything: [if allowed == ".*" {...}]

policy: old: [if base < "2025.01" {...}] // cuetrainer:ignore text-order YYYY.MM texts order as their months
` + "```" + `

- ` + "`// cuetrainer:ignore CHECK[,CHECK...] REASON`" + `, above a field or after it on its line,
  silences those checks on the field's lines (all of its value's).
- ` + "`// cuetrainer:file-ignore CHECK[,CHECK...] REASON`" + `, anywhere in a file, silences them in
  the file.
- ` + "`lint: ignore: CHECK: REASON`" + `, in a file of a policy directory, silences the check in every
  file of that directory (not in another ` + "`--policy-dir`" + `'s).

A directive that names no check (the name meant is suggested), names a sound check (what it
finds is fixed, never silenced) or gives no reason refuses the load (` + "`ignore-directive`" + `); one that
silences nothing is a warning (` + "`unused-ignore`" + `): left in, it would silence a later finding no
one meant.

Each check below names the cases of ` + "`test/mistakes`" + ` that show it, with their messages, and the
correct policies of ` + "`test/correct`" + ` it warns of.

| check | level | load |
|---|---|---|
`)
	all := engine.Checks()
	for _, c := range all {
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s |\n", c.Name, c.Name, c.Level, checkAction(c))
	}
	for _, c := range all {
		level := string(c.Level)
		fmt.Fprintf(&b, "\n## %s\n\n%s; %s the load.\n\n%s\n", c.Name, strings.ToUpper(level[:1])+level[1:], checkAction(c), c.Doc)
		if c.Level == engine.CheckHeuristic {
			fmt.Fprintf(&b, "\nWhere its finding is meant: `// cuetrainer:ignore %s REASON` on the field ([silencing](#silencing-a-heuristic-check)).\n", c.Name)
		} else {
			b.WriteString("\nNot silenced: what it finds is fixed in the CUE.\n")
		}
		names := cases[c.Name]
		sort.Strings(names)
		switch {
		case len(names) > 0:
			shown := names
			if len(shown) > 5 {
				shown = shown[:5]
			}
			var links []string
			for _, n := range shown {
				links = append(links, fmt.Sprintf("[%s](../test/mistakes/testdata/%s.txtar)", n, n))
			}
			more := ""
			if len(names) > len(shown) {
				more = fmt.Sprintf(" and %d more", len(names)-len(shown))
			}
			fmt.Fprintf(&b, "\nCases: %s%s.\n", strings.Join(links, ", "), more)
		case noMistakesCase[c.Name] != "":
			fmt.Fprintf(&b, "\nNo case: %s.\n", noMistakesCase[c.Name])
		}
		if names := correct[c.Name]; len(names) > 0 {
			sort.Strings(names)
			var links []string
			for _, n := range names {
				links = append(links, fmt.Sprintf("[%s](../test/correct/testdata/%s.txtar)", n, n))
			}
			fmt.Fprintf(&b, "\nCorrect policies it warns of: %s.\n", strings.Join(links, ", "))
		}
	}
	return b.String()
}

// TestChecksDoc: docs/checks.md documents every check, by name, level,
// what it does to a load and its doc, with the mistakes cases that show
// it; a check with no case in the corpus, and no reason it cannot have
// one, fails.
func TestChecksDoc(t *testing.T) {
	cases, correct := checkCases(t, mistakesDir), checkCases(t, correctDir)
	for _, c := range engine.Checks() {
		// A correct policy may draw a warning, never a refusal.
		if len(correct[c.Name]) > 0 && !c.Warns {
			t.Errorf("check %s refuses the correct policy %s: make it sound, or a warning", c.Name, correct[c.Name][0])
		}
		if len(cases[c.Name]) == 0 && noMistakesCase[c.Name] == "" {
			t.Errorf("check %s: no case of test/mistakes shows it; add one (a policy with the mistake, its golden naming the check)", c.Name)
		}
		if len(cases[c.Name]) > 0 && noMistakesCase[c.Name] != "" {
			t.Errorf("check %s: test/mistakes shows it (%s): drop it from noMistakesCase", c.Name, cases[c.Name][0])
		}
		if c.Level != engine.CheckSound && c.Level != engine.CheckHeuristic {
			t.Errorf("check %s: level %q", c.Name, c.Level)
		}
		if !regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`).MatchString(c.Name) || c.Doc == "" {
			t.Errorf("check %q: a name in kebab case and a doc, please", c.Name)
		}
	}
	got := checksDoc(t)
	const path = "../../docs/checks.md"
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("docs/checks.md is not what the checks make: UPDATE_GOLDEN=1 go test -run TestChecksDoc ./cmd/cuetrainer rewrites it")
	}
}

// TestListChecks: vet --list-checks prints every check, a line each,
// and vets nothing.
func TestListChecks(t *testing.T) {
	var out, errb bytes.Buffer
	root := newRootCmd(strings.NewReader(""), &out, &errb)
	root.SetArgs([]string{"vet", "--list-checks"})
	if err := root.Execute(); err != nil {
		t.Fatalf("vet --list-checks: %v\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(engine.Checks())+1 || !strings.HasPrefix(lines[0], "CHECK") {
		t.Fatalf("got %d lines, want a header and %d checks:\n%s", len(lines), len(engine.Checks()), out.String())
	}
	for i, c := range engine.Checks() {
		if f := strings.Fields(lines[i+1]); len(f) < 3 || f[0] != c.Name || f[1] != string(c.Level) || f[2] != checkAction(c) {
			t.Errorf("line %d: %q, want %s %s %s ...", i+2, lines[i+1], c.Name, c.Level, checkAction(c))
		}
	}
}
