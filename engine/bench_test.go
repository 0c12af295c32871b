package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
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
		docs = append(docs, ReadYAML(f, data)...)
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
	e := testEngine(b)
	s := e.NewSession(SessionOptions{})
	docs := make([]Document, 64)
	for i := range docs {
		docs[i] = ReadYAML("j.yaml", []byte(fmt.Sprintf(torchJob, fmt.Sprintf("job-%d", i))))[0]
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
	e := testEngine(b)
	s := e.NewSession(SessionOptions{})
	docs := make([]Document, 64)
	for i := range docs {
		docs[i] = ReadYAML("j.yaml", fmt.Appendf(nil, "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job-%d, namespace: team-a}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: 2\n    env: [{name: RUN, value: \"1\"}]\n", i))[0]
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
	e := testEngine(b)
	doc := e.builtin[0]
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
}
