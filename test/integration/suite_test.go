// Package integration runs cuetrainer against a real kube-apiserver and
// etcd (controller-runtime's envtest with the binaries `make
// testbins-envtest` builds). Without the binaries the tests skip, except
// under CI=true, where they fail.
package integration

import (
	"os"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
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

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	cp, exit := testenv.StartSuite(m, testenv.Options{CRDs: []string{"test/integration/testdata/crds"}}, &skipReason)
	if cp == nil {
		return exit
	}
	defer cp.Stop()
	cfg, k8sClient = cp.Config, cp.Client
	return m.Run()
}

// needControlPlane skips a test without the control plane, or fails it
// under CI=true.
func needControlPlane(t *testing.T) {
	t.Helper()
	testenv.Need(t, k8sClient != nil, skipReason)
}
