package engine

import (
	"strings"
	"testing"
)

// TestFormatChecked: a value the API server holds to a format (a label's
// value, a namespace's name, a runtime's name) tested against a text it
// refuses in one (a key, mostly: for k in labels names each value)
// fails the load at the literal, each rule at its line; the same tests of
// keys, of texts such a value may be, and of annotations' values, which
// may hold anything, load.
func TestFormatChecked(t *testing.T) {
	t.Parallel()
	policy := func(rules []string) map[string]string {
		return map[string]string{"p.cue": "package schemas\n\nimport \"strings\"\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\tlet labels = *object.metadata.labels | {}\n" + strings.Join(rules, "\n") + "\n}\n"}
	}
	const f = `{path: "metadata.labels", detail: "x"}`
	const label = `(at most 63 letters, digits, '-', '_' and '.', beginning and ending with a letter or digit)`
	bad := []struct{ rule, want string }{
		{`	policy: r0: [for k in labels if k == "internal.example.com/owner" ` + f + `]`,
			`p.cue:8:39: k is a label's value, which is never "internal.example.com/owner": the API server refuses one with '/' in it ` + label + `, so this comparison is always false: k is each value of the map; its keys are the clause's first name (for k, _ in labels)`},
		{`	policy: r1: [for k in labels if strings.HasPrefix(k, "internal.example.com/") ` + f + `]`,
			`p.cue:9:55: k is a label's value, which never begins with "internal.example.com/": the API server refuses one with '/' in it ` + label + `, so strings.HasPrefix is always false: k is each value of the map; its keys are the clause's first name (for k, _ in labels)`},
		{`	policy: r2: [for v in labels if v !~ "^team/[a-z]+$" ` + f + `]`,
			`p.cue:10:39: v is a label's value, which never matches "^team/[a-z]+$": a match holds "team/", and the API server refuses one with '/' in it ` + label + `, so this comparison is always true: v is each value`},
		{`	policy: r3: [if (*labels["team"] | "") == "Vision Team" ` + f + `]`,
			`p.cue:11:44: labels["team"] is a label's value, which is never "Vision Team": the API server refuses one with ' ' in it ` + label + `, so this comparison is always false (comparison-never)` + "\n"},
		{`	policy: r4: [if (*labels["team"] | "") != "` + strings.Repeat("x", 64) + `" ` + f + `]`,
			`p.cue:12:44: labels["team"] is a label's value, which is never "xxxx`},
		{`	policy: r5: [if (*labels["team"] | "") == "-vision" ` + f + `]`,
			`p.cue:13:44: labels["team"] is a label's value, which is never "-vision": the API server refuses one that begins with '-'`},
		{`	policy: r6: [if object.metadata.namespace == "Team-Prod" ` + f + `]`,
			`p.cue:14:47: object.metadata.namespace is a namespace's name, which is never "Team-Prod": the API server refuses one with 'T' in it (at most 63 lower-case letters, digits and '-', beginning and ending with a letter or digit), so this comparison is always false (comparison-never)` + "\n"},
		{`	policy: r7: [if object.spec.runtimeRef.name == "torch_distributed" ` + f + `]`,
			`p.cue:15:49: object.spec.runtimeRef.name is the name of a runtime, which is never "torch_distributed": the API server refuses one with '_' in it (at most 253 lower-case letters, digits, '-' and '.', beginning and ending with a letter or digit), so this comparison is always false (comparison-never)` + "\n"},
	}
	var rules []string
	for _, tc := range bad {
		rules = append(rules, tc.rule)
	}
	var wants []string
	for _, tc := range bad {
		wants = append(wants, warnPrefix+tc.want)
	}
	// Heuristic checks' findings: warnings, of a policy that loads.
	checkLoad(t, "values no label may hold", policy(rules), wants)
	loadPolicyWant(t, "keys, values a label may hold, annotations", policy([]string{
		`	policy: r0: [for k, _ in labels if k == "internal.example.com/owner" ` + f + `]`,
		`	policy: r1: [for k, _ in labels if strings.HasPrefix(k, "internal.example.com/") ` + f + `]`,
		`	policy: r2: [for _, v in labels if v == "vision" || strings.HasSuffix(v, "-team") ` + f + `]`,
		`	policy: r3: [for v in labels if v =~ "^team-[a-z]+$" ` + f + `]`,
		`	policy: r4: [for v in *object.metadata.annotations | {} if v == "a/b" ` + f + `]`,
		`	policy: r5: [if (*labels["team"] | "") == "" ` + f + `]`,
		`	policy: r6: [if object.metadata.namespace == "team-prod" || strings.HasPrefix(object.metadata.namespace, "team-") ` + f + `]`,
		`	policy: r7: [if object.spec.runtimeRef.name == "torch-distributed" ` + f + `]`,
		// A value the read gives when the field is absent.
		`	policy: r8: [if (*labels["team"] | "<none>") == "<none>" || (*object.metadata.namespace | "") == "" ` + f + `]`,
	}), "")
	// A pod's node selector holds label values too.
	loadPolicyWant(t, "node selector", map[string]string{"p.cue": `package schemas

admission: (#APIVersion): ClusterTrainingRuntime: {
	object: _
	policy: a100: [for j in object.spec.template.spec.replicatedJobs if (*j.template.spec.template.spec.nodeSelector["cloud.google.com/gke-accelerator"] | "") == "nvidia.com/a100" {path: "spec", detail: "x"}]
}
`}, warnPrefix+`p.cue:5:160: j.template.spec.template.spec.nodeSelector["cloud.google.com/gke-accelerator"] is a label's value, which is never "nvidia.com/a100"`)
}
