package lint

import (
	"strings"
	"testing"
)

// TestImageTestsOfListItems: a registry test whose text a comprehension
// takes from a list the load knows (`for r in #allowed`, or a list
// written out) is checked item by item, at the item: the one without
// its "/" is said, the others are not; a refusal where a rule fires when
// the test does not hold (a filter whose emptiness a rule fires on, or
// the test negated in a rule's own condition), a warning where no rule's
// condition reads it so (a list of the tests' outcomes).
func TestImageTestsOfListItems(t *testing.T) {
	t.Parallel()
	const head = "package schemas\n\nimport \"strings\"\n\n#allowed: [\"registry.example.com\", \"quay.io/\"]\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\tlet image = *object.spec.trainer.image | \"registry.example.com/x\"\n"
	const finding = "{path: \"spec.trainer.image\", detail: \"x\"}"
	for _, tc := range []struct {
		name, rules      string
		problem, warning string
	}{
		{"a filter of a list a path names", "\tlet fromOrg = [for r in #allowed if strings.HasPrefix(image, r) {r}]\n\tpolicy: org: [if len(fromOrg) == 0 " + finding + "]\n",
			`p.cue:5:12: strings.HasPrefix(image, r) (r is "registry.example.com", an item of #allowed) also holds for "registry.example.com.attacker.example/image"`, ""},
		{"a filter of a list written out", "\tlet fromOrg = [for r in [\"mirror.example.com/\", \"registry.example.com\"] if strings.HasPrefix(image, r) {r}]\n\tpolicy: org: [if len(fromOrg) < 1 " + finding + "]\n",
			`p.cue:10:50: strings.HasPrefix(image, r) (r is "registry.example.com", an item of the list) also holds for`, ""},
		{"a filter a rule fires on when it is not empty (a denylist)", "\tlet denied = [for r in #allowed if strings.HasPrefix(image, r) {r}]\n\tpolicy: org: [if len(denied) > 0 " + finding + "]\n",
			"", ""},
		{"a list of the tests' outcomes", "\tlet passes = [for r in #allowed {strings.HasPrefix(image, r)}]\n\tpolicy: org: [if !(passes[0] || passes[1]) " + finding + "]\n",
			"", `p.cue:5:12: strings.HasPrefix(image, r) (r is "registry.example.com", an item of #allowed) also holds for`},
		{"a rule that fires where it does not hold", "\tpolicy: org: [for r in #allowed if !strings.HasPrefix(image, r) " + finding + "]\n",
			`p.cue:5:12: strings.HasPrefix(image, r) (r is "registry.example.com", an item of #allowed) also holds for`, ""},
	} {
		r := Run(withPolicy(t, "p.cue", head+tc.rules+"}\n"))
		for _, check := range []struct {
			what string
			got  []string
			want string
		}{{"problems", nil, tc.problem}, {"warnings", nil, tc.warning}} {
			list := r.Problems
			if check.what == "warnings" {
				list = r.Warnings
			}
			for _, p := range list {
				if strings.Contains(p.Message, "an image of another registry") {
					check.got = append(check.got, p.String())
				}
			}
			if check.want == "" && len(check.got) > 0 || check.want != "" && (len(check.got) != 1 || !strings.Contains(check.got[0], check.want)) {
				t.Errorf("%s: %s %q, want %q", tc.name, check.what, check.got, check.want)
			}
		}
	}
}

// TestImageTestsThroughFields: a registry test a field holds, which a
// rule's condition names, is read as the condition reads the field: an
// allowlist refused at the literal, a denylist left alone (the parser
// resolves a field of the same file to its value).
func TestImageTestsThroughFields(t *testing.T) {
	t.Parallel()
	const head = "package schemas\n\nimport \"strings\"\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\tlet image = *object.spec.trainer.image | \"registry.example.com/x\"\n"
	for _, tc := range []struct{ name, rules, problem string }{
		{"an allowlist", "\t#fromOrg: strings.HasPrefix(image, \"registry.example.com\")\n\tpolicy: org: [if !#fromOrg {path: \"spec.trainer.image\", detail: \"x\"}]\n",
			`p.cue:8:37: strings.HasPrefix(image, "registry.example.com") also holds for "registry.example.com.attacker.example/image"`},
		{"a denylist", "\t#frozen: strings.HasPrefix(image, \"k8s.gcr.io\")\n\tpolicy: frozen: [if #frozen {path: \"spec.trainer.image\", detail: \"x\"}]\n", ""},
	} {
		r := Run(withPolicy(t, "p.cue", head+tc.rules+"}\n"))
		var problems []string
		for _, p := range r.Problems {
			problems = append(problems, p.String())
		}
		if len(r.Warnings) > 0 {
			t.Errorf("%s: warnings %v, want none", tc.name, r.Warnings)
		}
		if tc.problem == "" && len(problems) > 0 || tc.problem != "" && (len(problems) != 1 || !strings.Contains(problems[0], tc.problem)) {
			t.Errorf("%s: problems %q, want %q", tc.name, problems, tc.problem)
		}
	}
}
