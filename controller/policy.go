package controller

import (
	"context"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/cuetrainer/cuetrainer/controller/metrics"
	"github.com/cuetrainer/cuetrainer/engine"
)

// PolicyReloader keeps the engine in force for policy directories (a mounted
// ConfigMap): it reloads them when their content changes and swaps the new
// engine in; a policy that does not load is logged and counted, and the last
// good one stays in force. It records the loads and reloads in the metrics
// the manager serves (cuetrainer_policy_*).
type PolicyReloader struct {
	Options  engine.Options
	Interval time.Duration

	metrics *metrics.Metrics

	current atomic.Pointer[engine.Engine]
	digest  string
	// LastError is why the last reload failed; nil after a good one.
	lastError atomic.Pointer[error]
}

// NewPolicyReloader loads the policies once: they must load at start.
func NewPolicyReloader(opts engine.Options, interval time.Duration) (*PolicyReloader, error) {
	m, err := servedMetrics()
	if err != nil {
		return nil, err
	}
	p := &PolicyReloader{Options: opts, Interval: interval, metrics: m}
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
	p.metrics.PolicyLoaded()
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
	p.metrics.PolicyReload("loaded")
	p.metrics.PolicyLoaded()
	logger.Info("policies reloaded", "dirs", p.Options.PolicyDirs)
	return true
}

func (p *PolicyReloader) fail(logError func(error, string, ...any), err error) {
	p.lastError.Store(&err)
	p.metrics.PolicyReload("failed")
	logError(err, "the policies do not load; the last good ones stay in force")
}
