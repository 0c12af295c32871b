// Package metrics holds cuetrainer's own Prometheus metrics, served with
// controller-runtime's on the manager's metrics endpoint: how long the
// admission handlers and the engine take (recorded by controller/webhooks
// and the TrainJob reconciler), the policy reloads and the runtime audit's
// count (package controller), and two values read when scraped, from what
// controller.Setup passes: the engine's recycles, defects and evaluations,
// and whether the cache serves the controller's kinds.
//
// The package keeps no state. Register builds the collectors and registers
// them; where the registry already holds them (controller.Setup runs more
// than once in a process: a replica's webhooks and controller in two
// managers, a controller restarted, the tests' and benchmarks' managers) it
// returns those, so that every caller records into the ones served, and the
// values read when scraped come from the last caller's functions.
package metrics

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the collectors of one registry. A nil *Metrics records
// nothing: a handler or reconciler built without one (in a unit test) works
// all the same.
type Metrics struct {
	admissionDuration      *prometheus.HistogramVec
	evaluationDuration     *prometheus.HistogramVec
	policyReloads          *prometheus.CounterVec
	policyLoaded           prometheus.Gauge
	runtimesBreakingPolicy prometheus.Gauge
	policyWarnings         prometheus.Gauge
	policyInForce          prometheus.Gauge
	engineRecycles         *readMetric
	engineDefects          *readMetric
	engineEvaluations      *readVec
	cacheReads             *readMetric
}

// Register returns the metrics of reg, registering them there unless it
// holds them already.
func Register(reg prometheus.Registerer) (*Metrics, error) {
	buckets := []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1}
	m := &Metrics{}
	var errs []error
	m.admissionDuration = register(reg, &errs, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "cuetrainer_admission_duration_seconds",
		Help:    "Time to answer an admission request, by kind, operation, handler and outcome.",
		Buckets: buckets,
	}, []string{"kind", "operation", "handler", "outcome"}))
	m.evaluationDuration = register(reg, &errs, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "cuetrainer_engine_evaluation_duration_seconds",
		Help:    "Time the engine takes to admit or render one object.",
		Buckets: buckets,
	}, []string{"what"}))
	m.engineRecycles = register(reg, &errs, newReadMetric(prometheus.CounterValue,
		"cuetrainer_engine_recycles_total",
		"CUE runtimes replaced by a fresh one (the engine bounds its memory so)."))
	m.engineDefects = register(reg, &errs, newReadMetric(prometheus.CounterValue,
		"cuetrainer_engine_defects_total",
		"Panics of CUE's or cuetrainer's the engine in force recovered (each a defect to report; the evaluation was made again without structure sharing, or refused)."))
	m.engineEvaluations = register(reg, &errs, newReadVec(prometheus.CounterValue,
		"cuetrainer_engine_evaluations_total",
		"Evaluations the engine in force made, by what (review, lookup, render, mutation, crd-part): the requests less these are what its memos served.",
		"what", EvaluationKinds))
	m.cacheReads = register(reg, &errs, newReadMetric(prometheus.GaugeValue,
		"cuetrainer_controller_cache_reads",
		"1 while the controller and the webhooks read TrainJobs and runtimes from the cache (their CRDs unchanged since the process started), 0 when they read them from the API server."))
	m.policyReloads = register(reg, &errs, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cuetrainer_policy_reloads_total",
		Help: "Policy directory changes seen, by result: loaded, or failed (the last good policy stays).",
	}, []string{"result"}))
	m.policyLoaded = register(reg, &errs, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cuetrainer_policy_loaded_timestamp_seconds",
		Help: "When the policies in force were loaded.",
	}))
	m.policyWarnings = register(reg, &errs, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cuetrainer_policy_load_warnings",
		Help: "The warnings the load of the policies in force gave (logged once per load).",
	}))
	m.policyInForce = register(reg, &errs, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cuetrainer_policy_in_force",
		Help: "1 while a policy that loaded is in force; 0 while none is (the policy did not load at start: admission is closed and the replica not ready).",
	}))
	m.runtimesBreakingPolicy = register(reg, &errs, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cuetrainer_runtimes_breaking_policy",
		Help: "The cluster's runtimes the policy in force finds fault with, as its last audit found (a runtime created before the policy, as the shipped ones may be).",
	}))
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("registering the metrics: %w", err)
	}
	return m, nil
}

// register registers c on reg and returns it, or the collector reg holds
// under c's name when it has one of c's type.
func register[C prometheus.Collector](reg prometheus.Registerer, errs *[]error, c C) C {
	err := reg.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing
		}
		err = fmt.Errorf("%w, as a %T", err, already.ExistingCollector)
	}
	if err != nil {
		*errs = append(*errs, err)
	}
	return c
}

// ObserveAdmission records the time an admission handler (handler:
// validating or mutating) took to answer a request.
func (m *Metrics) ObserveAdmission(kind, operation, handler, outcome string, took time.Duration) {
	if m != nil {
		m.admissionDuration.WithLabelValues(kind, operation, handler, outcome).Observe(took.Seconds())
	}
}

// ObserveEvaluation records the time the engine took to admit, mutate or
// render (what) one object.
func (m *Metrics) ObserveEvaluation(what string, took time.Duration) {
	if m != nil {
		m.evaluationDuration.WithLabelValues(what).Observe(took.Seconds())
	}
}

// PolicyLoaded records that the policies in force were loaded now.
func (m *Metrics) PolicyLoaded() {
	if m != nil {
		m.policyLoaded.SetToCurrentTime()
	}
}

// PolicyWarnings records how many warnings the load of the policies in
// force gave.
func (m *Metrics) PolicyWarnings(n int) {
	if m != nil {
		m.policyWarnings.Set(float64(n))
	}
}

// PolicyInForce records whether a policy that loaded is in force.
func (m *Metrics) PolicyInForce(in bool) {
	if m != nil {
		v := 0.0
		if in {
			v = 1
		}
		m.policyInForce.Set(v)
	}
}

// PolicyReload counts a change of the policy directories, by result:
// loaded or failed.
func (m *Metrics) PolicyReload(result string) {
	if m != nil {
		m.policyReloads.WithLabelValues(result).Inc()
	}
}

// RuntimesBreakingPolicy records how many runtimes the last audit found
// fault with.
func (m *Metrics) RuntimesBreakingPolicy(n int) {
	if m != nil {
		m.runtimesBreakingPolicy.Set(float64(n))
	}
}

// ReadRecycles makes cuetrainer_engine_recycles_total read recycles (the
// engine in force's) when scraped; 0 until set.
func (m *Metrics) ReadRecycles(recycles func() int64) {
	if m != nil {
		m.engineRecycles.read(func() float64 { return float64(recycles()) })
	}
}

// ReadDefects makes cuetrainer_engine_defects_total read defects (the
// engine in force's) when scraped; 0 until set.
func (m *Metrics) ReadDefects(defects func() int64) {
	if m != nil {
		m.engineDefects.read(func() float64 { return float64(defects()) })
	}
}

// EvaluationKinds are the values of cuetrainer_engine_evaluations_total's
// label what, in the order ReadEvaluations's function gives the counts.
var EvaluationKinds = []string{"review", "lookup", "render", "mutation", "crd-part"}

// ReadEvaluations makes cuetrainer_engine_evaluations_total read counts
// (the engine in force's, one per EvaluationKinds) when scraped; 0 until
// set.
func (m *Metrics) ReadEvaluations(counts func() []int64) {
	if m != nil {
		m.engineEvaluations.read(counts)
	}
}

// ReadCacheReads makes cuetrainer_controller_cache_reads read cached
// (whether the controller and the webhooks read their kinds from the cache)
// when scraped: 1 for true, 0 for false, and 0 until set.
func (m *Metrics) ReadCacheReads(cached func() bool) {
	if m != nil {
		m.cacheReads.read(func() float64 {
			if cached() {
				return 1
			}
			return 0
		})
	}
}

// readMetric is a gauge or a counter whose value is read when scraped, as
// prometheus.GaugeFunc's, from a function that can be replaced: the one the
// last Setup set, once registered.
type readMetric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value atomic.Pointer[func() float64]
}

func newReadMetric(kind prometheus.ValueType, name, help string) *readMetric {
	return &readMetric{desc: prometheus.NewDesc(name, help, nil, nil), kind: kind}
}

func (r *readMetric) read(f func() float64) { r.value.Store(&f) }

// Describe implements prometheus.Collector.
func (r *readMetric) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

// Collect implements prometheus.Collector.
func (r *readMetric) Collect(ch chan<- prometheus.Metric) {
	v := 0.0
	if f := r.value.Load(); f != nil {
		v = (*f)()
	}
	ch <- prometheus.MustNewConstMetric(r.desc, r.kind, v)
}

// readVec is a readMetric with one label: a value per label value, read
// when scraped from a function that can be replaced.
type readVec struct {
	desc   *prometheus.Desc
	kind   prometheus.ValueType
	labels []string
	values atomic.Pointer[func() []int64]
}

func newReadVec(kind prometheus.ValueType, name, help, label string, labels []string) *readVec {
	return &readVec{desc: prometheus.NewDesc(name, help, []string{label}, nil), kind: kind, labels: labels}
}

func (r *readVec) read(f func() []int64) { r.values.Store(&f) }

// Describe implements prometheus.Collector.
func (r *readVec) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

// Collect implements prometheus.Collector.
func (r *readVec) Collect(ch chan<- prometheus.Metric) {
	var values []int64
	if f := r.values.Load(); f != nil {
		values = (*f)()
	}
	for i, l := range r.labels {
		v := 0.0
		if i < len(values) {
			v = float64(values[i])
		}
		ch <- prometheus.MustNewConstMetric(r.desc, r.kind, v, l)
	}
}
