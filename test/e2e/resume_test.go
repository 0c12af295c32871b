package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

// TestTorchTuneResumes: a TrainJob created suspended on a TorchTune
// runtime (a JobSet with volumeClaimPolicies, which JobSet's webhook
// defaults on create and its CRD makes immutable) resumes: the
// controller's re-apply of the JobSet with suspend false is admitted by
// JobSet's webhook and CRD, and no apply on the way is refused.
func TestTorchTuneResumes(t *testing.T) {
	need(t)
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join(testenv.Root(), "deploy", "runtimes", "torchtune-llama3.2-1b.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range [][]byte{data, []byte(`apiVersion: v1
kind: Namespace
metadata: {name: e2e-tune}
`), []byte(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tune, namespace: e2e-tune}
spec:
  runtimeRef: {name: torchtune-llama3.2-1b}
  suspend: true
  trainer:
    command: [tune, run]
    args: [batch_size=2]
    resourcesPerNode: {requests: {cpu: "1", memory: 1Gi}}
`)} {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		if err := k8sClient.Create(ctx, u); err != nil && !(apierrors.IsAlreadyExists(err) && u.GetKind() == "ClusterTrainingRuntime") {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}

	jobSet := func(want bool) *unstructured.Unstructured {
		t.Helper()
		js := &unstructured.Unstructured{}
		js.SetAPIVersion("jobset.x-k8s.io/v1alpha2")
		js.SetKind("JobSet")
		var last string
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: "e2e-tune", Name: "tune"}, js); err != nil {
				last = err.Error()
				return false, nil
			}
			suspended, _, _ := unstructured.NestedBool(js.Object, "spec", "suspend")
			last = fmt.Sprintf("suspend: %v", suspended)
			return suspended == want, nil
		})
		if err != nil {
			t.Fatalf("the JobSet never had suspend %v: %v; last: %s", want, err, last)
		}
		return js
	}
	js := jobSet(true)
	// JobSet's webhook was in the loop: it defaulted the retention policy.
	policies, _, _ := unstructured.NestedSlice(js.Object, "spec", "volumeClaimPolicies")
	if len(policies) != 1 || fmt.Sprint(policies[0].(map[string]any)["retentionPolicy"]) != "map[whenDeleted:Delete]" {
		t.Fatalf("volumeClaimPolicies %v: JobSet's webhook did not default them", policies)
	}

	tj := &unstructured.Unstructured{}
	tj.SetAPIVersion("trainer.kubeflow.org/v1alpha1")
	tj.SetKind("TrainJob")
	tj.SetNamespace("e2e-tune")
	tj.SetName("tune")
	if err := k8sClient.Patch(ctx, tj, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":false}}`))); err != nil {
		t.Fatal(err)
	}
	resumed := jobSet(false)
	// What JobSet's webhook defaulted on create stays: the pods find each
	// other by DNS hostname only while network says so.
	for _, field := range []string{"network", "successPolicy", "startupPolicy", "volumeClaimPolicies"} {
		before, _, _ := unstructured.NestedFieldNoCopy(js.Object, "spec", field)
		after, _, _ := unstructured.NestedFieldNoCopy(resumed.Object, "spec", field)
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("spec.%s changed on resume: %v, then %v", field, before, after)
		}
	}

	log, err := os.ReadFile(filepath.Join(logs, "cuetrainer.log"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(log, []byte("Value is immutable")) {
		t.Errorf("an apply of the JobSet was refused as changing an immutable field:\n%s", grepLines(log, "Value is immutable"))
	}
}

// grepLines are the lines of data that hold s.
func grepLines(data []byte, s string) []byte {
	var out []byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(line, []byte(s)) {
			out = append(append(out, line...), '\n')
		}
	}
	return out
}
