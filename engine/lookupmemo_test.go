package engine

import (
	"context"
	"strings"
	"testing"
)

// TestLookupsMemoised: a kind's lookups are evaluated once per value of
// what they read (a TrainJob's runtimeRef; its name and namespace carried,
// carried.go; its runtimePatches on an UPDATE alone) and come from the
// memo for a TrainJob that differs elsewhere; a TrainJob that differs in
// what they read is looked up afresh, and finds its own runtime. Without
// the memo, every admission evaluates them.
func TestLookupsMemoised(t *testing.T) {
	t.Parallel()
	for _, memo := range []bool{true, false} {
		e, err := New(Options{NoMemo: !memo})
		if err != nil {
			t.Fatal(err)
		}
		s := e.NewSession(SessionOptions{})
		admit := func(doc, op string) (Result, bool) {
			before := e.lookupsMade.Load()
			d := readOne(t, doc)
			req := Request{Operation: op}
			if op == "UPDATE" {
				req.OldObject = readOne(t, jobYAML("torch-distributed", "{numNodes: 2}")).Object
			}
			r := s.AdmitRequest(context.Background(), d, req)
			return r, e.lookupsMade.Load() != before
		}
		patched := func(manager string) string {
			return strings.Replace(jobYAML("torch-distributed", "{numNodes: 2}"), "spec:\n", "spec:\n  runtimePatches: [{manager: "+manager+"}]\n", 1)
		}
		steps := []struct {
			name, runtime, trainer string
			// doc, when set, is the document instead; op the operation.
			doc, op   string
			evaluated bool
		}{
			{name: "memo-job", runtime: "torch-distributed", trainer: "{numNodes: 2}", evaluated: true},
			{name: "memo-job", runtime: "torch-distributed", trainer: "{numNodes: 3, args: [a]}", evaluated: !memo},
			{name: "memo-job", runtime: "deepspeed-distributed", trainer: "{numNodes: 3}", evaluated: true},
			// Another name is carried: the lookups name its own objects.
			{name: "other-job", runtime: "deepspeed-distributed", trainer: "{numNodes: 3}", evaluated: !memo},
			{name: "memo-job", runtime: "torch-distributed", trainer: "{image: x}", evaluated: !memo},
			// runtimePatches are read on an UPDATE alone.
			{runtime: "torch-distributed", doc: patched("acme.io/a"), op: "CREATE", evaluated: true},
			{runtime: "torch-distributed", doc: patched("acme.io/b"), op: "CREATE", evaluated: !memo},
			{runtime: "torch-distributed", doc: patched("acme.io/a"), op: "UPDATE", evaluated: true},
			{runtime: "torch-distributed", doc: patched("acme.io/b"), op: "UPDATE", evaluated: true},
		}
		for i, step := range steps {
			doc := step.doc
			if doc == "" {
				doc = strings.Replace(jobYAML(step.runtime, step.trainer), "name: job", "name: "+step.name, 1)
			}
			if step.op == "" {
				step.op = "CREATE"
			}
			r, evaluated := admit(doc, step.op)
			if evaluated != step.evaluated {
				t.Errorf("memo %v, step %d: lookups evaluated %v, want %v", memo, i, evaluated, step.evaluated)
			}
			if r.runtime == nil || r.runtime.doc.Name() != step.runtime {
				t.Errorf("memo %v, step %d: runtime %v, want %s (%v)", memo, i, r.runtime, step.runtime, r.Errors)
			}
		}
	}
}

// TestLookupReadsChecked: a policy whose lookup (or a controller's
// existing object) reads a path of the input that its reads do not name
// fails the load, at the read in the admin's file (or, for a read whose
// key is computed, at that lookup, from the trial on the probes), since
// the lookup is given the named paths alone. Named in reads, the same
// lookups load.
func TestLookupReadsChecked(t *testing.T) {
	t.Parallel()
	const head = "package schemas\n\nlookups: (#APIVersion): TrainJob: {\n\tinput: _\n"
	for _, tc := range []struct {
		name, body, want string
	}{
		// Found in the syntax, at the read.
		{"object", "\tif input.spec.trainer != _|_ {\n\t\tobjects: trainerConfig: {group: \"\", kind: \"ConfigMap\", namespace: \"default\", name: \"c\"}\n\t}\n",
			"extra.cue:5:16: this rule reads input.spec.trainer, which the reads of lookups: \"trainer.kubeflow.org/v1alpha1\": TrainJob do not name"},
		// A key computed at evaluation: found by the trial on the probes,
		// at the lookup.
		{"object computed", "\tlet f = \"sp\" + \"ec\"\n\tif input[f].trainer != _|_ {\n\t\tobjects: trainerConfig: {group: \"\", kind: \"ConfigMap\", namespace: \"default\", name: \"c\"}\n\t}\n",
			"extra.cue:7:12: lookups of TrainJob read a path of the input that their reads do not name"},
		{"existing computed", "\tlet f = \"sp\" + \"ec\"\n\tif input[f].trainer != _|_ {\n\t\texisting: trainerState: {group: \"\", kind: \"ConfigMap\", namespace: \"default\", name: \"s\"}\n\t}\n",
			"extra.cue:7:13: lookups of TrainJob read a path of the input that their reads do not name"},
		{"named", "\treads: trainer: [\"spec\", \"trainer\"]\n\tif input.spec.trainer != _|_ {\n\t\tobjects: trainerConfig: {group: \"\", kind: \"ConfigMap\", namespace: \"default\", name: \"c\"}\n\t\texisting: trainerState: {group: \"\", kind: \"ConfigMap\", namespace: \"default\", name: \"s\"}\n\t}\n", ""},
	} {
		// The context field the lookup's object fills (checkContextField).
		loadPolicyWant(t, tc.name, map[string]string{"extra.cue": head + tc.body + "}\n\n#Context: trainerConfig?: {...}\n"}, tc.want)
	}
}
