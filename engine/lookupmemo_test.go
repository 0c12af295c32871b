package engine

import (
	"context"
	"strings"
	"testing"
)

// TestLookupsMemoised: a kind's lookups are evaluated once per value of
// what they read (the name, namespace, runtimeRef and runtimePatches of a
// TrainJob) and come from the memo for a TrainJob that differs elsewhere;
// a TrainJob that differs in what they read is looked up afresh, and finds
// its own runtime. Without the memo, every admission evaluates them.
func TestLookupsMemoised(t *testing.T) {
	for _, memo := range []bool{true, false} {
		e, err := New(Options{NoMemo: !memo})
		if err != nil {
			t.Fatal(err)
		}
		s := e.NewSession(SessionOptions{})
		admit := func(doc string) (Result, bool) {
			before := e.lookupsMade.Load()
			r := s.AdmitRequest(context.Background(), readOne(t, doc), Request{Operation: "CREATE"})
			return r, e.lookupsMade.Load() != before
		}
		steps := []struct {
			name, runtime, trainer string
			evaluated              bool
		}{
			{"memo-job", "torch-distributed", "{numNodes: 2}", true},
			{"memo-job", "torch-distributed", "{numNodes: 3, args: [a]}", !memo},
			{"memo-job", "deepspeed-distributed", "{numNodes: 3}", true},
			{"other-job", "deepspeed-distributed", "{numNodes: 3}", true},
			{"memo-job", "torch-distributed", "{image: x}", !memo},
		}
		for i, step := range steps {
			doc := strings.Replace(jobYAML(step.runtime, step.trainer), "name: job", "name: "+step.name, 1)
			r, evaluated := admit(doc)
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
// fails the load, at that lookup in the admin's file, since the memo would
// keep what it names for objects that differ there. Named in reads, the
// same lookups load.
func TestLookupReadsChecked(t *testing.T) {
	const head = "package schemas\n\nlookups: (#APIVersion): TrainJob: {\n\tinput: _\n"
	for _, tc := range []struct {
		name, body, want string
	}{
		{"object", "\tif input.spec.trainer != _|_ {\n\t\tobjects: trainerConfig: {group: \"\", kind: \"ConfigMap\", namespace: \"default\", name: \"c\"}\n\t}\n",
			"extra.cue:6:12: lookups of TrainJob read a path of the input that their reads do not name"},
		{"existing", "\tif input.spec.trainer != _|_ {\n\t\texisting: trainerState: {group: \"\", kind: \"ConfigMap\", namespace: \"default\", name: \"s\"}\n\t}\n",
			"extra.cue:6:13: lookups of TrainJob read a path of the input that their reads do not name"},
		{"named", "\treads: trainer: [\"spec\", \"trainer\"]\n\tif input.spec.trainer != _|_ {\n\t\tobjects: trainerConfig: {group: \"\", kind: \"ConfigMap\", namespace: \"default\", name: \"c\"}\n\t\texisting: trainerState: {group: \"\", kind: \"ConfigMap\", namespace: \"default\", name: \"s\"}\n\t}\n", ""},
	} {
		dir := writePolicy(t, map[string]string{"extra.cue": head + tc.body + "}\n"})
		_, err := New(Options{PolicyDirs: []string{dir}})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: load: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: load: %v, want %q", tc.name, err, tc.want)
		}
	}
}
