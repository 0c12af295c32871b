package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

// ownedKinds are the kinds a render makes, as the API lists them.
var ownedKinds = map[string]string{"JobSet": "jobset.x-k8s.io/v1alpha2", "ConfigMap": "v1", "Secret": "v1"}

// mpiObjects is what a TrainJob of the shipped DeepSpeed (MPI) runtime owns:
// its JobSet, the hostfile and the runtime snapshot, the SSH Secret.
var mpiObjects = map[string]int{"JobSet": 1, "ConfigMap": 2, "Secret": 1}

// torchObjects is what a TrainJob of the shipped torch runtime owns: its
// JobSet and the runtime snapshot.
var torchObjects = map[string]int{"JobSet": 1, "ConfigMap": 1}

// inventory is what a namespace holds: its TrainJobs and every object of
// the owned kinds, each by uid.
type inventory struct {
	trainJobs map[string]types.UID
	// objects maps "Kind name" to the object's uid and its owners.
	objects map[string]owned
}

type owned struct {
	uid    types.UID
	owners []metav1.OwnerReference
}

func takeInventory(ctx context.Context, ns string) (inventory, error) {
	inv := inventory{trainJobs: map[string]types.UID{}, objects: map[string]owned{}}
	tjs := &unstructured.UnstructuredList{}
	tjs.SetAPIVersion("trainer.kubeflow.org/v1alpha1")
	tjs.SetKind("TrainJobList")
	if err := k8sClient.List(ctx, tjs, client.InNamespace(ns)); err != nil {
		return inv, err
	}
	for _, tj := range tjs.Items {
		inv.trainJobs[tj.GetName()] = tj.GetUID()
	}
	for kind, apiVersion := range ownedKinds {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(apiVersion)
		l.SetKind(kind + "List")
		if err := k8sClient.List(ctx, l, client.InNamespace(ns)); err != nil {
			return inv, err
		}
		for _, o := range l.Items {
			if kind == "ConfigMap" && o.GetName() == "kube-root-ca.crt" {
				continue // the namespace's, should a controller make it
			}
			inv.objects[kind+" "+o.GetName()] = owned{uid: o.GetUID(), owners: o.GetOwnerReferences()}
		}
	}
	return inv, nil
}

// converged says what is wrong with ns: the TrainJobs must be exactly
// names; each object of the owned kinds must have exactly one owner, the
// current TrainJob of its name (by uid), as its controller; and each
// TrainJob must own per[kind] objects of each kind, no more, no less.
func (inv inventory) converged(names []string, per map[string]int) error {
	var errs []error
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
		if _, ok := inv.trainJobs[n]; !ok {
			errs = append(errs, fmt.Errorf("TrainJob %s is missing", n))
		}
	}
	for n := range inv.trainJobs {
		if !want[n] {
			errs = append(errs, fmt.Errorf("TrainJob %s was not created by the test", n))
		}
	}
	counts := map[string]map[string]int{} // TrainJob → kind → objects
	for key, o := range inv.objects {
		var kind string
		fmt.Sscan(key, &kind)
		if len(o.owners) != 1 {
			errs = append(errs, fmt.Errorf("%s has %d owners", key, len(o.owners)))
			continue
		}
		ref := o.owners[0]
		uid, ok := inv.trainJobs[ref.Name]
		switch {
		case ref.Kind != "TrainJob" || ref.APIVersion != "trainer.kubeflow.org/v1alpha1":
			errs = append(errs, fmt.Errorf("%s is owned by %s %s", key, ref.Kind, ref.Name))
		case !ok:
			errs = append(errs, fmt.Errorf("%s is owned by TrainJob %s, which does not exist", key, ref.Name))
		case ref.UID != uid:
			errs = append(errs, fmt.Errorf("%s is owned by an earlier TrainJob %s (uid %s, now %s)", key, ref.Name, ref.UID, uid))
		case ref.Controller == nil || !*ref.Controller:
			errs = append(errs, fmt.Errorf("%s: its TrainJob is not its controller", key))
		default:
			if counts[ref.Name] == nil {
				counts[ref.Name] = map[string]int{}
			}
			counts[ref.Name][kind]++
		}
	}
	for _, n := range names {
		for kind, w := range per {
			if got := counts[n][kind]; got != w {
				errs = append(errs, fmt.Errorf("TrainJob %s owns %d %ss, want %d", n, got, kind, w))
			}
		}
	}
	if len(errs) > 5 {
		errs = append(errs[:5], fmt.Errorf("and %d more", len(errs)-5))
	}
	return errors.Join(errs...)
}

// converge waits until ns holds exactly the TrainJobs names, each with
// exactly its objects, and returns what it holds.
func converge(t *testing.T, ns string, names []string, per map[string]int) inventory {
	t.Helper()
	var inv inventory
	eventually(t, 2*time.Minute, "every TrainJob converged, nothing duplicated or lost", func() error {
		var err error
		if inv, err = takeInventory(context.Background(), ns); err != nil {
			return err
		}
		return inv.converged(names, per)
	})
	return inv
}

// keptFrom checks that everything before held is still there, the same
// object (uid): nothing lost, nothing made again. It returns how many.
func keptFrom(t *testing.T, before, after inventory) int {
	t.Helper()
	kept := 0
	for n, uid := range before.trainJobs {
		if after.trainJobs[n] != uid {
			t.Errorf("TrainJob %s: uid %s, then %q", n, uid, after.trainJobs[n])
		}
	}
	for key, o := range before.objects {
		now, ok := after.objects[key]
		switch {
		case !ok:
			t.Errorf("%s was lost", key)
		case now.uid != o.uid:
			t.Errorf("%s was made again (uid %s, then %s)", key, o.uid, now.uid)
		default:
			kept++
		}
	}
	return kept
}

// count is how many objects of kind ns holds.
func count(t *testing.T, ns, kind string) int {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(ownedKinds[kind])
	l.SetKind(kind + "List")
	if err := k8sClient.List(context.Background(), l, client.InNamespace(ns)); err != nil {
		return -1 // the API server may be down: the callers poll
	}
	return len(l.Items)
}

// eventually polls until check passes, or fails the test with its last
// error.
func eventually(t *testing.T, d time.Duration, what string, check func() error) {
	t.Helper()
	testenv.Eventually(t, d, 200*time.Millisecond, what, check)
}

func namespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8sClient.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

// burst creates TrainJobs job-000 … of runtime from 6 goroutines, as
// clients that retry would: a create that fails is tried again until it
// succeeds. A create the API server answered with an error stored nothing,
// so trying again must not find the TrainJob; after one whose answer was
// lost (the API server went away) it may.
type burst struct {
	names   []string
	created atomic.Int64
	// refused counts creates the API server refused because it could not
	// call a webhook; serverErrors other 5xx answers; unreachable those
	// that found no API server.
	refused, serverErrors, unreachable atomic.Int64
	wg                                 sync.WaitGroup
	mu                                 sync.Mutex
	errs                               []error
}

func startBurst(ns, runtime, kind string, n int) *burst {
	b := &burst{}
	for i := range n {
		b.names = append(b.names, fmt.Sprintf("job-%03d", i))
	}
	const workers = 6
	for w := range workers {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			for i := w; i < n; i += workers {
				if err := b.create(ns, b.names[i], runtime, kind); err != nil {
					b.mu.Lock()
					b.errs = append(b.errs, err)
					b.mu.Unlock()
					return
				}
				b.created.Add(1)
			}
		}()
	}
	return b
}

func (b *burst) create(ns, name, runtime, kind string) error {
	deadline := time.Now().Add(2 * time.Minute)
	answerLost := false
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := k8sClient.Create(ctx, trainJob(ns, name, runtime, 2, kind))
		cancel()
		var status apierrors.APIStatus
		isStatus := errors.As(err, &status)
		switch {
		case err == nil:
			return nil
		case apierrors.IsAlreadyExists(err) && answerLost:
			return nil
		case apierrors.IsAlreadyExists(err):
			return fmt.Errorf("TrainJob %s: a refused create was stored: %w", name, err)
		case isWebhookUnreachable(err):
			b.refused.Add(1)
		case isStatus && status.Status().Code < 500 && status.Status().Code != 429:
			return fmt.Errorf("TrainJob %s: %w", name, err)
		case isStatus:
			// The server's error: the create may or may not be stored.
			b.serverErrors.Add(1)
			answerLost = true
		default:
			b.unreachable.Add(1)
			answerLost = true
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("TrainJob %s never created: %w", name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// wait waits for every create and fails the test with their errors.
func (b *burst) wait(t *testing.T) {
	t.Helper()
	b.wg.Wait()
	for _, err := range b.errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// isWebhookUnreachable reports the API server's refusal when it cannot
// call a webhook of failurePolicy Fail.
func isWebhookUnreachable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	return status.Status().Code == 500 && strings.Contains(status.Status().Message, "failed calling webhook")
}

// TestConvergedCatches: the checker finds each way a fault can leave a
// namespace: a TrainJob lost or extra, an object missing or duplicated,
// orphaned, owned by an earlier TrainJob of the same name, or not
// controlled.
func TestConvergedCatches(t *testing.T) {
	yes, no := true, false
	ref := func(name, uid string, controller *bool) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: name, UID: types.UID(uid), Controller: controller}}
	}
	good := func() inventory {
		return inventory{
			trainJobs: map[string]types.UID{"a": "ua"},
			objects: map[string]owned{
				"JobSet a": {uid: "1", owners: ref("a", "ua", &yes)}, "ConfigMap a": {uid: "2", owners: ref("a", "ua", &yes)},
			},
		}
	}
	per := map[string]int{"JobSet": 1, "ConfigMap": 1}
	if err := good().converged([]string{"a"}, per); err != nil {
		t.Fatalf("a converged namespace: %v", err)
	}
	for _, tc := range []struct {
		name  string
		names []string
		edit  func(*inventory)
		want  string
	}{
		{"TrainJob lost", []string{"a", "b"}, func(*inventory) {}, "TrainJob b is missing"},
		{"TrainJob extra", []string{"a"}, func(i *inventory) { i.trainJobs["b"] = "ub" }, "TrainJob b was not created"},
		{"object missing", []string{"a"}, func(i *inventory) { delete(i.objects, "ConfigMap a") }, "owns 0 ConfigMaps"},
		{"object duplicated", []string{"a"}, func(i *inventory) { i.objects["JobSet a2"] = owned{uid: "3", owners: ref("a", "ua", &yes)} }, "owns 2 JobSets"},
		{"orphan", []string{"a"}, func(i *inventory) { i.objects["Secret x"] = owned{uid: "4"} }, "Secret x has 0 owners"},
		{"earlier owner", []string{"a"}, func(i *inventory) { i.objects["ConfigMap a"] = owned{uid: "2", owners: ref("a", "old", &yes)} }, "earlier TrainJob a"},
		{"not controller", []string{"a"}, func(i *inventory) { i.objects["ConfigMap a"] = owned{uid: "2", owners: ref("a", "ua", &no)} }, "not its controller"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := good()
			tc.edit(&inv)
			err := inv.converged(tc.names, per)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}
