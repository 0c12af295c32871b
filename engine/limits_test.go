package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
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
// maxEvaluatedItems, an object past maxEvaluatedListItems list items or
// maxEvaluatedEntries entries in all; objects of any real size are
// evaluated as before.
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
		"spec.trainer.args: Too many: 200000: must have at most 128 items", k8s.CELNotChecked)
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
		"spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].args: Too many: 6000: cuetrainer evaluates at most 1000 list items where the schema sets no bound")
	check("a runtime's 990 args", rt(990))

	// Every list item costs the CUE its item schema. 1,000 list items in
	// all, however spread.
	check("a runtime of 998 volumes: 1,000 list items", volumesRuntime(998, 1))
	check("a runtime of 4 jobs of 249 volumes: 1,004 list items", volumesRuntime(249, 4),
		"the object has 1004 list items: cuetrainer evaluates objects of at most 1000")
	check("a runtime of 1,001 volumes in a job", volumesRuntime(1001, 1),
		"spec.template.spec.replicatedJobs[0].template.spec.template.spec.volumes: Too many: 1001: cuetrainer evaluates at most 1000 list items where the schema sets no bound")

	// Map entries are cheaper: a bound of their own.
	labels := make(map[string]any, 4900)
	for i := range 4900 {
		labels[fmt.Sprintf("k%d", i)] = "v"
	}
	check("4,900 labels", Document{File: "tj.yaml", Line: 1, Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
		"metadata": map[string]any{"name": "big", "namespace": "team", "labels": labels},
		"spec":     map[string]any{"runtimeRef": map[string]any{"name": "torch-distributed"}},
	}})
	for i := 4900; i < 5001; i++ {
		labels[fmt.Sprintf("k%d", i)] = "v"
	}
	check("5,001 labels", Document{File: "tj.yaml", Line: 1, Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
		"metadata": map[string]any{"name": "big", "namespace": "team", "labels": labels},
		"spec":     map[string]any{"runtimeRef": map[string]any{"name": "torch-distributed"}},
	}}, "metadata.labels: Too many: 5001: cuetrainer evaluates at most 5000 map entries where the schema sets no bound")
}

// volumesRuntime is a ClusterTrainingRuntime of jobs replicatedJobs
// (the first its trainer step) whose pods each have a container and n
// volumes (a name each): the list item that costs the CUE the most found.
func volumesRuntime(n, jobs int) Document {
	var replicated []any
	for j := range jobs {
		volumes := make([]any, n)
		for i := range volumes {
			volumes[i] = map[string]any{"name": fmt.Sprintf("v%d", i)}
		}
		job := map[string]any{"name": fmt.Sprintf("job%d", j), "template": map[string]any{
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "node", "image": "x"}},
				"volumes":    volumes,
			}}}}}
		if j == 0 {
			job["name"] = "node"
			job["template"].(map[string]any)["metadata"] = map[string]any{"labels": map[string]any{"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}}
		}
		replicated = append(replicated, job)
	}
	return Document{File: "rt.yaml", Line: 1, Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
		"metadata": map[string]any{"name": "volumes", "labels": map[string]any{"trainer.kubeflow.org/framework": "torch"}},
		"spec": map[string]any{"mlPolicy": map[string]any{"torch": map[string]any{}}, "template": map[string]any{"spec": map[string]any{
			"replicatedJobs": replicated}}},
	}}
}

// BenchmarkAdmitWorstWithinLimits admits the costliest object found that
// the limits let the CUE see: a runtime whose pod has 998 volumes (each
// evaluated as core/v1's Volume, its 30 sources and their defaults), 1,000
// list items in all. 4,900 empty volumes took 2.6-3.4 s before
// maxEvaluatedListItems. Nothing repeats: the engine keeps no memo.
func BenchmarkAdmitWorstWithinLimits(b *testing.B) {
	e, err := New(Options{NoMemo: true})
	if err != nil {
		b.Fatal(err)
	}
	doc := volumesRuntime(998, 1)
	b.ReportAllocs()
	for b.Loop() {
		if r := e.NewSession(SessionOptions{}).Admit(doc); r.Rejected() {
			b.Fatal(r.Errors)
		}
	}
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

// TestListTypes: the API server's list-type checks reach every list the
// CRD marks, not only those the CUE checks: a runtime's replicatedJobs by
// name, a pod's volumes, a container's ports by port and the protocol
// its default gives; a duplicate the CUE finds (a TrainJob's env) is said
// once; distinct items are fine.
func TestListTypes(t *testing.T) {
	e := testEngine(t)
	runtime := func(jobs, volumes, ports string) string {
		return `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: rt}
spec:
  template:
    spec:
      replicatedJobs:
      - name: ` + jobs + `
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                volumes: [{name: data, emptyDir: {}}, {name: ` + volumes + `, emptyDir: {}}]
                containers:
                - name: node
                  image: pytorch
                  ports: [{containerPort: 29500}, {containerPort: ` + ports + `, protocol: TCP}]
      - name: node
        template:
          spec:
            template:
              spec:
                containers: [{name: node, image: pytorch}]
`
	}
	for _, tc := range []struct {
		name, jobs, volumes, ports string
		want                       []string
	}{
		{"distinct", "launcher", "cache", "8080", nil},
		{"jobs", "node", "cache", "8080", []string{`spec.template.spec.replicatedJobs[1]: Duplicate value: {"name":"node"}`}},
		{"volumes", "launcher", "data", "8080", []string{`spec.template.spec.replicatedJobs[0].template.spec.template.spec.volumes[1]: Duplicate value: {"name":"data"}`}},
		{"ports", "launcher", "cache", "29500", []string{`spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].ports[1]: Duplicate value: {"containerPort":29500,"protocol":"TCP"}`}},
	} {
		r := e.NewSession(SessionOptions{NoBuiltinRuntimes: true}).Admit(readOne(t, runtime(tc.jobs, tc.volumes, tc.ports)))
		var dups []string
		for _, f := range r.Errors {
			if f.Type == "Duplicate value" {
				dups = append(dups, f.String())
			}
		}
		if strings.Join(dups, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: duplicates %q, want %q", tc.name, dups, tc.want)
		}
	}
	job := readOne(t, `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: job, namespace: team}
spec: {runtimeRef: {name: torch-distributed}, trainer: {env: [{name: A, value: "1"}, {name: A, value: "2"}]}}
`)
	r := e.NewSession(SessionOptions{}).Admit(job)
	if got := strings.Count(strings.Join(findingStrings(r.Errors), "\n"), "Duplicate value"); got != 1 {
		t.Errorf("a TrainJob's duplicate env: said %d times, want once: %v", got, findingStrings(r.Errors))
	}
}
