package controller

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/cuetrainer/cuetrainer/controller/metrics"
	"github.com/cuetrainer/cuetrainer/engine"
)

// RuntimeAudit reviews the cluster's runtimes with the policy in force, at
// start and whenever it changes (a policy reload). The webhook checks a
// runtime when it is created or changed, with the policy of that moment: a
// runtime created before an organisation's rule (the shipped runtimes,
// installed with cuetrainer) is not checked again by it. A runtime the
// rules now find fault with is logged, gets a Warning event
// (PolicyViolation) that names its findings, and counts in
// cuetrainer_runtimes_breaking_policy.
type RuntimeAudit struct {
	Engine   func() *engine.Engine
	Cluster  cluster
	Recorder events.EventRecorder
	Release  string
	// Interval is how often it looks whether the policy changed.
	Interval time.Duration
	// Metrics records the count; none when nil.
	Metrics *metrics.Metrics
}

// NeedLeaderElection is true: one replica reports.
func (a *RuntimeAudit) NeedLeaderElection() bool { return true }

// Start audits at once, then whenever the engine in force changes.
func (a *RuntimeAudit) Start(ctx context.Context) error {
	interval := a.Interval
	if interval == 0 {
		interval = time.Second
	}
	var last *engine.Engine
	for {
		if e := a.Engine(); e != nil && e != last {
			if err := a.Audit(ctx, e); err != nil {
				log.FromContext(ctx).WithName("runtime-audit").Error(err, "auditing the runtimes")
			} else {
				last = e
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// Audit reviews every runtime of the cluster as the webhook would admit it
// now, and reports those it would refuse.
func (a *RuntimeAudit) Audit(ctx context.Context, e *engine.Engine) error {
	logger := log.FromContext(ctx).WithName("runtime-audit")
	docs, err := readRuntimes(ctx, e, a.Cluster.reader, a.Cluster.mapper, func(string) bool { return true })
	if err != nil {
		return err
	}
	s := e.NewSession(engine.SessionOptions{Release: a.Release, NoBuiltinRuntimes: true, Cluster: a.Cluster})
	breaking := 0
	for _, doc := range docs {
		// As if created now: a runtime's update skips rules a create runs
		// (a TrainingRuntime is validated on create only). The API server
		// checked it against its CRD when it was stored.
		r := s.AdmitRequest(ctx, doc, engine.Request{Operation: "CREATE", SchemaChecked: true})
		if len(r.Errors) == 0 {
			continue
		}
		breaking++
		why := findings(r.Errors)
		logger.Info("a runtime breaks the policy in force", "runtime", r.Identity(), "findings", why)
		if a.Recorder != nil {
			const max = 950
			if len(why) > max {
				why = why[:max] + " ..."
			}
			a.Recorder.Eventf(&unstructured.Unstructured{Object: doc.Object}, nil, corev1.EventTypeWarning, "PolicyViolation", "Audit",
				"the runtime breaks the policy in force, and would not be admitted now: %s", why)
		}
	}
	a.Metrics.RuntimesBreakingPolicy(breaking)
	return nil
}
