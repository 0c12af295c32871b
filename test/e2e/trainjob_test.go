package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// TestTorchTrainJobRunsToComplete: a TrainJob of the shipped
// torch-distributed runtime gets its JobSet from cuetrainer, the JobSet
// controller makes its Jobs, the Job controller its pods, the scheduler
// places them on the kwok node, kwok runs them to Succeeded, and the
// TrainJob ends Complete with its jobs' status.
func TestTorchTrainJobRunsToComplete(t *testing.T) {
	need(t)
	ctx := context.Background()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "e2e-torch"}}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	tj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: mnist, namespace: e2e-torch}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    args: [train.py, --epochs, "1"]
    resourcesPerNode: {requests: {cpu: "1", memory: 1Gi}}
`), &tj.Object); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Create(ctx, tj); err != nil {
		t.Fatal(err)
	}

	got := &unstructured.Unstructured{}
	got.SetAPIVersion("trainer.kubeflow.org/v1alpha1")
	got.SetKind("TrainJob")
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: "e2e-torch", Name: "mnist"}, got); err != nil {
			last = err.Error()
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		last = fmt.Sprint(conds)
		for _, c := range conds {
			m := c.(map[string]any)
			if m["type"] == "Complete" && m["status"] == "True" {
				return true, nil
			}
			if m["type"] == "Failed" && m["status"] == "True" {
				return false, fmt.Errorf("the TrainJob failed: %v", m)
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the TrainJob did not complete: %v; last conditions: %s", err, last)
	}

	// Its two nodes ran as pods on the kwok node, and succeeded.
	pods := &unstructured.UnstructuredList{}
	pods.SetAPIVersion("v1")
	pods.SetKind("PodList")
	if err := k8sClient.List(ctx, pods, client.InNamespace("e2e-torch"), client.MatchingLabels{"jobset.sigs.k8s.io/jobset-name": "mnist"}); err != nil {
		t.Fatal(err)
	}
	succeeded := 0
	for _, p := range pods.Items {
		node, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName")
		phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
		env, _, _ := unstructured.NestedSlice(p.Object, "spec", "containers")
		if node != "kwok-node-0" {
			t.Errorf("pod %s on node %q", p.GetName(), node)
		}
		if phase == "Succeeded" {
			succeeded++
		}
		if len(env) != 1 {
			t.Errorf("pod %s has %d containers", p.GetName(), len(env))
		}
	}
	if succeeded != 2 {
		t.Errorf("%d of %d pods succeeded, want 2", succeeded, len(pods.Items))
	}
	jobs, _, _ := unstructured.NestedSlice(got.Object, "status", "jobsStatus")
	if len(jobs) != 1 || jobs[0].(map[string]any)["name"] != "node" || fmt.Sprint(jobs[0].(map[string]any)["succeeded"]) != "1" {
		t.Errorf("jobsStatus %v, want the node job succeeded", jobs)
	}
}
