package engine

import (
	"strings"
	"testing"
)

// Issue 20's classes of inputs on which cuetrainer's behaviour differed
// from Kubeflow Trainer's (v2.3.0), one test each, built from inputs of
// our own; ../shared/docs/semantics.md cites Kubeflow's source.

// TestVolcanoQueueWithPatchAnnotations (class 4). Kubeflow's volcano
// plugin (pkg/runtime/framework/plugins/volcano/volcano.go, Validate)
// reads the queue from the JobSet's annotations, the runtime template's
// then each runtimePatch's, and refuses only a queue annotation that is
// present and empty; its PodGroup takes the queue. A runtimePatch with
// template annotations but not the queue's made the rule fail ("cannot
// range over sources") instead.
func TestVolcanoQueueWithPatchAnnotations(t *testing.T) {
	e := testEngine(t)
	for _, c := range []struct {
		annotations, wantErr, wantQueue string
	}{
		{`{example.com/x: y}`, "", "q1"},
		{`{}`, "", "q1"},
		{`{scheduling.volcano.sh/queue-name: q2}`, "", "q2"},
		{`{scheduling.volcano.sh/queue-name: ""}`, `spec.annotations[scheduling.volcano.sh/queue-name]: Invalid value: "": Volcano queue name must not be empty`, ""},
	} {
		input := strings.Replace(volcanoPatchYAML, "annotations: {example.com/x: y}", "annotations: "+c.annotations, 1)
		s := e.NewSession(SessionOptions{})
		var r Result
		for _, d := range ReadYAML("v.yaml", []byte(input)) {
			r = s.Admit(d)
		}
		got := strings.Join(findingStrings(r.Errors), "\n")
		if got != c.wantErr {
			t.Errorf("patch annotations %s: errors %q, want %q", c.annotations, got, c.wantErr)
			continue
		}
		if c.wantErr != "" {
			continue
		}
		out := s.Render(r, RenderOptions{})
		if len(out.Errors) > 0 {
			t.Errorf("patch annotations %s: render %v", c.annotations, findingStrings(out.Errors))
			continue
		}
		queue := ""
		for _, o := range out.Objects {
			if o["kind"] == "PodGroup" {
				queue, _ = o["spec"].(map[string]any)["queue"].(string)
			}
		}
		if queue != c.wantQueue {
			t.Errorf("patch annotations %s: PodGroup queue %q, want %q", c.annotations, queue, c.wantQueue)
		}
	}
}
