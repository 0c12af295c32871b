package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestMigrationFromKubeflow walks docs/migration.md's steps that the API
// server decides, on the envtest control plane:
//   - Kubeflow Trainer's webhook configurations (validator.trainer.kubeflow.org,
//     defaulter.trainer.kubeflow.org: failurePolicy Fail, served by
//     kubeflow-system/kubeflow-trainer-controller-manager) left behind
//     once its controller is stopped refuse every TrainJob;
//   - with them deleted, cuetrainer's webhooks admit it and its controller
//     applies the JobSet with Kubeflow's field manager, trainer;
//   - a running JobSet (one Kubeflow applied, say) is left alone: the
//     TrainJob's next reconcile changes nothing in it.
//
// Kubeflow's configurations are scoped here to this test's namespace, so
// that other tests in the suite do not meet them.
func TestMigrationFromKubeflow(t *testing.T) {
	need(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "migrate", Labels: map[string]string{"migrate": "true"}}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, torchRuntime("migrate", "torch:1").Obj())

	// Kubeflow Trainer v2.3.0's webhook configurations (manifests/base/webhook),
	// its controller scaled to zero.
	service := &admissionregistrationv1.ServiceReference{Namespace: "kubeflow-system", Name: "kubeflow-trainer-controller-manager", Path: ptr.To("/validate-trainer-kubeflow-org-v1alpha1-trainjob")}
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"trainer.kubeflow.org"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"trainjobs"}},
	}}
	scope := &metav1.LabelSelector{MatchLabels: map[string]string{"migrate": "true"}}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "validator.trainer.kubeflow.org"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "validator.trainjob.trainer.kubeflow.org", ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: service},
			Rules: rules, NamespaceSelector: scope, FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
		}},
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "defaulter.trainer.kubeflow.org"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "defaulter.trainjob.trainer.kubeflow.org", ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: service},
			Rules: rules, NamespaceSelector: scope, FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
		}},
	}
	for _, o := range []client.Object{validating, mutating} {
		if err := k8sClient.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	job := trainJob("migrate", "moved").Args("train.py")
	eventually(t, "Kubeflow's stale webhooks refusing TrainJobs", func() error {
		if err := create(t, job.Obj()); err == nil {
			t.Fatal("a TrainJob was created past Kubeflow's stopped webhook")
		} else if !strings.Contains(err.Error(), "failed calling webhook") {
			return err
		}
		return nil
	})

	// Step: delete Kubeflow's webhook configurations.
	for _, o := range []client.Object{validating, mutating} {
		if err := k8sClient.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the TrainJob admitted by cuetrainer's webhooks", func() error { return create(t, job.Obj()) })
	var js *unstructured.Unstructured
	eventually(t, "the JobSet", func() error {
		var err error
		js, err = get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", "migrate", "moved")
		return err
	})
	applied := false
	for _, f := range js.GetManagedFields() {
		applied = applied || (f.Manager == "trainer" && f.Operation == metav1.ManagedFieldsOperationApply)
	}
	if !applied {
		t.Errorf("the JobSet is not applied by Kubeflow's field manager trainer: %v", js.GetManagedFields())
	}

	// A running JobSet is not applied again. Kubeflow's may differ from
	// what cuetrainer renders (an older runtime, say): here its node image
	// is another, written by another manager. Status updates show when the
	// controller has seen the JobSet (it copies the status into the
	// TrainJob's jobsStatus): once before the change, so that no apply of
	// its first reconciles is still on its way, and once after it.
	running := func(active int64) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			js, err := get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", "migrate", "moved")
			if err != nil {
				return err
			}
			js.Object["status"] = map[string]any{"replicatedJobsStatus": []any{map[string]any{
				"name": "node", "active": active, "ready": active, "succeeded": int64(0), "failed": int64(0), "suspended": int64(0)}}}
			return k8sClient.Status().Update(ctx, js)
		})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "the TrainJob's jobsStatus from the running JobSet", func() error {
			tj, err := get(t, "trainer.kubeflow.org/v1alpha1", "TrainJob", "migrate", "moved")
			if err != nil {
				return err
			}
			jobs, _, _ := unstructured.NestedSlice(tj.Object, "status", "jobsStatus")
			if len(jobs) != 1 || jobs[0].(map[string]any)["active"] != active {
				return fmt.Errorf("jobsStatus %v", jobs)
			}
			return nil
		})
	}
	running(1)
	var generation int64
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		js, err := get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", "migrate", "moved")
		if err != nil {
			return err
		}
		nodeJob := js.Object["spec"].(map[string]any)["replicatedJobs"].([]any)[0].(map[string]any)
		containers, _, _ := unstructured.NestedSlice(nodeJob, "template", "spec", "template", "spec", "containers")
		containers[0].(map[string]any)["image"] = "kubeflow-era:1"
		if err := unstructured.SetNestedSlice(nodeJob, containers, "template", "spec", "template", "spec", "containers"); err != nil {
			return err
		}
		if err := k8sClient.Update(ctx, js, client.FieldOwner("kubeflow-era")); err != nil {
			return err
		}
		generation = js.GetGeneration()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	running(2)
	js, err = get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", "migrate", "moved")
	if err != nil {
		t.Fatal(err)
	}
	if js.GetGeneration() != generation || nodeImage(js) != "kubeflow-era:1" {
		t.Errorf("the running JobSet was applied again: generation %d, then %d; node image %s", generation, js.GetGeneration(), nodeImage(js))
	}
}
