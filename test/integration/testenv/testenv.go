// Package testenv finds what the integration tests need to run a real
// kube-apiserver and etcd (controller-runtime's envtest with the binaries
// `make testbins-envtest` builds), and fails or skips a test without them.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Binaries finds the envtest tier: $CUETRAINER_TESTBINS, else the cache
// directory hack/testbins.sh fills.
func Binaries() (string, error) {
	return binaries("make testbins-envtest", "etcd", "kube-apiserver")
}

// ClusterBinaries finds the simulated-cluster tier (make testbins): the
// envtest tier, kube-controller-manager, kube-scheduler, kwok with its
// stages, and the JobSet controller.
func ClusterBinaries() (string, error) {
	return binaries("make testbins", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "jobset-controller", "kwok-stages")
}

func binaries(make string, names ...string) (string, error) {
	dir := os.Getenv("CUETRAINER_TESTBINS")
	if dir == "" {
		out, err := exec.Command("bash", filepath.Join(Root(), "hack", "testbins.sh"), "--print").Output()
		if err != nil {
			return "", fmt.Errorf("hack/testbins.sh --print: %v", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	for _, b := range names {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("%s: %v (run %s)", b, err, make)
		}
	}
	return dir, nil
}

// JobSetCRD is the JobSet CRD that ships in the JobSet module.
func JobSetCRD() (string, error) {
	dir, err := JobSetModule()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "config", "components", "crd", "bases", "jobset.x-k8s.io_jobsets.yaml"), nil
}

// JobSetModule is the JobSet module's directory (its CRD and webhook
// configurations).
func JobSetModule() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/jobset").Output()
	if err != nil {
		return "", fmt.Errorf("finding the JobSet module: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Need skips a test when the control plane is not there (why says why),
// or fails it under CI=true.
func Need(t *testing.T, up bool, why string) {
	t.Helper()
	if up {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the control plane is required under CI=true: %s", why)
	}
	t.Skipf("no control plane: %s", why)
}
