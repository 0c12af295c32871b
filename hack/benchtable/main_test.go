package main

import (
	"bytes"
	"image/png"
	"os"
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkRenderTorch-2         	     838	   1400000 ns/op	  507955 B/op	    4551 allocs/op
BenchmarkRenderTorch-2         	     838	   1000000 ns/op	  507955 B/op	    4551 allocs/op
BenchmarkRenderTorch-2         	     838	   1200000 ns/op	  507955 B/op	    4551 allocs/op
BenchmarkBaselineTorch-2       	    5254	    150000 ns/op	  123750 B/op	     600 allocs/op
BenchmarkRenderTorchHit-2      	   90000	     12000 ns/op	    9184 B/op	      71 allocs/op
BenchmarkVetMixed-2 	 1	 400000000 ns/op	 2500 docs/s
BenchmarkVetMixedAfterLoad-2 	 1	 300000000 ns/op	 3300 docs/s
BenchmarkCueVetMixed-2 	 1	 900000000 ns/op	 1100 docs/s
BenchmarkCueVetPerFile-2 	 1	 900000000 ns/op	 2.1 docs/s
BenchmarkVetDistinct-2 	 1	 5000000000 ns/op	 200 docs/s
BenchmarkVetDistinct-2 	 1	 4000000000 ns/op	 250 docs/s
BenchmarkVetDistinctNoMemo-2 	 1	 5000000000 ns/op	 200 docs/s
BenchmarkVetDistinctNoMemo-2 	 1	 6250000000 ns/op	 160 docs/s
BenchmarkRenderDistinctLabels-2   	  100000	   1968115 ns/op	        20.62 heap-end-MiB	        17.80 heap-start-MiB	        49.00 recycles	 80.5 rss-MiB
PASS
`

// TestTable: medians over runs, the ratio and the goal's verdict, and rows
// not measured say so.
func TestTable(t *testing.T) {
	rs := map[string]result{}
	parse([]byte(sample), rs)
	if got, _ := rs["BenchmarkRenderTorch"].median("ns/op"); got != 1200000 {
		t.Errorf("median %v, want 1200000", got)
	}
	table := render(rs)
	for _, want := range []string{
		"| render torch-distributed TrainJob, a miss (inputs vary per iteration) | 1.20 ms, 4551 allocs | 150 µs, 600 allocs | 8.0× | ≤ 5× (missed) |",
		"| render torch-distributed TrainJob, a hit (the same TrainJob again, from the render memo) | 12 µs, 71 allocs | 150 µs, 600 allocs | 0.08× | ≤ 1× (met) |",
		"| render DeepSpeed (MPI) TrainJob | not measured | not measured | — | ≤ 10× |",
		"| render TorchTune TrainJob (`tune run`: recipe and config for the model) | not measured |",
		"that repeat: the runtimes are the shipped ones renamed;",
		"| `cuetrainer vet` end to end: 2500 docs/s; in-process after load: 3300 docs/s | `cue vet` with our schemas (schemas only): one call per file 1100 docs/s; one call per document (50-document sample) 2.1 docs/s | 2.27× one call | ≥ 2,000 docs/s end to end and ≥ 2× one `cue vet` call (met) |",
		// The ratio is the median of the pairs' (1.0 and 1.56), not of the medians'.
		"where nothing repeats: each differs from every other in what the rules read",
		"| in-process, engine load included: 250 docs/s, and 200 docs/s with its memos off (`engine.Options{NoMemo: true}`, 1.56×) | the engine of the day issue 19 was filed (d967708): not measured | — | ≥ 1.5× the engine of the day issue 19 was filed |",
		"live heap 20.6 MiB (from 17.8 once the memos are full, after 2,048 renders), RSS 80 MiB | — | — | flat, RSS ≤ 150 MiB (met) |",
		"| cold start: `cuetrainer controller` to /readyz (certificate generated, policies loaded; envtest) | not measured |",
		"| admission latency p50 / p99 at 100, 500, 1,000 req/s (open loop, loopback HTTPS), the mix repeating: the same reviews in turn, only their uids new | not measured |",
		"every request distinct: no two objects alike (TrainJobs varied in name, namespace, numNodes, env, resources, initializers, runtimePatches; runtimes in name, numNodes, env, labels) | not measured | — | — | p99 ≤ 20 ms at 500 req/s |",
		"each with numNodes (1 to 8) and env of its own → all JobSets applied (envtest) | not measured | — | — | — (reported beside the row above) |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

const clusterSample = `BenchmarkAdmission/serial/baseline-2         	       1	 118179197 ns/op	         0.1974 ClusterTrainingRuntime-validate-ms	         0.1697 TrainJob-mutate-ms	         0.1660 TrainJob-validate-ms
BenchmarkAdmission/serial/ours-2             	       1	4012735962 ns/op	        20.23 ClusterTrainingRuntime-validate-ms	         7.085 TrainJob-mutate-ms	         7.831 TrainJob-validate-ms
BenchmarkAdmission/rate=100/baseline-2         	       1	5016576283 ns/op	       100.2 done-req/s	         0 errors	         8.528 max-ms	         1.096 p50-ms	         1.729 p90-ms	         3.934 p99-ms
BenchmarkAdmission/rate=100/ours-2             	       1	5011602058 ns/op	       100.1 done-req/s	         0 errors	        79.14 max-ms	         9.189 p50-ms	        32.62 p90-ms	        71.59 p99-ms
BenchmarkAdmission/rate=500/baseline-2         	       1	5015328998 ns/op	       500.2 done-req/s	         0 errors	        18.39 max-ms	         0.8686 p50-ms	         1.405 p90-ms	         4.975 p99-ms
BenchmarkAdmission/rate=500/ours-2             	       1	15073617297 ns/op	       166.0 done-req/s	       361.0 errors	     10422 max-ms	      5608 p50-ms	     10007 p90-ms	     10140 p99-ms	        63.00 reviews
BenchmarkAdmission/rate=1000/baseline-2        	       1	5026858355 ns/op	      1000 done-req/s	         0 errors	        31.43 max-ms	         0.7924 p50-ms	         1.441 p90-ms	        13.01 p99-ms
BenchmarkAdmission/rate=1000/ours-2            	       1	15088126616 ns/op	       332.0 done-req/s	      3801 errors	     10652 max-ms	     10009 p50-ms	     10103 p90-ms	     10394 p99-ms
BenchmarkAdmission/distinct/rate=500/baseline-2         	       1	5034701736 ns/op	       500.2 done-req/s	         0 errors	        16.33 max-ms	         0.8065 p50-ms	         1.253 p90-ms	         3.167 p99-ms	      2500 reviews
BenchmarkAdmission/distinct/rate=500/ours-2             	       1	5517602256 ns/op	       455.1 done-req/s	         12 errors	       834.8 max-ms	       428.0 p50-ms	       643.7 p90-ms	       715.2 p99-ms	      2500 reviews
BenchmarkColdStart-2   	       1	30957825934 ns/op	         0.4462 policies-s	         1.014 ready-max-s	         0.8495 ready-s
BenchmarkController-2   	       1	137741037765 ns/op	        65.39 baseline-jobs/s	         3.645 create-s	        21.38 ours-jobs/s	         0.3301 ratio	         0.3050 ratio-min	2.02 ours-reads/job	3.02 ours-writes/job	0.00 baseline-reads/job	1.11 baseline-writes/job
BenchmarkControllerDistinct-2   	       1	40416477021 ns/op	       164.5 baseline-jobs/s	         0.001000 baseline-reads/job	         1.284 baseline-writes/job	         2.791 create-s	       102.0 ours-jobs/s	         0.001000 ours-reads/job	         2.000 ours-writes/job	         0.6205 ratio	         0.6149 ratio-min
`

// TestVetDistinctRow: the row where nothing repeats is ours end to end
// against the filing-day engine's, the median of the alternating pairs'
// ratios, with the in-process figures beside it.
func TestVetDistinctRow(t *testing.T) {
	rs := map[string]result{}
	parse([]byte(sample), rs)
	rs[vetDistinctOurs] = result{"docs/s": {600, 560}}
	rs[vetDistinctFiled] = result{"docs/s": {370, 365}}
	var b strings.Builder
	vetDistinctRow(&b, rs)
	want := "| `cuetrainer vet` end to end: 600 docs/s; in-process, engine load included: 250 docs/s, and 200 docs/s with its memos off (`engine.Options{NoMemo: true}`, 1.56×) | the engine of the day issue 19 was filed (d967708, built from git), `cuetrainer vet` end to end on the same files, runs alternating: 370 docs/s | 1.62× | ≥ 1.5× the engine of the day issue 19 was filed (met) |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("row\n%s\nlacks\n%s", b.String(), want)
	}
	rs[vetDistinctOurs] = result{"docs/s": {500, 540}}
	b.Reset()
	vetDistinctRow(&b, rs)
	if !strings.Contains(b.String(), "| 1.48× | ≥ 1.5× the engine of the day issue 19 was filed (missed) |") {
		t.Errorf("row %s: want 1.48×, missed", b.String())
	}
}

// TestClusterRows: the envtest rows, each rate's p50 / p99 with the
// timeouts, the ratio at the goal's rate, the reviews the mix repeats and
// the row where every request is distinct, the service times one at a
// time, the controller's ratios (alike and differing TrainJobs) and the
// cold start, each against its goal.
func TestClusterRows(t *testing.T) {
	rs := map[string]result{}
	parse([]byte(clusterSample), rs)
	table := render(rs)
	for _, want := range []string{
		"| 100/s: 9.19 / 71.6 ms; 500/s: 5608 / 10140 ms (361 of 2500 timed out); 1000/s: 10009 / 10394 ms (3801 of 5000 timed out) | server answering allowed: 100/s: 1.10 / 3.93 ms; 500/s: 0.87 / 4.97 ms; 1000/s: 0.79 / 13.0 ms | p99 at 500/s: 2038× | p99 ≤ 5 ms at 500 req/s (missed) |",
		"the mix repeating: the same 63 reviews in turn, only their uids new |",
		"| 500/s: 428 / 715 ms (12 of 2500 timed out) | server answering allowed: 500/s: 0.81 / 3.17 ms | p99: 226× | p99 ≤ 20 ms at 500 req/s (missed) |",
		"| TrainJob validate 7.83 ms; TrainJob mutate 7.08 ms; ClusterTrainingRuntime validate 20.2 ms | 0.17 ms; 0.17 ms; 0.20 ms | up to 102× | — |",
		"so repeating → all JobSets applied (envtest) | 21.4 TrainJobs/s (API requests per TrainJob: 2.0 reads, 3.0 writes) | a reconciler applying one fixed JobSet: 65.4/s (API requests per TrainJob: 0.0 reads, 1.1 writes); the creates alone take 3.6 s | 0.33× | ≥ 0.8× (missed) |",
		"env of its own → all JobSets applied (envtest) | 102.0 TrainJobs/s (API requests per TrainJob: 0.0 reads, 2.0 writes) | a reconciler applying one fixed JobSet: 164.5/s (API requests per TrainJob: 0.0 reads, 1.3 writes); the creates alone take 2.8 s | 0.62× | — (reported beside the row above) |",
		"| 0.85 s median, 1.01 s slowest of 5 (policies loaded in 0.45 s) | — | — | ≤ 2 s (met) |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// TestPlot: the plot is a PNG of the expected size with the series drawn in
// their colours; BENCHTABLE_PLOT=file keeps it, to look at.
func TestPlot(t *testing.T) {
	rs := map[string]result{}
	parse([]byte(clusterSample), rs)
	data, ok, err := admissionPlot(rs)
	if err != nil || !ok {
		t.Fatalf("admissionPlot: %v, %v", ok, err)
	}
	if f := os.Getenv("BENCHTABLE_PLOT"); f != "" {
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 960 || b.Dy() != 560 {
		t.Errorf("size %v", b)
	}
	colours := map[[3]uint32]int{}
	for y := 0; y < img.Bounds().Dy(); y++ {
		for x := 0; x < img.Bounds().Dx(); x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}]++
		}
	}
	for _, c := range [][3]uint32{{200, 40, 30}, {240, 140, 40}, {30, 70, 190}, {90, 160, 230}, {0, 140, 60}} {
		if colours[c] < 50 {
			t.Errorf("colour %v: %d pixels", c, colours[c])
		}
	}
	if _, ok, _ := admissionPlot(map[string]result{}); ok {
		t.Error("a plot without figures")
	}
}
