package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// BenchmarkVet measures admission throughput over a mix of TrainingRuntimes,
// ClusterTrainingRuntimes and TrainJobs, in one session as `vet` runs it.
func BenchmarkVet(b *testing.B) {
	e := testEngine(b)
	files, _ := filepath.Glob("../test/conformance/testdata/kubeflow/cases/*/input.yaml")
	var docs []Document
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, k8s.ReadYAML(f, data)...)
	}
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		s := e.NewSession(SessionOptions{})
		for _, d := range docs {
			s.Admit(d)
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkAdmitTrainJob measures one TrainJob against a shipped runtime,
// which rejects it (PET_NNODES is reserved for torch): the error path.
func BenchmarkAdmitTrainJob(b *testing.B) {
	e := missEngine(b) // a miss every time
	s := e.NewSession(SessionOptions{})
	docs := make([]Document, 64)
	for i := range docs {
		docs[i] = k8s.ReadYAML("j.yaml", []byte(fmt.Sprintf(torchJob, fmt.Sprintf("job-%d", i))))[0]
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Admit(docs[i%len(docs)])
		delete(s.seen, identityKey("trainer.kubeflow.org/v1alpha1", "TrainJob", "team-a", docs[i%len(docs)].Name()))
	}
}

// BenchmarkAdmitValidTrainJob measures one TrainJob that is admitted (the
// one BenchmarkAdmitTrainJob measures is rejected for a reserved env), with
// one env entry: the success path the webhooks and vet see most.
func BenchmarkAdmitValidTrainJob(b *testing.B) {
	benchmarkValidTrainJob(b, Request{})
}

func benchmarkValidTrainJob(b *testing.B, req Request) {
	e := missEngine(b) // a miss every time
	s := e.NewSession(SessionOptions{})
	docs := make([]Document, 64)
	for i := range docs {
		docs[i] = k8s.ReadYAML("j.yaml", fmt.Appendf(nil, "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job-%d, namespace: team-a}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: 2\n    env: [{name: RUN, value: \"1\"}]\n", i))[0]
		if req.SchemaChecked {
			// As the API server sends it, with its CRD's defaults.
			docs[i] = serverDefaulted(b, docs[i])
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := docs[i%len(docs)]
		if r := s.AdmitRequest(context.Background(), d, req); r.Rejected() {
			b.Fatalf("%s: %v", r.Identity(), r.Errors)
		}
		delete(s.seen, identityKey("trainer.kubeflow.org/v1alpha1", "TrainJob", "team-a", d.Name()))
	}
}

// BenchmarkAdmitRuntime measures one ClusterTrainingRuntime.
func BenchmarkAdmitRuntime(b *testing.B) {
	benchmarkRuntime(b, Request{})
}

func benchmarkRuntime(b *testing.B, req Request) {
	e := missEngine(b) // a miss every time
	doc := e.builtin[0]
	if req.SchemaChecked {
		doc = serverDefaulted(b, doc)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true})
		if r := s.AdmitRequest(context.Background(), doc, req); r.Rejected() {
			b.Fatalf("%s: %v", r.Identity(), r.Errors)
		}
	}
}

// BenchmarkAdmitVerdict measures what a validating webhook asks for, the
// findings without the defaulted object (Request.VerdictOnly), for the
// TrainJob of BenchmarkAdmitValidTrainJob and the runtime of
// BenchmarkAdmitRuntime.
func BenchmarkAdmitVerdict(b *testing.B) {
	b.Run("TrainJob", func(b *testing.B) { benchmarkValidTrainJob(b, Request{VerdictOnly: true}) })
	b.Run("Runtime", func(b *testing.B) { benchmarkRuntime(b, Request{VerdictOnly: true}) })
	// As a webhook asks, for objects the API server has checked against
	// the CRD (Request.SchemaChecked).
	b.Run("TrainJob/SchemaChecked", func(b *testing.B) { benchmarkValidTrainJob(b, Request{VerdictOnly: true, SchemaChecked: true}) })
	b.Run("Runtime/SchemaChecked", func(b *testing.B) { benchmarkRuntime(b, Request{VerdictOnly: true, SchemaChecked: true}) })
}

// BenchmarkReconcile measures the controller's evaluation of one reconcile:
// a TrainJob read from the cluster admitted as an update (schema-checked,
// since the API server checked it when it was written) against its runtime
// in the cluster, then rendered with the controller's parts. Each of 64
// TrainJobs is reconciled in turn, as in the benchmark's burst: first a
// version of it not seen before, then again once its objects exist.
func BenchmarkReconcile(b *testing.B) {
	e := testEngine(b)
	var runtime map[string]any
	for _, d := range e.builtin {
		if d.Name() == "torch-distributed" {
			// As the API server holds it, with its CRD's defaults.
			runtime = value.DeepCopy(serverDefaulted(b, d).Object).(map[string]any)
		}
	}
	if runtime == nil {
		b.Fatal("no torch-distributed runtime")
	}
	meta := runtime["metadata"].(map[string]any)
	meta["uid"], meta["resourceVersion"] = "rt-uid", "7"
	cl := &mapCluster{objects: map[string]map[string]any{"trainer.kubeflow.org/ClusterTrainingRuntime//torch-distributed": runtime}}
	docs := make([]Document, 64)
	for i := range docs {
		docs[i] = serverDefaulted(b, k8s.ReadYAML("j.yaml", fmt.Appendf(nil, "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job-%d, namespace: team-a, uid: uid-%d, resourceVersion: '1'}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: 2\n", i, i))[0])
		// As the API server stores it: who set which field.
		docs[i].Object["metadata"].(map[string]any)["managedFields"] = []any{
			map[string]any{"manager": "kubectl", "operation": "Apply", "apiVersion": "trainer.kubeflow.org/v1alpha1", "time": "2026-11-23T10:00:00Z", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:spec": map[string]any{"f:runtimeRef": map[string]any{"f:name": map[string]any{}}, "f:trainer": map[string]any{"f:numNodes": map[string]any{}}}}},
			map[string]any{"manager": "cuetrainer", "operation": "Update", "subresource": "status", "apiVersion": "trainer.kubeflow.org/v1alpha1", "time": "2026-11-23T10:00:01Z", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:status": map[string]any{".": map[string]any{}, "f:conditions": map[string]any{".": map[string]any{}, `k:{"type":"Created"}`: map[string]any{
					".": map[string]any{}, "f:lastTransitionTime": map[string]any{}, "f:message": map[string]any{}, "f:reason": map[string]any{}, "f:status": map[string]any{}, "f:type": map[string]any{}}}}}},
		}
	}
	reconcile := func(b *testing.B, d Document) Rendered {
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl, Controller: true})
		r := s.AdmitRequest(context.Background(), d, Request{Operation: "UPDATE", OldObject: d.Object, SchemaChecked: true})
		out := s.Render(r, RenderOptions{})
		if r.Rejected() || len(out.Errors) > 0 {
			b.Fatalf("%s: %v %v", r.Identity(), r.Errors, out.Errors)
		}
		return out
	}
	// A version of a TrainJob the engine has not reviewed (each iteration's
	// resourceVersion is new: the engine keeps the controller's reviews).
	version := func(d Document, i int) Document {
		d.Object = value.DeepCopy(d.Object).(map[string]any)
		d.Object["metadata"].(map[string]any)["resourceVersion"] = fmt.Sprint(i + 2)
		return d
	}
	b.Run("first", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if out := reconcile(b, version(docs[i%len(docs)], i)); len(out.Objects) == 0 {
				b.Fatal("nothing rendered")
			}
		}
	})
	// A later reconcile (the JobSet's events bring one): the JobSet and
	// the runtime snapshot exist, as the API server stores them, the
	// JobSet with its status and managedFields.
	for _, d := range docs {
		for _, obj := range reconcile(b, d).Objects {
			obj = value.DeepCopy(obj).(map[string]any)
			m := obj["metadata"].(map[string]any)
			m["uid"], m["resourceVersion"] = "uid-"+d.Name()+"-"+k8s.Str(obj["kind"]), "2"
			m["managedFields"] = []any{map[string]any{"manager": "cuetrainer", "operation": "Apply", "apiVersion": obj["apiVersion"], "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicatedJobs": map[string]any{`k:{"name":"node"}`: map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:replicas": map[string]any{}}}}}}}
			if obj["kind"] == "JobSet" {
				obj["status"] = map[string]any{"replicatedJobsStatus": []any{map[string]any{"name": "node", "active": int64(1), "ready": int64(1)}}}
			}
			cl.objects[k8s.GroupOf(k8s.Str(obj["apiVersion"]))+"/"+k8s.Str(obj["kind"])+"/team-a/"+k8s.Str(m["name"])] = obj
		}
	}
	// The TrainJob as its last reconcile saw it: the engine's kept review.
	b.Run("again", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			reconcile(b, docs[i%len(docs)])
		}
	})
	// The TrainJob changed since (a new resourceVersion): reviewed again.
	b.Run("again/updated", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			reconcile(b, version(docs[i%len(docs)], i+b.N))
		}
	})
}
