package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The controller's metrics, served with controller-runtime's (reconcile
// totals, errors and durations per controller) on the metrics endpoint.
var (
	admissionDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "cuetrainer_admission_duration_seconds",
		Help:    "Time to answer an admission request, by kind, operation, handler and outcome.",
		Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1},
	}, []string{"kind", "operation", "handler", "outcome"})
	evaluationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "cuetrainer_engine_evaluation_duration_seconds",
		Help:    "Time the engine takes to admit or render one object.",
		Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1},
	}, []string{"what"})
	engineRecycles = prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "cuetrainer_engine_recycles_total",
		Help: "CUE runtimes replaced by a fresh one (the engine bounds its memory so).",
	}, func() float64 { return float64(recycled()) })
	cacheReads = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "cuetrainer_controller_cache_reads",
		Help: "1 while the controller and the webhooks read TrainJobs and runtimes from the cache (their CRDs unchanged since the process started), 0 when they read them from the API server.",
	}, func() float64 {
		if cachedReads() {
			return 1
		}
		return 0
	})
)

// cachedReads reports whether the controller and the webhooks read their
// kinds from the cache; set by Setup.
var cachedReads = func() bool { return false }

// recycled reports the current engine's recycles; set by Setup.
var recycled = func() int64 { return 0 }

// metricsRegistry is controller-runtime's, served on its metrics endpoint.
var metricsRegistry = metrics.Registry

func init() {
	metricsRegistry.MustRegister(admissionDuration, evaluationDuration, engineRecycles, cacheReads)
}
