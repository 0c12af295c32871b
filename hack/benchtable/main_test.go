package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkRenderTorch-2         	     838	   1400000 ns/op	  507955 B/op	    4551 allocs/op
BenchmarkRenderTorch-2         	     838	   1000000 ns/op	  507955 B/op	    4551 allocs/op
BenchmarkRenderTorch-2         	     838	   1200000 ns/op	  507955 B/op	    4551 allocs/op
BenchmarkBaselineTorch-2       	    5254	    150000 ns/op	  123750 B/op	     600 allocs/op
BenchmarkVetEndToEnd-2 	 3	 40000000 ns/op	 2500 docs/s
BenchmarkCueVetCLI-2 	 1	 900000000 ns/op	 110 docs/s
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
		"| render torch-distributed TrainJob (inputs vary per iteration) | 1.20 ms, 4551 allocs | 150 µs, 600 allocs | 8.0× | ≤ 10× (met) |",
		"| render DeepSpeed (MPI) TrainJob | not measured | not measured | — | ≤ 10× |",
		"2500 docs/s | `cue vet` with our schemas: 110 docs/s | 22.7× | ≥ 2,000 docs/s and faster than `cue vet` (met) |",
		"live heap 20.6 MiB (from 17.8), RSS 80 MiB | — | — | flat, RSS ≤ 150 MiB (met) |",
		"| cold start: controller ready | not measured yet |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
