package controller_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestRuntimesListCluster: `cuetrainer runtimes list --cluster` and `get
// --cluster` read a cluster's runtimes, as the Kubeflow SDK's list_runtimes
// and get_runtime do: the ClusterTrainingRuntimes and the TrainingRuntimes
// of the namespace, nothing shipped added.
func TestRuntimesListCluster(t *testing.T) {
	need(t)
	a, b := namespace(t, "list-a"), namespace(t, "list-b")
	mustCreate(t, torchRuntime(a, "torch:a").Obj())
	mustCreate(t, torchRuntime(b, "torch:b").Obj())

	user, err := testEnv.AddUser(envtest.User{Name: "lister", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "cuetrainer")
	build := exec.Command("go", "build", "-o", bin, "./cmd/cuetrainer")
	build.Dir = filepath.Join("..", "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building: %v\n%s", err, out)
	}

	out, err := exec.Command(bin, "runtimes", "list", "--cluster", "--kubeconfig", kc, "-n", a, "-o", "json").Output()
	if err != nil {
		t.Fatalf("runtimes list --cluster: %v", err)
	}
	var rows []struct{ Name, Kind, Namespace, Image string }
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var mine []string
	for _, r := range rows {
		if r.Kind == "TrainingRuntime" {
			mine = append(mine, r.Namespace+"/"+r.Name+"="+r.Image)
		}
		if r.Name == "torch-distributed" && r.Kind == "ClusterTrainingRuntime" {
			t.Errorf("a shipped runtime listed that the cluster does not have: %v", r)
		}
	}
	if strings.Join(mine, ",") != a+"/torch=torch:a" {
		t.Errorf("TrainingRuntimes listed %v, want only %s/torch=torch:a", mine, a)
	}

	out, err = exec.Command(bin, "runtimes", "get", "torch", "--cluster", "--kubeconfig", kc, "-n", b, "-o", "yaml").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "image: torch:b") {
		t.Errorf("runtimes get --cluster -n %s: %v\n%s", b, err, out)
	}
}
