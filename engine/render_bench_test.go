package engine

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// renderInput admits a corpus case's input and returns the session and the
// TrainJob result, ready to render.
func renderInput(tb testing.TB, caseName string) (*Session, Result) {
	tb.Helper()
	data, err := os.ReadFile("../test/conformance/testdata/kubeflow/cases/" + caseName + "/input.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	s := testEngine(tb).NewSession(SessionOptions{})
	var tj Result
	for _, d := range k8s.ReadYAML("input.yaml", data) {
		r := s.Admit(d)
		if r.Rejected() {
			tb.Fatalf("%s: %v", r.Identity(), r.Errors)
		}
		if d.Kind() == "TrainJob" {
			tj = r
		}
	}
	return s, tj
}

// varied returns the TrainJob with its name and a label changed, so that
// no two iterations render the same input. The render reads neither (the
// name is carried, and the label is not read), but the render memo keys
// a render by the whole input, carried values as tokens, so that the
// label makes every iteration a miss.
func varied(r Result, i int) Result {
	obj := value.AsJSON(r.Object).(map[string]any)
	md := obj["metadata"].(map[string]any)
	md["name"] = fmt.Sprintf("job-%d", i)
	md["labels"] = map[string]any{fmt.Sprintf("run-%d", i%1000): strconv.Itoa(i)}
	r.Object = obj
	return r
}

// benchmarkRender renders a TrainJob that no iteration renders again: a
// miss of the render memo, its key made and its result kept.
func benchmarkRender(b *testing.B, caseName string) {
	s, tj := renderInput(b, caseName)
	inputs := make([]Result, b.N)
	for i := range inputs {
		inputs[i] = varied(tj, i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := s.Render(inputs[i], RenderOptions{})
		if len(out.Errors) > 0 {
			b.Fatal(out.Errors)
		}
	}
}

func BenchmarkRenderTorch(b *testing.B)     { benchmarkRender(b, "03-torch-numnodes-override") }
func BenchmarkRenderDeepSpeed(b *testing.B) { benchmarkRender(b, "28-deepspeed-shipped-minimal") }
func BenchmarkRenderTorchTune(b *testing.B) { benchmarkRender(b, "36-torchtune-llama3.2-1b-default") }

// BenchmarkRenderTorchHit renders BenchmarkRenderTorch's TrainJob again and
// again as the controller does on the reconciles that change nothing (most
// of them, brought by its JobSet's status): in a controller session
// (SessionOptions.Controller), the TrainJob and its runtime each with a
// uid and a resourceVersion, so that every render after the first is the
// render memo's (rendermemo.go), copied. It fails if one is not.
func BenchmarkRenderTorchHit(b *testing.B) {
	data, err := os.ReadFile("../test/conformance/testdata/kubeflow/cases/03-torch-numnodes-override/input.yaml")
	if err != nil {
		b.Fatal(err)
	}
	e := testEngine(b)
	s := e.NewSession(SessionOptions{Controller: true})
	var tj Result
	for i, d := range k8s.ReadYAML("input.yaml", data) {
		md := d.Object["metadata"].(map[string]any)
		if md["uid"] == nil {
			md["uid"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)
		}
		md["resourceVersion"] = "1"
		r := s.Admit(d)
		if r.Rejected() {
			b.Fatalf("%s: %v", r.Identity(), r.Errors)
		}
		if d.Kind() == "TrainJob" {
			tj = r
		}
	}
	if out := s.Render(tj, RenderOptions{}); len(out.Errors) > 0 {
		b.Fatal(out.Errors)
	}
	made := e.rendersMade.Load()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if out := s.Render(tj, RenderOptions{}); len(out.Errors) > 0 {
			b.Fatal(out.Errors)
		}
	}
	b.StopTimer()
	if n := e.rendersMade.Load() - made; n > 0 {
		b.Fatalf("%d of %d renders made afresh, not from the render memo", n, b.N)
	}
}

// BenchmarkRenderDistinctLabels renders TrainJobs that each carry a label
// key never seen before, and reports the live heap after the run: with the
// engine recycling its CUE runtime it stays flat however many renders.
func BenchmarkRenderDistinctLabels(b *testing.B) { benchmarkDistinct(b, true) }

// BenchmarkRenderDistinctValues is BenchmarkRenderDistinctLabels with one
// label key whose value differs: what the heap does without new keys.
func BenchmarkRenderDistinctValues(b *testing.B) { benchmarkDistinct(b, false) }

func benchmarkDistinct(b *testing.B, keys bool) {
	e, err := New(Options{RecycleAfter: 2000})
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile("../test/conformance/testdata/kubeflow/cases/03-torch-numnodes-override/input.yaml")
	if err != nil {
		b.Fatal(err)
	}
	s := e.NewSession(SessionOptions{})
	var tj Result
	for _, d := range k8s.ReadYAML("input.yaml", data) {
		tj = s.Admit(d)
	}
	heap := func() float64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapInuse) / (1 << 20)
	}
	// render renders the i-th TrainJob, never seen before.
	render := func(i int64) bool {
		r := tj
		obj := value.AsJSON(tj.Object).(map[string]any)
		md := obj["metadata"].(map[string]any)
		md["name"] = fmt.Sprintf("job-%d", i)
		if keys {
			md["labels"] = map[string]any{fmt.Sprintf("distinct-key-%d", i): "x"}
		} else {
			md["labels"] = map[string]any{"distinct-key": fmt.Sprintf("x-%d", i)}
		}
		r.Object = obj
		if out := s.Render(r, RenderOptions{}); len(out.Errors) > 0 {
			b.Error(out.Errors)
			return false
		}
		return true
	}
	// The heap is measured from when the memos are full: they are bounded,
	// and what grows past them would be a leak (CUE's table of labels).
	const warm = 2 * DefaultRenderMemoSize
	for i := range int64(warm) {
		if !render(-1 - i) {
			return
		}
	}
	start := heap()
	// On every CPU, as the controller's concurrent reconciles render: the
	// engine is recycled while other renders are under way.
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !render(next.Add(1) - 1) {
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(start, "heap-start-MiB")
	b.ReportMetric(heap(), "heap-end-MiB")
	b.ReportMetric(rssMiB(), "rss-MiB")
	b.ReportMetric(float64(e.Recycled()), "recycles")
}

// rssMiB is the process's resident set (VmRSS), 0 where /proc is not.
func rssMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
