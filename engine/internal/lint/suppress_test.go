package lint

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// A rule with two heuristic checks' findings: a pattern compared as text
// (regexp-as-text, line 9) and a date ordered as text (text-order, line
// 10). HEAD, FIELD and TRAIL are where a test puts its directives.
const suppressed = `HEAD
package schemas

admission: (#APIVersion): TrainJob: {
	object: _
	let allowed = *object.metadata.annotations["example.com/allowed-images"] | ""
	let base = *object.metadata.labels["example.com/base"] | "9999.12"
	FIELD
	policy: broad: [if allowed == ".*" {path: "metadata.annotations", detail: "x"}]
	policy: old: [if base < "2025.01" {path: "metadata.labels", detail: "x"}] TRAIL
}
`

// policyText is suppressed with its placeholders filled.
func policyText(head, field, trail string) string {
	return strings.NewReplacer("HEAD", head, "FIELD", field, "TRAIL", trail).Replace(suppressed)
}

// findings are a report's problems and warnings, each as "check@line",
// the warnings marked "warn:".
func findings(r Report) []string {
	var out []string
	add := func(prefix string, ps []source.Problem) {
		for _, p := range ps {
			out = append(out, fmt.Sprintf("%s%s@%s:%02d", prefix, p.Check, p.File, p.Line))
		}
	}
	add("", r.Problems)
	add("warn:", r.Warnings)
	slices.Sort(out)
	return out
}

// TestSuppression: each form of directive silences a heuristic check's
// warning where it applies and nowhere else; a directive written wrong
// refuses the load at it, and one that silences nothing is a warning.
func TestSuppression(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files []testFile
		want  []string
	}{
		{"no directive", []testFile{{0, "p.cue", policyText("", "", "")}},
			[]string{"warn:regexp-as-text@p.cue:09", "warn:text-order@p.cue:10"}},
		{"on the field above", []testFile{{0, "p.cue", policyText("", "// cuetrainer:ignore regexp-as-text the annotation holds a pattern", "")}},
			[]string{"warn:text-order@p.cue:10"}},
		{"after the field, on its line", []testFile{{0, "p.cue", policyText("", "", "// cuetrainer:ignore text-order dates of one width")}},
			[]string{"warn:regexp-as-text@p.cue:09"}},
		{"two checks on the field above: one silences nothing there", []testFile{{0, "p.cue", policyText("", "// cuetrainer:ignore regexp-as-text,text-order meant", "")}},
			[]string{"warn:text-order@p.cue:10", "warn:unused-ignore@p.cue:08"}},
		{"in the file", []testFile{{0, "p.cue", policyText("// cuetrainer:file-ignore regexp-as-text,text-order patterns as text, dates", "", "")}},
			nil},
		{"in the directory", []testFile{{0, "p.cue", policyText("", "", "")}, {0, "lint.cue", "package schemas\n\nlint: ignore: {\n\t\"regexp-as-text\": \"patterns\"\n\t\"text-order\": \"dates\"\n}\n"}},
			nil},
		// The setting of another directory: it silences nothing in p.cue,
		// and says so.
		{"in another directory", []testFile{{0, "p.cue", policyText("", "", "")}, {1, "other/lint.cue", "package schemas\n\nlint: ignore: \"text-order\": \"dates\"\n"}},
			[]string{"warn:regexp-as-text@p.cue:09", "warn:text-order@p.cue:10", "warn:unused-ignore@other/lint.cue:03"}},
		{"a slip of a check's name", []testFile{{0, "p.cue", policyText("", "// cuetrainer:ignore regexp-as-txt meant", "")}},
			[]string{"ignore-directive@p.cue:08", "warn:regexp-as-text@p.cue:09", "warn:text-order@p.cue:10"}},
		{"a sound check", []testFile{{0, "p.cue", policyText("", "// cuetrainer:ignore absent-read meant", "")}},
			[]string{"ignore-directive@p.cue:08", "warn:regexp-as-text@p.cue:09", "warn:text-order@p.cue:10"}},
		{"no reason", []testFile{{0, "p.cue", policyText("", "// cuetrainer:ignore regexp-as-text", "")}},
			[]string{"ignore-directive@p.cue:08", "warn:regexp-as-text@p.cue:09", "warn:text-order@p.cue:10"}},
		{"no reason in the setting", []testFile{{0, "p.cue", policyText("", "", "")}, {0, "lint.cue", "package schemas\n\nlint: ignore: \"text-order\": \"\"\n"}},
			[]string{"ignore-directive@lint.cue:03", "warn:regexp-as-text@p.cue:09", "warn:text-order@p.cue:10"}},
		// Read as written: a reference would silence nothing, in silence.
		{"a setting not written out", []testFile{{0, "p.cue", policyText("", "", "")}, {0, "lint.cue", "package schemas\n\n#ignores: \"text-order\": \"dates\"\n\nlint: ignore: #ignores\n"}},
			[]string{"ignore-directive@lint.cue:05", "warn:regexp-as-text@p.cue:09", "warn:text-order@p.cue:10"}},
		// Not a directive: another word after the prefix.
		{"another word", []testFile{{0, "p.cue", policyText("", "// cuetrainer:ignored regexp-as-text meant", "")}},
			[]string{"warn:regexp-as-text@p.cue:09", "warn:text-order@p.cue:10"}},
	} {
		got := findings(Run(withPolicyFiles(t, tc.files...)))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestDirectiveMessages: a directive written wrong says what is wrong and
// what to write.
func TestDirectiveMessages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ field, want string }{
		{"// cuetrainer:ignore regexp-as-txt meant", "// cuetrainer:ignore regexp-as-txt: no check is named regexp-as-txt: did you mean regexp-as-text?"},
		{"// cuetrainer:ignore absent-read meant", "absent-read is a sound check: what it finds is wrong whatever the policy means, so it is fixed, never silenced"},
		{"// cuetrainer:ignore regexp-as-text", "say why the finding is meant, after the check's name"},
		{"// cuetrainer:ignore", "// cuetrainer:ignore names no check: write // cuetrainer:ignore CHECK REASON, with a heuristic check's name ("},
	} {
		r := Run(withPolicyFiles(t, testFile{0, "p.cue", policyText("", tc.field, "")}))
		var msgs []string
		for _, p := range r.Problems {
			if p.Check == checks.IgnoreDirective.Name {
				msgs = append(msgs, p.Message)
			}
		}
		if len(msgs) != 1 || !strings.Contains(msgs[0], tc.want) {
			t.Errorf("%s: %q, want one with %q", tc.field, msgs, tc.want)
		}
	}
}
