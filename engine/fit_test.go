package engine

import (
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
)

// TestRenderFitsKinds: with a policy directory, an object a render builds
// that does not fit its kind's Go type (a field it has not, a value of
// another type) is the policy's defect, at the edit that made it,
// also when no probe reaches the edit; an object that fits renders as
// before.
func TestRenderFitsKinds(t *testing.T) {
	t.Parallel()
	dir := writePolicy(t, map[string]string{"p.cue": `package schemas

renderParts: (#APIVersion): TrainJob: torch: {
	#tj:   _
	#plan: _
	if #tj.metadata.labels != _|_ if #tj.metadata.labels["example.com/debug"] != _|_ {
		edits: debug: {
			order: 60
			ops: [{object: "jobset", path: [#plan.trainerNode, "envs"], op: "set", value: [{name: "DEBUG", value: "1"}]}]
		}
	}
}
`})
	e, err := New(Options{PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if out := renderTorchJob(t, e, "name: job, namespace: team"); len(out.Errors) > 0 || len(out.Objects) == 0 {
		t.Errorf("a TrainJob the edit leaves alone: %d objects, %v", len(out.Objects), findingStrings(out.Errors))
	}
	out := renderTorchJob(t, e, `name: job, namespace: team, labels: {example.com/debug: "on"}`)
	if len(out.Errors) != 1 {
		t.Fatalf("errors %v, want the edit group's misfit", findingStrings(out.Errors))
	}
	f := out.Errors[0]
	if f.Phase != contract.PhaseRuleError || f.Rule != "edits.debug" || !strings.Contains(f.Source, "p.cue:9:") ||
		!strings.Contains(f.Detail, `unknown field "spec.replicatedJobs[0].template.spec.template.spec.containers[0].envs"`) {
		t.Errorf("got %+v, want edits.debug's defect at its op, p.cue:9, naming the field", f)
	}
}

// TestRenderChecksBuiltMetadata: a policy's part that makes a pod label of
// the TrainJob's name renders a valid label for a short name and, for a
// long one, a render error naming the object, the field and
// apimachinery's words, and no objects: the load's checks and checkFit see
// the name as a carried value's token, which is short. Before, the render
// gave a JobSet whose pods the Job API refuses.
func TestRenderChecksBuiltMetadata(t *testing.T) {
	t.Parallel()
	e := loadPolicyWant(t, "a label of the name", map[string]string{"p.cue": `package schemas

renderParts: (#APIVersion): TrainJob: torch: {
	#name: _
	#podLabels: "example.com/master": "\(#name)-master"
}
`}, "")
	if out := renderTorchJob(t, e, "name: job, namespace: team"); len(out.Errors) > 0 || len(out.Objects) == 0 {
		t.Errorf("a short name: %d objects, %v", len(out.Objects), findingStrings(out.Errors))
	}
	long := strings.Repeat("x", 57)
	for range 2 { // the second from the render memo
		out := renderTorchJob(t, e, "name: "+long+", namespace: team")
		if len(out.Objects) != 0 || len(out.Errors) != 1 || out.Errors[0].Phase != contract.PhaseRender ||
			!strings.Contains(out.Errors[0].Detail, `the JobSet `+long+` the policy's render builds of it would be refused: spec.replicatedJobs[0].template.spec.template.metadata.labels: Invalid value: "`+long+`-master": must be no more than 63 bytes`) {
			t.Errorf("a long name: %d objects, %v, want the label's error alone", len(out.Objects), findingStrings(out.Errors))
		}
	}
}

// renderTorchJob admits, in a session of its own, a TrainJob of
// torch-distributed whose metadata holds the fields given, and renders it.
func renderTorchJob(t *testing.T, e *Engine, metadata string) Rendered {
	t.Helper()
	s := e.NewSession(SessionOptions{})
	r := s.Admit(readOne(t, `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {`+metadata+`}
spec: {runtimeRef: {name: torch-distributed}}
`))
	if r.Rejected() {
		t.Fatal(findingStrings(r.Errors))
	}
	return s.Render(r, RenderOptions{})
}
