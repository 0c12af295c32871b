package bench_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/cuetrainer/cuetrainer/controller"
	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/testing/benchinput"
)

// burstSize is how many TrainJobs a run of BenchmarkController creates;
// burstCreators how many clients create them at once.
const (
	burstSize     = 1000
	burstCreators = 8
)

var jobSetGVR = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}

// BenchmarkController measures how fast TrainJobs become JobSets on
// envtest: burstSize TrainJobs (torch-distributed, two nodes) are created
// by burstCreators clients while the controller runs, and the time is from
// the first create to the last of their JobSets existing (seen by a watch).
// Ours is controller.Setup's TrainJob controller, as `cuetrainer
// controller` runs it; the baseline a reconciler that reads the TrainJob
// from the cache and applies one fixed JobSet (ours, rendered once
// beforehand) named after it: the same manager options, client,
// server-side apply and field owner, and the same concurrency as ours
// (controller.DefaultConcurrency reconciles at once). Each run has its own namespace, and its manager
// caches that namespace only (else a manager would start by reconciling the
// runs before it). The runs go baseline, ours, ours, baseline so that a
// drift of the machine or of etcd's size weighs on both.
//
// It also runs a second baseline beside ours, "both": a reconciler that
// applies both objects of the render, fixed, in ours's order (the runtime
// snapshot ConfigMap, then the JobSet, named after the TrainJob): the two
// writes Kubeflow's controller makes too (it creates the snapshot, then
// applies the JobSet). The runs then go baseline, both, ours, ours, both,
// baseline.
func BenchmarkController(b *testing.B) { benchmarkController(b, trainJobOf, true) }

// BenchmarkControllerDistinct is BenchmarkController with TrainJobs that
// differ from each other in what they ask for (distinctTrainJob): numNodes
// and env. The baseline applies its one fixed JobSet as before.
func BenchmarkControllerDistinct(b *testing.B) { benchmarkController(b, distinctTrainJob, false) }

// benchmarkController runs BenchmarkController with the i-th TrainJob of
// a burst made by newJob, and with the second baseline when both is set.
func benchmarkController(b *testing.B, newJob func(b *testing.B, i int, ns string) *unstructured.Unstructured, both bool) {
	cfg, c := controlPlane(b)
	policies, err := controller.NewPolicyReloader(engine.Options{}, 10*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	fixed := fixedObjects(b, policies.Engine())
	perSecond := map[string][]float64{}
	var created []float64
	requests := map[string][]float64{}
	runs := []string{"baseline", "ours", "ours", "baseline"}
	if both {
		runs = []string{"baseline", "both", "ours", "ours", "both", "baseline"}
	}
	for _, who := range runs {
		ns := namespace(b, c, "bench-"+who)
		stop := startReconciler(b, cfg, ns, who, policies, fixed)
		before := counters(b)
		took, creating := burst(b, cfg, c, ns, newJob)
		after := counters(b)
		stop()
		perSecond[who] = append(perSecond[who], burstSize/took.Seconds())
		created = append(created, creating.Seconds())
		// What each TrainJob cost, until the last JobSet: reconciles, and
		// requests to the API server by method (the creates are the
		// benchmark's POSTs; reconciles still under way count too).
		var per []string
		reads, writes := 0.0, 0.0
		for _, k := range slices.Sorted(maps.Keys(after)) {
			d := (after[k] - before[k]) / burstSize
			if d > 0 {
				per = append(per, fmt.Sprintf("%s %.2f", k, d))
			}
			switch k {
			case "GET":
				reads += d
			case "PATCH", "PUT", "DELETE":
				writes += d
			}
		}
		requests[who+"-reads/job"] = append(requests[who+"-reads/job"], reads)
		requests[who+"-writes/job"] = append(requests[who+"-writes/job"], writes)
		b.Logf("%s: %d TrainJobs created in %s, all JobSets after %s; per TrainJob: %s", who, burstSize,
			creating.Round(time.Millisecond), took.Round(time.Millisecond), strings.Join(per, ", "))
	}
	ours, base := perSecond["ours"], perSecond["baseline"]
	// The ratio of each pair measured next to each other: (baseline 1,
	// ours 1) and (ours 2, baseline 2).
	ratios := []float64{ours[0] / base[0], ours[1] / base[1]}
	b.ReportMetric(mean(ours), "ours-jobs/s")
	b.ReportMetric(mean(base), "baseline-jobs/s")
	b.ReportMetric(mean(ratios), "ratio")
	b.ReportMetric(slices.Min(ratios), "ratio-min")
	if both {
		// Ours beside the second baseline, pair by pair: (both 1, ours 1)
		// and (ours 2, both 2).
		both := perSecond["both"]
		b.ReportMetric(mean(both), "both-jobs/s")
		b.ReportMetric(mean([]float64{ours[0] / both[0], ours[1] / both[1]}), "ratio-both")
	}
	b.ReportMetric(mean(created), "create-s")
	for k, vs := range requests {
		b.ReportMetric(mean(vs), k)
	}
}

// counters reads the process's reconciles of the TrainJob controllers and
// its requests to the API server by method.
func counters(b *testing.B) map[string]float64 {
	b.Helper()
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetName() {
			case "controller_runtime_reconcile_total":
				if labels["controller"] == "trainjob" {
					out["reconciles"] += m.GetCounter().GetValue()
				}
			case "rest_client_requests_total":
				out[labels["method"]] += m.GetCounter().GetValue()
			}
		}
	}
	return out
}

func mean(vs []float64) float64 {
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

func trainJob(b *testing.B, name, ns string) *unstructured.Unstructured {
	return decodeTrainJob(b, []byte(benchinput.ControllerTrainJob(name, ns)))
}

func decodeTrainJob(b *testing.B, data []byte) *unstructured.Unstructured {
	docs := engine.ReadYAML("trainjob.yaml", data)
	if len(docs) != 1 || docs[0].Err != nil {
		b.Fatalf("the TrainJob: %v", docs)
	}
	return &unstructured.Unstructured{Object: docs[0].Object}
}

// trainJobOf is the i-th TrainJob of BenchmarkController's burst: all
// alike but for their names.
func trainJobOf(b *testing.B, i int, ns string) *unstructured.Unstructured {
	return trainJob(b, fmt.Sprintf("job-%04d", i), ns)
}

// distinctTrainJob is the i-th TrainJob of BenchmarkControllerDistinct's
// burst (benchinput.ControllerDistinctTrainJob).
func distinctTrainJob(b *testing.B, i int, ns string) *unstructured.Unstructured {
	return decodeTrainJob(b, []byte(benchinput.ControllerDistinctTrainJob(i, ns)))
}

// fixedObjects are the objects the engine renders for a TrainJob of the
// benchmark named "fixed", with the shipped runtimes, in a controller's
// apply order (the runtime snapshot ConfigMap, the JobSet): the baselines apply them as
// they are, but for their names (the TrainJob's for "fixed"), namespace
// and owner; the first baseline the JobSet alone.
func fixedObjects(b *testing.B, e *engine.Engine) []map[string]any {
	b.Helper()
	tj := trainJob(b, "fixed", "bench")
	tj.SetUID("00000000-0000-4000-8000-000000000001")
	s := e.NewSession(engine.SessionOptions{})
	r := s.Admit(engine.Document{File: "fixed", Object: tj.Object})
	if r.Rejected() {
		b.Fatalf("the TrainJob is rejected: %v", r.Errors)
	}
	out := s.Render(r, engine.RenderOptions{}).Objects
	if len(out) != 2 || len(jobSetsOf(out)) != 1 {
		b.Fatalf("the render is not a JobSet and a snapshot: %v", out)
	}
	// A controller applies the JobSet last (its applyPhase), as Kubeflow's
	// creates the snapshot first.
	slices.SortStableFunc(out, func(a, b map[string]any) int {
		isJobSet := func(o map[string]any) int { return len(jobSetsOf([]map[string]any{o})) }
		return isJobSet(a) - isJobSet(b)
	})
	return out
}

// jobSetsOf are the JobSets among objects.
func jobSetsOf(objects []map[string]any) []map[string]any {
	var out []map[string]any
	for _, o := range objects {
		if (&unstructured.Unstructured{Object: o}).GetKind() == "JobSet" {
			out = append(out, o)
		}
	}
	return out
}

// fixedReconciler is a baseline: the fixed objects per TrainJob.
type fixedReconciler struct {
	client  client.Client
	objects []map[string]any
}

func (r *fixedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tj := &unstructured.Unstructured{}
	tj.SetGroupVersionKind(controller.TrainJobGVK)
	if err := r.client.Get(ctx, req.NamespacedName, tj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	for _, o := range r.objects {
		obj := &unstructured.Unstructured{Object: apiruntime.DeepCopyJSON(o)}
		obj.SetName(tj.GetName() + strings.TrimPrefix(obj.GetName(), "fixed"))
		obj.SetNamespace(tj.GetNamespace())
		obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: tj.GetAPIVersion(), Kind: tj.GetKind(), Name: tj.GetName(),
			UID: tj.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
		if err := r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(controller.FieldOwner), client.ForceOwnership); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// startReconciler starts a manager that reconciles the TrainJobs of ns,
// ours or the baseline, waits until it has made a first TrainJob's JobSet,
// and returns how to stop it.
func startReconciler(b *testing.B, cfg *rest.Config, ns, who string, policies *controller.PolicyReloader, fixed []map[string]any) func() {
	b.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Client:     client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		b.Fatal(err)
	}
	if who == "ours" {
		err = controller.Setup(mgr, controller.Options{Engine: policies.Engine, Reconcile: true})
	} else {
		objects := jobSetsOf(fixed)
		if who == "both" {
			objects = fixed
		}
		tj := &unstructured.Unstructured{}
		tj.SetGroupVersionKind(controller.TrainJobGVK)
		js := &unstructured.Unstructured{}
		js.SetGroupVersionKind(jobSetGVR.GroupVersion().WithKind("JobSet"))
		bld := ctrl.NewControllerManagedBy(mgr).For(tj).Named("trainjob").Owns(js)
		if who == "both" {
			// It owns the ConfigMaps it applies, as ours does.
			cm := &unstructured.Unstructured{}
			cm.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
			bld = bld.Owns(cm)
		}
		err = bld.WithOptions(crcontroller.Options{MaxConcurrentReconciles: controller.DefaultConcurrency}).
			Complete(&fixedReconciler{client: mgr.GetClient(), objects: objects})
	}
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}
	c := mgr.GetAPIReader()
	if err := mgr.GetClient().Create(ctx, trainJob(b, "warm-up", ns)); err != nil {
		stop()
		b.Fatal(err)
	}
	waitFor(b, time.Minute, who+": the warm-up TrainJob's JobSet", func() error {
		js := &unstructured.Unstructured{}
		js.SetGroupVersionKind(jobSetGVR.GroupVersion().WithKind("JobSet"))
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "warm-up"}, js)
	})
	return stop
}

// burst creates burstSize TrainJobs in ns, the i-th newJob(b, i, ns), and
// returns the time until all their JobSets exist, and the time the creates
// took. It gives up after five minutes.
func burst(b *testing.B, cfg *rest.Config, c client.Client, ns string, newJob func(b *testing.B, i int, ns string) *unstructured.Unstructured) (took, creating time.Duration) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w, err := metadata.NewForConfigOrDie(cfg).Resource(jobSetGVR).Namespace(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	start := time.Now()
	all := make(chan time.Time, 1)
	go func() {
		seen := map[string]bool{}
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			if m, err := metadataOf(ev.Object); err == nil && m.GetName() != "warm-up" {
				seen[m.GetName()] = true
			}
			if len(seen) == burstSize {
				all <- time.Now()
				return
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, burstCreators)
	for w := 0; w < burstCreators; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < burstSize; i += burstCreators {
				if err := c.Create(ctx, newJob(b, i, ns)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	creating = time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatalf("creating TrainJobs: %v", err)
	}
	select {
	case end := <-all:
		return end.Sub(start), creating
	case <-ctx.Done():
		b.Fatalf("not every JobSet within five minutes")
	}
	return 0, 0
}

func metadataOf(o apiruntime.Object) (metav1.Object, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", o)
	}
	return m, nil
}
