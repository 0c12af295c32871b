package engine

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// TestWebhookValuesTyped: Kubeflow's webhooks print an error's value as
// its Go type marshals it (field order, omitempty, "resources":{}). Every
// webhook error of the conformance corpus's rejected inputs must appear
// in Kubeflow's own error text, value and all; the corpus's comparison
// (path, type, detail) leaves the value out.
func TestWebhookValuesTyped(t *testing.T) {
	e := testEngine(t)
	dirs, err := filepath.Glob("../test/conformance/testdata/kubeflow/cases/*")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, dir := range dirs {
		want, err := os.ReadFile(filepath.Join(dir, "expected-error.txt"))
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		s := e.NewSession(SessionOptions{})
		// Kubeflow's error is the first rejected document's: what follows
		// it was never applied.
		for _, d := range k8s.ReadYAML("input.yaml", data) {
			r := s.Admit(d)
			for _, f := range r.Errors {
				if f.Phase != contract.PhaseWebhook || len(f.Value) == 0 {
					continue
				}
				checked++
				if !strings.Contains(string(want), f.String()) {
					t.Errorf("%s: %s %s:\n got  %s\n Kubeflow's: %s", filepath.Base(dir), d.Kind(), d.Name(), f.String(), strings.TrimSpace(string(want)))
				}
			}
			if r.Rejected() {
				break
			}
		}
	}
	t.Logf("checked %d webhook errors with values", checked)
	if checked < 10 {
		t.Errorf("checked %d webhook errors with values, want the corpus's dozen or more", checked)
	}
}

func TestFieldPathSteps(t *testing.T) {
	got := k8s.FieldPathSteps("spec.template.spec.replicatedJobs[0].template.metadata.labels[trainer.kubeflow.org/x]")
	want := []k8s.PathStep{{Name: "spec"}, {Name: "template"}, {Name: "spec"}, {Name: "replicatedJobs"}, {Name: "0", Bracket: true},
		{Name: "template"}, {Name: "metadata"}, {Name: "labels"}, {Name: "trainer.kubeflow.org/x", Bracket: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestRuntimePatchesValueTyped: Kubeflow's jobset plugin refuses env in a
// runtime patch's node container with the TrainJob's runtimePatches as
// the value, printed as its RuntimePatch type marshals them: manager,
// then trainingRuntimeSpec; a container's name before its env.
func TestRuntimePatchesValueTyped(t *testing.T) {
	const input = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  runtimePatches:
  - manager: example.com/x
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  spec:
                    containers:
                    - name: node
                      env: [{name: A, value: "1"}]
`
	s := testEngine(t).NewSession(SessionOptions{})
	r := s.Admit(k8s.ReadYAML("input.yaml", []byte(input))[0])
	want := `spec.runtimePatches: Invalid value: [{"manager":"example.com/x","trainingRuntimeSpec":{"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"containers":[{"name":"node","env":[{"name":"A","value":"1"}]}]}}}}}]}}}}]: must not have envs for the dataset-initializer, model-initializer, node containers`
	if len(r.Errors) != 1 || r.Errors[0].String() != want {
		t.Errorf("got %v\nwant %s", r.Errors, want)
	}
}
