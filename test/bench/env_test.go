// Package bench_test holds the benchmarks of `make bench` that need a real
// kube-apiserver and etcd (controller-runtime's envtest with the binaries
// `make testbins-envtest` builds): admission latency under an open-loop
// load, controller throughput, and the controller's cold start. Each is
// measured beside a baseline in the same run. They are benchmarks, so `go
// test ./...` compiles them and runs none; the control plane starts only
// when one runs (go test -run '^$' -bench . ./test/bench).
package bench_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/internal/serving"
	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

var (
	envOnce   sync.Once
	env       *testenv.ControlPlane
	envCfg    *rest.Config
	envClient client.Client
	envErr    error
)

// deployMemory is the memory limit of the controller's container in
// deploy/manager.yaml.
const deployMemory = 512 << 20

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	// The process runs our servers as deploy/ runs the controller: under
	// its memory limit, with the collector's target the controller command
	// then sets (serving.GCPercent). The baselines, in the same process,
	// run with the same. GOGC and GOMEMLIMIT, when set, win.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serving.MemoryLimit(deployMemory))
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serving.GCPercent)
	}
	code := m.Run()
	if env != nil {
		env.Stop()
	}
	os.Exit(code)
}

// controlPlane starts the API server and etcd once, with the CRDs (ours,
// JobSet's, the PodGroups') and the shipped runtimes (deploy/runtimes), and
// no webhooks: what is measured talks to our servers itself. It skips the
// benchmark when the binaries are not there.
func controlPlane(b *testing.B) (*rest.Config, client.Client) {
	b.Helper()
	envOnce.Do(func() { envErr = startControlPlane() })
	if envErr != nil {
		if strings.Contains(envErr.Error(), "make testbins") {
			b.Skip(envErr)
		}
		b.Fatal(envErr)
	}
	return envCfg, envClient
}

func startControlPlane() error {
	cp, skip, err := testenv.StartControlPlane(testenv.Options{CRDs: []string{"deploy/crds", "test/integration/testdata/crds"}})
	if skip != "" {
		return errors.New(skip)
	}
	if err != nil {
		return err
	}
	env = cp
	// The load of a benchmark is the load it makes, not the client's rate
	// limit (as a controller is configured in a cluster, QPS is raised).
	cfg := cp.Config
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	root := testenv.Root()
	runtimes, _ := filepath.Glob(filepath.Join(root, "deploy", "runtimes", "*.yaml"))
	for _, f := range runtimes {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		if err := applyFile(c, f); err != nil {
			return err
		}
	}
	envCfg, envClient = cfg, c
	return nil
}

// applyFile creates or updates the objects of a YAML file.
func applyFile(c client.Client, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("bench"), client.ForceOwnership); err != nil {
			return fmt.Errorf("%s: %s %s: %w", file, u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// namespace creates a namespace with a fresh name.
func namespace(b *testing.B, c client.Client, prefix string) string {
	b.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		b.Fatal(err)
	}
	return ns.Name
}

// freePort returns a port on 127.0.0.1 nothing listens on now.
func freePort(b *testing.B) int {
	b.Helper()
	p, err := testenv.FreePort()
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// waitFor polls cond until it holds or the time is up.
func waitFor(b *testing.B, within time.Duration, what string, cond func() error) {
	b.Helper()
	testenv.Eventually(b, within, 20*time.Millisecond, what, cond)
}
