package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// TestRenderedObjectsAccepted: every object cuetrainer renders for the
// conformance cases is accepted by a real API server with the JobSet CRD
// (server-side apply, dry run): the schemas, defaults and validation of the
// real thing, not our idea of them.
func TestRenderedObjectsAccepted(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	e := loadEngine(t)
	dirs, _ := filepath.Glob("../conformance/testdata/kubeflow/cases/*")
	applied := 0
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "expected.yaml")); err != nil {
			continue // a rejection case
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			applied += renderAndApply(t, ctx, e.NewSession(engine.SessionOptions{}), "input.yaml", data)
		})
	}
	t.Logf("%d rendered objects accepted by the API server", applied)
	if applied < 60 {
		t.Errorf("applied %d objects, want the corpus's (at least 60)", applied)
	}
}

func ensureNamespace(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if name == "" {
		return
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8sClient.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// TestElasticRenderAccepted: the elastic torch render (failurePolicy,
// rendezvous env) is accepted by the API server too.
func TestElasticRenderAccepted(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	e := loadEngine(t)
	rt := wrapper.ClusterTrainingRuntime("elastic").Framework("torch").
		MLPolicy("torch", map[string]any{"elasticPolicy": map[string]any{"minNodes": 1, "maxNodes": 3, "maxRestarts": 2}}).
		ReplicatedJob(wrapper.ReplicatedJob("node").Label("trainer.kubeflow.org/trainjob-ancestor-step", "trainer").
			Container(wrapper.Container("node", "torch:1").Requests(map[string]any{"cpu": "2"})))
	tj := wrapper.TrainJob("el").Namespace("team-e").UID("8a6f1b9e-0000-4000-8000-000000000001").RuntimeRef("elastic").
		Trainer("resourcesPerNode", map[string]any{"limits": map[string]any{"cpu": "4"}})
	input := rt.YAML() + "---\n" + tj.YAML()
	n := renderAndApply(t, ctx, e.NewSession(engine.SessionOptions{NoBuiltinRuntimes: true}), "elastic.yaml", []byte(input))
	if n != 2 {
		t.Errorf("rendered %d objects, want a JobSet and the snapshot", n)
	}
}

// renderAndApply admits the documents, renders each, and applies every
// rendered object to the API server (server-side apply, dry run). It
// returns how many the API server took.
func renderAndApply(t *testing.T, ctx context.Context, s *engine.Session, file string, data []byte) int {
	t.Helper()
	applied := 0
	for _, doc := range engine.ReadYAML(file, data) {
		r := s.Admit(doc)
		if r.Rejected() {
			t.Fatalf("%s: %v", r.Identity(), r.Errors)
		}
		for _, obj := range s.Render(r, engine.RenderOptions{}).Objects {
			u := &unstructured.Unstructured{Object: obj}
			if err := dryRunApply(t, ctx, u); err != nil {
				t.Errorf("%s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
				continue
			}
			applied++
		}
	}
	return applied
}

// dryRunApply server-side-applies an object without storing it, in its
// namespace (created when missing); u becomes what the API server made of it.
func dryRunApply(t *testing.T, ctx context.Context, u *unstructured.Unstructured) error {
	t.Helper()
	ensureNamespace(t, ctx, u.GetNamespace())
	return k8sClient.Patch(ctx, u, client.Apply, client.FieldOwner("cuetrainer"), client.ForceOwnership, client.DryRunAll)
}
