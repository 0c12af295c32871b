package controller_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/cuetrainer/cuetrainer/controller"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

// namespace makes a namespace for one test.
func namespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8sClient.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return name
}

// stepLabel marks the replicated job that runs a step of the TrainJob.
const stepLabel = "trainer.kubeflow.org/trainjob-ancestor-step"

// nodeJob is a runtime's replicated job "node", which runs the trainer
// step in one container, "node", of image.
func nodeJob(image string) *wrapper.ReplicatedJobWrapper {
	return wrapper.ReplicatedJob("node").Label(stepLabel, "trainer").Container(wrapper.Container("node", image))
}

// namespacedRuntime is the TrainingRuntime ns/name of the torch framework
// on two nodes, whose trainer job is node.
func namespacedRuntime(ns, name string, node *wrapper.ReplicatedJobWrapper) *wrapper.RuntimeWrapper {
	return wrapper.TrainingRuntime(name).Namespace(ns).Framework("torch").
		NumNodes(2).MLPolicy("torch", nil).ReplicatedJob(node)
}

// torchRuntime is the namespace's runtime "torch", its nodes of image.
func torchRuntime(ns, image string) *wrapper.RuntimeWrapper {
	return namespacedRuntime(ns, "torch", nodeJob(image))
}

// trainJob is the TrainJob ns/name of the namespace's torchRuntime.
func trainJob(ns, name string) *wrapper.TrainJobWrapper {
	return wrapper.TrainJob(name).Namespace(ns).RuntimeRef("torch").RuntimeRefKind("TrainingRuntime")
}

func create(t *testing.T, obj client.Object) error {
	t.Helper()
	return k8sClient.Create(context.Background(), obj)
}

func mustCreate(t *testing.T, obj client.Object) {
	t.Helper()
	if err := create(t, obj); err != nil {
		t.Fatal(err)
	}
}

// eventually polls until check passes, or fails the test with its last error.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	eventuallyWithin(t, 2*time.Minute, what, check)
}

func eventuallyWithin(t *testing.T, d time.Duration, what string, check func() error) {
	t.Helper()
	testenv.Eventually(t, d, 100*time.Millisecond, what, check)
}

// hasCondition checks that the TrainJob has a condition with these fields.
func hasCondition(t *testing.T, ns, name string, want map[string]any) func() error {
	return func() error {
		tj, err := get(t, "trainer.kubeflow.org/v1alpha1", "TrainJob", ns, name)
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(tj.Object, "status", "conditions")
		for _, c := range conds {
			cm := c.(map[string]any)
			match := true
			for k, v := range want {
				if cm[k] != v {
					match = false
				}
			}
			if match {
				return nil
			}
		}
		return fmt.Errorf("conditions %v, want one with %v", conds, want)
	}
}

func get(t *testing.T, apiVersion, kind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u, k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)
}

// TestWebhookDenies: the API server calls the validating webhook, which
// denies what vet rejects, with Kubeflow's messages.
func TestWebhookDenies(t *testing.T) {
	need(t)
	ns := namespace(t, "denies")
	mustCreate(t, torchRuntime(ns, "torch:1").Obj())

	err := create(t, trainJob(ns, "reserved").Env("PET_NNODES", "3").Obj())
	want := `admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.trainer.env: Invalid value: [{"name":"PET_NNODES","value":"3"}]: must not have reserved envs, invalid envs configured: [PET_NNODES]`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("reserved env: got %v\nwant %s", err, want)
	}
	err = create(t, trainJob(ns, "missing").RuntimeRef("nothere").Obj())
	want = `spec.runtimeRef: Invalid value: {"name":"nothere","apiGroup":"trainer.kubeflow.org","kind":"TrainingRuntime"}: trainingruntimes.trainer.kubeflow.org "nothere" not found: specified trainingRuntime must be created before the TrainJob is created`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("missing runtime: got %v\nwant %s", err, want)
	}

	badRuntime := namespacedRuntime(ns, "two-replicas", nodeJob("x").Replicas(2))
	err = create(t, badRuntime.Obj())
	want = `spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("runtime replicas: got %v\nwant %s", err, want)
	}
	// The runtime opts out of the webhook's rules with its label.
	optOut := badRuntime.Label("trainer.kubeflow.org/webhook-validation", "disabled")
	if err := create(t, optOut.Obj()); err != nil {
		t.Errorf("webhook-validation: disabled: %v", err)
	}
}

// TestWebhookWarnings: a deprecated ClusterTrainingRuntime draws Kubeflow's
// warning on create, and so does a TrainJob that references it.
func TestWebhookWarnings(t *testing.T) {
	need(t)
	ns := namespace(t, "warnings")
	n := warnings.len()
	mustCreate(t, wrapper.ClusterTrainingRuntime("old-torch").Framework("torch").Label("trainer.kubeflow.org/support", "deprecated").
		NumNodes(1).MLPolicy("torch", nil).ReplicatedJob(nodeJob("x")).Obj())
	mustCreate(t, wrapper.TrainJob("uses-old").Namespace(ns).RuntimeRef("old-torch").Obj())
	got := strings.Join(warnings.since(n), "\n")
	for _, want := range []string{
		`ClusterTrainingRuntime "old-torch" is deprecated and will be removed in a future release of Kubeflow Trainer.`,
		`Referenced ClusterTrainingRuntime "old-torch" is deprecated and will be removed in a future release of Kubeflow Trainer.`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
}

// TestControllerAppliesAndFollowsJobSet: a TrainJob gets its JobSet and
// runtime snapshot; the mutating webhook stamped its runtime patch; a later
// runtime edit does not reach it (the snapshot); its status follows the
// JobSet.
func TestControllerAppliesAndFollowsJobSet(t *testing.T) {
	need(t)
	ns := namespace(t, "applies")
	mustCreate(t, torchRuntime(ns, "torch:1").Obj())
	mustCreate(t, trainJob(ns, "train").Args("train.py").
		RuntimePatch("acme.io/labels", map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "ml"}}}}).Obj())

	tj, err := get(t, "trainer.kubeflow.org/v1alpha1", "TrainJob", ns, "train")
	if err != nil {
		t.Fatal(err)
	}
	patches, _, _ := unstructured.NestedSlice(tj.Object, "spec", "runtimePatches")
	if len(patches) != 1 || patches[0].(map[string]any)["time"] == nil {
		t.Errorf("the mutating webhook did not stamp the runtime patch: %v", patches)
	}

	var js *unstructured.Unstructured
	eventually(t, "the JobSet", func() error {
		js, err = get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, "train")
		return err
	})
	if js.GetLabels()["team"] != "ml" {
		t.Errorf("JobSet labels %v lack the patch's team=ml", js.GetLabels())
	}
	if owner := metav1.GetControllerOf(js); owner == nil || owner.UID != tj.GetUID() {
		t.Errorf("JobSet controller owner %v, want the TrainJob %s", owner, tj.GetUID())
	}
	env := nodeEnv(t, js)
	if env["PET_NNODES"] != "2" || env["PET_MASTER_ADDR"] != "train-node-0-0.train" {
		t.Errorf("node env %v", env)
	}
	if _, err := get(t, "v1", "ConfigMap", ns, "train-runtime-snapshot"); err != nil {
		t.Errorf("runtime snapshot: %v", err)
	}
	managers := map[string]bool{}
	for _, f := range js.GetManagedFields() {
		managers[f.Manager] = true
	}
	if !managers["trainer"] {
		t.Errorf("JobSet field managers %v, want trainer", managers)
	}

	// A runtime edit leaves the TrainJob's objects alone: a JobSet made
	// again comes from the snapshot.
	rt, _ := get(t, "trainer.kubeflow.org/v1alpha1", "TrainingRuntime", ns, "torch")
	jobs, _, _ := unstructured.NestedSlice(rt.Object, "spec", "template", "spec", "replicatedJobs")
	c := jobs[0].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["image"] = "torch:2"
	_ = unstructured.SetNestedSlice(rt.Object, jobs, "spec", "template", "spec", "replicatedJobs")
	if err := k8sClient.Update(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Delete(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the JobSet made again from the snapshot", func() error {
		again, err := get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, "train")
		if err != nil {
			return err
		}
		if again.GetUID() == js.GetUID() {
			return fmt.Errorf("still the old JobSet")
		}
		if img := nodeImage(again); img != "torch:1" {
			return fmt.Errorf("image %q, want the snapshot's torch:1", img)
		}
		return nil
	})

	// The snapshot was made once, by the first reconcile: the later ones
	// (the JobSet made again among them) found it and left it alone.
	if n := applied.applyCount(ns, "ConfigMap", "train-runtime-snapshot"); n != 1 {
		t.Errorf("the runtime snapshot was applied %d times, want once", n)
	}

	// A new TrainJob gets the edited runtime.
	mustCreate(t, trainJob(ns, "train-later").Obj())
	eventually(t, "the later TrainJob's JobSet", func() error {
		js, err := get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, "train-later")
		if err != nil {
			return err
		}
		if img := nodeImage(js); img != "torch:2" {
			return fmt.Errorf("image %q, want the edited runtime's torch:2", img)
		}
		return nil
	})
	// Its JobSet has no status yet, so neither has it: the controller has
	// written none (reconciles that change nothing write nothing).
	if n := applied.statusWrites(ns, "train-later"); n != 0 {
		t.Errorf("%d status writes for a TrainJob whose status has nothing to say", n)
	}

	// The JobSet completes: the TrainJob's status follows.
	js, _ = get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, "train")
	js.Object["status"] = map[string]any{
		"conditions":           []any{map[string]any{"type": "Completed", "status": "True", "reason": "AllJobsCompleted", "message": "jobset completed successfully", "lastTransitionTime": "2026-11-23T10:00:00Z"}},
		"replicatedJobsStatus": []any{map[string]any{"name": "node", "ready": int64(0), "succeeded": int64(1), "failed": int64(0), "active": int64(0), "suspended": int64(0)}},
	}
	if err := k8sClient.Status().Update(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the TrainJob Complete", hasCondition(t, ns, "train", map[string]any{
		"type": "Complete", "status": "True", "reason": "AllJobsCompleted", "lastTransitionTime": "2026-11-23T10:00:00Z"}))
	eventually(t, "jobsStatus", func() error {
		tj, err := get(t, "trainer.kubeflow.org/v1alpha1", "TrainJob", ns, "train")
		if err != nil {
			return err
		}
		jobs, _, _ := unstructured.NestedSlice(tj.Object, "status", "jobsStatus")
		if len(jobs) != 1 || jobs[0].(map[string]any)["succeeded"] != int64(1) {
			return fmt.Errorf("jobsStatus %v", jobs)
		}
		return nil
	})
}

// TestControllerLeavesOthersAlone: a TrainJob that multikueue manages gets
// nothing applied; one whose runtime kind is unsupported (let in where the
// webhooks do not look) fails with Kubeflow's reason.
func TestControllerLeavesOthersAlone(t *testing.T) {
	need(t)
	ns := namespace(t, controllerNamespace)
	mustCreate(t, torchRuntime(ns, "torch:1").Obj())
	mustCreate(t, trainJob(ns, "elsewhere").ManagedBy("kueue.x-k8s.io/multikueue").Obj())
	mustCreate(t, trainJob(ns, "unsupported").RuntimeRefKind("NoSuchRuntime").Obj())
	mustCreate(t, trainJob(ns, "ours").Obj())

	eventually(t, "the Failed condition", hasCondition(t, ns, "unsupported", map[string]any{
		"type": "Failed", "reason": "TrainingRuntimeNotSupported", "message": "unsupported runtime: NoSuchRuntime.trainer.kubeflow.org"}))
	// Once the controller has made the last TrainJob's JobSet, it has seen
	// the multikueue one too.
	eventually(t, "the JobSet of ours", func() error {
		_, err := get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, "ours")
		return err
	})
	for _, kind := range []string{"JobSet", "ConfigMap"} {
		name := "elsewhere"
		apiVersion := "jobset.x-k8s.io/v1alpha2"
		if kind == "ConfigMap" {
			name, apiVersion = "elsewhere-runtime-snapshot", "v1"
		}
		if _, err := get(t, apiVersion, kind, ns, name); !apierrors.IsNotFound(err) {
			t.Errorf("%s %s for a multikueue TrainJob: %v, want none", kind, name, err)
		}
	}
}

func nodePodSpec(js *unstructured.Unstructured) map[string]any {
	jobs, _, _ := unstructured.NestedSlice(js.Object, "spec", "replicatedJobs")
	if len(jobs) == 0 {
		return nil
	}
	spec, _, _ := unstructured.NestedMap(jobs[0].(map[string]any), "template", "spec", "template", "spec")
	return spec
}

func nodeImage(js *unstructured.Unstructured) string {
	cs, _ := nodePodSpec(js)["containers"].([]any)
	if len(cs) == 0 {
		return ""
	}
	img, _ := cs[0].(map[string]any)["image"].(string)
	return img
}

func nodeEnv(t *testing.T, js *unstructured.Unstructured) map[string]string {
	t.Helper()
	env := map[string]string{}
	cs, _ := nodePodSpec(js)["containers"].([]any)
	for _, c := range cs {
		list, _ := c.(map[string]any)["env"].([]any)
		for _, e := range list {
			em := e.(map[string]any)
			v, _ := em["value"].(string)
			env[em["name"].(string)] = v
		}
	}
	return env
}

// TestDeployManifests: the API server takes every object of deploy/ (a
// server-side dry run), the shipped runtimes through the webhooks.
func TestDeployManifests(t *testing.T) {
	need(t)
	root := filepath.Join("..", "..", "..", "deploy")
	files := []string{filepath.Join(root, "manager.yaml")}
	rts, _ := filepath.Glob(filepath.Join(root, "runtimes", "*-*.yaml"))
	if len(rts) == 0 {
		t.Fatal("no runtimes in deploy/runtimes")
	}
	if err := apply(k8sClient, []client.ApplyOption{client.DryRunAll}, append(files, rts...)...); err != nil {
		t.Error(err)
	}
	// The suite installed the same webhook configurations (pointing at its
	// local server): these go in beside them.
	if err := applyRenamed(k8sClient, []client.ApplyOption{client.DryRunAll}, "-deploy", filepath.Join(root, "webhooks.yaml")); err != nil {
		t.Error(err)
	}
}

// TestControllerDeadline: past activeDeadlineSeconds the TrainJob fails with
// DeadlineExceeded and its JobSet is deleted.
func TestControllerDeadline(t *testing.T) {
	need(t)
	ns := namespace(t, "deadline")
	mustCreate(t, torchRuntime(ns, "torch:1").Obj())
	mustCreate(t, trainJob(ns, "short").ActiveDeadlineSeconds(3).Obj())
	eventually(t, "the JobSet", func() error {
		_, err := get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, "short")
		return err
	})
	eventually(t, "DeadlineExceeded", hasCondition(t, ns, "short", map[string]any{
		"type": "Failed", "status": "True", "reason": "DeadlineExceeded", "message": "TrainJob exceeded its active deadline"}))
	eventually(t, "the JobSet deleted", func() error {
		js, err := get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, "short")
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil && js.GetDeletionTimestamp() != nil {
			return nil // envtest runs no garbage collector to finish it
		}
		return fmt.Errorf("still there: %v", err)
	})
}

// TestControllerSuspendResume: suspending a TrainJob suspends its JobSet and
// sets Suspended; resuming sets Suspended=False, reason Resumed, and
// resumes the JobSet.
func TestControllerSuspendResume(t *testing.T) {
	need(t)
	ctx := context.Background()
	ns := namespace(t, "suspend")
	mustCreate(t, torchRuntime(ns, "torch:1").Obj())
	mustCreate(t, trainJob(ns, "pausing").Suspend(true).Obj())
	condition := func(status, reason string) func() error {
		return hasCondition(t, ns, "pausing", map[string]any{"type": "Suspended", "status": status, "reason": reason})
	}
	jobSetSuspended := func(want bool) func() error {
		return func() error {
			js, err := get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, "pausing")
			if err != nil {
				return err
			}
			if got, _, _ := unstructured.NestedBool(js.Object, "spec", "suspend"); got != want {
				return fmt.Errorf("JobSet suspend %v, want %v", got, want)
			}
			return nil
		}
	}
	eventually(t, "Suspended", condition("True", "Suspended"))
	eventually(t, "the JobSet suspended", jobSetSuspended(true))

	tj, _ := get(t, "trainer.kubeflow.org/v1alpha1", "TrainJob", ns, "pausing")
	_ = unstructured.SetNestedField(tj.Object, false, "spec", "suspend")
	if err := k8sClient.Update(ctx, tj); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Resumed", condition("False", "Resumed"))
	eventually(t, "the JobSet resumed", jobSetSuspended(false))
}

// TestControllerConcurrency: the TrainJob controller reconciles
// controller.DefaultConcurrency TrainJobs at once (the suite sets none).
func TestControllerConcurrency(t *testing.T) {
	need(t)
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "controller_runtime_max_concurrent_reconciles" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "trainjob" {
					if got := m.GetGauge().GetValue(); got != controller.DefaultConcurrency {
						t.Errorf("the trainjob controller reconciles %v at once, want %d", got, controller.DefaultConcurrency)
					}
					return
				}
			}
		}
	}
	t.Fatal("no controller_runtime_max_concurrent_reconciles gauge for the trainjob controller")
}

// TestWebhookReadsRuntimesFromCache: the TrainJob webhook reads the
// runtime from its cache, not the API server, while the CRDs are the ones
// it started with (TestPolicyReload changes them later: this runs first);
// a TrainJob created a moment after its runtime is admitted all the same,
// since what the cache lacks is read from the API server.
func TestWebhookReadsRuntimesFromCache(t *testing.T) {
	need(t)
	if gauge(t, "cuetrainer_controller_cache_reads") != 1 {
		t.Fatal("the CRDs changed before this test: the webhooks read from the API server")
	}
	ns := namespace(t, "cached")
	mustCreate(t, torchRuntime(ns, "torch:1").Obj())
	mustCreate(t, trainJob(ns, "right-after").Obj())
	n := 0
	eventuallyWithin(t, 30*time.Second, "a TrainJob admitted without a read of its runtime from the API server", func() error {
		n++
		before := runtimeGets.Load()
		probe := trainJob(ns, fmt.Sprintf("probe-%d", n)).Obj()
		if err := k8sClient.Create(context.Background(), probe, client.DryRunAll); err != nil {
			return err
		}
		if got := runtimeGets.Load() - before; got != 0 {
			return fmt.Errorf("%d reads of the runtime from the API server", got)
		}
		return nil
	})
	// The engine in force counts the reviews it made for these admissions
	// (cuetrainer_engine_evaluations_total, read from it when scraped).
	if got := evaluations(t, "review"); got < 1 {
		t.Errorf("cuetrainer_engine_evaluations_total{what=\"review\"} = %v after admissions", got)
	}
}
