package engine

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// planRuntime is a torch runtime whose node image and resourceVersion the
// tests vary.
func planRuntime(name, resourceVersion, image string) string {
	rt := torchRuntime(name, 1, nodeJob(image))
	if resourceVersion != "" {
		rt.ResourceVersion(resourceVersion).UID("0000-rt")
	}
	return rt.YAML()
}

// renderWith admits the runtime and a TrainJob of it in a new session of
// the engine, and renders the TrainJob.
func renderWith(t *testing.T, e *Engine, runtime, job string) Rendered {
	t.Helper()
	s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true})
	var last Result
	for _, r := range admitAll(t, s, "in.yaml", runtime+"---\n"+job) {
		if r.Rejected() {
			t.Fatalf("%s rejected: %v", r.Identity(), findingStrings(r.Errors))
		}
		last = r
	}
	out := s.Render(last, RenderOptions{})
	if len(out.Errors) > 0 {
		t.Fatal(findingStrings(out.Errors))
	}
	return out
}

// nodeImage is the image of the node container of the JobSet's node job.
func nodeImage(t *testing.T, out Rendered) string {
	t.Helper()
	for _, o := range out.Objects {
		if o["kind"] == "JobSet" {
			job := o["spec"].(map[string]any)["replicatedJobs"].([]any)[0].(map[string]any)
			pod := job["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			return fmt.Sprint(pod["containers"].([]any)[0].(map[string]any)["image"])
		}
	}
	t.Fatal("no JobSet")
	return ""
}

// TestPlanFollowsRuntime: a runtime of the same name with a new
// resourceVersion, or (offline, without one) new content, gets a new plan;
// the same runtime again reuses its plan.
func TestPlanFollowsRuntime(t *testing.T) {
	e := testEngine(t)
	job := jobYAML("plan-rt", "{numNodes: 2}")
	cache := e.cur.Load().planCache
	for _, step := range []struct {
		runtime, image string
		newPlan        bool
	}{
		{planRuntime("plan-rt", "1", "img:1"), "img:1", true},
		{planRuntime("plan-rt", "1", "img:1"), "img:1", false},
		{planRuntime("plan-rt", "2", "img:2"), "img:2", true},
		{planRuntime("plan-rt", "", "img:3"), "img:3", true},
		{planRuntime("plan-rt", "", "img:4"), "img:4", true},
		{planRuntime("plan-rt", "", "img:3"), "img:3", false},
	} {
		before := cache.Len()
		if got := nodeImage(t, renderWith(t, e, step.runtime, job)); got != step.image {
			t.Errorf("image %s, want %s", got, step.image)
		}
		if grew := cache.Len() > before; grew != step.newPlan {
			t.Errorf("runtime with %s: new plan %v, want %v", step.image, grew, step.newPlan)
		}
	}
}

// TestPlanCacheBounded: the cache keeps at most PlanCacheSize plans, and a
// runtime whose plan was dropped renders as before.
func TestPlanCacheBounded(t *testing.T) {
	t.Parallel()
	e, err := New(Options{PlanCacheSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	job := jobYAML("bounded", "{numNodes: 2}")
	for i := 0; i < 8; i++ {
		image := fmt.Sprintf("img:%d", i)
		if got := nodeImage(t, renderWith(t, e, planRuntime("bounded", "", image), job)); got != image {
			t.Errorf("image %s, want %s", got, image)
		}
		if n := e.cur.Load().planCache.Len(); n > 3 {
			t.Fatalf("%d plans kept, want at most 3", n)
		}
	}
	if got := nodeImage(t, renderWith(t, e, planRuntime("bounded", "", "img:0"), job)); got != "img:0" {
		t.Errorf("image %s, want img:0", got)
	}
}

// TestConcurrentRenders renders from 32 goroutines, against runtimes whose
// plans are made while others render, and compares every result with the
// sequential render of the same input.
func TestConcurrentRenders(t *testing.T) {
	e := testEngine(t)
	input := func(i int) (string, string) {
		return planRuntime(fmt.Sprintf("conc-%d", i%4), "", fmt.Sprintf("img:%d", i%4)),
			strings.ReplaceAll(jobYAML(fmt.Sprintf("conc-%d", i%4), fmt.Sprintf("{numNodes: %d}", i%3+1)), "name: job,", fmt.Sprintf("name: job-%d,", i))
	}
	const n = 32
	render := func(i int) []map[string]any {
		rt, job := input(i)
		return renderWith(t, e, rt, job).Objects
	}
	got := make([][]map[string]any, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = render(i)
		}()
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		want := render(i)
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("input %d: concurrent render differs from sequential:\n%v\n%v", i, got[i], want)
		}
	}
}
