package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine"
)

// corpusByKind writes every document of the corpus's inputs into one file
// per kind of ours, and returns the files and the document count.
func corpusByKind(b *testing.B) (map[string]string, int) {
	b.Helper()
	inputs, _ := filepath.Glob(filepath.Join(corpus, "cases", "*", "input.yaml"))
	dir := b.TempDir()
	byKind := map[string][]string{}
	n := 0
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			b.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			for _, d := range engine.ReadYAML(in, []byte(doc)) {
				if d.Err != nil || d.APIVersion() != "trainer.kubeflow.org/v1alpha1" {
					continue
				}
				byKind[d.Kind()] = append(byKind[d.Kind()], doc)
				n++
			}
		}
	}
	files := map[string]string{}
	for kind, docs := range byKind {
		f := filepath.Join(dir, kind+".yaml")
		if err := os.WriteFile(f, []byte(strings.Join(docs, "\n---\n")), 0o644); err != nil {
			b.Fatal(err)
		}
		files[kind] = f
	}
	return files, n
}

// BenchmarkVetEndToEnd runs `cuetrainer vet` in-process over the corpus's
// runtimes and TrainJobs, engine load included, as one CLI call does.
func BenchmarkVetEndToEnd(b *testing.B) {
	files, n := corpusByKind(b)
	args := []string{"vet", "--no-builtin-runtimes", files["ClusterTrainingRuntime"], files["TrainingRuntime"], files["TrainJob"]}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run(args, strings.NewReader(""), io.Discard, io.Discard)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkCueVetCLI checks the same documents with the `cue vet` command
// and our schemas, one call per kind (`cue vet -c=false ./schemas -d
// '#Kind' file`): the schemas only, none of the admission rules. It needs
// the cue command at $CUE_BIN (make bench installs it).
func BenchmarkCueVetCLI(b *testing.B) {
	cue := os.Getenv("CUE_BIN")
	if cue == "" {
		b.Skip("CUE_BIN is not set: make bench installs the cue command and sets it")
	}
	files, n := corpusByKind(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for kind, f := range files {
			cmd := exec.Command(cue, "vet", "-c=false", "./schemas", "-d", "#"+kind, f)
			cmd.Dir = "../.."
			if out, err := cmd.CombinedOutput(); err != nil && !strings.Contains(string(out), "conflicting values") {
				b.Fatalf("cue vet %s: %v\n%s", kind, err, out)
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "docs/s")
}
