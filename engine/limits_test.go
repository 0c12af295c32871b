package engine

import (
	"fmt"
	"strings"
	"testing"
)

// bigArgsTrainJob is a TrainJob with n args.
func bigArgsTrainJob(n int) Document {
	args := make([]any, n)
	for i := range args {
		args[i] = fmt.Sprintf("a%d", i)
	}
	return Document{File: "big.yaml", Line: 1, Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
		"metadata": map[string]any{"name": "big", "namespace": "team"},
		"spec":     map[string]any{"runtimeRef": map[string]any{"name": "torch-distributed"}, "trainer": map[string]any{"args": args}},
	}}
}

// TestSizeLimits: an object too big for the CUE is refused before the CUE
// sees it: a list past its CRD's maxItems with the API server's error (and
// the CEL rules unchecked), a list or map no schema bounds past
// maxEvaluatedItems, an object past maxEvaluatedEntries in all; objects
// of any real size are evaluated as before.
func TestSizeLimits(t *testing.T) {
	e := testEngine(t)
	check := func(name string, doc Document, want ...string) {
		t.Helper()
		r := e.NewSession(SessionOptions{}).Admit(doc)
		got := strings.Join(findingStrings(r.Errors), "\n")
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: findings\n%s\nlack %q", name, got, w)
			}
		}
		if len(want) == 0 && got != "" {
			t.Errorf("%s: %s", name, got)
		}
	}
	check("200,000 args", bigArgsTrainJob(200000),
		"spec.trainer.args: Too many: 200000: must have at most 128 items", celNotChecked)
	check("128 args", bigArgsTrainJob(128))
	// The mutating webhook, which sees it before the API server's schema
	// check, evaluates only the mutators, which do not read args: it
	// answers at once, with no changes.
	if out, err := e.NewSession(SessionOptions{}).Mutate(bigArgsTrainJob(200000), Request{Operation: "CREATE"}); out != nil || err != nil {
		t.Errorf("mutating 200,000 args: %v, %v", out != nil, err)
	}

	// A runtime's container args have no maxItems.
	rt := func(n int) Document {
		args := make([]any, n)
		for i := range args {
			args[i] = "a"
		}
		return Document{File: "rt.yaml", Line: 1, Object: map[string]any{
			"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
			"metadata": map[string]any{"name": "big", "labels": map[string]any{"trainer.kubeflow.org/framework": "torch"}},
			"spec": map[string]any{"mlPolicy": map[string]any{"torch": map[string]any{}}, "template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{
				map[string]any{"name": "node", "template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
					"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
						map[string]any{"name": "node", "image": "x", "args": args}}}}}}}}}}},
		}}
	}
	check("a runtime's 6,000 args", rt(6000),
		"spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].args: Too many: 6000: cuetrainer evaluates at most 5000 list items where the schema sets no bound")
	check("a runtime's 4,990 args", rt(4990),
		"the object has 50", "list items and map entries: cuetrainer evaluates objects of at most 5000")
	check("a runtime's 1,000 args", rt(1000))
}

// BenchmarkAdmitHugeList admits a TrainJob of 200,000 args (1.8 MB as
// YAML): refused on its size, before the CUE, where it took minutes.
func BenchmarkAdmitHugeList(b *testing.B) {
	e := testEngine(b)
	doc := bigArgsTrainJob(200000)
	b.ReportAllocs()
	for b.Loop() {
		if r := e.NewSession(SessionOptions{}).Admit(doc); !r.Rejected() {
			b.Fatal("admitted")
		}
	}
}
