package controller

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/cuetrainer/cuetrainer/engine"
)

var (
	policyReloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cuetrainer_policy_reloads_total",
		Help: "Policy directory changes seen, by result: loaded, or failed (the last good policy stays).",
	}, []string{"result"})
	policyLoaded = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cuetrainer_policy_loaded_timestamp_seconds",
		Help: "When the policies in force were loaded.",
	})
)

func init() {
	metricsRegistry.MustRegister(policyReloads, policyLoaded)
}

// PolicyReloader keeps the engine in force for policy directories (a mounted
// ConfigMap): it reloads them when their content changes and swaps the new
// engine in; a policy that does not load is logged and counted, and the last
// good one stays in force.
type PolicyReloader struct {
	Options  engine.Options
	Interval time.Duration

	current atomic.Pointer[engine.Engine]
	digest  string
	// LastError is why the last reload failed; nil after a good one.
	lastError atomic.Pointer[error]
}

// NewPolicyReloader loads the policies once: they must load at start.
func NewPolicyReloader(opts engine.Options, interval time.Duration) (*PolicyReloader, error) {
	p := &PolicyReloader{Options: opts, Interval: interval}
	digest, err := engine.PolicyDigest(opts.PolicyDirs)
	if err != nil {
		return nil, err
	}
	e, err := engine.New(opts)
	if err != nil {
		return nil, err
	}
	p.current.Store(e)
	p.digest = digest
	policyLoaded.SetToCurrentTime()
	return p, nil
}

// Engine returns the engine in force.
func (p *PolicyReloader) Engine() *engine.Engine { return p.current.Load() }

// LastError is why the last reload failed, nil if it did not.
func (p *PolicyReloader) LastError() error {
	if e := p.lastError.Load(); e != nil {
		return *e
	}
	return nil
}

// NeedLeaderElection is false: every replica serves webhooks.
func (p *PolicyReloader) NeedLeaderElection() bool { return false }

// Start checks the directories every Interval until ctx ends.
func (p *PolicyReloader) Start(ctx context.Context) error {
	interval := p.Interval
	if interval == 0 {
		interval = 10 * time.Second
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
		p.Check(ctx)
	}
}

// Check reloads the policies if they changed, and reports whether a new
// engine is in force.
func (p *PolicyReloader) Check(ctx context.Context) bool {
	logger := log.FromContext(ctx).WithName("policies")
	digest, err := engine.PolicyDigest(p.Options.PolicyDirs)
	if err != nil {
		p.fail(logger.Error, err)
		return false
	}
	if digest == p.digest {
		return false
	}
	e, err := engine.New(p.Options)
	p.digest = digest // a broken version is reported once, not every tick
	if err != nil {
		p.fail(logger.Error, err)
		return false
	}
	p.current.Store(e)
	p.lastError.Store(nil)
	policyReloads.WithLabelValues("loaded").Inc()
	policyLoaded.SetToCurrentTime()
	logger.Info("policies reloaded", "dirs", p.Options.PolicyDirs)
	return true
}

func (p *PolicyReloader) fail(logError func(error, string, ...any), err error) {
	p.lastError.Store(&err)
	policyReloads.WithLabelValues("failed").Inc()
	logError(err, "the policies do not load; the last good ones stay in force")
}
