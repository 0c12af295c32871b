package controller

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/cuetrainer/cuetrainer/controller/metrics"
	"github.com/cuetrainer/cuetrainer/engine"
)

// PolicyReloader keeps the engine in force for policy directories (a mounted
// ConfigMap): it reloads them when their content changes and swaps the new
// engine in. A policy that does not load (a panic of the load's included)
// is logged, counted and recorded as an event, and the last good one stays
// in force. It records the loads and reloads in the metrics the manager
// serves (cuetrainer_policy_*), and logs and counts each load's warnings
// once.
//
// A policy that does not load when the process starts leaves no policy in
// force: admission is closed (the webhooks refuse every request they
// serve, saying why), the controller creates nothing, and the replica is
// not ready (Ready), so that a rollout of a broken policy stops at its
// first replica while the others serve the last good one. The reloader
// tries again every Interval, changed or not, and opens as soon as the
// policy loads (docs/controller.md).
type PolicyReloader struct {
	Options  engine.Options
	Interval time.Duration
	// Recorder records a load that fails, and one with warnings, as an
	// event on Pod (the replica's own); nothing when either is nil.
	Recorder events.EventRecorder
	Pod      *corev1.Pod
	// Load loads the policies on a reload: engine.New when nil (a test
	// gives one that fails in its own way).
	Load func(engine.Options) (*engine.Engine, error)

	metrics *metrics.Metrics

	current atomic.Pointer[engine.Engine]
	// mu guards digest and reported, which Check and Start share.
	mu       sync.Mutex
	digest   string
	reported string
	// LastError is why the last load failed; nil after a good one.
	lastError atomic.Pointer[error]
}

// NewPolicyReloader loads the policies once. A policy that does not load
// is no error: the reloader has none in force (LastError says why, Ready
// fails) until one loads. The error is the metrics' or the directories'.
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
	p.digest = digest
	e, err := p.loadNow()
	if err != nil {
		p.lastError.Store(&err)
		p.metrics.PolicyInForce(false)
		return p, nil
	}
	p.swapIn(e)
	return p, nil
}

// Engine returns the engine in force; nil while none is (the policy did not
// load at start).
func (p *PolicyReloader) Engine() *engine.Engine { return p.current.Load() }

// LastError is why the last load failed, nil if it did not.
func (p *PolicyReloader) LastError() error {
	if e := p.lastError.Load(); e != nil {
		return *e
	}
	return nil
}

// Closed is why no policy is in force, nil while one is: admission refuses
// and the controller waits.
func (p *PolicyReloader) Closed() error {
	if p.Engine() != nil {
		return nil
	}
	return fmt.Errorf("cuetrainer's policy did not load, so admission is closed until it does: %w", p.LastError())
}

// Ready is the replica's readiness: not ready while no policy is in force.
func (p *PolicyReloader) Ready(*http.Request) error { return p.Closed() }

// NeedLeaderElection is false: every replica serves webhooks.
func (p *PolicyReloader) NeedLeaderElection() bool { return false }

// Start reports a policy that did not load at start, then checks the
// directories every Interval until ctx ends.
func (p *PolicyReloader) Start(ctx context.Context) error {
	if err := p.LastError(); err != nil && p.Engine() == nil {
		p.mu.Lock()
		p.failed(ctx, err)
		p.mu.Unlock()
	}
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

// Check reloads the policies if they changed, or if none is in force, and
// reports whether a new engine is in force.
func (p *PolicyReloader) Check(ctx context.Context) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	digest, err := engine.PolicyDigest(p.Options.PolicyDirs)
	if err != nil {
		p.metrics.PolicyReload("failed")
		p.failed(ctx, err)
		return false
	}
	if digest == p.digest && p.Engine() != nil {
		return false
	}
	e, err := p.loadNow()
	p.digest = digest // a broken version is reported once, not every tick
	if err != nil {
		p.metrics.PolicyReload("failed")
		p.failed(ctx, err)
		return false
	}
	p.swapIn(e)
	p.metrics.PolicyReload("loaded")
	p.reported = ""
	logger := log.FromContext(ctx).WithName("policies")
	logger.Info("policies reloaded", "dirs", p.Options.PolicyDirs)
	p.warned(ctx, e)
	return true
}

// loadNow loads the policies; a panic of the load's (which the engine
// recovers itself) is a failed load, never the process's end.
func (p *PolicyReloader) loadNow() (e *engine.Engine, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("loading the policies panicked: %v: a defect of cuetrainer's, not of the policy; please report it, with the policy\n%s", r, debug.Stack())
		}
	}()
	if p.Load == nil {
		return engine.New(p.Options)
	}
	return p.Load(p.Options)
}

// swapIn puts e in force.
func (p *PolicyReloader) swapIn(e *engine.Engine) {
	p.current.Store(e)
	p.lastError.Store(nil)
	p.metrics.PolicyLoaded()
	p.metrics.PolicyInForce(true)
	p.metrics.PolicyWarnings(len(e.Warnings()))
}

// failed records a load that failed: in the log and as an event, once for
// the same error (a policy that does not load at start is tried again
// every tick), and as LastError. The caller holds mu.
func (p *PolicyReloader) failed(ctx context.Context, err error) {
	p.lastError.Store(&err)
	if err.Error() == p.reported {
		return
	}
	p.reported = err.Error()
	logger := log.FromContext(ctx).WithName("policies")
	if p.Engine() == nil {
		logger.Error(err, "the policies do not load, and none is in force: admission is closed and the replica not ready until they load")
	} else {
		logger.Error(err, "the policies do not load; the last good ones stay in force")
	}
	p.event(corev1.EventTypeWarning, "PolicyLoadFailed", "Load", err.Error())
}

// warned logs the warnings of a load, once each, and records them as an
// event.
func (p *PolicyReloader) warned(ctx context.Context, e *engine.Engine) {
	ws := e.Warnings()
	if len(ws) == 0 {
		return
	}
	logger := log.FromContext(ctx).WithName("policies")
	for _, w := range ws {
		logger.Info("a warning of the policies' load", "at", w.Where(), "warning", w.Message)
	}
	p.event(corev1.EventTypeWarning, "PolicyLoadWarnings", "Load", fmt.Sprintf("%d warnings; the first: %s", len(ws), ws[0].String()))
}

// LogWarnings logs the warnings of the load in force, as a reload does
// (the process's first load is done before it has a logger's context).
func (p *PolicyReloader) LogWarnings(ctx context.Context) {
	if e := p.Engine(); e != nil {
		p.warned(ctx, e)
	}
}

// maxEventNote is what an event's note may hold (events.k8s.io/v1).
const maxEventNote = 1024

func (p *PolicyReloader) event(typ, reason, action, note string) {
	if p.Recorder == nil || p.Pod == nil {
		return
	}
	if len(note) > maxEventNote {
		note = note[:maxEventNote-3] + "..."
	}
	p.Recorder.Eventf(p.Pod, nil, typ, reason, action, "%s", note)
}

// OwnPod is the replica's Pod, for events, from the downward API's name
// and namespace; nil without a name.
func OwnPod(name, namespace string) *corev1.Pod {
	if name == "" {
		return nil
	}
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
}
