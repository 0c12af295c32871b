package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// volcanoRuntime is the cluster's runtime team/rt at resourceVersion rv,
// gang-scheduled by Volcano, its node of image at PriorityClass high.
func volcanoRuntime(rv, image string) string {
	return teamRuntime("volcano-rt-uid", rv, nodeJob(image).PodSpec("priorityClassName", "high")).
		PodGroupPolicy("volcano", nil).YAML()
}

// storedTrainJob is the TrainJob team/job as the API server holds it, at
// resourceVersion rv; without one ("") as a client writes it.
func storedTrainJob(rv string) string {
	tj := teamJob("kept-job-uid")
	if rv != "" {
		tj.ResourceVersion(rv)
	}
	return tj.YAML()
}

// TestControllerKeepsReviews: the controller's review of a stored TrainJob
// is kept by its uid and resourceVersion and used again, with the same
// result, while its runtime and the context kinds' objects keep theirs; a
// change to any of them reviews it again, and what a caller changes in a
// result does not reach the next one. Other sessions keep nothing.
func TestControllerKeepsReviews(t *testing.T) {
	t.Parallel()
	// Without the review memo (reviewmemo.go), which would give every
	// review here that is not made its result too.
	e, err := New(Options{NoMemo: true})
	if err != nil {
		t.Fatal(err)
	}
	cl := &mapCluster{}
	cl.add(t, volcanoRuntime("7", "live:1"))
	reconcile := func(tj string) (Result, Rendered) {
		t.Helper()
		d := serverDefaulted(t, readOne(t, tj))
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl, Controller: true})
		r := s.AdmitRequest(context.Background(), d, Request{Operation: "UPDATE", OldObject: d.Object, SchemaChecked: true})
		return r, s.Render(r, RenderOptions{})
	}
	// reviews reconciles tj and reports whether its review was made (not
	// one kept).
	reviews := func(tj string) (Result, Rendered, bool) {
		t.Helper()
		before := e.reviewsMade.Load()
		r, out := reconcile(tj)
		return r, out, e.reviewsMade.Load() != before
	}
	refused := func(r Result) bool {
		return strings.Contains(strings.Join(findingStrings(r.Errors), "\n"), `PriorityClass "high" doesn't exist`)
	}

	first, _, made := reviews(storedTrainJob("3"))
	if !made || !refused(first) {
		t.Fatalf("first review: made %v, errors %v; want it made, refusing the missing PriorityClass", made, findingStrings(first.Errors))
	}
	again, _, made := reviews(storedTrainJob("3"))
	if made {
		t.Errorf("the same TrainJob, runtime and context: reviewed again, want the kept review")
	}
	if !reflect.DeepEqual(again.Errors, first.Errors) || !reflect.DeepEqual(again.Warnings, first.Warnings) {
		t.Errorf("the kept review's findings differ:\n%v\n%v", findingStrings(again.Errors), findingStrings(first.Errors))
	}

	// The PriorityClass is created: the context changed.
	cl.add(t, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high, uid: pc-uid, resourceVersion: '1'}\nvalue: 1000\n")
	admitted, out, made := reviews(storedTrainJob("3"))
	if !made || admitted.Rejected() {
		t.Fatalf("after the PriorityClass's creation: made %v, errors %v; want a new review admitting it", made, findingStrings(admitted.Errors))
	}
	if len(out.Objects) == 0 || len(out.Errors) > 0 {
		t.Fatalf("render: %d objects, errors %v", len(out.Objects), findingStrings(out.Errors))
	}
	// A caller changes what it got; the next reconcile uses the kept
	// review and renders the same objects.
	k8s.Meta(admitted.Object)["name"] = "changed"
	admitted.Errors = append(admitted.Errors, Finding{Detail: "added"})
	reused, outKept, made := reviews(storedTrainJob("3"))
	if made {
		t.Errorf("unchanged since: reviewed again")
	}
	if reused.Rejected() || k8s.Str(k8s.Meta(reused.Object)["name"]) != "job" {
		t.Errorf("the kept review changed with its caller's copy: name %v, errors %v", k8s.Meta(reused.Object)["name"], findingStrings(reused.Errors))
	}
	if reused.runtime != admitted.runtime {
		t.Errorf("the kept review's runtime is not the one found")
	}
	if !reflect.DeepEqual(outKept.Objects, out.Objects) {
		t.Errorf("the render from the kept review differs")
	}

	// A new resourceVersion of the runtime (its image changed): reviewed
	// again, and rendered with it.
	cl.add(t, volcanoRuntime("8", "live:2"))
	_, out, made = reviews(storedTrainJob("3"))
	if !made || !strings.Contains(imageOf(t, out), "live:2") {
		t.Errorf("after the runtime's update: made %v, image %s; want a new review with live:2", made, imageOf(t, out))
	}
	// A new resourceVersion of the TrainJob.
	if _, _, made = reviews(storedTrainJob("4")); !made {
		t.Errorf("a new resourceVersion of the TrainJob: not reviewed")
	}
	// The PriorityClass is gone again.
	delete(cl.objects, "scheduling.k8s.io/PriorityClass//high")
	if r, _, made := reviews(storedTrainJob("3")); !made || !refused(r) {
		t.Errorf("after the PriorityClass's deletion: made %v, errors %v", made, findingStrings(r.Errors))
	}

	// Not kept: an object without a resourceVersion, a webhook's review,
	// a review that is not an update of the object to itself.
	noVersion := storedTrainJob("")
	for i := 0; i < 2; i++ {
		if _, _, made := reviews(noVersion); !made {
			t.Errorf("without a resourceVersion, time %d: a kept review used", i+1)
		}
	}
	kept := e.reviewCache.Len
	before := kept()
	d := readOne(t, storedTrainJob("3"))
	webhook := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl})
	webhook.AdmitRequest(context.Background(), d, Request{Operation: "UPDATE", OldObject: d.Object, SchemaChecked: true, VerdictOnly: true})
	controller := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl, Controller: true})
	controller.AdmitRequest(context.Background(), d, Request{Operation: "CREATE", SchemaChecked: true})
	if n := kept() - before; n != 0 {
		t.Errorf("%d reviews kept for a webhook and a create, want none", n)
	}
}
