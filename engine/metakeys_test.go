package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

func TestNearKey(t *testing.T) {
	known := []string{"cuetrainer.dev/deprecated-in", "trainer.kubeflow.org/support", "trainer.kubeflow.org/trainjob-ancestor-step"}
	for key, want := range map[string]string{
		"trainer.kubeflow.org/suport":                 "trainer.kubeflow.org/support",
		"trainer.kubeflow.org/supports":               "trainer.kubeflow.org/support",
		"trainer.kubeflow.org/Support":                "trainer.kubeflow.org/support",
		"trainer.kubeflow.com/support":                "trainer.kubeflow.org/support",
		"trainer.kubeflow.org/trainjob-ancestor-stpe": "trainer.kubeflow.org/trainjob-ancestor-step",
		"cuetrainer.dev/deprecated_in":                "cuetrainer.dev/deprecated-in",
		// Not slips: another name of the domain, another domain's
		// name, the name without a domain.
		"trainer.kubeflow.org/suspend": "",
		"trainer.kubeflow.org/owner":   "",
		"example.com/support":          "",
		"support":                      "",
	} {
		if got := k8s.NearKey(key, known); got != want {
			t.Errorf("nearKey(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestKnownKeysWalk(t *testing.T) {
	k := k8s.NewKnownKeys(map[string]k8s.KnownKeyMap{
		"labels":      {At: []string{"metadata", "labels"}, Keys: map[string]bool{"trainer.kubeflow.org/support": true}},
		"annotations": {At: []string{"metadata", "annotations"}, Keys: map[string]bool{"cuetrainer.dev/deprecated-in": true}},
	})
	obj := map[string]any{
		"metadata": map[string]any{
			"labels":      map[string]any{"trainer.kubeflow.org/support": "deprecated", "app": "x"},
			"annotations": map[string]any{"trainer.kubeflow.org/support": "deprecated"},
		},
		"spec": map[string]any{"jobs": []any{
			map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"trainer.kubeflow.org/suport": "x"}}}},
		}},
		// Only a map at the end of the path: not spec.labels.
		"labels": map[string]any{"trainer.kubeflow.org/suport": "x"},
	}
	var got []string
	for _, f := range k.Findings(obj) {
		if f.Rule != contract.FieldKnownKeys {
			t.Errorf("%s: rule %q, want %q", f, f.Rule, contract.FieldKnownKeys)
		}
		got = append(got, f.String())
	}
	want := []string{
		"metadata.annotations[trainer.kubeflow.org/support]: no rule reads this key here: it has its meaning in metadata.labels",
		`spec.jobs[0].template.metadata.labels[trainer.kubeflow.org/suport]: no rule reads this key: did you mean "trainer.kubeflow.org/support"?`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%q\nwant\n%q", got, want)
	}
}

// TestKnownKeyValues: a value a slip from one the entry lists for its key
// (its case, a letter or two) is warned of at the key; a value listed,
// one far from any, a key without values and a value not a string are
// not.
func TestKnownKeyValues(t *testing.T) {
	k := k8s.NewKnownKeys(map[string]k8s.KnownKeyMap{
		"labels": {At: []string{"metadata", "labels"},
			Keys:   map[string]bool{"support": true, "team": true},
			Values: map[string][]string{"support": {"deprecated"}}},
	})
	labels := func(v any) map[string]any {
		return map[string]any{"metadata": map[string]any{"labels": map[string]any{"support": v, "team": "Deprecated"}}}
	}
	for value, want := range map[any]string{
		"Deprecated":  `metadata.labels.support: no rule reads the value "Deprecated" of this key: did you mean "deprecated"?`,
		"depreciated": `metadata.labels.support: no rule reads the value "depreciated" of this key: did you mean "deprecated"?`,
		"deprecated":  "",
		"supported":   "",
		true:          "",
	} {
		var got []string
		for _, f := range k.Findings(labels(value)) {
			got = append(got, f.String())
		}
		if want == "" && len(got) > 0 || want != "" && !slices.Equal(got, []string{want}) {
			t.Errorf("support: %v: findings %q, want %q", value, got, want)
		}
	}
}

// TestAncestorValueSlip: the ancestor label's values are the steps
// (#Ancestors), so that a runtime whose job says "Trainer" is warned of
// at the label, with the step meant; before, only that no job carried
// the trainer step.
func TestAncestorValueSlip(t *testing.T) {
	s := testEngine(t).NewSession(SessionOptions{})
	const want = `spec.template.spec.replicatedJobs[0].template.metadata.labels[trainer.kubeflow.org/trainjob-ancestor-step]: no rule reads the value "Trainer" of this key: did you mean "trainer"?`
	for step, warned := range map[string]bool{"Trainer": true, "trainer": false} {
		job := wrapper.ReplicatedJob("node").Label(stepLabel, step).Container(wrapper.Container("node", "pytorch"))
		rt := torchRuntime("rt-"+strings.ToLower(step)+fmt.Sprint(warned), 1, job).YAML()
		r := s.Admit(k8s.ReadYAML("rt.yaml", []byte(rt))[0])
		found := false
		for _, w := range r.Warnings {
			found = found || strings.Contains(w.String(), want)
		}
		if r.Rejected() || found != warned {
			t.Errorf("%s: rejected %v, warnings %v; want the slip warned of: %v", step, r.Rejected(), r.Warnings, warned)
		}
	}
}
