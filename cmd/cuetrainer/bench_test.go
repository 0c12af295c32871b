package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"testing"

	apiruntime "k8s.io/apimachinery/pkg/runtime"

	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// mixedInput writes the vet benchmarks' input, 1,000 documents as an
// admin's CI would vet them: 100 ClusterTrainingRuntimes (the shipped
// runtimes, renamed in turn) into runtimes.yaml, and 900 TrainJobs spread
// over them, with varying node counts, env, labels and namespaces, into
// trainjobs.yaml. It returns the two files, runtimes first.
func mixedInput(b *testing.B) []string {
	b.Helper()
	runtimes := shippedRuntimes(b)
	var rts, jobs []string
	var names []string
	for i := 0; i < 100; i++ {
		rt := runtimes[i%len(runtimes)]
		obj := maps.Clone(rt.Object)
		md := maps.Clone(obj["metadata"].(map[string]any))
		md["name"] = fmt.Sprintf("%s-v%d", rt.Name(), i)
		obj["metadata"] = md
		data, err := yaml.Marshal(obj)
		if err != nil {
			b.Fatal(err)
		}
		rts = append(rts, string(data))
		names = append(names, md["name"].(string))
	}
	for j := 0; j < 900; j++ {
		trainer := fmt.Sprintf("  trainer:\n    numNodes: %d\n    env:\n    - {name: RUN, value: \"%d\"}\n", 1+j%4, j)
		if strings.HasPrefix(names[j%len(names)], "torchtune") {
			trainer = "  trainer: {numNodes: 1}\n" // a TorchTune model trains on one node
		}
		jobs = append(jobs, fmt.Sprintf("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: job-%d\n  namespace: team-%d\n  labels: {team: t%d}\nspec:\n  runtimeRef: {name: %s}\n%s",
			j, j%7, j%5, names[j%len(names)], trainer))
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
func shippedRuntimes(b *testing.B) []engine.Document {
	shipped, err := filepath.Glob(filepath.Join("..", "..", "deploy", "runtimes", "*.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	var runtimes []engine.Document
	for _, f := range shipped {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range engine.ReadYAML(f, data) {
			if d.Err == nil && d.Kind() == "ClusterTrainingRuntime" {
				runtimes = append(runtimes, d)
			}
		}
	}
	if len(runtimes) == 0 {
		b.Fatal("no shipped runtimes in deploy/runtimes")
	}
	return runtimes
}

// distinctInput writes the input of the distinct vet benchmarks: 1,000
// documents, as mixedInput's, none of which repeats what the rules read of
// another. 100 ClusterTrainingRuntimes (the shipped runtimes in turn, each
// with a numNodes, an env value on its node containers and a template label
// of its own) into runtimes.yaml, and 900 TrainJobs into trainjobs.yaml:
// each names a runtime in turn of the shipped ones and the corpus's own,
// with a numNodes, env, resourcesPerNode and a runtimePatch of its own, and
// initializers (their storage URIs its own) on the runtimes that have
// initializer jobs. vet keeps the shipped runtimes for them (no
// --no-builtin-runtimes). It returns the two files, runtimes first.
func distinctInput(b *testing.B) []string {
	b.Helper()
	runtimes := shippedRuntimes(b)
	// What a TrainJob may set on a runtime: a TorchTune runtime trains on
	// one node, and the runtimes with both initializer jobs (each with the
	// initializer volume) take the TrainJob's initializers.
	type runtimeInfo struct {
		name                 string
		oneNode, initializer bool
	}
	info := func(d engine.Document, name string) runtimeInfo {
		ri := runtimeInfo{name: name, oneNode: strings.HasPrefix(d.Name(), "torchtune")}
		ri.initializer = ri.oneNode // the shipped TorchTune runtimes have both
		return ri
	}
	var targets []runtimeInfo
	for _, d := range runtimes {
		targets = append(targets, info(d, d.Name()))
	}
	var rts, jobs []string
	for i := 0; i < 100; i++ {
		rt := runtimes[i%len(runtimes)]
		obj := apiruntime.DeepCopyJSON(rt.Object)
		name := fmt.Sprintf("%s-d%d", rt.Name(), i)
		ri := info(rt, name)
		wrapper.Distinct(obj, name, i, ri.oneNode)
		data, err := yaml.Marshal(obj)
		if err != nil {
			b.Fatal(err)
		}
		rts = append(rts, string(data))
		targets = append(targets, ri)
	}
	for j := 0; j < 900; j++ {
		rt := targets[j%len(targets)]
		var trainer strings.Builder
		trainer.WriteString("  trainer:\n")
		if rt.oneNode {
			trainer.WriteString("    numNodes: 1\n")
		} else {
			fmt.Fprintf(&trainer, "    numNodes: %d\n", 1+j%8)
		}
		fmt.Fprintf(&trainer, "    env:\n    - {name: RUN, value: \"%d\"}\n    - {name: OPTION_%d, value: \"v%d\"}\n", j, j%11, j)
		fmt.Fprintf(&trainer, "    resourcesPerNode:\n      requests: {cpu: \"%d\", memory: %dGi}\n", 1+j%8, 1+j%16)
		init := ""
		if rt.initializer {
			init = fmt.Sprintf("  initializer:\n    dataset: {storageUri: \"hf://bench/dataset-%d\"}\n    model: {storageUri: \"hf://bench/model-%d\"}\n", j, j)
		}
		patch := fmt.Sprintf(`  runtimePatches:
  - manager: bench.example.com/ci-%d
    trainingRuntimeSpec:
      template:
        metadata:
          labels: {bench.example.com/run: "%d"}
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  spec:
                    nodeSelector: {bench.example.com/pool: pool-%d}
`, j%5, j, j%13)
		jobs = append(jobs, fmt.Sprintf("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: job-%d\n  namespace: team-%d\n  labels: {team: t%d}\nspec:\n  runtimeRef: {name: %s}\n%s%s%s",
			j, j%7, j%5, rt.name, trainer.String(), init, patch))
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
