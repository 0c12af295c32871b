package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/cuetrainer/cuetrainer/controller/metrics"
	"github.com/cuetrainer/cuetrainer/engine"
)

// FieldOwner is the field manager of what the controller applies: Kubeflow
// Trainer's, so that cuetrainer takes over a cluster's objects in place.
const FieldOwner = "trainer"

// TrainJobGVK is the kind the controller reconciles.
var TrainJobGVK = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "TrainJob"}

// TrainJobReconciler applies what the engine renders for a TrainJob, with
// server-side apply, and keeps the TrainJob's status as the CUE says.
type TrainJobReconciler struct {
	Client client.Client
	// Reader reads the TrainJob from the API server (not a cache that may
	// hold it pruned by an older CRD); Client when nil. Client reads it
	// instead while Cached says the cache may serve it.
	Reader client.Reader
	Cached func() bool
	// Engine is the engine in force, nil while none is (Closed says why:
	// the TrainJob waits, and nothing is created).
	Engine   func() *engine.Engine
	Closed   func() error
	Cluster  engine.Cluster
	Recorder events.EventRecorder
	Release  string
	Now      func() time.Time
	// Metrics records the renders' durations; none when nil.
	Metrics *metrics.Metrics
	// Applied is told each object applied, for Cluster's reads.
	Applied *applied
}

// closedRetry is how long a TrainJob waits for a policy in force before
// it is reconciled again.
const closedRetry = 10 * time.Second

// Reconcile renders one TrainJob and applies the result.
func (r *TrainJobReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	tj := &unstructured.Unstructured{}
	tj.SetGroupVersionKind(TrainJobGVK)
	reader := r.Reader
	if reader == nil || r.Cached != nil && r.Cached() {
		reader = r.Client
	}
	if err := reader.Get(ctx, req.NamespacedName, tj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if tj.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}

	e := r.Engine()
	if e == nil {
		// No policy in force: nothing is created until one is.
		why := "no policy in force"
		if r.Closed != nil && r.Closed() != nil {
			why = r.Closed().Error()
		}
		logger.Info("the TrainJob waits for a policy in force", "reason", why)
		return ctrl.Result{RequeueAfter: closedRetry}, nil
	}
	start := time.Now()
	s := e.NewSession(engine.SessionOptions{Release: r.Release, NoBuiltinRuntimes: true, Cluster: r.Cluster, Controller: true})
	// The TrainJob passed its CRD's checks when it was written.
	admitted := s.AdmitRequest(ctx, engine.Document{File: "cluster", Object: tj.Object}, engine.Request{Operation: "UPDATE", OldObject: tj.Object, SchemaChecked: true})
	if admitted.Object == nil {
		// It does not even fit the schema (the CRD let it in): say so once.
		r.fail(tj, findings(admitted.Errors))
		return ctrl.Result{}, nil
	}
	out := s.Render(admitted, engine.RenderOptions{})
	r.Metrics.ObserveEvaluation("render", time.Since(start))

	if out.Controller.Skip == "" && admitted.Rejected() {
		// Its runtime is gone, say: Kubeflow retries with backoff too.
		r.fail(tj, findings(admitted.Errors))
		return ctrl.Result{}, fmt.Errorf("admitting: %s", findings(admitted.Errors))
	}
	if out.Controller.Skip == "" && len(out.Errors) > 0 {
		r.fail(tj, findings(out.Errors))
		return ctrl.Result{}, fmt.Errorf("rendering: %s", findings(out.Errors))
	}
	if out.Controller.Skip != "" {
		logger.V(2).Info("applying nothing", "why", out.Controller.Skip)
	}
	for _, obj := range out.InApplyOrder() {
		u := &unstructured.Unstructured{Object: obj}
		if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			err = fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
			r.fail(tj, err.Error())
			return ctrl.Result{}, err
		}
		r.Applied.note(objectKey{u.GroupVersionKind().Group, u.GetKind(), u.GetNamespace(), u.GetName()})
	}
	result, err := r.deadline(ctx, tj, &out.Controller)
	if err != nil {
		return ctrl.Result{}, err
	}
	return result, r.updateStatus(ctx, tj, out.Controller)
}

// deadline carries out the CUE's controller.deadline: past it, the
// conditions join the status and the objects are deleted; before it, the
// TrainJob is looked at again then.
func (r *TrainJobReconciler) deadline(ctx context.Context, tj *unstructured.Unstructured, d *engine.ControllerDirectives) (ctrl.Result, error) {
	dl := d.Deadline
	if dl == nil {
		return ctrl.Result{}, nil
	}
	now := r.now()
	since := now
	if dl.Since != "now" {
		t, err := time.Parse(time.RFC3339, dl.Since)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("deadline: since %q: %w", dl.Since, err)
		}
		since = t
	}
	at := since.Add(time.Duration(dl.Seconds) * time.Second)
	if !now.After(at) {
		return ctrl.Result{RequeueAfter: max(at.Sub(now), time.Second)}, nil
	}
	d.Status.Conditions = append(d.Status.Conditions, dl.Conditions...)
	for _, ref := range dl.Delete {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(ref.APIVersion)
		u.SetKind(ref.Kind)
		u.SetNamespace(tj.GetNamespace())
		u.SetName(ref.Name)
		if err := r.Client.Delete(ctx, u); client.IgnoreNotFound(err) != nil && !meta.IsNoMatchError(err) {
			return ctrl.Result{}, fmt.Errorf("deleting %s %s past the deadline: %w", ref.Kind, ref.Name, err)
		}
	}
	return ctrl.Result{}, nil
}

func (r *TrainJobReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// fail records why the TrainJob's objects could not be made, as Kubeflow's
// TrainJobResourcesCreationFailed event.
func (r *TrainJobReconciler) fail(tj *unstructured.Unstructured, why string) {
	if r.Recorder == nil {
		return
	}
	const max = 950
	if len(why) > max {
		why = why[:max] + " ..."
	}
	r.Recorder.Eventf(tj, nil, corev1.EventTypeWarning, "TrainJobResourcesCreationFailed", "Reconcile", "TrainJob resources reconciliation failed: %s", why)
}

func findings(fs []engine.Finding) string {
	msgs := make([]string, len(fs))
	for i, f := range fs {
		msgs[i] = f.String()
	}
	return strings.Join(msgs, "; ")
}

// updateStatus sets the conditions and fields the CUE asks for, and writes
// the status with a merge patch when it changed.
func (r *TrainJobReconciler) updateStatus(ctx context.Context, tj *unstructured.Unstructured, d engine.ControllerDirectives) error {
	old, _, _ := unstructured.NestedMap(tj.Object, "status")
	status := map[string]any{}
	for k, v := range old {
		status[k] = v
	}
	for k, v := range d.Status.Fields {
		status[k] = v
	}
	var conds []metav1.Condition
	if raw, ok := status["conditions"]; ok {
		if err := convert(raw, &conds); err != nil {
			return fmt.Errorf("reading status.conditions: %w", err)
		}
	}
	for _, c := range d.Status.Conditions {
		mc := metav1.Condition{Type: c.Type, Status: metav1.ConditionStatus(c.Status), Reason: c.Reason, Message: c.Message, ObservedGeneration: tj.GetGeneration()}
		if c.LastTransitionTime != "" {
			t, err := time.Parse(time.RFC3339, c.LastTransitionTime)
			if err != nil {
				return fmt.Errorf("condition %s: lastTransitionTime: %w", c.Type, err)
			}
			mc.LastTransitionTime = metav1.NewTime(t)
		} else {
			mc.LastTransitionTime = metav1.NewTime(r.now())
		}
		meta.SetStatusCondition(&conds, mc)
	}
	if len(conds) > 0 {
		var raw any
		if err := convert(conds, &raw); err != nil {
			return err
		}
		status["conditions"] = raw
	}
	if len(old) == 0 && len(status) == 0 {
		return nil // no status, and nothing to say
	}
	var before, after any
	if err := convert(old, &before); err != nil {
		return err
	}
	if err := convert(status, &after); err != nil {
		return err
	}
	if reflect.DeepEqual(before, after) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	return r.Client.Status().Patch(ctx, tj, client.RawPatch(types.MergePatchType, patch))
}

// convert copies a value through JSON.
func convert(from, to any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, to)
}
