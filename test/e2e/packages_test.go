package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

// TestRuntimesPackages: `cuetrainer runtimes packages NAME --cluster` does
// what the Kubeflow SDK's get_runtime_packages does: a one-node TrainJob on
// the runtime that prints its packages, run to Complete, its trainer
// node's log printed (kwok serves a fixed one), and the TrainJob deleted.
// A TorchTune runtime is refused, as the SDK refuses a BuiltinTrainer's.
func TestRuntimesPackages(t *testing.T) {
	need(t)
	ctx := context.Background()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "e2e-packages"}}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(cuetrainerBin, "runtimes", "packages", "torch-distributed", "--cluster", "--kubeconfig="+kubeconfig, "-n", "e2e-packages", "--timeout=2m")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("runtimes packages: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	if !strings.Contains(stdout.String(), "Python: 3.12.3 (fake, served by kwok)\n") || !strings.Contains(stdout.String(), "torch      2.13.0") {
		t.Errorf("stdout is not the trainer node's log:\n%s", &stdout)
	}
	for _, want := range []string{"created on ClusterTrainingRuntime torch-distributed", " Complete\n", " deleted\n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, &stderr)
		}
	}
	left := &unstructured.UnstructuredList{}
	left.SetAPIVersion("trainer.kubeflow.org/v1alpha1")
	left.SetKind("TrainJobList")
	if err := k8sClient.List(ctx, left, client.InNamespace("e2e-packages")); err != nil || len(left.Items) != 0 {
		t.Errorf("TrainJobs left behind: %d, %v", len(left.Items), err)
	}

	// The SDK runs no custom code on a BuiltinTrainer's runtime.
	data, err := os.ReadFile(filepath.Join(testenv.Root(), "deploy", "runtimes", "torchtune-llama3.2-1b.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &rt.Object); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Create(ctx, rt); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	out, err := exec.Command(cuetrainerBin, "runtimes", "packages", "torchtune-llama3.2-1b", "--cluster", "--kubeconfig="+kubeconfig, "-n", "e2e-packages").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Cannot get Runtime packages for BuiltinTrainer") {
		t.Errorf("a TorchTune runtime: %v\n%s", err, out)
	}
}
