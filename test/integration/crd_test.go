package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/objdiff"
)

// TestGeneratedCRDs installs the CRDs generated from the CUE schemas in
// the API server, then creates every runtime and TrainJob of the corpus's
// admitted cases through it: the structural schemas accept them, and the
// API server's defaulting from the generated schemas agrees with ours.
func TestGeneratedCRDs(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	e := loadEngine(t)
	installGeneratedCRDs(t, e)
	dirs, _ := filepath.Glob("../conformance/testdata/kubeflow/cases/*")
	created := 0
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "expected.yaml")); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		s := e.NewSession(engine.SessionOptions{})
		for _, doc := range engine.ReadYAML("input.yaml", data) {
			ours := s.Admit(doc).Object
			u := &unstructured.Unstructured{Object: doc.Object}
			u.SetUID("") // the corpus fixes uids for owner references; the API server sets them
			if err := dryRunApply(t, ctx, u); err != nil {
				t.Errorf("%s: %s %s: %v", filepath.Base(dir), u.GetKind(), u.GetName(), err)
				continue
			}
			created++
			// The API server defaulted the object from the generated schema:
			// it must agree with the CUE's defaults.
			if ours != nil && u.GetAPIVersion() == "trainer.kubeflow.org/v1alpha1" {
				for _, d := range objdiff.DiffValues(ours["spec"], u.Object["spec"], u.GetKind()+"/"+u.GetName()+".spec") {
					t.Errorf("%s: defaults differ: %s", filepath.Base(dir), d)
				}
			}
		}
	}
	if created < 60 {
		t.Errorf("the API server took %d objects, want the corpus's", created)
	}
}

func installGeneratedCRDs(t *testing.T, e *engine.Engine) {
	t.Helper()
	crds, err := e.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var typed []*apiextensionsv1.CustomResourceDefinition
	for _, c := range crds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c, crd); err != nil {
			t.Fatal(err)
		}
		typed = append(typed, crd)
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: typed}); err != nil {
		t.Fatalf("installing the generated CRDs: %v", err)
	}
}

// TestGeneratedCRDsRejectLikeKubeflow: with only the generated CRDs (no
// webhooks), the API server itself rejects each corpus case that Kubeflow's
// CRD rejected, with Kubeflow's words: the CRDs carry the validations
// (markers in the CUE schemas' comments) that the crd rules check for vet
// and the webhooks.
func TestGeneratedCRDsRejectLikeKubeflow(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	e := loadEngine(t)
	installGeneratedCRDs(t, e)
	dirs, _ := filepath.Glob("../conformance/testdata/kubeflow/cases/*")
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
		s := e.NewSession(engine.SessionOptions{})
		// The document the CRD rejects: the first whose findings are all
		// of the CRD phase.
		var rejected *engine.Document
		for _, d := range engine.ReadYAML("input.yaml", data) {
			r := s.Admit(d)
			crd := r.Rejected()
			for _, f := range r.Errors {
				crd = crd && f.Phase == engine.PhaseCRD
			}
			if crd {
				rejected = &d
				break
			}
		}
		if rejected == nil {
			continue
		}
		checked++
		u := &unstructured.Unstructured{Object: rejected.Object}
		u.SetUID("") // the corpus fixes uids for owner references; the API server sets them
		err = dryRunApply(t, ctx, u)
		if err == nil {
			t.Errorf("%s: the API server admitted what Kubeflow's CRD rejects: %s", filepath.Base(dir), strings.TrimSpace(string(want)))
			continue
		}
		if got := err.Error(); got != strings.TrimSpace(string(want)) {
			t.Errorf("%s: the API server says\n  %s\nKubeflow's said\n  %s", filepath.Base(dir), got, strings.TrimSpace(string(want)))
		}
	}
	if checked < 5 {
		t.Errorf("checked %d cases the CRD rejects, want the corpus's (65, 67, 68, 69, 71, 73)", checked)
	}
}
