package engine

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

func TestLintFindsNothingInTheExamples(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"../examples/policies/tensorflow", "../examples/policies/ome"} {
		if _, err := New(Options{PolicyDirs: []string{dir}}); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
}

func TestSuggest(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"admision", "admission"},
		{"clusterTrainingRuntime", "clusterTrainingRuntimes"},
		{"resourcePerNode", "resourcesPerNode"},
		{"imageName", "image"},
		{"Trainjob", "TrainJob"},
		{"admsision", "admission"},
		{"rules", ""},
		{"xyz", ""},
	} {
		got := source.Suggest(c.name, []string{"admission", "clusterTrainingRuntimes", "resourcesPerNode", "image", "TrainJob", "groups", "owned"})
		if got != c.want {
			t.Errorf("source.Suggest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if strings.Contains(source.Suggest("a", []string{"b"}), "b") {
		t.Errorf("one letter suggested another")
	}
}

// A rule over label keys sees the real keys: a policy that iterates a
// map the engine would hand over with tokens for keys (opaqueMaps) makes
// it transparent, so a rule on a key prefix fires. Before, the rule saw
// tokens and never fired.
func TestKeyReadingRuleSeesTheKeys(t *testing.T) {
	t.Parallel()
	job := func(name, labels string) string {
		return fmt.Sprintf(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: %s, namespace: team-a, labels: %s}
spec: {runtimeRef: {name: torch-distributed}}
`, name, labels)
	}
	for name, rule := range map[string]string{
		"for": `[if object.metadata.labels != _|_ for k, _ in object.metadata.labels if strings.HasPrefix(k, "internal.example.com/") {
		path:   "metadata.labels"
		type:   "Forbidden"
		detail: "\(k): the internal.example.com/ labels are the platform's"
	}]`,
		"let": `{let labels = *object.metadata.labels | {}, [for k, _ in labels if strings.HasPrefix(k, "internal.example.com/") {
		path:   "metadata.labels"
		type:   "Forbidden"
		detail: "\(k): the internal.example.com/ labels are the platform's"
	}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := writePolicy(t, map[string]string{"org.cue": `package schemas

import "strings"

admission: (#APIVersion): TrainJob: {
	object: _
	policy: platformLabels: ` + rule + `
}
`})
			e, err := New(Options{PolicyDirs: []string{dir}})
			if err != nil {
				t.Fatal(err)
			}
			s := e.NewSession(SessionOptions{})
			r := admitAll(t, s, "j.yaml", job("bad", `{internal.example.com/team: ml, app: x}`))[0]
			if got := findingStrings(r.Errors); len(got) != 1 || !strings.Contains(got[0], "internal.example.com/team: the internal.example.com/ labels are the platform's") {
				t.Errorf("a TrainJob with a platform label: %q, want the rule's finding with the key", got)
			}
			r = admitAll(t, s, "j.yaml", job("good", `{app: x, team: ml}`))[0]
			if r.Rejected() {
				t.Errorf("a TrainJob without one: %v", r.Errors)
			}
		})
	}
	// The embedded rules read no key as data: the maps stay opaque.
	e := testEngine(t)
	if len(e.decl.Opaque.Suffixes) != 2 {
		t.Errorf("opaque maps %v, want labels and annotations", e.decl.Opaque.Suffixes)
	}
}

// TestUnreadRules: an entry declared optional, hidden or as a definition
// in a map the engine reads by name (a review's, a render's or a plan's
// rules, mutations, a render part's edits, the runtimes) fails the load at
// its label, and so does such a map declared hidden; a definition a rule
// or the render uses loads (and a helper's rule fires), and so does an
// optional field of an admin's definition.
func TestUnreadRules(t *testing.T) {
	t.Parallel()
	const rule = `[{path: "spec.trainer", type: "Invalid value", detail: "no"}]`
	for _, tc := range []struct{ name, src, want string }{
		{"optional review rule", "admission: (#APIVersion): TrainJob: webhook: no?: " + rule,
			"p.cue:3:46: admission.\"trainer.kubeflow.org/v1alpha1\".TrainJob.webhook.no is optional, so it is never evaluated and the engine never reads it: make it a regular field (no: ...)"},
		{"hidden review rule", "admission: (#APIVersion): TrainJob: policy: _no: " + rule,
			"TrainJob.policy._no is a hidden field that nothing uses, so it is never evaluated and the engine never reads it: make it a regular field (no: ...)"},
		{"definition warning", "admission: (#APIVersion): TrainJob: warnings: #no: [{message: \"m\"}]",
			"TrainJob.warnings.#no is a definition that nothing uses"},
		{"hidden render error", "render: (#APIVersion): TrainJob: errors: _no: " + rule,
			"render.\"trainer.kubeflow.org/v1alpha1\".TrainJob.errors._no is a hidden field that nothing uses"},
		{"optional plan warning", "plans: (#APIVersion): TrainJob: warnings: no?: [{message: \"m\"}]",
			"plans.\"trainer.kubeflow.org/v1alpha1\".TrainJob.warnings.no is optional"},
		{"hidden phase", "admission: (#APIVersion): TrainJob: _webhook: no: " + rule,
			"TrainJob._webhook is a hidden field that nothing uses, so the engine never reads what it holds: did you mean webhook?"},
		{"hidden mutation", "mutators: (#APIVersion): TrainJob: mutations: _no: []",
			"TrainJob.mutations._no is a hidden field that nothing uses"},
		{"optional render part edit", "renderParts: (#APIVersion): TrainJob: torch: edits: no?: {order: 1, ops: []}",
			"renderParts.\"trainer.kubeflow.org/v1alpha1\".TrainJob.torch.edits.no is optional"},
		{"hidden runtime", "clusterTrainingRuntimes: _no: {}", "clusterTrainingRuntimes._no is a hidden field that nothing uses"},
		{"a part's definition the render reads", "renderParts: (#APIVersion): TrainJob: torch: #counts: {}", ""},
		{"optional field of a definition", "#MLPolicy: paddle?: {x?: int}\nframeworks: paddle: labels: [\"paddle\"]", ""},
		{"helper definition", "admission: (#APIVersion): TrainJob: webhook: {\n\t#detail: \"no\"\n\tno: [{path: \"spec.trainer\", type: \"Invalid value\", detail: #detail}]\n}", ""},
		{"optional phase", "admission: (#APIVersion): TrainJob: webhook?: no: " + rule, ""},
	} {
		e := loadPolicyWant(t, tc.name, map[string]string{"p.cue": "package schemas\n\n" + tc.src + "\n"}, tc.want)
		if e == nil || tc.want != "" || !strings.Contains(tc.src, "webhook") {
			continue
		}
		// The rule that loads fires.
		r := e.NewSession(SessionOptions{}).Admit(readOne(t, jobYAML("torch-distributed", "{}")))
		if !r.Rejected() || r.Errors[0].Detail != "no" {
			t.Errorf("%s: the rule did not fire: %+v", tc.name, r.Errors)
		}
	}
}

// TestRuleDeclaredTwice: two lists with comprehensions under one rule
// name, in two files, fail the load at the first with both places (CUE
// would unify them item by item, and fail on the objects where one fires
// alone); an open list beside a rule, and the same constant list twice,
// load.
func TestRuleDeclaredTwice(t *testing.T) {
	t.Parallel()
	rule := func(team string) string {
		return "package schemas\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\twebhook: team: [if object.metadata.labels.team != _|_ if object.metadata.labels.team == \"" + team + "\" {path: \"metadata.labels\", detail: \"closed\"}]\n}\n"
	}
	dir := writePolicy(t, map[string]string{"a.cue": rule("a"), "b.cue": rule("b")})
	_, err := New(Options{PolicyDirs: []string{dir}})
	want := fmt.Sprintf(`%s:5:11: admission."trainer.kubeflow.org/v1alpha1".TrainJob.webhook.team is declared by 2 lists (%s:5, %s:5): CUE unifies them item by item`,
		filepath.Join(dir, "a.cue"), filepath.Join(dir, "a.cue"), filepath.Join(dir, "b.cue"))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("two rules: load: %v, want %q", err, want)
	}
	loadPolicyWant(t, "an open list", map[string]string{"a.cue": rule("a"), "b.cue": "package schemas\n\nadmission: (#APIVersion): TrainJob: webhook: team: [...]\n"}, "")
	loadPolicyWant(t, "one constant list twice", map[string]string{
		"a.cue": "package schemas\n\nlookups: (#APIVersion): TrainJob: reads: namespace: [\"metadata\", \"namespace\"]\n",
		"b.cue": "package schemas\n\nlookups: (#APIVersion): TrainJob: reads: namespace: [\"metadata\", \"namespace\"]\n",
	}, "")
}

// TestOpenRulesAreOpenLists: a rule written as the type of its findings
// ([...{...}]) fails the load at it, as a type. A rule written out as a
// list of findings whose comprehension waits on a value CUE leaves
// incomplete on the probes (a default over an absent optional field, read
// in one expression) is no type: it fails the load at the rule as a rule
// that does not evaluate, saying how to bind the default, which the lint
// no longer takes for a type (TestOpenRuleIsARuleError). Bound with a let,
// it loads, and finds what it says on a document.
func TestOpenRulesAreOpenLists(t *testing.T) {
	t.Parallel()
	loadPolicyWant(t, "a type of findings", map[string]string{"p.cue": "package schemas\n\nadmission: (#APIVersion): TrainJob: webhook: team: [...{path: \"metadata.labels\", detail: \"team\"}]\n"},
		"p.cue:3:46: rule webhook.team is an open list (a type, [...])")
	rule := func(body string) map[string]string {
		return map[string]string{"p.cue": "package schemas\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n" + body + "}\n"}
	}
	loadPolicyWant(t, "a default read in one expression", rule("\twebhook: team: [if (*object.metadata.labels | {}).team == _|_ {path: \"metadata.labels\", detail: \"give the team label\"}]\n"),
		"p.cue:5:11: rule webhook.team cannot be evaluated for TrainJob default/probe, a probe of the runtime deepspeed-distributed (see probes): the rule is an open list here, not a list of findings: a comprehension in it did not evaluate (CUE leaves `(*x | y).f` incomplete when x is absent: bind the default first, `let v = *x | y`, and read v.f)")
	e := loadPolicyWant(t, "a default bound with a let", rule("\tlet labels = *object.metadata.labels | {}\n\twebhook: team: [if labels.team == _|_ {path: \"metadata.labels\", detail: \"give the team label\"}]\n"), "")
	if e == nil {
		return
	}
	for _, tc := range []struct {
		labels string
		want   bool
	}{{"", true}, {"{team: a}", false}, {"{other: a}", true}} {
		text := wrapper.TrainJob("job").Namespace("team").RuntimeRef("torch-distributed").YAML()
		if tc.labels != "" {
			text = strings.Replace(text, "metadata:\n", "metadata:\n  labels: "+tc.labels+"\n", 1)
		}
		r := e.NewSession(SessionOptions{}).Admit(readOne(t, text))
		if got := strings.Contains(strings.Join(findingStrings(r.Errors), "\n"), "give the team label"); got != tc.want {
			t.Errorf("labels %q: refused for the team label %v, want %v: %v", tc.labels, got, tc.want, findingStrings(r.Errors))
		}
	}
}

// TestRegexpsCompiled: a regular expression an admin writes as a literal
// that does not compile fails the load at it, in =~, !~, a constraint and
// a regexp call (under its import's name); valid ones load.
func TestRegexpsCompiled(t *testing.T) {
	t.Parallel()
	rule := func(cond string) string {
		return "admission: (#APIVersion): TrainJob: {\n\tobject: _\n\tpolicy: img: [if object.spec.trainer.image != _|_ if " + cond + " {path: \"spec.trainer.image\", detail: \"no\"}]\n}\n"
	}
	for _, tc := range []struct{ name, src, want string }{
		{"!~", rule(`object.spec.trainer.image !~ "^registry.example.com/("`), "p.cue:5:84: \"^registry.example.com/(\" is not a regular expression CUE can compile (error parsing regexp: missing closing ): `^registry.example.com/(`)"},
		{"=~", rule(`object.spec.trainer.image =~ "[a-"`), `"[a-" is not a regular expression`},
		{"constraint", "#Image: =~\"(?P<x\"\n", `"(?P<x" is not a regular expression`},
		{"call", "import re \"regexp\"\n\n" + rule(`re.Match("*x", object.spec.trainer.image)`), `"*x" is not a regular expression`},
		{"valid", "import \"regexp\"\n\n" + rule(`regexp.Match("^x", object.spec.trainer.image) && object.spec.trainer.image =~ "^[a-z]+(/[a-z]+)*$"`), ""},
		{"escaped twice", rule(`object.spec.trainer.image !~ #"^docker\\.io/"#`), warnPrefix + `p.cue:5:84: #"^docker\\.io/"#: \\ matches a backslash, which the text would have to hold (in a #"..."# string each backslash stays as written): if \. was meant, write it so, which matches what that sign of a pattern does and no backslash; if a backslash is meant (a Windows path), say so on the field: // cuetrainer:ignore regexp-glob REASON (regexp-glob)`},
		{"escaped once", rule(`object.spec.trainer.image !~ #"^docker\.io/"# && object.spec.trainer.image !~ "^docker\\.io/"`), ""},
		{"pattern second", "import \"regexp\"\n\n" + rule(`!regexp.Match(object.spec.trainer.image, #"^docker\.io/"#)`), warnPrefix + `regexp.Match takes the pattern first: regexp.Match(object.spec.trainer.image, #"^docker\.io/"#) reads object.spec.trainer.image as the pattern and #"^docker\.io/"# as the text: did you mean regexp.Match(#"^docker\.io/"#, object.spec.trainer.image)?`},
		{"interpolated text", "#registry: \"registry.example.com\"\n\n" + rule(`object.spec.trainer.image !~ "^\(#registry)/"`), warnPrefix + `p.cue:7:88: \(#registry) puts "registry.example.com" into the pattern as a regular expression, where '.' matches any character ("registryXexample.com" matches too): if the text is meant as written, write \(regexp.QuoteMeta(#registry)), which matches it alone; if it is a pattern itself, say so on the field: // cuetrainer:ignore pattern-interpolation REASON (pattern-interpolation)`},
		{"interpolated text quoted", "import \"regexp\"\n\n#registry: \"registry.example.com\"\n\n" + rule(`object.spec.trainer.image !~ "^\(regexp.QuoteMeta(#registry))/" && object.spec.trainer.image !~ "^\(object.metadata.namespace)/"`), ""},
		// (Guarded from the probes: CUE's regexp.Valid fails on "(".)
		{"Valid is a test", "import \"regexp\"\n\n" + rule(`object.spec.trainer.image == "x" if !regexp.Valid("(")`), ""},
	} {
		loadPolicyWant(t, tc.name, map[string]string{"p.cue": "package schemas\n\n" + tc.src}, tc.want)
	}
	// Alternatives anchored alone may be a mistake ("^team-a|team-b$" for
	// "^(team-a|team-b)$") or meant ("^kube-|-system$"): the load goes on
	// with a warning saying both; each alternative grouped says it is
	// meant, and draws none.
	for _, tc := range []struct{ name, cond, want string }{
		{"alternatives anchored alone", `object.metadata.namespace !~ "^team-a|team-b$"`, `p.cue:5:84: "^team-a|team-b$": | binds loosest, so ^ and $ anchor only the alternatives they are written in: it matches any text with "team-a" at its start or "team-b" at its end. If each alternative is meant whole, group them, "^(team-a|team-b)$" (or anchor each: "^team-a$|^team-b$"), which matches those texts alone; if it is meant as written, group each alternative, "(^team-a)|(team-b$)", which matches the same and says so`},
		{"a prefix or a suffix", `object.metadata.namespace =~ "^kube-|-system$"`, `p.cue:5:84: "^kube-|-system$": | binds loosest`},
		{"each alternative grouped", `object.metadata.namespace =~ "(^kube-)|(-system$)"`, ""},
	} {
		e := loadPolicyWant(t, tc.name, map[string]string{"p.cue": "package schemas\n\n" + rule(tc.cond)}, "")
		if e == nil {
			continue
		}
		var got []string
		for _, w := range e.Warnings() {
			got = append(got, w.String())
		}
		found := slices.ContainsFunc(got, func(w string) bool { return tc.want != "" && strings.Contains(w, tc.want) })
		if tc.want != "" && !found || tc.want == "" && len(got) > 0 {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestListItemsChecked: a finding a rule writes as a struct literal is
// checked at load against #FieldError or #Warning, though no probe makes
// the rule fire: a misspelled field (with a suggestion), a type that is no
// error type, a value of the wrong kind. A finding built from data loads.
func TestListItemsChecked(t *testing.T) {
	t.Parallel()
	rule := func(phase, finding string) string {
		return "package schemas\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\t" + phase + ": img: [if object.spec.trainer.image != _|_ {" + finding + "}]\n}\n"
	}
	for _, tc := range []struct{ name, src, want string }{
		{"detail misspelled", rule("policy", `path: "spec.trainer.image", detial: "no \(object.spec.trainer.image)"`),
			`p.cue:5:81: admission."trainer.kubeflow.org/v1alpha1".TrainJob.policy.img: an item's detial: field not allowed: did you mean detail?`},
		{"no error type", rule("webhook", `path: "spec.trainer.image", type: "Invalid Value", detail: "no"`),
			`p.cue:5:88: admission."trainer.kubeflow.org/v1alpha1".TrainJob.webhook.img: an item's type: "Invalid Value" is not one of the values allowed here`},
		{"warning message misspelled", rule("warnings", `path: "spec.trainer.image", mesage: "no"`),
			`TrainJob.warnings.img: an item's mesage: field not allowed: did you mean message?`},
		{"path of the wrong kind", rule("warnings", `path: 3, message: "no"`), `an item's path: conflicting values 3 and string`},
		{"from data", rule("policy", `path: "spec.trainer.image", type: *object.metadata.annotations["example.com/type"] | "Invalid value", detail: "no"`), ""},
	} {
		loadPolicyWant(t, tc.name, map[string]string{"p.cue": tc.src}, tc.want)
	}
}

// TestWarningRuleDefect: a warning rule that does not evaluate on an
// object (a message that interpolates a list) is the policy's defect, as
// any rule's: a rule error among the result's errors, in a review and in
// a render, and not a warning. (The rules fire on two env vars, which no
// probe has: the load cannot find them.)
func TestWarningRuleDefect(t *testing.T) {
	t.Parallel()
	e := loadPolicyWant(t, "warning rules", map[string]string{"p.cue": `package schemas

admission: (#APIVersion): TrainJob: {
	object: _
	warnings: envs: [if object.spec.trainer.env != _|_ if len(object.spec.trainer.env) > 1 {message: "env \(object.spec.trainer.env)"}]
}
renderParts: (#APIVersion): TrainJob: torch: {
	#trainer: _
	warnings: envs: [if #trainer.env != _|_ if len(#trainer.env) > 1 {message: "env \(#trainer.env)"}]
}
`}, "")
	if e == nil {
		return
	}
	s := e.NewSession(SessionOptions{})
	r := s.Admit(readOne(t, jobYAML("torch-distributed", "{env: [{name: A, value: x}, {name: B, value: z}]}")))
	if len(r.Warnings) != 0 || len(r.Errors) != 1 || r.Errors[0].Phase != contract.PhaseRuleError || !strings.Contains(r.Errors[0].Detail, "invalid interpolation") {
		t.Errorf("review: warnings %v, errors %v; want the rule error alone", r.Warnings, r.Errors)
	}
	r.Errors = nil
	out := s.Render(r, RenderOptions{})
	if len(out.Warnings) != 0 || len(out.Errors) != 1 || out.Errors[0].Phase != contract.PhaseRuleError || !strings.Contains(out.Errors[0].Detail, "invalid interpolation") {
		t.Errorf("render: warnings %v, errors %v; want the rule error alone", out.Warnings, out.Errors)
	}
}

// TestMutationPathChecked: a mutation's literal path into the object that
// names a field the kind's schema has not fails the load at the field
// (the API server would prune the write), though the mutation fires on no
// probe; a path through a list's items or into a map's keys loads.
func TestMutationPathChecked(t *testing.T) {
	t.Parallel()
	mutation := func(path, rest string) string {
		return "package schemas\n\nmutators: (#APIVersion): TrainJob: {\n\tinput: _\n\treads: labels: [\"metadata\", \"labels\"]\n\tmutations: team: [if input.metadata.labels.team != _|_ {object: \"input\", path: " + path + ", " + rest + "}]\n}\n"
	}
	for _, tc := range []struct{ name, src, want string }{
		{"misspelled", mutation(`["metadata", "annotatoins"]`, `op: "merge", value: {team: input.metadata.labels.team}`),
			"p.cue:6:94: TrainJob.metadata has no field annotatoins, so the API server would prune what the mutation writes there: did you mean annotations?"},
		{"deeper", mutation(`["spec", "trainer", "resourcePerNode"]`, `op: "set", value: {}`), "TrainJob.spec.trainer has no field resourcePerNode"},
		{"a list's items", mutation(`["spec", "trainer", "env"]`, `op: "upsert", by: ["name"], items: [{name: "TEAM", value: input.metadata.labels.team}]`), ""},
		{"a map's key", mutation(`["metadata", "labels", "team-copy"]`, `op: "set", value: input.metadata.labels.team`), ""},
	} {
		loadPolicyWant(t, tc.name, map[string]string{"p.cue": tc.src}, tc.want)
	}
}

// TestEditOpsChecked: an edit's literal op that the engine does not make
// fails the load at it, in a render part's edits and in a mutation,
// though no probe makes the edit; the ops it makes load.
func TestEditOpsChecked(t *testing.T) {
	t.Parallel()
	part := func(op string) string {
		return "package schemas\n\nrenderParts: (#APIVersion): TrainJob: torch: {\n\t#tj: _\n\tedits: team: {order: 99, ops: [if #tj.metadata.labels.team != _|_ {object: \"jobset\", path: [\"metadata\", \"labels\"], op: \"" + op + "\", value: {team: #tj.metadata.labels.team}}]}\n}\n"
	}
	mutation := "package schemas\n\nmutators: (#APIVersion): TrainJob: {\n\tinput: _\n\treads: labels: [\"metadata\", \"labels\"]\n\tmutations: team: [if input.metadata.labels.team != _|_ {object: \"input\", path: [\"metadata\", \"annotations\"], op: \"add\", value: {team: input.metadata.labels.team}}]\n}\n"
	loadPolicyWant(t, "render part", map[string]string{"p.cue": part("merj")}, `p.cue:5:121: op "merj" is not an op the engine makes (set, merge, upsert, append)`)
	loadPolicyWant(t, "mutation", map[string]string{"p.cue": mutation}, `p.cue:6:114: op "add" is not an op the engine makes`)
	loadPolicyWant(t, "merge", map[string]string{"p.cue": part("merge")}, "")
}

// TestComparisonsChecked: a read compared with a literal its schema can
// never hold fails the load at the literal (== always false, != always
// true, an ordering of another kind fails when it runs), though the rule
// fires on no probe; comparisons the schema allows load.
func TestComparisonsChecked(t *testing.T) {
	t.Parallel()
	// One policy holds the comparisons of a kind, a rule to a line.
	policy := func(conds []string) map[string]string {
		var rules strings.Builder
		for i, cond := range conds {
			fmt.Fprintf(&rules, "\tpolicy: c%02d: [if object.spec.trainer != _|_ if object.spec.trainer.numNodes != _|_ if %s {path: \"spec\", detail: \"x\"}]\n", i, cond)
		}
		return map[string]string{"p.cue": "package schemas\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n" + rules.String() + "}\n"}
	}
	cases := []struct{ cond, want string }{
		{`object.spec.trainer.numNodes == "4"`, `p.cue:5:120: object.spec.trainer.numNodes (int) can never be "4", so this comparison is always false`},
		{`"true" != object.spec.suspend`, `object.spec.suspend (bool) can never be "true", so this comparison is always true`},
		{`object.spec.trainer.numNodes >= "4"`, `object.spec.trainer.numNodes (int) cannot be ordered against "4" (string): the rule would fail when it runs`},
		{`object.spec.trainer.numNodes > 4`, ""},
		{`object.spec.managedBy == "kueue.x-k8s.io/multikueue"`, ""},
		{`(*object.metadata.labels.team | "") == "a"`, ""},
		// An int or one of the CRD rule's words (type(self) != string ||
		// self in [...]): a quoted number is neither.
		{`object.spec.trainer.numProcPerNode != _|_ if object.spec.trainer.numProcPerNode == "16"`, warnPrefix + `object.spec.trainer.numProcPerNode is a number or one of "auto", "cpu", "gpu" (its CRD's validation), never "16", so this comparison is always false: compare the number, 16`},
		{`(*object.spec.trainer.numProcPerNode | 1) == "auto"`, ""},
		{`(*object.spec.trainer.numProcPerNode | 1) == 16`, ""},
		// Any text to its CRD, but the webhook refuses a kind or a group
		// the registry (@values(runtimeKinds, ...)) does not hold.
		{`object.spec.runtimeRef.kind == "ClusterTrainingRuntimes"`, warnPrefix + `object.spec.runtimeRef.kind is one of "ClusterTrainingRuntime", "TrainingRuntime" on every object the webhooks admit (the values of runtimeKinds.kind: they refuse any other), never "ClusterTrainingRuntimes", so this comparison is always false: did you mean "ClusterTrainingRuntime"?`},
		{`object.spec.runtimeRef.apiGroup != "trainer.kubeflow.io"`, warnPrefix + `object.spec.runtimeRef.apiGroup is one of "trainer.kubeflow.org" on every object the webhooks admit (the values of runtimeKinds.group: they refuse any other), never "trainer.kubeflow.io", so this comparison is always true`},
		{`object.spec.runtimeRef.kind == "TrainingRuntime"`, ""},
		{`object.spec.runtimeRef.apiGroup != "trainer.kubeflow.org"`, ""},
		// A slip from a value a known key has a meaning with; the default
		// the read gives may be anything.
		{`(*object.metadata.labels["trainer.kubeflow.org/support"] | "") == "deprecatd"`, warnPrefix + `"deprecatd" is a slip from "deprecated", the value of trainer.kubeflow.org/support with a meaning (knownKeys): the rule never sees the objects it means, and an object with "deprecatd" draws a warning: did you mean "deprecated"?`},
		{`(*object.metadata.labels[#Labels.support] | "") == "Deprecated"`, warnPrefix + `"Deprecated" is a slip from "deprecated", the value of trainer.kubeflow.org/support with a meaning (knownKeys)`},
		{`(*object.metadata.labels["trainer.kubeflow.org/support"] | "deprecatd") == "deprecatd"`, ""},
		{`(*object.metadata.labels["trainer.kubeflow.org/support"] | "") == "deprecated"`, ""},
		// One read against two literals: || of != always holds, && of ==
		// never does.
		{`(object.spec.runtimeRef.name != "a" || object.spec.trainer.image != "b" || object.spec.runtimeRef.name != "c")`, warnPrefix + `object.spec.runtimeRef.name != "a" || object.spec.runtimeRef.name != "c" is always true: object.spec.runtimeRef.name is never both "a" and "c", so one of the two holds: did you mean &&?`},
		{`object.spec.runtimeRef.name == "a" && (object.spec.runtimeRef.name == "c")`, warnPrefix + `object.spec.runtimeRef.name == "a" && object.spec.runtimeRef.name == "c" is always false: object.spec.runtimeRef.name is never both "a" and "c": did you mean ||?`},
		{`object.spec.runtimeRef.name != "a" && object.spec.runtimeRef.name != "c"`, ""},
		{`object.spec.runtimeRef.name == "a" || object.spec.runtimeRef.name == "c" || object.spec.runtimeRef.name == "a"`, ""},
		// Tests of a text's start or end no text passes both of.
		{`object.spec.trainer.image !~ "^registry\\.example\\.com/" || object.spec.trainer.image !~ "^mirror\\.example\\.com/"`, warnPrefix + `object.spec.trainer.image !~ "^registry\\.example\\.com/" || object.spec.trainer.image !~ "^mirror\\.example\\.com/" is always true: no value of object.spec.trainer.image both begins with "registry.example.com/" and begins with "mirror.example.com/", so one of the two holds: did you mean &&?`},
		{`object.spec.runtimeRef.name == "torch" && object.spec.runtimeRef.name =~ "^deep"`, warnPrefix + `is always false: no value of object.spec.runtimeRef.name both equals "torch" and begins with "deep": did you mean ||?`},
		{`object.spec.trainer.image =~ "a$" && object.spec.trainer.image =~ "(?i)^b" && object.spec.trainer.image =~ "/x$"`, warnPrefix + `no value of object.spec.trainer.image both ends with "a" and ends with "/x"`},
		{`object.spec.trainer.image !~ "^a/" || object.spec.trainer.image !~ "^a/b"`, ""},
		{`object.spec.trainer.image =~ "^a/" && object.spec.trainer.image =~ "/x$" && object.spec.trainer.image =~ "(?i)^b"`, ""},
		{`object.spec.runtimeRef.name == "deepspeed" && object.spec.runtimeRef.name =~ "^deep"`, ""},
		// A resource no container may ask for: absent on every TrainJob
		// that can run.
		{`object.spec.trainer.resourcesPerNode.limits.gpu != _|_`, `object.spec.trainer.resourcesPerNode.limits has no resource "gpu" on a TrainJob that can run: a container asks only for cpu, memory, ephemeral-storage, hugepages-<size> or a name qualified by a domain (nvidia.com/gpu), and the Job API refuses a pod that asks for "gpu", so this read never sees what it means`},
		{`object.spec.trainer.resourcesPerNode.requests["CPU"] != _|_`, `requests has no resource "CPU" on a TrainJob that can run: a container asks only for cpu, memory, ephemeral-storage, hugepages-<size> or a name qualified by a domain (nvidia.com/gpu), and the Job API refuses a pod that asks for "CPU", so this read never sees what it means: did you mean cpu?`},
		{`object.spec.trainer.resourcesPerNode.limits["nvidia.com/gpu"] != _|_ && object.spec.trainer.resourcesPerNode.requests["hugepages-2Mi"] != _|_ && object.spec.trainer.resourcesPerNode.requests.cpu != _|_`, ""},
	}
	var refused, warned, good, refusals, warnings []string
	for _, tc := range cases {
		switch {
		case tc.want == "":
			good = append(good, tc.cond)
		case strings.HasPrefix(tc.want, warnPrefix):
			warned, warnings = append(warned, tc.cond), append(warnings, tc.want)
		default:
			refused, refusals = append(refused, tc.cond), append(refusals, tc.want)
		}
	}
	// The sound checks' findings refuse the load; the heuristic ones'
	// are warnings, of a policy that loads.
	checkLoad(t, "comparisons refused", policy(refused), refusals)
	checkLoad(t, "comparisons warned of", policy(warned), warnings)
	loadPolicyWant(t, "comparisons the schema allows", policy(good), "")
}

// TestReadsThroughAliasesAndHelpers: a read through a field alias, a
// comprehension over one item, or a helper definition's parameter is
// checked against the schema of what it stands for; a parameter's read is
// a problem only when no caller gives it a value with the field.
func TestReadsThroughAliasesAndHelpers(t *testing.T) {
	t.Parallel()
	review := func(body string) string {
		return "package schemas\n\n#nodes: {\n\t#t: _\n\tout: *#t.numNodes | 1\n}\n\n#image: {\n\t#o: _\n\tlet s = #o.spec\n\tout: *s.trainer.imag | \"\"\n}\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n" + body + "\n}\n"
	}
	for _, tc := range []struct{ name, body, want string }{
		{"alias", "\tO=object: _\n\tpolicy: c: [if (*O.spec.trainer.numNode | 1) > 4 {path: \"spec\", detail: \"x\"}]", "O.spec.trainer has no field numNode"},
		{"alias, right", "\tO=object: _\n\tpolicy: c: [if (*O.spec.trainer.numNodes | 1) > 4 {path: \"spec\", detail: \"x\"}]", ""},
		{"one item", "\tpolicy: c: [for j in [object.spec.trainer] if (*j.numNode | 1) > 4 {path: \"spec\", detail: \"x\"}]", "j has no field numNode"},
		{"helper", "\tlet t = *object.spec.initializer | {}\n\tpolicy: c: [if (#nodes & {#t: t}).out > 4 {path: \"spec\", detail: \"x\"}]",
			"#t has no field numNodes, so this read is always absent; its fields are dataset, model (the helper is given t, at line 17)"},
		{"helper, one caller right", "\tpolicy: c: [if (#nodes & {#t: object.spec.initializer}).out > 4 if (#nodes & {#t: object.spec.trainer}).out > 4 {path: \"spec\", detail: \"x\"}]", ""},
		{"helper, through its let", "\tpolicy: c: [if (#image & {#o: object}).out != \"\" {path: \"spec\", detail: \"x\"}]", "p.cue:11:18: s.trainer has no field imag, so this read is always absent: did you mean image? (the helper is given object, at line 16)"},
	} {
		loadPolicyWant(t, tc.name, map[string]string{"p.cue": review(tc.body)}, tc.want)
	}
}

// TestComputedEditObjectChecked: an edit whose object id is computed (a
// let) escapes the literal ids' check; the render skips an edit of an
// object it does not build, so a misspelt one was never made, in silence.
// The load's trial render now fails at the edit's group. An object
// declared under a computed label leaves the renders' ids unknown: an
// edit of it loads.
func TestComputedEditObjectChecked(t *testing.T) {
	t.Parallel()
	part := func(decl, target string) string {
		return "package schemas\n\nrenderParts: (#APIVersion): TrainJob: torch: {\n\t#name: _\n" + decl +
			"\tlet target = \"" + target + "\"\n\tedits: team: {order: 99, ops: [{object: target, path: [\"metadata\", \"labels\"], op: \"merge\", value: {team: \"a\"}}]}\n}\n"
	}
	loadPolicyWant(t, "misspelt", map[string]string{"p.cue": part("", "jobSet")},
		`p.cue:6:9: rule edits.team cannot be evaluated for TrainJob default/probe, a probe of the runtime torch-distributed (see probes): edit team names the object "jobSet", which no render builds (`)
	loadPolicyWant(t, "declared", map[string]string{"p.cue": part("", "jobset")}, "")
	computed := "\tlet id = \"teamConfig\"\n\tobjects: (id): {apiVersion: \"v1\", kind: \"ConfigMap\", metadata: name: \"\\(#name)-team\"}\n"
	loadPolicyWant(t, "declared under a computed label", map[string]string{"p.cue": part(computed, "teamConfig")}, "")
}

// TestReadsPathsChecked: a path a mutator, a lookup or a plan declares it
// reads is checked against the kind's schema: a misspelt field, a dotted
// path or a "*" (reads name fields: the engine copies the value at the
// path) would give the evaluation nothing there. Paths the schema has
// load.
func TestReadsPathsChecked(t *testing.T) {
	t.Parallel()
	policy := func(decl string) map[string]string {
		return map[string]string{"p.cue": "package schemas\n\n" + decl + "\n"}
	}
	for _, tc := range []struct{ decl, want string }{
		{`lookups: (#APIVersion): TrainJob: reads: team: ["metadata.labels"]`, `p.cue:3:49: "metadata.labels" is a dotted path: reads name the fields one by one (["metadata" "labels"]), so the lookups would be given nothing there`},
		{`mutators: (#APIVersion): TrainJob: reads: team: ["metadata", "lables"]`, `p.cue:3:62: TrainJob.metadata has no field lables, so the mutations would be given nothing there: did you mean labels?`},
		{`plans: (#APIVersion): TrainJob: reads: nodes: ["spec", "trainer", "numNode"]`, `p.cue:3:67: TrainJob.spec.trainer has no field numNode, so the plan would be given nothing there: did you mean numNodes?`},
		{`lookups: (#APIVersion): TrainJob: reads: x: ["spec", "runtimePatches", "*", "manager"]`, `p.cue:3:72: reads name fields, and "*" is none: the lookups would be given nothing there; read the list whole (["spec" "runtimePatches"])`},
		{`lookups: (#APIVersion): TrainJob: updateReads: x: ["spec", "runtimePatchs"]`, `p.cue:3:60: TrainJob.spec has no field runtimePatchs, so the lookups would be given nothing there: did you mean runtimePatches?`},
		{`mutators: (#APIVersion): TrainJob: reads: team: ["metadata", "labels"]`, ""},
		{`lookups: (#APIVersion): TrainJob: reads: patches: ["spec", "runtimePatches"]`, ""},
	} {
		loadPolicyWant(t, tc.decl, policy(tc.decl), tc.want)
	}
}

// TestContainsChecked: list.Contains of a read list with a literal no
// item can be (a string among structs, a number among strings) is always
// false, and fails the load at the literal; one of the items' names, or
// of a literal an item can be, loads.
func TestContainsChecked(t *testing.T) {
	t.Parallel()
	rule := func(cond string) map[string]string {
		return map[string]string{"p.cue": "package schemas\n\nimport \"list\"\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\tlet env = object.spec.trainer.env\n\tpolicy: debug: [if env != _|_ if " + cond + " {path: \"spec.trainer.env\", detail: \"x\"}]\n}\n"}
	}
	for _, tc := range []struct{ cond, want string }{
		{`!list.Contains(env, "DEBUG")`, `p.cue:8:55: list.Contains compares each item of env (struct) with "DEBUG", which none can be, so it is always false: compare a field of each, list.Contains([for e in env {e.name}], "DEBUG")`},
		{`object.spec.trainer.args != _|_ if list.Contains(object.spec.trainer.args, 3)`, `p.cue:8:110: list.Contains compares each item of object.spec.trainer.args (string) with 3, which none can be, so it is always false`},
		{`!list.Contains([for e in env {e.name}], "DEBUG")`, ""},
		{`object.spec.trainer.args != _|_ if list.Contains(object.spec.trainer.args, "--debug")`, ""},
	} {
		loadPolicyWant(t, tc.cond, rule(tc.cond), tc.want)
	}
}

// TestComparisonSlipsChecked: a read compared with a struct literal that
// lacks fields the object always has (its defaults) is never equal, and a
// text that reads as a regular expression compared with == is meant for
// =~: both fail the load at the literal; a literal with every field, and
// plain text, load.
func TestComparisonSlipsChecked(t *testing.T) {
	t.Parallel()
	rule := func(cond string) map[string]string {
		return map[string]string{"p.cue": "package schemas\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\tpolicy: slip: [if " + cond + " {path: \"metadata.name\", detail: \"x\"}]\n}\n"}
	}
	for _, tc := range []struct{ cond, want string }{
		{`object.spec.runtimeRef == {name: "torch-distributed"}`, warnPrefix + `p.cue:5:46: object.spec.runtimeRef always has apiGroup, kind (its schema's defaults or required fields), which this literal has not, so the comparison is always false: compare the fields meant (object.spec.runtimeRef.name == ...)`},
		{`object.metadata.name != "^tmp-.*$"`, warnPrefix + `p.cue:5:44: "^tmp-.*$" looks like a regular expression, but != compares text, which would have to be it letter for letter: if a pattern is meant, write !~, which matches every text the pattern does; if this text is meant, say so on the field: // cuetrainer:ignore regexp-as-text REASON (regexp-as-text)`},
		{`object.spec.runtimeRef == {name: "torch-distributed", apiGroup: "trainer.kubeflow.org", kind: "ClusterTrainingRuntime"}`, ""},
		{`object.metadata.name == "tmp-1"`, ""},
	} {
		loadPolicyWant(t, tc.cond, rule(tc.cond), tc.want)
	}
}

// TestAttributesChecked: a slip from an attribute cuetrainer reads
// (@shema), @schema naming no definition, @values naming no registry's
// values, and @tag (cuetrainer sets no tags) fail the load at the
// attribute; @schema of a definition, @values of a registry's field, and
// attributes of the admin's own, load.
func TestAttributesChecked(t *testing.T) {
	t.Parallel()
	policy := func(attr string) map[string]string {
		return map[string]string{"p.cue": "package schemas\n\n#Team: {name: string}\n_team: _ " + attr + "\n"}
	}
	for _, tc := range []struct{ attr, want string }{
		{`@shema(#Team)`, `p.cue:4:10: @shema(#Team): no attribute of that name is read: did you mean @schema?`},
		{`@schema(#Tema)`, `p.cue:4:10: @schema(#Tema) names "#Tema", which is no definition of the schemas: the field's reads would not be checked against a schema: did you mean #Team?`},
		{`@tag(team)`, `p.cue:4:10: @tag(team): cuetrainer sets no tags, so the field would keep its value as written: write the value`},
		{`@schema(#Team)`, ""},
		{`@owner(platform)`, ""},
		{`@values(runtimeKind, kind)`, `p.cue:4:10: @values(runtimeKind, kind): runtimeKind is no map of the schemas: the comparisons of the field would not be checked against its values`},
		{`@values(runtimeKinds, knd)`, `p.cue:4:10: @values(runtimeKinds, knd): the entry "TrainingRuntime.trainer.kubeflow.org" has no text knd: the comparisons of the field would not be checked against its values`},
		{`@values(runtimeKinds)`, `p.cue:4:10: @values(runtimeKinds) takes a top-level map and the field of its entries that holds a value: @values(runtimeKinds, kind): the comparisons of the field would not be checked against its values`},
		{`@values(runtimeKinds, kind)`, ""},
	} {
		loadPolicyWant(t, tc.attr, policy(tc.attr), tc.want)
	}
}

// TestSearchArgsChecked: strings.HasPrefix and HasSuffix with a literal
// as the text searched and a read as the prefix ask the other way round,
// and fail the load at the literal; the right order, and two reads, load.
func TestSearchArgsChecked(t *testing.T) {
	t.Parallel()
	rule := func(cond string) map[string]string {
		return map[string]string{"p.cue": "package schemas\n\nimport \"strings\"\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\tlet image = *object.spec.trainer.image | \"\"\n\tpolicy: registry: [if " + cond + " {path: \"spec.trainer.image\", detail: \"x\"}]\n}\n"}
	}
	for _, tc := range []struct{ cond, want string }{
		{`!strings.HasPrefix("registry.example.com/", image)`, warnPrefix + `p.cue:8:43: strings.HasPrefix("registry.example.com/", image) asks whether the text "registry.example.com/" begins with image: the text searched comes first: if the other way is meant, write strings.HasPrefix(image, "registry.example.com/"), which asks whether image begins with "registry.example.com/"; if this is meant, say so on the field: // cuetrainer:ignore argument-order REASON (argument-order)`},
		{`!strings.HasPrefix(image, "registry.example.com/")`, ""},
		{`strings.HasSuffix(image, object.metadata.name)`, ""},
		// A text that holds the values allowed.
		{`strings.Contains("a.example.com/x b.example.com/x", image)`, ""},
		{`strings.Contains("-debug", image)`, warnPrefix + `p.cue:8:41: strings.Contains("-debug", image) asks whether the text "-debug" contains image: the text searched comes first: if the other way is meant, write strings.Contains(image, "-debug"), which asks whether image contains "-debug"; if this is meant, say so on the field: // cuetrainer:ignore argument-order REASON (argument-order)`},
	} {
		loadPolicyWant(t, tc.cond, rule(tc.cond), tc.want)
	}
}

// TestFindingPathChecked: a finding's literal path is checked against its
// kind's schema: a field the object has not, or an index into a list that
// is no number (an interpolation without its \( )), fails the load at the
// path; a map's key in brackets, a number and an interpolation load.
func TestFindingPathChecked(t *testing.T) {
	t.Parallel()
	rule := func(path string) map[string]string {
		return map[string]string{"p.cue": "package schemas\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\tpolicy: slip: [for i, e in *object.spec.trainer.env | [] if e.name == \"X\" {path: \"" + path + "\", detail: \"x\"}]\n}\n"}
	}
	for _, tc := range []struct{ path, want string }{
		{`spec.trainer.numnodes`, `p.cue:5:83: the finding's path "spec.trainer.numnodes": TrainJob.spec.trainer has no field numnodes, so the user would be pointed at a field that is not there: did you mean numNodes?`},
		{`spec.trainer.env[i].name`, `p.cue:5:83: the finding's path "spec.trainer.env[i].name": TrainJob.spec.trainer.env is a list, and [i] is no index into it: did you mean [\(i)]?`},
		{`spec.trainer.env[0].name`, ""},
		{`spec.trainer.env[\\(i)].name`, ""},
		{`metadata.labels[example.com/team]`, ""},
	} {
		loadPolicyWant(t, tc.path, rule(tc.path), tc.want)
	}
}

// TestNeverTrueTestsChecked: tests CUE takes and that are never true on
// any object fail the load at their literal: a lowered text compared with
// one with capitals, context.quantities indexed by a resource's name (it
// is keyed by quantities' texts), list.Contains of items of another kind
// than the value looked for. Their right forms load.
func TestNeverTrueTestsChecked(t *testing.T) {
	t.Parallel()
	const head = "package schemas\n\nimport (\n\t\"list\"\n\t\"strings\"\n)\n\nadmission: (#APIVersion): TrainJob: {\n\tobject:  _\n\tcontext: _\n\tlet labels = *object.metadata.labels | {}\n\tlet limits = *object.spec.trainer.resourcesPerNode.limits | {}\n\tlet nodes = *object.spec.trainer.numNodes | 1\n"
	rules := func(tier, gpus, sizes, latest, team, owner, cost string) string {
		return head +
			"\tpolicy: gold: [if labels.tier != _|_ if strings.ToLower(labels.tier) == " + tier + " {path: \"metadata.labels\", detail: \"no\"}]\n" +
			"\tpolicy: gpus: [if limits[\"nvidia.com/gpu\"] != _|_ if context.quantities[" + gpus + "] != _|_ if context.quantities[" + gpus + "].value > 8 {path: \"spec.trainer\", detail: \"no\"}]\n" +
			"\tpolicy: sizes: [if !list.Contains(" + sizes + ", nodes) {path: \"spec.trainer.numNodes\", detail: \"no\"}]\n" +
			"\tpolicy: latest: [if object.spec.trainer.image != _|_ if strings.ToLower(object.spec.trainer.image) =~ " + latest + " {path: \"spec.trainer.image\", detail: \"no\"}]\n" +
			"\tpolicy: team: [if object.metadata.namespace !~ " + team + " {path: \"metadata.namespace\", detail: \"no\"}]\n" +
			"\tpolicy: owner: [if " + owner + " == _|_ {path: \"metadata.labels\", detail: \"no\"}]\n" +
			"\tlet costLabel = *labels[\"example.com/cost\"] | null\n" +
			"\tpolicy: cost: [if " + cost + " {path: \"metadata.labels\", detail: \"no\"}]\n}\n"
	}
	// The heuristic checks' findings are warnings, of a policy that
	// loads; context.quantities indexed by no quantity's text, and items
	// of another kind than the value looked for, refuse it.
	checkLoad(t, "never true", map[string]string{"p.cue": rules(`"Gold"`, `limits["nvidia.com/gpu"]`, `[1, 2, 4]`, `":(Latest|LATEST)$"`, `"^team-*"`, `(*labels.owner | "")`, `costLabel != _|_`)}, []string{
		warnPrefix + `p.cue:14:74: strings.ToLower never gives "Gold", which holds letters of the other case, so this comparison is always false: compare with "gold"`,
		warnPrefix + `p.cue:17:104: strings.ToLower gives no upper-case letter, and every text ":(Latest|LATEST)$" matches holds one, so this match is always false: write the pattern in lower case, or match without regard to case ((?i))`,
		warnPrefix + `p.cue:19:42: (*labels.owner | "") is never _|_: "" is one of its values whatever the object holds, so this test is always false: test the read itself (labels.owner == _|_)`,
		warnPrefix + `p.cue:21:30: costLabel is never _|_: null is one of its values whatever the object holds, so this test is always true: test the read itself (labels["example.com/cost"] != _|_)`,
		warnPrefix + `p.cue:18:49: "^team-*": a match may stop before the trailing -*, which nothing after it anchors, so the pattern matches every text "^team" matches, whatever follows it: a glob's * is .* in a pattern; to hold the whole text to the pattern, end it with $`,
	})
	checkLoad(t, "quantities by a resource's name, items of another kind", map[string]string{"p.cue": rules(`"gold"`, `"nvidia.com/gpu"`, `["1", "2", "4"]`, `":(latest|Latest)$"`, `"^team-.*"`, `labels.owner`, `costLabel != null`)}, []string{
		`p.cue:15:74: context.quantities is keyed by a quantity's text ("16", "500m"), and "nvidia.com/gpu" is none`,
		`p.cue:16:36: list.Contains looks for nodes (int) among items it can never be ("1", "2", "4"), so it is always false`,
	})
	loadPolicyWant(t, "right forms", map[string]string{"p.cue": rules(`"gold"`, `limits["nvidia.com/gpu"]`, `[1, 2, 4]`, `":(latest|Latest)$"`, `"^team-.*"`, `labels.owner`, `costLabel != null`)}, "")
}

// TestListItemReadsChecked: a read into a list's items, by a for clause
// over a runtime's containers or by a literal index, is checked against
// the item's schema, and a comparison with a Kubernetes enum (a type with
// a +enum marker) against the enum's values. Before, a runtime template's
// items were not followed (CUE's lookup of [_] errs on the item type
// JobSet's replicatedJobs are given) nor was an index, so that a guarded
// typo left the rule off.
func TestListItemReadsChecked(t *testing.T) {
	t.Parallel()
	rules := func(field, pull, gate, env string) map[string]string {
		return map[string]string{"p.cue": "package schemas\n\n" +
			"admission: (#APIVersion): ClusterTrainingRuntime: {\n\tobject: _\n" +
			"\twarnings: pull: [for j in *object.spec.template.spec.replicatedJobs | [] for c in *j.template.spec.template.spec.containers | [] if c." + field + " != _|_ if c.imagePullPolicy == " + pull + " {message: \"x\"}]\n" +
			"\twarnings: gate: [for j in *object.spec.template.spec.replicatedJobs | [] for g in *j.template.spec.template.spec.readinessGates | [] if g.conditionType == " + gate + " {message: \"x\"}]\n}\n" +
			"admission: (#APIVersion): TrainJob: {\n\tobject: _\n\tlet env = *object.spec.trainer.env | []\n" +
			"\tpolicy: first: [if len(env) > 0 if env[0]." + env + " != _|_ {path: \"spec\", detail: \"x\"}]\n}\n"}
	}
	checkLoad(t, "fields the items have not", rules("imagePullPolcy", `"Always"`, `"example.com/ready"`, "nmae"), []string{
		`p.cue:5:136: c has no field imagePullPolcy, so this read is always absent: did you mean imagePullPolicy?`,
		`p.cue:11:44: env[0] has no field nmae, so this read is always absent: did you mean name?`,
	})
	// A readiness gate's conditionType is a PodConditionType, whose type
	// has no +enum marker: its constants are not all its values. The
	// enum's comparison is a heuristic check's, a warning.
	checkLoad(t, "an enum's value", rules("imagePullPolicy", `"always"`, `"example.com/ready"`, "name"), []string{
		warnPrefix + `p.cue:5:183: c.imagePullPolicy is one of "Always", "Never", "IfNotPresent" (its Kubernetes type, PullPolicy, is an enum: the API server refuses any other value), never "always", so this comparison is always false: did you mean "Always"?`,
	})
	loadPolicyWant(t, "right forms", rules("imagePullPolicy", `"Always"`, `"example.com/ready"`, "name"), "")
}

// TestContextReadsChecked: a review's read of an object its kind's lookup
// finds is checked against the found kind's schema, and a read of what
// only other kinds' lookups find fails the load; both were silently
// absent.
func TestContextReadsChecked(t *testing.T) {
	t.Parallel()
	policy := func(lookupKind, field string) map[string]string {
		return map[string]string{"p.cue": "package schemas\n\n#Context: teamRuntime?: {...}\n\n" +
			"lookups: (#APIVersion): " + lookupKind + ": {\n\tinput: _\n\treads: ns: [\"metadata\", \"namespace\"]\n" +
			"\tobjects: teamRuntime: {group: #Group, kind: \"TrainingRuntime\", namespace: *input.metadata.namespace | \"default\", name: \"team-rt\"}\n}\n\n" +
			"admission: (#APIVersion): TrainJob: {\n\tobject:  _\n\tcontext: _\n" +
			"\tpolicy: team: [if context.teamRuntime != _|_ if context.teamRuntime.metadata." + field + " != _|_ {path: \"spec\", detail: \"x\"}]\n}\n"}
	}
	loadPolicyWant(t, "a field the kind has not", policy("TrainJob", "lables"), `p.cue:14:79: context.teamRuntime.metadata has no field lables, so this read is always absent: did you mean labels?`)
	loadPolicyWant(t, "looked up for another kind", policy("TrainingRuntime", "labels"), `p.cue:14:28: context.teamRuntime is looked up for the reviews of TrainingRuntime alone (lookups: (#APIVersion): TrainingRuntime: objects: teamRuntime), never for a TrainJob's, so this read is always absent: file the lookup under TrainJob too`)
	loadPolicyWant(t, "right form", policy("TrainJob", "labels"), "")
}

// TestCoreKindReadsChecked: the objects of the core group that a lookup
// finds or contextKinds files are read against core/v1's types (a
// ConfigMap's data, a Namespace's labels), and a lookup of a kind the core
// group has not (Namespaces) fails the load: before, both loaded, and the
// rules they guard were silently off.
func TestCoreKindReadsChecked(t *testing.T) {
	t.Parallel()
	policy := func(kind, data, labels string) map[string]string {
		return map[string]string{"p.cue": "package schemas\n\nimport \"strconv\"\n\n#Context: quota?: {...}\n#Context: namespaces: [string]: {...}\n" +
			"contextKinds: \"v1\": Namespace: \"namespaces\"\n\n" +
			"lookups: (#APIVersion): TrainJob: objects: quota: {group: \"\", kind: \"" + kind + "\", namespace: \"default\", name: \"quota\"}\n\n" +
			"admission: (#APIVersion): TrainJob: {\n\tobject:  _\n\tcontext: _\n" +
			"\tlet ns = context.namespaces[\"team-a\"]\n" +
			"\tpolicy: quota: [if context.quota != _|_ if context.quota." + data + ".maxNodes != _|_ if (*object.spec.trainer.numNodes | 1) > strconv.Atoi(context.quota." + data + ".maxNodes) {path: \"spec\", detail: \"x\"}]\n" +
			"\tpolicy: gpus: [if ns != _|_ if ns.metadata." + labels + ".gpus != _|_ {path: \"spec\", detail: \"x\"}]\n}\n"}
	}
	_, err := New(Options{PolicyDirs: []string{writePolicy(t, policy("ConfigMap", "date", "lables"))}})
	for _, want := range []string{
		`p.cue:15:59: context.quota has no field date, so this read is always absent: did you mean data?`,
		`p.cue:16:45: ns.metadata has no field lables, so this read is always absent: did you mean labels?`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("load: %v\nwant %q", err, want)
		}
	}
	loadPolicyWant(t, "a kind the core group has not", policy("PersistentVolumeClaims", "data", "labels"), `p.cue:9:63: objects.quota: lookups of TrainJob name PersistentVolumeClaims, which the review would always take for absent: the core group (v1) has no kind so named: did you mean PersistentVolumeClaim?`)
	loadPolicyWant(t, "right form", policy("ConfigMap", "data", "labels"), "")
}

// TestObjectNamesChecked: an object a render part builds under a name the
// load already knows, the same for every TrainJob, fails the load at the
// name, as does a ConfigMap key the API server refuses; a name made from
// the TrainJob's and keys of a file's name load.
func TestObjectNamesChecked(t *testing.T) {
	t.Parallel()
	policy := func(name, key string) map[string]string {
		return map[string]string{"p.cue": "package schemas\n\nrenderParts: (#APIVersion): TrainJob: torch: {\n\t#name: _\n" +
			"\tobjects: launcher: {\n\t\tapiVersion: \"v1\"\n\t\tkind:       \"ConfigMap\"\n\t\tmetadata: name: " + name + "\n\t\tdata: " + key + ": \"x\"\n\t}\n}\n"}
	}
	_, err := New(Options{PolicyDirs: []string{writePolicy(t, policy(`"launcher"`, `"conf/hosts"`))}})
	for _, want := range []string{
		`p.cue:8:13: the object "launcher" is named "launcher" whatever the TrainJob: the TrainJobs of a namespace would apply one object, each over the others'; name it after the TrainJob ("\(#name)-launcher")`,
		`p.cue:9:9: the ConfigMap "launcher" has the data key "conf/hosts", which the API server refuses (a key is a file's name when the ConfigMap is mounted): a valid config key must consist of alphanumeric characters`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("load: %v\nwant %q", err, want)
		}
	}
	loadPolicyWant(t, "right forms", policy(`"\(#name)-launcher"`, `"hosts.txt"`), "")
}
