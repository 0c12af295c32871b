package controller

import (
	"context"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// crdWatch says whether the CRDs of the kinds the engine admits are still
// the ones the process started with. While they are, the controller and the
// webhooks read those kinds (the TrainJob, its runtime) from the cache.
// Once one has changed, an informer may go on serving objects pruned by the
// old schema (its watch was opened under it), so from then on they read
// them from the API server, until the process restarts.
type crdWatch struct {
	reader client.Reader
	// generations are the CRDs' metadata.generation before the informers
	// started, by name.
	generations map[string]int64
	changed     atomic.Bool
}

// newCRDWatch reads the generation of each named CRD from the API server.
// It returns nil when it cannot (a CRD missing, or no permission to read
// CRDs): the controller and the webhooks then always read from the API
// server.
func newCRDWatch(ctx context.Context, live client.Reader, names []string) (*crdWatch, error) {
	w := &crdWatch{reader: live, generations: map[string]int64{}}
	for _, name := range names {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(crdGVK)
		if err := live.Get(ctx, client.ObjectKey{Name: name}, m); err != nil {
			return nil, err
		}
		w.generations[name] = m.GetGeneration()
	}
	return w, nil
}

// Unchanged reports whether the cache may serve the kinds: false for a nil
// watch.
func (w *crdWatch) Unchanged() bool { return w != nil && !w.changed.Load() }

// setup watches the CRDs' metadata, through the manager's cache.
func (w *crdWatch) setup(mgr ctrl.Manager) error {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(crdGVK)
	w.reader = mgr.GetClient()
	// On every replica, leader or not, so that its gauge is right on each.
	return ctrl.NewControllerManagedBy(mgr).Named("crd-generations").
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		For(crd, builder.OnlyMetadata, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			_, ok := w.generations[o.GetName()]
			return ok
		}))).
		Complete(w)
}

// Reconcile notes a CRD whose generation is not the one at start.
func (w *crdWatch) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	want, ok := w.generations[req.Name]
	if !ok {
		return ctrl.Result{}, nil
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(crdGVK)
	err := w.reader.Get(ctx, req.NamespacedName, m)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if (err != nil || m.GetGeneration() != want) && !w.changed.Swap(true) {
		log.FromContext(ctx).Info("a CRD changed since the controller started: reading its kinds from the API server until restart",
			"crd", req.Name, "generation", m.GetGeneration(), "atStart", want)
	}
	return ctrl.Result{}, nil
}
