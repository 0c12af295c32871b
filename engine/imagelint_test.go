package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestImageRegistryChecked: a rule that holds images to a registry by a
// test of the text that lets another registry's images through (a prefix
// without the "/" that ends the host, a text contained or a pattern not
// anchored, a pattern's unescaped dots) fails the load at the literal;
// the same tests written to end at the host, and tests of other texts,
// load. One policy holds the rules of each kind, one rule to a line.
func TestImageRegistryChecked(t *testing.T) {
	t.Parallel()
	policy := func(conds []string) map[string]string {
		var rules strings.Builder
		for i, cond := range conds {
			fmt.Fprintf(&rules, "\tpolicy: r%d: [if %s {path: \"spec.trainer.image\", detail: \"x\"}]\n", i, cond)
		}
		return map[string]string{"p.cue": "package schemas\n\nimport \"strings\"\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\tlet image = *object.spec.trainer.image | \"registry.example.com/x\"\n" + rules.String() + "}\n"}
	}
	bad := []struct{ cond, want string }{
		{`!strings.HasPrefix(image, "registry.example.com")`, `p.cue:8:44: strings.HasPrefix(image, "registry.example.com") also holds for "registry.example.com.attacker.example/image", an image of another registry: a registry's name ends at the image's first "/"; write "registry.example.com/"`},
		{`!strings.HasPrefix(image, "localhost:5000")`, `p.cue:9:44: strings.HasPrefix(image, "localhost:5000") also holds for "localhost:50000/image"`},
		{`!strings.Contains(image, "registry.example.com/")`, `p.cue:10:43: strings.Contains(image, "registry.example.com/") also holds for "attacker.example/registry.example.com/", an image of another registry: did you mean strings.HasPrefix(image, "registry.example.com/")?`},
		{`image !~ "registry.example.com/"`, `p.cue:11:27: image !~ "registry.example.com/" matches anywhere in the image, so it also matches "attacker.example/registry.example.com/image", an image of another registry: anchor it, "^registry\\.example\\.com/"`},
		{`image !~ "^registry\\.example.com/"`, `p.cue:12:27: image !~ "^registry\\.example.com/" also matches "registry.example-com/image", an image of another registry: a "." matches any character; escape the dots, "^registry\\.example\\.com/"`},
	}
	var conds []string
	for _, tc := range bad {
		conds = append(conds, tc.cond)
	}
	_, err := New(Options{PolicyDirs: []string{writePolicy(t, policy(conds))}})
	for _, tc := range bad {
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: load: %v\nwant %q", tc.cond, err, tc.want)
		}
	}
	loadPolicyWant(t, "tests that end at the host, and of other texts", policy([]string{
		`!strings.HasPrefix(image, "registry.example.com/")`,
		`image !~ "^registry\\.example\\.com/"`,
		`image !~ "pytorch"`,
		`!strings.Contains(image, "pytorch")`,
	}), "")
	// A rule that fires where the test holds refuses the images it holds
	// for (a denylist): a test that holds for more refuses more, never
	// fewer, and loads without a word.
	deny := loadPolicyWant(t, "denylists", policy([]string{
		`strings.HasPrefix(image, "k8s.gcr.io")`,
		`strings.Contains(image, "docker.io/")`,
		`image =~ "k8s\\.gcr\\.io/"`,
		`image !~ "^quay.io/" == false`,
		`len(image) > 0 && (strings.HasPrefix(image, "gcr.io") || image =~ "^ghcr.io/")`,
		`!(image !~ "ecr\\.aws/")`,
	}), "")
	if deny != nil && len(deny.Warnings()) > 0 {
		t.Errorf("denylists: warnings %v, want none", deny.Warnings())
	}
	// An allowlist through a let, or under a negated conjunction, is one.
	for _, tc := range []struct{ name, rules, want string }{
		{"a let", "\tlet fromOrg = strings.HasPrefix(image, \"registry.example.com\")\n\tpolicy: org: [if !fromOrg {detail: \"x\"}]\n", `strings.HasPrefix(image, "registry.example.com") also holds for "registry.example.com.attacker.example/image"`},
		{"a negated disjunction", "\tpolicy: org: [if !(strings.HasPrefix(image, \"registry.example.com\") || strings.HasPrefix(image, \"mirror.example.com/\")) {detail: \"x\"}]\n", `strings.HasPrefix(image, "registry.example.com") also holds for`},
	} {
		loadPolicyWant(t, tc.name, map[string]string{"p.cue": "package schemas\n\nimport \"strings\"\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\tlet image = *object.spec.trainer.image | \"registry.example.com/x\"\n" + tc.rules + "}\n"}, tc.want)
	}
	// A filter whose emptiness a rule fires on is an allowlist too.
	loadPolicyWant(t, "a filter read through its length", map[string]string{"p.cue": "package schemas\n\nimport \"strings\"\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\tlet image = *object.spec.trainer.image | \"registry.example.com/x\"\n\tlet fromOrg = [for i in [image] if strings.HasPrefix(i, \"registry.example.com\") {i}]\n\tpolicy: org: [if len(fromOrg) == 0 {path: \"spec.trainer.image\", detail: \"x\"}]\n}\n"},
		`p.cue:8:58: strings.HasPrefix(i, "registry.example.com") also holds for "registry.example.com.attacker.example/image"`)
	// A test no rule's condition reads as written (a list of its
	// outcomes) may be either: the load goes on, with a warning at the
	// literal.
	e := loadPolicyWant(t, "a list of outcomes", map[string]string{"p.cue": "package schemas\n\nimport \"strings\"\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\tlet image = *object.spec.trainer.image | \"registry.example.com/x\"\n\tlet fromOrg = [for i in [image] {strings.HasPrefix(i, \"registry.example.com\")}]\n\tpolicy: org: [if !fromOrg[0] {path: \"spec.trainer.image\", detail: \"x\"}]\n}\n"}, "")
	if e != nil {
		var got []string
		for _, w := range e.Warnings() {
			got = append(got, w.String())
		}
		want := `strings.HasPrefix(i, "registry.example.com") also holds for "registry.example.com.attacker.example/image", an image of another registry: a registry's name ends at the image's first "/"; write "registry.example.com/" (if a rule refuses the images this test holds for, a denylist, it refuses those too, which may be meant) (image-registry)`
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasSuffix(s, want) && strings.Contains(s, "p.cue:8:") }) {
			t.Errorf("a list of outcomes: warnings %q, want %q at p.cue:8", got, want)
		}
	}
}
