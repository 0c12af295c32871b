package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/testing/benchinput"
)

// mixedInput writes the vet benchmarks' input, 1,000 documents as an
// admin's CI would vet them (benchinput.VetMixed): 100
// ClusterTrainingRuntimes into runtimes.yaml and 900 TrainJobs into
// trainjobs.yaml. It returns the two files, runtimes first.
func mixedInput(b *testing.B) []string {
	b.Helper()
	rts, jobs, err := benchinput.VetMixed(shippedRuntimes(b), benchinput.VetSize)
	if err != nil {
		b.Fatal(err)
	}
	return writeCorpus(b, rts, jobs)
}

// BenchmarkVetMixed runs `cuetrainer vet` in-process over the 1,000 mixed
// documents, engine load included, as one CLI call does (with its
// collector target); every document must pass.
func BenchmarkVetMixed(b *testing.B) {
	files := mixedInput(b)
	args := append([]string{"vet", "--no-builtin-runtimes"}, files...)
	// The collector's target the binary sets for this command line.
	if previous := tuneGC(args); previous != -2 {
		defer debug.SetGCPercent(previous)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var stderr strings.Builder
		if code := run(args, strings.NewReader(""), io.Discard, &stderr); code != 0 {
			b.Fatalf("vet exited %d:\n%s", code, stderr.String())
		}
	}
	b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkVetMixedAfterLoad admits the same documents with an engine
// loaded once, a session per run, as vet does (AdmitAll on every CPU).
func BenchmarkVetMixedAfterLoad(b *testing.B) {
	files := mixedInput(b)
	e, err := engine.New(engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var docs []engine.Document
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, engine.ReadYAML(f, data)...)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := e.NewSession(engine.SessionOptions{NoBuiltinRuntimes: true})
		for _, r := range s.AdmitAll(b.Context(), docs, runtime.GOMAXPROCS(0)) {
			if r.Rejected() {
				b.Fatalf("%s: %v", r.Identity(), r.Errors)
			}
		}
	}
	b.ReportMetric(float64(len(docs)*b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkCueVetMixed checks the same 1,000 documents with the `cue vet`
// command and our schemas, one call per file (per kind): the schemas only,
// none of the admission rules. It needs the cue command at $CUE_BIN.
func BenchmarkCueVetMixed(b *testing.B) {
	cue := cueBin(b)
	files := mixedInput(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, f := range files {
			kind := "#ClusterTrainingRuntime"
			if strings.HasSuffix(f, "trainjobs.yaml") {
				kind = "#TrainJob"
			}
			cueVet(b, cue, kind, f)
		}
	}
	b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkCueVetPerFile runs `cue vet` once per document, on a sample of
// 50 of them (25 of each kind), as a CI job that vets file by file does.
func BenchmarkCueVetPerFile(b *testing.B) {
	cue := cueBin(b)
	files := mixedInput(b)
	dir := b.TempDir()
	type one struct{ kind, file string }
	var sample []one
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		kind := "#ClusterTrainingRuntime"
		if strings.HasSuffix(f, "trainjobs.yaml") {
			kind = "#TrainJob"
		}
		for i, doc := range strings.Split(string(data), "---\n")[:25] {
			p := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", filepath.Base(f), i))
			if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
				b.Fatal(err)
			}
			sample = append(sample, one{kind, p})
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range sample {
			cueVet(b, cue, s.kind, s.file)
		}
	}
	b.ReportMetric(float64(len(sample)*b.N)/b.Elapsed().Seconds(), "docs/s")
}

func cueBin(b *testing.B) string {
	cue := os.Getenv("CUE_BIN")
	if cue == "" {
		b.Skip("CUE_BIN is not set: make bench installs the cue command and sets it")
	}
	return cue
}

func cueVet(b *testing.B, cue, def, file string) {
	cmd := exec.Command(cue, "vet", "-c=false", "./schemas", "-d", def, file)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("cue vet %s %s: %v\n%s", def, file, err, out)
	}
}

// shippedRuntimes are the ClusterTrainingRuntimes deploy/runtimes ships.
func shippedRuntimes(b *testing.B) []map[string]any {
	b.Helper()
	runtimes, err := benchinput.ShippedRuntimes(filepath.Join("..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	return runtimes
}

// distinctInput writes the input of the distinct vet benchmarks: 1,000
// documents where nothing repeats what the rules read of another
// (benchinput.VetDistinct), 100 ClusterTrainingRuntimes into runtimes.yaml
// and 900 TrainJobs into trainjobs.yaml. vet keeps the shipped runtimes
// for them (no --no-builtin-runtimes). It returns the two files, runtimes
// first.
func distinctInput(b *testing.B) []string {
	b.Helper()
	rts, jobs, err := benchinput.VetDistinct(shippedRuntimes(b), benchinput.VetSize)
	if err != nil {
		b.Fatal(err)
	}
	return writeCorpus(b, rts, jobs)
}

// BenchmarkVetDistinct runs `cuetrainer vet` in-process over the 1,000
// distinct documents (distinctInput), engine load included: the engine vet
// loads (globals.engine) is made afresh for each run, so that nothing its
// memos keep outlives the call. Every document must pass.
func BenchmarkVetDistinct(b *testing.B) { benchmarkVetDistinct(b, engine.Options{}) }

// BenchmarkVetDistinctNoMemo is BenchmarkVetDistinct with the engine's
// memos off (engine.Options.NoMemo): the engine without them, the same
// vet otherwise.
func BenchmarkVetDistinctNoMemo(b *testing.B) { benchmarkVetDistinct(b, engine.Options{NoMemo: true}) }

func benchmarkVetDistinct(b *testing.B, opts engine.Options) {
	files := distinctInput(b)
	args := append([]string{"vet"}, files...)
	if previous := tuneGC(args); previous != -2 {
		defer debug.SetGCPercent(previous)
	}
	// vet takes the engine of its policy directories (none) from the
	// process's engines, loading it when there is none: each run loads it
	// here, with opts, as vet would, and leaves it there for the call.
	defer func() {
		engines.Lock()
		delete(engines.byDirs, "")
		engines.Unlock()
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e, err := engine.New(opts)
		if err != nil {
			b.Fatal(err)
		}
		engines.Lock()
		engines.byDirs[""] = e
		engines.Unlock()
		var stderr strings.Builder
		if code := run(args, strings.NewReader(""), io.Discard, &stderr); code != 0 {
			b.Fatalf("vet exited %d:\n%s", code, stderr.String())
		}
	}
	b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "docs/s")
}

// writeCorpus writes a benchmark's runtimes and TrainJobs, a file of each,
// and returns the files' paths, sorted.
func writeCorpus(b *testing.B, rts, jobs []string) []string {
	b.Helper()
	dir := b.TempDir()
	var files []string
	for name, docs := range map[string][]string{"runtimes.yaml": rts, "trainjobs.yaml": jobs} {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, f)
	}
	sort.Strings(files)
	return files
}
