package controller_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuetrainer/cuetrainer/controller"
	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// loadPanics is a policy file whose presence makes the suite's reloads
// panic (run, in suite_test.go).
const loadPanics = "panics-the-load.cue"

// TestPolicyReloadPanics: the running controller's policy directory gains
// a correct policy on which CUE v0.17.1 panics (engine/testdata/cuepanic):
// it loads with a warning, counted, and the real webhook gives its rule's
// findings. A reload whose load panics afterwards is a failed reload: the
// webhooks keep admitting with the last good policy.
func TestPolicyReloadPanics(t *testing.T) {
	need(t)
	ns := namespace(t, "cuepanic")
	installShippedRuntime(t, "deepspeed-distributed")
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "engine", "testdata", "cuepanic", "org.cue"))
	if err != nil {
		t.Fatal(err)
	}
	files := policyFiles(t)
	with := map[string][]byte{"requirelimits.cue": src}
	for k, v := range files {
		with[k] = v
	}
	before := policies.Engine()
	publish(t, policyDir, 301, with)
	t.Cleanup(func() {
		before := policies.Engine()
		publish(t, policyDir, 303, files)
		eventually(t, "the policy without requirelimits.cue", func() error {
			if policies.Engine() == before || policies.LastError() != nil {
				return fmt.Errorf("still the old engine (last error: %v)", policies.LastError())
			}
			return nil
		})
	})
	eventually(t, "the policy with requirelimits.cue", func() error {
		if policies.Engine() == before {
			return fmt.Errorf("still the old engine (last error: %v)", policies.LastError())
		}
		return nil
	})
	good := policies.Engine()
	if ws := good.Warnings(); len(ws) != 1 || !strings.Contains(ws[0].Message, "policy.requireLimits") {
		t.Errorf("load warnings %v; want CUE's panic, naming policy.requireLimits", ws)
	}
	if got := gauge(t, "cuetrainer_policy_load_warnings"); got != 1 {
		t.Errorf("cuetrainer_policy_load_warnings %v, want 1", got)
	}
	if got := gauge(t, "cuetrainer_policy_in_force"); got != 1 {
		t.Errorf("cuetrainer_policy_in_force %v, want 1", got)
	}
	admitted := func(when string) {
		t.Helper()
		err := create(t, wrapper.TrainJob("no-limits-"+when).Namespace(ns).RuntimeRef("deepspeed-distributed").NumNodes(2).Obj())
		if err == nil || !strings.Contains(err.Error(), "spec.trainer.resourcesPerNode: Required value: set limits.memory") {
			t.Errorf("%s: a TrainJob without limits.memory: %v; want the policy's finding", when, err)
		}
		mustCreate(t, wrapper.TrainJob("limits-"+when).Namespace(ns).RuntimeRef("deepspeed-distributed").NumNodes(2).
			Trainer("resourcesPerNode", map[string]any{"limits": map[string]any{"memory": "64Gi"}}).Obj())
	}
	admitted("loaded")

	// A reload that panics: reported, and the policy with the rule stays.
	with[loadPanics] = []byte("package schemas\n")
	publish(t, policyDir, 302, with)
	reportedFailing(t, "the panic reported", "panicked")
	if policies.Engine() != good {
		t.Fatal("a load that panicked replaced the good policy")
	}
	admitted("after-panic")
}

// TestPolicyClosedAtStart: a controller that starts with a policy that
// does not load has none in force: it creates nothing for a TrainJob, and
// is not ready, until the policy is fixed; then it renders the TrainJob
// with no restart (docs/controller.md).
func TestPolicyClosedAtStart(t *testing.T) {
	need(t)
	ns := namespace(t, "closed")
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.cue")
	if err := os.WriteFile(broken, []byte("package schemas\nfoo: {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	closed, err := controller.NewPolicyReloader(engine.Options{PolicyDirs: []string{dir}}, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if closed.Engine() != nil || closed.Ready(nil) == nil {
		t.Fatal("a policy that does not load is in force")
	}
	if got := gauge(t, "cuetrainer_policy_in_force"); got != 0 {
		t.Errorf("cuetrainer_policy_in_force %v, want 0", got)
	}

	// The suite's controller steps aside for one started with the broken
	// policy, registered for the embedded CUE's kinds.
	stopController()
	embedded, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop, err := startControllerWith(controllerCfg, controller.Options{Engine: closed.Engine, Closed: closed.Closed, Registered: embedded, Reconcile: true, Client: applied}, closed)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		stop()
		if stopController, err = startController(controllerCfg); err != nil {
			t.Fatal(err)
		}
	}()
	mustCreate(t, torchRuntime(ns, "pytorch/pytorch:2.13").Obj())
	mustCreate(t, trainJob(ns, "waits").Obj())
	time.Sleep(2 * time.Second)
	if _, err := get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, "waits"); err == nil {
		t.Fatal("a JobSet was created with no policy in force")
	}

	if err := os.WriteFile(broken, []byte("package schemas\n#foo: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the fixed policy in force", func() error { return closed.Ready(nil) })
	eventually(t, "the JobSet", func() error {
		_, err := get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, "waits")
		return err
	})
}
