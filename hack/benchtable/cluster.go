package main

import (
	"fmt"
	"image/color"
	"sort"
	"strings"
)

// The rows of the benchmarks in test/bench (envtest).

// admissionRates are the arrival rates BenchmarkAdmission runs, and the
// goal: p99 ≤ admissionGoalMs at admissionGoalRate.
var admissionRates = []int{100, 500, 1000}

const (
	admissionGoalMs   = 5.0
	admissionGoalRate = 500
	// distinctGoalMs is the goal of the load whose every request is
	// distinct, at admissionGoalRate: p99 ≤ distinctGoalMs.
	distinctGoalMs = 20.0
	// admissionTimeoutMs is the webhooks' timeoutSeconds: a request not
	// answered by then is counted as an error.
	admissionTimeoutMs = 10000
)

// admissionNote explains the admission rows under the table.
const admissionNote = `
Admission latency (test/bench BenchmarkAdmission): our webhook server (controller.Setup on a manager against envtest, ` +
	`runtime lookups read from its cache, and from the API server what the cache lacks, as in a cluster) and a server with the same options whose handler answers ` +
	`"allowed" without evaluating, both on 127.0.0.1 with a self-signed certificate over HTTP/1.1. Each object is sent as an API server sends it to a webhook, ` +
	`with its CRD's defaults (applied when the request is read, before admission; they are the CUE's: test/integration TestGeneratedCRDs), ` +
	`given by an engine of the benchmark's own that makes every review before the loads and is then dropped, so that the process holds one engine, as a controller's does. An open-loop generator ` +
	`sends AdmissionReviews at a fixed rate for 5 s per rate (a request at its scheduled time whatever the others are doing, ` +
	`at most 64 keep-alive connections), and a latency counts from the scheduled time, queueing included. The mix: for each ` +
	`shipped runtime three TrainJobs that use it (validating and mutating endpoints) and the runtime itself (validating), ` +
	`the same reviews round robin with only their uids new, so that it repeats. Every request distinct: at 500 req/s, ` +
	`2,500 reviews of the mix's kinds and endpoints in the same proportions, each sent once to each server, each object its own ` +
	`(a TrainJob's name, namespace, numNodes, env, resourcesPerNode, runtimePatch and, on a runtime with initializer jobs, ` +
	`initializers; a runtime's name, numNodes, node env and template label). ` +
	`A request not answered within 10 s (the webhooks' timeout) is an error. Controller: 1,000 TrainJobs (torch-distributed, 2 nodes) ` +
	`created by 8 clients while the controller runs, until every JobSet exists; both reconcile 4 TrainJobs at once ` +
	`(controller.DefaultConcurrency); runs baseline, ours, ours, baseline (with TrainJobs alike: baseline, both, ours, ours, both, baseline, where both is a second baseline that applies the render's two objects fixed), the ratio ` +
	`the mean of the two adjacent pairs. In the row where they differ, the i-th TrainJob has numNodes 1 + i mod 8 and env of its own, ` +
	`and the baseline applies the same fixed JobSet. Both benchmarks' process runs under the memory limit of deploy/ (460 MiB) with the ` +
	`collector's target the controller command then sets (GOGC 200, serving.GCPercent), baselines included. Cold start: the built binary, from exec to /readyz 200, its certificate generated each time. ` +
	`Where the missed goals' time goes, profiled: [docs/bench-profile.md](docs/bench-profile.md).
`

func admissionKey(rate int, who string) string {
	return fmt.Sprintf("BenchmarkAdmission/rate=%d/%s", rate, who)
}

func distinctKey(rate int, who string) string {
	return fmt.Sprintf("BenchmarkAdmission/distinct/rate=%d/%s", rate, who)
}

// latency formats a load's p50 / p99 at its rate, with its timeouts.
func latency(r result, rate int) (string, bool) {
	p50, ok1 := r.median("p50-ms")
	p99, ok2 := r.median("p99-ms")
	if !ok1 || !ok2 {
		return "", false
	}
	part := fmt.Sprintf("%d/s: %s / %s ms", rate, ms(p50), ms(p99))
	if e, _ := r.median("errors"); e > 0 {
		part += fmt.Sprintf(" (%.0f of %d timed out)", e, rate*5)
	}
	return part, true
}

// ms formats milliseconds with three significant digits or so.
func ms(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func admissionRows(b *strings.Builder, rs map[string]result) {
	// The mix repeats: say how many reviews it goes round.
	repeats := "the same reviews in turn, only their uids new"
	if n, ok := rs[admissionKey(admissionGoalRate, "ours")].median("reviews"); ok {
		repeats = fmt.Sprintf("the same %.0f reviews in turn, only their uids new", n)
	}
	label := "admission latency p50 / p99 at 100, 500, 1,000 req/s (open loop, loopback HTTPS), the mix repeating: " + repeats
	cell := func(who string) (string, bool) {
		var parts []string
		for _, rate := range admissionRates {
			part, ok := latency(rs[admissionKey(rate, who)], rate)
			if !ok {
				return "", false
			}
			parts = append(parts, part)
		}
		return strings.Join(parts, "; "), true
	}
	ours, ok1 := cell("ours")
	base, ok2 := cell("baseline")
	if !ok1 || !ok2 {
		fmt.Fprintf(b, "| %s | not measured | — | — | p99 ≤ 5 ms at 500 req/s |\n", label)
	} else {
		o, _ := rs[admissionKey(admissionGoalRate, "ours")].median("p99-ms")
		t, _ := rs[admissionKey(admissionGoalRate, "baseline")].median("p99-ms")
		mark := "met"
		if o > admissionGoalMs {
			mark = "missed"
		}
		fmt.Fprintf(b, "| %s | %s | server answering allowed: %s | p99 at 500/s: %s× | p99 ≤ 5 ms at 500 req/s (%s) |\n",
			label, ours, base, ratio(o/t), mark)
	}
	distinctAdmissionRow(b, rs)

	// Each review alone: what the load divides among the cores.
	o, t := rs["BenchmarkAdmission/serial/ours"], rs["BenchmarkAdmission/serial/baseline"]
	var units []string
	for u := range o {
		if strings.HasSuffix(u, "-ms") {
			units = append(units, u)
		}
	}
	sort.Slice(units, func(i, j int) bool { // TrainJobs first
		ti, tj := strings.HasPrefix(units[i], "TrainJob-"), strings.HasPrefix(units[j], "TrainJob-")
		if ti != tj {
			return ti
		}
		return units[i] > units[j]
	})
	var oc, tc []string
	worst := 0.0
	for _, u := range units {
		ov, _ := o.median(u)
		tv, ok := t.median(u)
		if !ok {
			continue
		}
		name := strings.ReplaceAll(strings.TrimSuffix(u, "-ms"), "-", " ")
		oc = append(oc, fmt.Sprintf("%s %s ms", name, ms(ov)))
		tc = append(tc, fmt.Sprintf("%s ms", ms(tv)))
		worst = max(worst, ov/tv)
	}
	if len(oc) > 0 {
		fmt.Fprintf(b, "| admission service time, one request at a time (the mix's reviews, each 5 times, so repeating; the median) | %s | %s | up to %s× | — |\n",
			strings.Join(oc, "; "), strings.Join(tc, "; "), ratio(worst))
	}
}

// distinctAdmissionRow is the admission row where nothing repeats: every
// request's object its own, at the goal's rate.
func distinctAdmissionRow(b *strings.Builder, rs map[string]result) {
	label := fmt.Sprintf("admission latency p50 / p99 at %d req/s, every request distinct: no two objects alike "+
		"(TrainJobs varied in name, namespace, numNodes, env, resources, initializers, runtimePatches; runtimes in name, numNodes, env, labels)",
		admissionGoalRate)
	goal := fmt.Sprintf("p99 ≤ %.0f ms at %d req/s", distinctGoalMs, admissionGoalRate)
	o, t := rs[distinctKey(admissionGoalRate, "ours")], rs[distinctKey(admissionGoalRate, "baseline")]
	ours, ok1 := latency(o, admissionGoalRate)
	base, ok2 := latency(t, admissionGoalRate)
	if !ok1 || !ok2 {
		fmt.Fprintf(b, "| %s | not measured | — | — | %s |\n", label, goal)
		return
	}
	op99, _ := o.median("p99-ms")
	tp99, _ := t.median("p99-ms")
	mark := "met"
	if op99 > distinctGoalMs {
		mark = "missed"
	}
	fmt.Fprintf(b, "| %s | %s | server answering allowed: %s | p99: %s× | %s (%s) |\n",
		label, ours, base, ratio(op99/tp99), goal, mark)
}

func ratio(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func controllerRow(b *strings.Builder, rs map[string]result) {
	controllerRowOf(b, rs["BenchmarkController"], "controller: 1,000 TrainJobs alike but for their names "+
		"(torch-distributed, 2 nodes), so repeating → all JobSets applied (envtest)", true)
	bothRow(b, rs["BenchmarkController"])
	controllerRowOf(b, rs["BenchmarkControllerDistinct"], "controller: 1,000 TrainJobs that differ, "+
		"each with numNodes (1 to 8) and env of its own → all JobSets applied (envtest)", false)
}

// controllerRowOf writes a controller row; goal says whether the ≥ 0.8×
// goal is the row's, else it is reported beside the goal's row.
func controllerRowOf(b *strings.Builder, r result, label string, goal bool) {
	want := "≥ 0.8×"
	if !goal {
		want = "— (reported beside the row above)"
	}
	ours, ok1 := r.median("ours-jobs/s")
	base, ok2 := r.median("baseline-jobs/s")
	rt, ok3 := r.median("ratio")
	if !ok1 || !ok2 || !ok3 {
		fmt.Fprintf(b, "| %s | not measured | — | — | %s |\n", label, want)
		return
	}
	created, _ := r.median("create-s")
	mark := " (met)"
	if rt < 0.8 {
		mark = " (missed)"
	}
	if !goal {
		mark = ""
	}
	calls := func(who string) string {
		reads, ok1 := r.median(who + "-reads/job")
		writes, ok2 := r.median(who + "-writes/job")
		if !ok1 || !ok2 {
			return ""
		}
		return fmt.Sprintf(" (API requests per TrainJob: %.1f reads, %.1f writes)", reads, writes)
	}
	fmt.Fprintf(b, "| %s | %.1f TrainJobs/s%s | a reconciler applying one fixed JobSet: %.1f/s%s; the creates alone take %.1f s | %.2f× | %s%s |\n",
		label, ours, calls("ours"), base, calls("baseline"), created, rt, want, mark)
}

// bothRow writes the controller row against the second baseline, which
// applies both objects of the render (the JobSet and the runtime
// snapshot), as Kubeflow's controller writes them too.
func bothRow(b *strings.Builder, r result) {
	const label = "controller: the same 1,000 TrainJobs alike, beside a reconciler that applies both objects " +
		"of the render, fixed (the JobSet and the runtime snapshot ConfigMap, the two writes Kubeflow's controller makes too)"
	ours, ok1 := r.median("ours-jobs/s")
	both, ok2 := r.median("both-jobs/s")
	rt, ok3 := r.median("ratio-both")
	if !ok1 || !ok2 || !ok3 {
		fmt.Fprintf(b, "| %s | not measured | — | — | — (reported) |\n", label)
		return
	}
	writes, _ := r.median("both-writes/job")
	fmt.Fprintf(b, "| %s | %.1f TrainJobs/s | the reconciler applying both objects: %.1f/s (API requests per TrainJob: %.1f writes) | %.2f× | — (reported beside the goal's row) |\n",
		label, ours, both, writes, rt)
}

func coldStartRow(b *strings.Builder, rs map[string]result) {
	const label = "cold start: `cuetrainer controller` to /readyz (certificate generated, policies loaded; envtest)"
	r := rs["BenchmarkColdStart"]
	ready, ok := r.median("ready-s")
	if !ok {
		fmt.Fprintf(b, "| %s | not measured | — | — | ≤ 2 s |\n", label)
		return
	}
	worst, _ := r.median("ready-max-s")
	policies, _ := r.median("policies-s")
	mark := "met"
	if worst > 2 {
		mark = "missed"
	}
	fmt.Fprintf(b, "| %s | %.2f s median, %.2f s slowest of 5 (policies loaded in %.2f s) | — | — | ≤ 2 s (%s) |\n",
		label, ready, worst, policies, mark)
}

// admissionPlot draws the admission latencies, false when none were
// measured.
func admissionPlot(rs map[string]result) ([]byte, bool, error) {
	var ss []series
	for _, s := range []struct {
		who, pct, label string
		c               color.RGBA
		dashed          bool
	}{
		{"ours", "p99", "ours p99", color.RGBA{200, 40, 30, 255}, false},
		{"ours", "p50", "ours p50", color.RGBA{240, 140, 40, 255}, true},
		{"baseline", "p99", "baseline p99", color.RGBA{30, 70, 190, 255}, false},
		{"baseline", "p50", "baseline p50", color.RGBA{90, 160, 230, 255}, true},
	} {
		pts := map[int]float64{}
		for _, rate := range admissionRates {
			if v, ok := rs[admissionKey(rate, s.who)].median(s.pct + "-ms"); ok {
				pts[rate] = v
			}
		}
		if len(pts) > 0 {
			ss = append(ss, series{label: s.label, color: s.c, dashed: s.dashed, points: pts})
		}
	}
	if len(ss) == 0 {
		return nil, false, nil
	}
	img, err := plotLatency("admission latency against arrival rate (loopback https, open loop)", admissionRates, ss,
		admissionGoalMs, admissionGoalRate, admissionTimeoutMs)
	return img, err == nil, err
}
