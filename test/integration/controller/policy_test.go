package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

// TestPolicyReloadServesNewFramework: the running controller's policy
// directory, laid out as a mounted ConfigMap, gains the TensorFlow framework; once the operator has applied
// the CRDs regenerated with it, a TrainJob on a TensorFlow runtime is
// admitted and rendered with TF_CONFIG — no restart. A broken policy file
// afterwards leaves TensorFlow served.
func TestPolicyReloadServesNewFramework(t *testing.T) {
	need(t)
	ctx := context.Background()
	ns := namespace(t, "policies")
	before := policies.Engine()
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "policies", "tensorflow", "tensorflow.cue"))
	if err != nil {
		t.Fatal(err)
	}
	publish(t, policyDir, 1, map[string][]byte{"tensorflow.cue": src})
	eventually(t, "the policy reloaded", func() error {
		if policies.Engine() == before {
			return fmt.Errorf("still the old engine (last error: %v)", policies.LastError())
		}
		// A reload another test's clean-up asked for is not this one.
		for _, d := range policies.Engine().Builtin() {
			if d.Name() == "tensorflow-distributed" {
				return nil
			}
		}
		return fmt.Errorf("an engine without tensorflow-distributed (last error: %v)", policies.LastError())
	})
	e := policies.Engine()

	// The operator re-applies the CRDs generated with the same directory
	// (cuetrainer export crds --policy-dir); until then the API server
	// would prune mlPolicy.tensorflow.
	crds, err := e.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	// Until then the controller reads its kinds from its cache; after,
	// from the API server (an informer opened under the old schema may
	// serve objects pruned by it).
	if got := gauge(t, "cuetrainer_controller_cache_reads"); got != 1 {
		t.Errorf("before the CRDs changed: cache reads %v, want 1", got)
	}
	for _, crd := range crds {
		u := &unstructured.Unstructured{Object: crd}
		if err := k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("operator"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the controller reading from the API server", func() error {
		if got := gauge(t, "cuetrainer_controller_cache_reads"); got != 0 {
			return fmt.Errorf("cache reads %v", got)
		}
		return nil
	})
	var runtime map[string]any
	for _, d := range e.Builtin() {
		if d.Name() == "tensorflow-distributed" {
			runtime = d.Object
		}
	}
	if runtime == nil {
		t.Fatal("the policy directory's runtime tensorflow-distributed is not there")
	}
	// The CRD update takes a moment to reach the API server's handlers: a
	// dry run says when the runtime would keep mlPolicy.tensorflow. Only
	// then is it created, once (the controller's cache sees one version).
	eventually(t, "the CRD keeping mlPolicy.tensorflow", func() error {
		probe := &unstructured.Unstructured{Object: runtime}
		probe = probe.DeepCopy()
		if err := k8sClient.Create(ctx, probe, client.DryRunAll); err != nil {
			return err
		}
		if _, ok, _ := unstructured.NestedMap(probe.Object, "spec", "mlPolicy", "tensorflow"); !ok {
			return fmt.Errorf("mlPolicy.tensorflow pruned")
		}
		return nil
	})
	if err := k8sClient.Create(ctx, (&unstructured.Unstructured{Object: runtime}).DeepCopy()); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, wrapper.TrainJob("tf").Namespace(ns).RuntimeRef("tensorflow-distributed").NumNodes(2).Obj())
	eventually(t, "the TensorFlow JobSet", func() error {
		js, err := get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, "tf")
		if err != nil {
			return err
		}
		if cfg := nodeEnv(t, js)["TF_CONFIG"]; !strings.Contains(cfg, `"worker":["tf-node-0-0.tf:`) {
			return fmt.Errorf("TF_CONFIG %q", cfg)
		}
		return nil
	})

	// A broken file: reported, and TensorFlow stays served.
	publish(t, policyDir, 2, map[string][]byte{"tensorflow.cue": src, "broken.cue": []byte("package schemas\nfoo: {\n")})
	reportedFailing(t, "the broken policy reported", "broken.cue")
	if policies.Engine() != e {
		t.Error("a broken policy replaced the good one")
	}
	mustCreate(t, wrapper.TrainJob("tf-after").Namespace(ns).RuntimeRef("tensorflow-distributed").Obj())
	publish(t, policyDir, 3, map[string][]byte{"tensorflow.cue": src})
	eventually(t, "the fixed policy loaded", func() error {
		if err := policies.LastError(); err != nil {
			return err
		}
		return nil
	})
}

// publish lays the files out in dir as the kubelet updates a ConfigMap
// volume (testenv.Publish).
func publish(t *testing.T, dir string, version int, files map[string][]byte) {
	t.Helper()
	if err := testenv.Publish(dir, version, files); err != nil {
		t.Fatal(err)
	}
}

// policyFiles are the files of the controller's policy directory now, by
// name.
func policyFiles(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	entries, err := os.ReadDir(policyDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			data, err := os.ReadFile(filepath.Join(policyDir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = data
		}
	}
	return files
}

// reportedFailing waits for the reloads to report a failure whose error
// holds s.
func reportedFailing(t *testing.T, what, s string) {
	t.Helper()
	eventually(t, what, func() error {
		if err := policies.LastError(); err == nil || !strings.Contains(err.Error(), s) {
			return fmt.Errorf("last error %v", err)
		}
		return nil
	})
}

// withPolicyFile adds a file to the controller's policy directory (as
// version, and version+1 to take it out), waits for the policy with it to
// load, and, when the test ends, for the policy without it: the next
// test's reload is not this one's.
func withPolicyFile(t *testing.T, version int, name, src string) {
	t.Helper()
	files := policyFiles(t)
	with := map[string][]byte{name: []byte(src)}
	for k, v := range files {
		with[k] = v
	}
	reload := func(what string, version int, files map[string][]byte) {
		before := policies.Engine()
		publish(t, policyDir, version, files)
		eventually(t, what, func() error {
			if policies.Engine() == before {
				return fmt.Errorf("still the old engine (last error: %v)", policies.LastError())
			}
			return nil
		})
	}
	reload("the policy with "+name, version, with)
	t.Cleanup(func() { reload("the policy without "+name, version+1, files) })
}

// gauge reads one of the process's gauges (the controller runs in it).
func gauge(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

// evaluations is cuetrainer_engine_evaluations_total's value for what.
func evaluations(t *testing.T, what string) float64 {
	t.Helper()
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "cuetrainer_engine_evaluations_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == what {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no cuetrainer_engine_evaluations_total{what=%q}", what)
	return 0
}
