package engine

import (
	"os"
	"reflect"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// TestEveryTrainerJobTakesTheTrainer: every job of the trainer step gets
// the TrainJob's image, command, args, env and resourcesPerNode in its
// node container, not the first alone (Kubeflow's jobset builder).
func TestEveryTrainerJobTakesTheTrainer(t *testing.T) {
	out := renderedTrainJob(t, "testdata/render/two-trainer-jobs.yaml")
	var jobs []any
	for _, o := range out.Objects {
		if o["kind"] == "JobSet" {
			jobs = value.AsJSON(o).(map[string]any)["spec"].(map[string]any)["replicatedJobs"].([]any)
		}
	}
	want := map[string]any{
		"name": "node", "image": "custom", "command": []any{"python", "x.py"}, "args": []any{"--a"},
		"env":       []any{map[string]any{"name": "FOO", "value": "bar"}},
		"resources": map[string]any{"requests": map[string]any{"cpu": "2"}},
	}
	for _, j := range jobs {
		job := j.(map[string]any)
		c := job["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		// The first job is torch's trainer too (its env, its port):
		// compare what the TrainJob gives.
		if env, _ := c["env"].([]any); len(env) > 0 {
			c["env"] = env[:1]
		}
		delete(c, "ports")
		if !reflect.DeepEqual(c, want) {
			t.Errorf("job %s's node container: %v, want %v", job["name"], c, want)
		}
	}
	if len(jobs) != 2 {
		t.Errorf("%d jobs, want 2", len(jobs))
	}
}

// TestPodGroupRequests: a PodGroup's minResources count each pod as
// component-helpers' PodRequests does (Kubeflow's PodSets): the pod's
// overhead added, sidecars (restartable init containers) summed with the
// containers, an init container's start with the sidecars before it, and
// the pod's own requests in place of its containers'.
func TestPodGroupRequests(t *testing.T) {
	for file, want := range map[string]map[string]any{
		"podgroup-overhead.yaml":   {"cpu": "1100m"},
		"podgroup-sidecar.yaml":    {"cpu": "1250m", "memory": "1152Mi"},
		"podgroup-init-start.yaml": {"cpu": "4500m", "memory": "2304Mi"},
		"podgroup-podlevel.yaml":   {"cpu": "3", "memory": "2Gi"},
	} {
		t.Run(file, func(t *testing.T) {
			var got any
			for _, o := range renderedTrainJob(t, "testdata/render/"+file).Objects {
				if o["kind"] == "PodGroup" {
					got = value.AsJSON(o).(map[string]any)["spec"].(map[string]any)["minResources"]
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("minResources %v, want %v", got, want)
			}
		})
	}
}

// renderedTrainJob admits a file's documents in one session, each of
// which must be admitted, and renders its TrainJob, which must render.
func renderedTrainJob(t *testing.T, path string) Rendered {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := testEngine(t).NewSession(SessionOptions{})
	var out Rendered
	for _, d := range k8s.ReadYAML(path, data) {
		r := s.Admit(d)
		if r.Rejected() {
			t.Fatalf("%s: %v", r.Identity(), findingStrings(r.Errors))
		}
		if d.Kind() == "TrainJob" {
			out = s.Render(r, RenderOptions{})
		}
	}
	if len(out.Errors) > 0 || len(out.Objects) == 0 {
		t.Fatalf("render: %d objects, %v", len(out.Objects), findingStrings(out.Errors))
	}
	return out
}
