// Package integration runs cuetrainer against a real kube-apiserver and
// etcd (controller-runtime's envtest with the binaries `make
// testbins-envtest` builds). Without the binaries the tests skip, except
// under CI=true, where they fail.
package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cuetrainer/cuetrainer/engine"
)

var (
	cfg       *rest.Config
	k8sClient client.Client
	// skipReason is why the control plane is not there, when it is not.
	skipReason string
)

var (
	engineOnce sync.Once
	eng        *engine.Engine
	engErr     error
)

// loadEngine compiles the embedded CUE once for all the tests; each test
// admits and renders in its own session.
func loadEngine(t testing.TB) *engine.Engine {
	t.Helper()
	engineOnce.Do(func() { eng, engErr = engine.New(engine.Options{}) })
	if engErr != nil {
		t.Fatalf("loading the engine: %v", engErr)
	}
	return eng
}

// binaries finds the envtest tier: $CUETRAINER_TESTBINS, else the cache
// directory hack/testbins.sh fills.
func binaries() (string, error) {
	dir := os.Getenv("CUETRAINER_TESTBINS")
	if dir == "" {
		out, err := exec.Command("bash", "../../hack/testbins.sh", "--print").Output()
		if err != nil {
			return "", fmt.Errorf("hack/testbins.sh --print: %v", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("%s: %v (run make testbins-envtest)", b, err)
		}
	}
	return dir, nil
}

// jobSetCRD is the JobSet CRD that ships in the JobSet module.
func jobSetCRD() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/jobset").Output()
	if err != nil {
		return "", fmt.Errorf("finding the JobSet module: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "components", "crd", "bases", "jobset.x-k8s.io_jobsets.yaml"), nil
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := binaries()
	if err != nil {
		skipReason = err.Error()
		return m.Run()
	}
	crd, err := jobSetCRD()
	if err != nil {
		skipReason = err.Error()
		return m.Run()
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDInstallOptions:     envtest.CRDInstallOptions{Paths: []string{crd, "testdata/crds"}, ErrorIfPathMissing: true},
	}
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting the control plane:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}()
	if k8sClient, err = client.New(cfg, client.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// needControlPlane skips a test without the control plane, or fails it
// under CI=true.
func needControlPlane(t *testing.T) {
	t.Helper()
	if k8sClient != nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the control plane is required under CI=true: %s", skipReason)
	}
	t.Skipf("no control plane: %s", skipReason)
}
