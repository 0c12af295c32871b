package engine

import (
	"slices"
	"testing"
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
		if got := nearKey(key, known); got != want {
			t.Errorf("nearKey(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestKnownKeysWalk(t *testing.T) {
	k := newKnownKeys(map[string]knownKeyMap{
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
	for _, f := range k.findings(obj) {
		if f.Rule != fieldKnownKeys {
			t.Errorf("%s: rule %q, want %q", f, f.Rule, fieldKnownKeys)
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
