package metrics

import (
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestNamesAndHelp: the metrics are served under the names, types and help
// texts dashboards and alerts know (docs/controller.md).
func TestNamesAndHelp(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	// A vector shows once it has a child.
	m.ObserveAdmission("TrainJob", "CREATE", "validating", "allowed", time.Millisecond)
	m.ObserveEvaluation("admit", time.Millisecond)
	m.PolicyReload("loaded")
	want := map[string]struct {
		typ  string
		help string
	}{
		"cuetrainer_admission_duration_seconds":         {"HISTOGRAM", "Time to answer an admission request, by kind, operation, handler and outcome."},
		"cuetrainer_engine_evaluation_duration_seconds": {"HISTOGRAM", "Time the engine takes to admit or render one object."},
		"cuetrainer_engine_recycles_total":              {"COUNTER", "CUE runtimes replaced by a fresh one (the engine bounds its memory so)."},
		"cuetrainer_controller_cache_reads":             {"GAUGE", "1 while the controller and the webhooks read TrainJobs and runtimes from the cache (their CRDs unchanged since the process started), 0 when they read them from the API server."},
		"cuetrainer_policy_reloads_total":               {"COUNTER", "Policy directory changes seen, by result: loaded, or failed (the last good policy stays)."},
		"cuetrainer_policy_loaded_timestamp_seconds":    {"GAUGE", "When the policies in force were loaded."},
		"cuetrainer_runtimes_breaking_policy":           {"GAUGE", "The cluster's runtimes the policy in force finds fault with, as its last audit found (a runtime created before the policy, as the shipped ones may be)."},
		"cuetrainer_engine_defects_total":               {"COUNTER", "Panics of CUE's or cuetrainer's the engine in force recovered (each a defect to report; the evaluation was made again without structure sharing, or refused)."},
		"cuetrainer_engine_evaluations_total":           {"COUNTER", "Evaluations the engine in force made, by what (review, lookup, render, mutation, crd-part): the requests less these are what its memos served."},
		"cuetrainer_policy_load_warnings":               {"GAUGE", "The warnings the load of the policies in force gave (logged once per load)."},
		"cuetrainer_policy_in_force":                    {"GAUGE", "1 while a policy that loaded is in force; 0 while none is (the policy did not load at start: admission is closed and the replica not ready)."},
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		w, ok := want[mf.GetName()]
		if !ok {
			t.Errorf("unexpected metric %s", mf.GetName())
			continue
		}
		delete(want, mf.GetName())
		if mf.GetType().String() != w.typ || mf.GetHelp() != w.help {
			t.Errorf("%s: %s %q, want %s %q", mf.GetName(), mf.GetType(), mf.GetHelp(), w.typ, w.help)
		}
	}
	for name := range want {
		t.Errorf("no metric %s", name)
	}
}

// TestRegisterAgain: registering on a registry that holds the metrics (a
// second Setup in the process) returns the collectors it holds, and the
// values read when scraped come from the last functions set.
func TestRegisterAgain(t *testing.T) {
	reg := prometheus.NewRegistry()
	first, err := Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	first.ReadCacheReads(func() bool { return true })
	first.ReadRecycles(func() int64 { return 3 })
	if got := value(t, reg, "cuetrainer_controller_cache_reads"); got != 1 {
		t.Errorf("cache reads %v, want 1", got)
	}
	second, err := Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	if second.admissionDuration != first.admissionDuration || second.cacheReads != first.cacheReads || second.policyLoaded != first.policyLoaded {
		t.Error("a second Register made collectors of its own")
	}
	second.RuntimesBreakingPolicy(2)
	if got := value(t, reg, "cuetrainer_runtimes_breaking_policy"); got != 2 {
		t.Errorf("runtimes breaking policy %v, want 2 (recorded through the second)", got)
	}
	second.ReadCacheReads(func() bool { return false })
	if got := value(t, reg, "cuetrainer_controller_cache_reads"); got != 0 {
		t.Errorf("cache reads %v, want 0 (the second's function)", got)
	}
	if got := value(t, reg, "cuetrainer_engine_recycles_total"); got != 3 {
		t.Errorf("recycles %v, want 3 (the first's function, not replaced)", got)
	}

	// Setups racing with scrapes.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			m, err := Register(reg)
			if err != nil {
				t.Error(err)
				return
			}
			m.ReadRecycles(func() int64 { return int64(i) })
		}()
		go func() {
			defer wg.Done()
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

// TestUnset: the values read when scraped are 0 until a Setup sets them,
// and a nil *Metrics records nothing.
func TestUnset(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := Register(reg); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cuetrainer_controller_cache_reads", "cuetrainer_engine_recycles_total"} {
		if got := value(t, reg, name); got != 0 {
			t.Errorf("%s %v, want 0", name, got)
		}
	}
	var m *Metrics
	m.ObserveAdmission("TrainJob", "CREATE", "validating", "allowed", time.Millisecond)
	m.ObserveEvaluation("admit", time.Millisecond)
	m.PolicyLoaded()
	m.PolicyReload("failed")
	m.RuntimesBreakingPolicy(1)
	m.ReadRecycles(func() int64 { return 1 })
	m.ReadCacheReads(func() bool { return true })
}

// TestRegisterConflict: a registry holding another collector under one of
// the names is an error, not a panic.
func TestRegisterConflict(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "cuetrainer_engine_recycles_total", Help: "CUE runtimes replaced by a fresh one (the engine bounds its memory so)."}))
	if _, err := Register(reg); err == nil {
		t.Error("registered over another collector of the same name")
	}
}

func value(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.GetMetric()) != 1 {
			continue
		}
		m := mf.GetMetric()[0]
		switch {
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue()
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestReadEvaluations: cuetrainer_engine_evaluations_total has one series
// per kind of evaluation, 0 until set, then the last function's counts in
// EvaluationKinds' order.
func TestReadEvaluations(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	read := func() map[string]float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, mf := range mfs {
			if mf.GetName() != "cuetrainer_engine_evaluations_total" {
				continue
			}
			for _, s := range mf.GetMetric() {
				out[s.GetLabel()[0].GetValue()] = s.GetCounter().GetValue()
			}
		}
		return out
	}
	if got := read(); len(got) != len(EvaluationKinds) || got["review"] != 0 {
		t.Errorf("unset: %v", got)
	}
	m.ReadEvaluations(func() []int64 { return []int64{5, 4, 3, 2, 1} })
	want := map[string]float64{"review": 5, "lookup": 4, "render": 3, "mutation": 2, "crd-part": 1}
	if got := read(); !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	m.ReadEvaluations(func() []int64 { return nil }) // no engine in force
	if got := read(); got["render"] != 0 || len(got) != len(EvaluationKinds) {
		t.Errorf("with no engine: %v", got)
	}
}
