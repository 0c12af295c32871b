package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/cuetrainer/cuetrainer/controller/metrics"
	"github.com/cuetrainer/cuetrainer/controller/webhooks"
	"github.com/cuetrainer/cuetrainer/engine"
)

// Options configure what Setup adds to a manager.
type Options struct {
	// Engine returns the engine to use now; nil while none is in force
	// (Closed says why).
	Engine func() *engine.Engine
	// Closed says why no engine is in force, nil while one is: the
	// webhooks refuse and the controller waits (PolicyReloader.Closed).
	// Never closed when nil.
	Closed func() error
	// Registered is the engine whose kinds the webhooks and the controller
	// are registered for; Engine()'s when nil.
	Registered *engine.Engine
	// Release is the Kubeflow Trainer release the cluster runs, for the
	// deprecation rules; empty for none.
	Release string
	// Webhooks registers the admission handlers on the manager's webhook
	// server; Reconcile adds the TrainJob controller.
	Webhooks, Reconcile bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Client is what the controller reads and writes through; the
	// manager's when nil.
	Client client.Client
	// Concurrency is how many TrainJobs are reconciled at once (never the
	// same one twice); DefaultConcurrency when 0.
	Concurrency int
}

// DefaultConcurrency is how many TrainJobs the controller reconciles at
// once unless told otherwise. A reconcile spends most of its time waiting
// for the API server (two applies), so one at a time leaves the CPU idle;
// four kept 2 CPUs busy on the benchmark's envtest (test/bench).
const DefaultConcurrency = 4

// servedMetrics are the metrics in controller-runtime's registry, which the
// manager serves on its metrics endpoint.
func servedMetrics() (*metrics.Metrics, error) { return metrics.Register(crmetrics.Registry) }

// Setup adds the admission handlers for every kind the engine admits and the
// controller of every kind it renders to the manager. The metrics read the
// engine of o and the CRDs' state of the last Setup (a process may set up
// more than one manager: they are registered once).
func Setup(mgr ctrl.Manager, o Options) error {
	if o.Engine == nil {
		return fmt.Errorf("no engine")
	}
	served, err := servedMetrics()
	if err != nil {
		return err
	}
	served.ReadRecycles(func() int64 {
		if e := o.Engine(); e != nil {
			return e.Recycled()
		}
		return 0
	})
	served.ReadDefects(func() int64 {
		if e := o.Engine(); e != nil {
			return e.Defects()
		}
		return 0
	})
	served.ReadEvaluations(func() []int64 {
		e := o.Engine()
		if e == nil {
			return nil
		}
		n := e.Evaluations()
		return []int64{n.Reviews, n.Lookups, n.Renders, n.Mutations, n.CRDParts}
	})
	e := o.Registered
	if e == nil {
		e = o.Engine()
	}
	if e == nil {
		return fmt.Errorf("no engine to register the kinds of")
	}
	live := map[string]bool{}
	for _, k := range e.Admitted() {
		live[schema.FromAPIVersionAndKind(k.APIVersion, k.Kind).Group] = true
	}
	// The webhooks and the controller read their own kinds (runtimes, the
	// TrainJob) from the cache while the CRDs are the ones they started with
	// (crdWatch), and from the API server once one changed; what the cache
	// lacks (a runtime created a moment before its TrainJob) is read from
	// the API server.
	var crds *crdWatch
	if o.Webhooks || o.Reconcile {
		var names []string
		for _, k := range e.Admitted() {
			gvk := schema.FromAPIVersionAndKind(k.APIVersion, k.Kind)
			m, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				return fmt.Errorf("the CRD of %s: %w", gvk.Kind, err)
			}
			names = append(names, m.Resource.Resource+"."+m.Resource.Group)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		crds, err = newCRDWatch(ctx, mgr.GetAPIReader(), names)
		if err != nil {
			mgr.GetLogger().Info("reading the TrainJobs and runtimes from the API server every time: the CRDs' generations cannot be read", "error", err.Error())
			crds = nil
		} else if err := crds.setup(mgr); err != nil {
			return err
		}
		served.ReadCacheReads(crds.Unchanged)
	}
	applies := newApplied(nil)
	cl := cluster{reader: mgr.GetClient(), mapper: mgr.GetRESTMapper(), live: mgr.GetAPIReader(), liveGroups: live, cached: crds.Unchanged, applied: applies}
	if o.Webhooks {
		webhooks.Register(mgr.GetWebhookServer(), e.Admitted(), webhooks.Admission{Engine: o.Engine, Closed: o.Closed, Cluster: cl, Release: o.Release, Now: o.Now, Metrics: served})
	}
	if !o.Reconcile {
		return nil
	}
	for _, k := range e.Admitted() {
		if !e.Renders(k) {
			continue
		}
		gvk := schema.FromAPIVersionAndKind(k.APIVersion, k.Kind)
		if gvk != TrainJobGVK {
			return fmt.Errorf("the controller reconciles %s only; the CUE renders %s too", TrainJobGVK.Kind, k.Kind)
		}
	}
	c := o.Client
	if c == nil {
		c = mgr.GetClient()
	}
	// The runtimes the policy in force finds fault with are reported by
	// the replica that reconciles.
	if err := mgr.Add(&RuntimeAudit{Engine: o.Engine, Cluster: cl, Recorder: mgr.GetEventRecorder("runtime-audit"), Release: o.Release, Metrics: served}); err != nil {
		return err
	}
	r := &TrainJobReconciler{Client: c, Reader: mgr.GetAPIReader(), Cached: crds.Unchanged, Engine: o.Engine, Closed: o.Closed, Cluster: cl, Recorder: mgr.GetEventRecorder("trainjob-controller"), Release: o.Release, Now: o.Now, Metrics: served, Applied: applies}
	tj := &unstructured.Unstructured{}
	tj.SetGroupVersionKind(TrainJobGVK)
	concurrency := o.Concurrency
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	b := ctrl.NewControllerManagedBy(mgr).For(tj).Named("trainjob").
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: concurrency})
	for _, k := range e.Owned() {
		gvk := schema.FromAPIVersionAndKind(k.APIVersion, k.Kind)
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			if meta.IsNoMatchError(err) {
				mgr.GetLogger().Info("not watching a kind the cluster does not have", "kind", gvk.String())
				continue
			}
			return err
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		b = b.Owns(u)
	}
	return b.Complete(r)
}
