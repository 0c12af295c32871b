package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// TestReviewSeesRuntimePatches: Kubeflow's plugins validate a TrainJob
// against the runtime info built with its runtimePatches merged in
// (newRuntimeInfo), so a patch that adds what a check asks for (the
// initializer's mount, an envInjection target, MPI's launcher job) makes
// the TrainJob valid. Each case is admitted and rendered; without its
// patches the same TrainJob is refused with Kubeflow's words.
func TestReviewSeesRuntimePatches(t *testing.T) {
	e := testEngine(t)
	for file, without := range map[string]string{
		"initializer-mount.yaml":   "must have volumeMount with name - initializer in container dataset-initializer of the dataset-initializer job",
		"envinjection-target.yaml": `envInjection target podSet "node" container "sidecar" not found in runtime template`,
		"mpi-launcher.yaml":        "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have either launcher and node",
	} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "runtimepatches", file))
			if err != nil {
				t.Fatal(err)
			}
			docs := k8s.ReadYAML(file, data)
			admit := func(patched bool) Result {
				s := e.NewSession(SessionOptions{})
				var tj Result
				for _, d := range docs {
					if d.Kind() == "TrainJob" && !patched {
						d.Object = value.DeepCopy(d.Object).(map[string]any)
						delete(d.Object["spec"].(map[string]any), "runtimePatches")
					}
					r := s.Admit(d)
					if d.Kind() != "TrainJob" {
						if r.Rejected() {
							t.Fatalf("%s: %v", r.Identity(), findingStrings(r.Errors))
						}
						continue
					}
					tj = r
					if patched {
						if out := s.Render(r, RenderOptions{}); len(out.Errors) > 0 || len(out.Objects) == 0 {
							t.Errorf("render: %d objects, %v", len(out.Objects), findingStrings(out.Errors))
						}
					}
				}
				return tj
			}
			if r := admit(true); r.Rejected() {
				t.Errorf("with its patches: %v", findingStrings(r.Errors))
			}
			if got := strings.Join(findingStrings(admit(false).Errors), "\n"); !strings.Contains(got, without) {
				t.Errorf("without its patches: %q, want %q", got, without)
			}
		})
	}
}
