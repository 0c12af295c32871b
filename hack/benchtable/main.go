// Command benchtable runs the benchmarks `make bench` reports, each beside
// its baseline in the same run, and prints one Markdown table of ratios
// with the absolute figures; with -o it also writes the table, with the
// machine it ran on, to a file (BENCHMARKS.md).
//
// Every engine figure is the median of -count runs. The rows that need a
// control plane (admission latency, controller throughput, cold start: the
// benchmarks of test/bench, on envtest) run once, each with its own
// repetitions and its baseline inside. A row whose benchmark is not written
// yet, or did not run, says so rather than showing a number. With -o, the
// admission latency is also drawn (-plot, a PNG) and linked from the file.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// result holds one benchmark's metrics (unit → values over the runs).
type result map[string][]float64

func (r result) median(unit string) (float64, bool) {
	vs := append([]float64(nil), r[unit]...)
	if len(vs) == 0 {
		return 0, false
	}
	sort.Float64s(vs)
	return vs[len(vs)/2], true
}

// parse reads `go test -bench` output: name, iterations, then value/unit
// pairs.
func parse(out []byte, into map[string]result) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndex(name, "-"); i > 0 {
			name = name[:i]
		}
		r := into[name]
		if r == nil {
			r = result{}
			into[name] = r
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			r[f[i+1]] = append(r[f[i+1]], v)
		}
	}
}

type run struct {
	pkg, pattern, benchtime string
	count                   int
}

func main() {
	count := flag.Int("count", 5, "runs of each benchmark; figures are medians")
	outFile := flag.String("o", "", "also write the table and the machine to this file")
	cueBin := flag.String("cue", os.Getenv("CUE_BIN"), "the cue command, for the cue vet row")
	plotFile := flag.String("plot", "docs/bench-admission.png", "with -o, where the admission latency plot is written (linked from -o)")
	rows := flag.String("rows", "all", "which benchmarks run: all, engine (the in-process ones) or cluster (test/bench, on envtest)")
	flag.Parse()
	if *rows != "all" && *rows != "engine" && *rows != "cluster" {
		fmt.Fprintf(os.Stderr, "benchtable: -rows %q: want all, engine or cluster\n", *rows)
		os.Exit(2)
	}

	// Each pair runs -count times, one go test each, so that ours and its
	// baseline are measured side by side rather than minutes apart.
	var runs []run
	if *rows != "cluster" {
		for i := 0; i < *count; i++ {
			runs = append(runs,
				run{"./engine", "^Benchmark(Render|Baseline)(Torch|TorchHit|TorchTune|DeepSpeed)$", "", 1},
				run{"./cmd/cuetrainer", "^Benchmark(VetMixed|VetMixedAfterLoad|CueVetMixed)$", "1x", 1})
			// The distinct corpus with and without the engine's memos,
			// each in a process of its own, first one then the other.
			distinct := []run{
				{"./cmd/cuetrainer", "^BenchmarkVetDistinct$", "1x", 1},
				{"./cmd/cuetrainer", "^BenchmarkVetDistinctNoMemo$", "1x", 1},
			}
			if i%2 == 1 {
				distinct[0], distinct[1] = distinct[1], distinct[0]
			}
			runs = append(runs, distinct...)
		}
		// 50 cue vet processes: once is enough.
		runs = append(runs, run{"./cmd/cuetrainer", "^BenchmarkCueVetPerFile$", "1x", 1})
		runs = append(runs, run{"./engine", "^BenchmarkRenderDistinctLabels$", "100000x", 1})
		runs = append(runs, run{"./engine", "^BenchmarkAdmitHugeList$", "5x", 1})
		runs = append(runs, run{"./engine", "^BenchmarkAdmitWorstWithinLimits$", "5x", 1})
		runs = append(runs, run{"./engine", "^BenchmarkLoad(No|Rules)?Policy(Kept|KeptOnDisk)?$", "5x", 1})
	}
	if *rows != "engine" {
		// One control plane for them all; each repeats inside.
		runs = append(runs, run{"./test/bench", "^Benchmark(Admission|Controller|ControllerDistinct|ColdStart)$", "1x", 1})
	}
	results := map[string]result{}
	start := time.Now()
	for _, r := range runs {
		args := []string{"test", "-run", "^$", "-bench", r.pattern, "-benchmem", "-count", strconv.Itoa(r.count)}
		if r.benchtime != "" {
			args = append(args, "-benchtime", r.benchtime)
		}
		args = append(args, r.pkg)
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "CUE_BIN="+*cueBin)
		cmd.Stderr = os.Stderr
		fmt.Fprintf(os.Stderr, "go %s\n", strings.Join(args, " "))
		out, err := cmd.Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchtable: %v\n%s", err, out)
			os.Exit(1)
		}
		parse(out, results)
	}

	if *rows != "cluster" {
		// The corpus where nothing repeats, end to end, against the engine
		// of the day issue 19 was filed, built from git.
		if err := vetFilingDay(*count, results); err != nil {
			fmt.Fprintf(os.Stderr, "benchtable: the filing-day engine: %v\n", err)
			filingDayNote = err.Error()
		}
	}
	table := render(results)
	fmt.Print(table)
	if *outFile != "" {
		doc := fmt.Sprintf("# Benchmarks\n\nWritten by `make bench` (hack/benchtable) on %s, in %s.\n\n"+
			"Machine: %s, %d CPUs, %s %s/%s. Every row is ours ÷ a baseline measured in the same run "+
			"(lower is better for times, higher for throughput), the median of the runs.\n\n%s",
			time.Now().UTC().Format("2006-01-02"), time.Since(start).Round(time.Second), cpuModel(),
			runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, table)
		if img, ok, err := admissionPlot(results); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		} else if ok {
			plot := *plotFile
			if !filepath.IsAbs(plot) {
				plot = filepath.Join(filepath.Dir(*outFile), plot)
			}
			if err := os.MkdirAll(filepath.Dir(plot), 0o755); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			if err := os.WriteFile(plot, img, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			rel, err := filepath.Rel(filepath.Dir(*outFile), plot)
			if err != nil {
				rel = plot
			}
			doc += admissionNote + fmt.Sprintf("\n![Admission latency, p50 and p99, ours and the baseline, against the arrival rate](%s)\n", filepath.ToSlash(rel))
		}
		if err := os.WriteFile(*outFile, []byte(doc), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func render(rs map[string]result) string {
	var b strings.Builder
	b.WriteString("| row | ours | baseline | ratio | goal |\n|---|---|---|---|---|\n")
	timeRow := func(label, ours, base string, goal float64) {
		o, ok1 := rs[ours].median("ns/op")
		t, ok2 := rs[base].median("ns/op")
		if !ok1 || !ok2 {
			fmt.Fprintf(&b, "| %s | not measured | not measured | — | ≤ %.0f× |\n", label, goal)
			return
		}
		oa, _ := rs[ours].median("allocs/op")
		ta, _ := rs[base].median("allocs/op")
		// The ratio is the median of each run's own ratio.
		ratio := pairedRatio(rs[ours]["ns/op"], rs[base]["ns/op"], o/t)
		mark := "met"
		if ratio > goal {
			mark = "missed"
		}
		fmt.Fprintf(&b, "| %s | %s, %.0f allocs | %s, %.0f allocs | %s× | ≤ %.0f× (%s) |\n",
			label, dur(o), oa, dur(t), ta, smallRatio(ratio), goal, mark)
	}
	// A miss, then the hit that reuses a render, beside it.
	timeRow("render torch-distributed TrainJob, a miss (inputs vary per iteration)", "BenchmarkRenderTorch", "BenchmarkBaselineTorch", 5)
	timeRow("render torch-distributed TrainJob, a hit (the same TrainJob again, from the render memo)", "BenchmarkRenderTorchHit", "BenchmarkBaselineTorch", 1)
	timeRow("render DeepSpeed (MPI) TrainJob", "BenchmarkRenderDeepSpeed", "BenchmarkBaselineDeepSpeed", 10)
	timeRow("render TorchTune TrainJob (`tune run`: recipe and config for the model)", "BenchmarkRenderTorchTune", "BenchmarkBaselineTorchTune", 10)

	const vetRow = "vet throughput, 1,000 documents (100 ClusterTrainingRuntimes, 900 TrainJobs) that repeat: " +
		"the runtimes are the shipped ones renamed; the TrainJobs differ only in name, namespace, numNodes (1 to 4), " +
		"runtimeRef (one of the 100) and one env value, with no resources, initializers or runtimePatches"
	ours, ok1 := rs["BenchmarkVetMixed"].median("docs/s")
	loaded, _ := rs["BenchmarkVetMixedAfterLoad"].median("docs/s")
	cue, ok2 := rs["BenchmarkCueVetMixed"].median("docs/s")
	perFile, ok3 := rs["BenchmarkCueVetPerFile"].median("docs/s")
	perFileText := "not run"
	if ok3 {
		perFileText = fmt.Sprintf("%.1f docs/s", perFile)
	}
	switch {
	case ok1 && ok2:
		mark := "met"
		if ours < 2000 || ours < 2*cue {
			mark = "missed"
		}
		fmt.Fprintf(&b, "| %s | `cuetrainer vet` end to end: %.0f docs/s; in-process after load: %.0f docs/s | `cue vet` with our schemas (schemas only): one call per file %.0f docs/s; one call per document (50-document sample) %s | %.2f× one call | ≥ 2,000 docs/s end to end and ≥ 2× one `cue vet` call (%s) |\n",
			vetRow, ours, loaded, cue, perFileText, ours/cue, mark)
	case ok1:
		fmt.Fprintf(&b, "| %s | %.0f docs/s end to end | `cue vet`: not run (no -cue) | — | ≥ 2,000 docs/s |\n", vetRow, ours)
	default:
		fmt.Fprintf(&b, "| %s | not measured | — | — | ≥ 2,000 docs/s |\n", vetRow)
	}
	vetDistinctRow(&b, rs)

	m := rs["BenchmarkRenderDistinctLabels"]
	if end, ok := m.median("heap-end-MiB"); ok {
		startHeap, _ := m.median("heap-start-MiB")
		rss, _ := m.median("rss-MiB")
		mark := "met"
		if rss > 150 || end > startHeap*1.25 {
			mark = "missed"
		}
		fmt.Fprintf(&b, "| memory after 100,000 renders on every CPU, each with a never-seen label key | live heap %.1f MiB (from %.1f once the memos are full, after 2,048 renders), RSS %.0f MiB | — | — | flat, RSS ≤ 150 MiB (%s) |\n", end, startHeap, rss, mark)
	} else {
		b.WriteString("| memory after 100,000 renders | not measured | — | — | flat, ≤ 150 MiB |\n")
	}
	if huge, ok := rs["BenchmarkAdmitHugeList"].median("ns/op"); ok {
		mark := "met"
		if huge > 1e9 {
			mark = "missed"
		}
		fmt.Fprintf(&b, "| worst input: a TrainJob of 200,000 args (1.8 MB as YAML) through admission (refused: `Too many: 200000: must have at most 128 items`) | %s | — (before engine/limits.go: minutes) | — | ≤ 1 s, the API server's error (%s) |\n", dur(huge), mark)
	}
	if worst, ok := rs["BenchmarkAdmitWorstWithinLimits"].median("ns/op"); ok {
		mark := "met"
		if worst > 1e9 {
			mark = "missed"
		}
		fmt.Fprintf(&b, "| worst input the limits let the CUE evaluate: a ClusterTrainingRuntime of 998 volumes (1,000 list items, each volume evaluated as core/v1's Volume) through admission, nothing repeating (memos off) | %s | — (4,900 empty volumes, a 20 kB document, before maxEvaluatedListItems: 2.6-3.4 s) | — | ≤ 1 s (%s) |\n", dur(worst), mark)
	}
	withPolicy, ok1 := rs["BenchmarkLoadPolicy"].median("ns/op")
	without, ok2 := rs["BenchmarkLoadNoPolicy"].median("ns/op")
	if ok1 && ok2 {
		mark := "met"
		if withPolicy > 3*without {
			mark = "missed"
		}
		fmt.Fprintf(&b, "| engine load with the OME example's policy directory (its rules linted, their reads walked, tried on the probes), nothing repeating | %s | the same load without a policy directory: %s | %.1f× | ≤ 3× (%s) |\n", dur(withPolicy), dur(without), withPolicy/without, mark)
		for _, kept := range []struct{ name, where string }{
			{"BenchmarkLoadPolicyKept", "in memory (a controller's reload of unchanged files)"},
			{"BenchmarkLoadPolicyKeptOnDisk", "in a cache directory alone (the next `cuetrainer vet --policy-dir` of unchanged files)"},
		} {
			if k, ok := rs[kept.name].median("ns/op"); ok {
				fmt.Fprintf(&b, "| the same load, the trials' outcome reused: kept %s; compiled and linted afresh | %s | the same load without a policy directory: %s | %.1f× | — (reported) |\n", kept.where, dur(k), dur(without), k/without)
			}
		}
		if rules, ok := rs["BenchmarkLoadRulesPolicy"].median("ns/op"); ok {
			fmt.Fprintf(&b, "| engine load with a policy of rules alone (engine/testdata/rules: 4 rules of the TrainJob's review, 1 of the runtime's), nothing repeating: tried on its reviews alone | %s | the same load without a policy directory: %s | %.1f× | — (reported) |\n", dur(rules), dur(without), rules/without)
		}
	}
	admissionRows(&b, rs)
	controllerRow(&b, rs)
	coldStartRow(&b, rs)
	return b.String()
}

// filingDayNote says why the filing-day engine was not measured, when it
// was not.
var filingDayNote string

// vetDistinctRow is the vet row where nothing repeats: `cuetrainer vet`
// end to end against the engine of the day issue 19 was filed, on the same
// files, with the in-process figures of the engine with and without its
// memos beside them.
func vetDistinctRow(b *strings.Builder, rs map[string]result) {
	const label = "vet throughput, 1,000 documents where nothing repeats: each differs from every other in what the rules read " +
		"(100 ClusterTrainingRuntimes: numNodes, env, labels; 900 TrainJobs: numNodes, env, resources, " +
		"runtimeRef over the shipped runtimes and the corpus's, initializers, runtimePatches)"
	const goal = "≥ 1.5× the engine of the day issue 19 was filed"
	inProcess := "in-process: not measured"
	o, t := rs["BenchmarkVetDistinct"], rs["BenchmarkVetDistinctNoMemo"]
	if memo, ok1 := o.median("docs/s"); ok1 {
		if off, ok2 := t.median("docs/s"); ok2 {
			inProcess = fmt.Sprintf("in-process, engine load included: %.0f docs/s, and %.0f docs/s with its memos off (`engine.Options{NoMemo: true}`, %.2f×)",
				memo, off, pairedRatio(o["docs/s"], t["docs/s"], memo/off))
		}
	}
	e, f := rs[vetDistinctOurs], rs[vetDistinctFiled]
	ours, ok1 := e.median("docs/s")
	base, ok2 := f.median("docs/s")
	if !ok1 || !ok2 {
		why := "not measured"
		if filingDayNote != "" {
			why += ": " + filingDayNote
		}
		fmt.Fprintf(b, "| %s | %s | the engine of the day issue 19 was filed (%s): %s | — | %s |\n", label, inProcess, filingDayRev, why, goal)
		return
	}
	r := pairedRatio(e["docs/s"], f["docs/s"], ours/base)
	mark := "met"
	if r < 1.5 {
		mark = "missed"
	}
	fmt.Fprintf(b, "| %s | `cuetrainer vet` end to end: %.0f docs/s; %s | the engine of the day issue 19 was filed (%s, built from git), `cuetrainer vet` end to end on the same files, runs alternating: %.0f docs/s | %.2f× | %s (%s) |\n",
		label, ours, inProcess, filingDayRev, base, r, goal, mark)
}

// pairedRatio is the median of the ratios of the runs measured side by
// side, ours[i] ÷ base[i], or whole when the runs do not pair up.
func pairedRatio(ours, base []float64, whole float64) float64 {
	if len(ours) != len(base) || len(ours) == 0 {
		return whole
	}
	r := result{}
	for i := range ours {
		r["x"] = append(r["x"], ours[i]/base[i])
	}
	v, _ := r.median("x")
	return v
}

// smallRatio formats a ratio, with two decimals under 1.
func smallRatio(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func dur(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.0f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
