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

// TestNoDeprecationWarningWithoutTheWebhook (class 6). Kubeflow's runtime
// webhooks are registered with an objectSelector that leaves out runtimes
// labelled trainer.kubeflow.org/webhook-validation: disabled (its
// manifests' ValidatingWebhookConfiguration), so such a runtime gets none
// of the webhook's warnings, the deprecation warning among them;
// cuetrainer warned it.
func TestNoDeprecationWarningWithoutTheWebhook(t *testing.T) {
	e := testEngine(t)
	runtime := func(labels string) string {
		return `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: old
  labels: {trainer.kubeflow.org/framework: torch, trainer.kubeflow.org/support: deprecated` + labels + `}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: x}]}}}
`
	}
	deprecated := func(r Result) bool {
		for _, w := range r.Warnings {
			if strings.Contains(w.Detail, `"old" is deprecated`) {
				return true
			}
		}
		return false
	}
	if r := e.NewSession(SessionOptions{}).Admit(readOne(t, runtime(""))); !deprecated(r) {
		t.Errorf("a deprecated runtime: warnings %v, want Kubeflow's deprecation warning", findingStrings(r.Warnings))
	}
	if r := e.NewSession(SessionOptions{}).Admit(readOne(t, runtime(", trainer.kubeflow.org/webhook-validation: disabled"))); deprecated(r) || r.Rejected() {
		t.Errorf("one that opts out of the webhook: warnings %v, errors %v; want neither", findingStrings(r.Warnings), findingStrings(r.Errors))
	}
}
