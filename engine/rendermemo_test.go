package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// TestRenderMemoKeys: a render is kept under its inputs' identities and
// given again only while each is the same: the TrainJob's uid and
// resourceVersion, its runtime's, the existing objects' and the ids the
// caller says exist. A render of a TrainJob without an identity is kept
// under its content instead; a hit is a copy, which the caller may change.
func TestRenderMemoKeys(t *testing.T) {
	t.Parallel()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	job := func(rv string) string {
		tj := wrapper.TrainJob("memo-job").RuntimeRef("memo-rt").NumNodes(2)
		if rv != "" {
			tj = tj.UID("tj-uid").ResourceVersion(rv)
		}
		return tj.YAML()
	}
	render := func(runtime, job string, opts RenderOptions) (Rendered, bool) {
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Controller: true})
		var last Result
		for _, r := range admitAll(t, s, "in.yaml", runtime+"---\n"+job) {
			if r.Rejected() {
				t.Fatalf("%s rejected: %v", r.Identity(), findingStrings(r.Errors))
			}
			last = r
		}
		before := e.rendersMade.Load()
		out := s.Render(last, opts)
		return out, e.rendersMade.Load() != before
	}
	for i, step := range []struct {
		runtime, job string
		opts         RenderOptions
		rendered     bool
		image        string
	}{
		{planRuntime("memo-rt", "1", "img:1"), job("1"), RenderOptions{}, true, "img:1"},
		{planRuntime("memo-rt", "1", "img:1"), job("1"), RenderOptions{}, false, "img:1"},
		// The runtime changed: a new resourceVersion.
		{planRuntime("memo-rt", "2", "img:2"), job("1"), RenderOptions{}, true, "img:2"},
		// The TrainJob changed.
		{planRuntime("memo-rt", "2", "img:2"), job("2"), RenderOptions{}, true, "img:2"},
		// The caller says the snapshot exists.
		{planRuntime("memo-rt", "2", "img:2"), job("2"), RenderOptions{Existing: []string{"snapshot"}}, true, "img:2"},
		{planRuntime("memo-rt", "2", "img:2"), job("2"), RenderOptions{Existing: []string{"snapshot"}}, false, "img:2"},
		// A runtime without an identity, and a TrainJob without one: not
		// kept under identities, but under their content (renderAlike).
		{planRuntime("memo-rt", "", "img:3"), job("2"), RenderOptions{}, true, "img:3"},
		{planRuntime("memo-rt", "", "img:3"), job("2"), RenderOptions{}, false, "img:3"},
		{planRuntime("memo-rt", "2", "img:2"), job(""), RenderOptions{}, true, "img:2"},
		{planRuntime("memo-rt", "2", "img:2"), job(""), RenderOptions{}, false, "img:2"},
	} {
		out, rendered := render(step.runtime, step.job, step.opts)
		if rendered != step.rendered {
			t.Errorf("step %d: rendered %v, want %v", i, rendered, step.rendered)
		}
		if got := nodeImage(t, out); got != step.image {
			t.Errorf("step %d: image %s, want %s", i, got, step.image)
		}
		// The caller's changes do not reach the memo.
		for _, obj := range out.Objects {
			obj["kind"] = "Changed"
		}
	}
}

// TestExistingReads: a controller's render is given, of an object it finds
// existing, the paths its lookup's reads name. Two TrainJobs alike but for
// their names and uids, each with its running JobSet (its own uid,
// resourceVersion, creationTimestamp and owner reference), share one
// render, each with its own names back; a JobSet that differs in what the
// render reads (suspended) renders apart.
func TestExistingReads(t *testing.T) {
	t.Parallel()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	cl := &mapCluster{}
	cl.add(t, clusterRuntime)
	jobset := func(name, uid, tjUID string, suspend bool) string {
		return fmt.Sprintf(`apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: %s
  namespace: team
  uid: %s
  resourceVersion: "%d"
  creationTimestamp: "2026-11-26T10:00:%02dZ"
  ownerReferences: [{apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, name: %s, uid: %s, controller: true}]
spec: {suspend: %v}
`, name, uid, len(name)*7, len(uid), name, tjUID, suspend)
	}
	render := func(name, uid string) (Rendered, bool) {
		t.Helper()
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl, Controller: true})
		tj := wrapper.TrainJob(name).Namespace("team").UID(uid).ResourceVersion("3").
			RuntimeRef("rt").RuntimeRefKind("TrainingRuntime").Args("train.py").YAML()
		r := s.AdmitRequest(context.Background(), readOne(t, tj), Request{})
		if r.Rejected() {
			t.Fatalf("%s: %v", name, findingStrings(r.Errors))
		}
		return renderCounted(t, e, s, r)
	}
	names := func(out Rendered) string {
		var ns []string
		for _, o := range out.Objects {
			ns = append(ns, fmt.Sprintf("%s/%s", o["kind"], k8s.Meta(o)["name"]))
		}
		return strings.Join(ns, ",")
	}
	cl.add(t, jobset("job-a", "js-a", "tj-a", false))
	cl.add(t, jobset("job-b", "js-bb", "tj-b", false))
	cl.add(t, jobset("job-c", "js-c", "tj-c", true))
	if out, made := render("job-a", "tj-a"); !made || names(out) != "ConfigMap/job-a-runtime-snapshot" {
		t.Fatalf("job-a: rendered %v, objects %s, want the snapshot alone (its JobSet runs)", made, names(out))
	}
	out, made := render("job-b", "tj-b")
	if made {
		t.Error("job-b: rendered again, though its JobSet differs from job-a's in nothing the render reads")
	}
	if names(out) != "ConfigMap/job-b-runtime-snapshot" || !strings.Contains(fmt.Sprint(out.Objects), "tj-b") || strings.Contains(fmt.Sprint(out.Objects), "tj-a") {
		t.Errorf("job-b: objects %v, want its own snapshot, owned by its own uid", out.Objects)
	}
	if out, made := render("job-c", "tj-c"); !made || names(out) != "JobSet/job-c,ConfigMap/job-c-runtime-snapshot" {
		t.Errorf("job-c (its JobSet suspended): rendered %v, objects %s, want it rendered with its JobSet applied", made, names(out))
	}
}

// TestExistingReadsChecked: a render rule that reads a path of an existing
// object its lookup's reads do not name fails the load, at those reads in
// the admin's file; named there, the policy loads.
func TestExistingReadsChecked(t *testing.T) {
	t.Parallel()
	policy := func(reads string) string {
		return `package schemas

lookups: (#APIVersion): TrainJob: {
	input: _
	if input.metadata.name != _|_ {
		existing: twin: {
			group:     "jobset.x-k8s.io"
			kind:      "JobSet"
			namespace: *input.metadata.namespace | "default"
			name:      input.metadata.name
			reads: ` + reads + `
		}
	}
}

render: (#APIVersion): TrainJob: {
	context: _
	warnings: twinJobs: [if context.existing.twin.spec.replicatedJobs != _|_ {
		message: "the JobSet exists, its first job \(context.existing.twin.spec.replicatedJobs[0].name)"
	}]
}
`
	}
	dir := writePolicy(t, map[string]string{"p.cue": policy("[]")})
	_, err := New(Options{PolicyDirs: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), "p.cue:11:") || !strings.Contains(err.Error(), `reads a path of the existing object "twin"`) {
		t.Errorf("a render that reads the existing object's replicatedJobs, its reads []: %v", err)
	}
	dir = writePolicy(t, map[string]string{"p.cue": policy(`[["spec", "replicatedJobs"]]`)})
	if _, err := New(Options{PolicyDirs: []string{dir}}); err != nil {
		t.Errorf("the path named in reads: %v", err)
	}
}

// renderCounted renders r, which must render without errors, and says
// whether the engine evaluated the render (rather than its memo).
func renderCounted(t *testing.T, e *Engine, s *Session, r Result) (Rendered, bool) {
	t.Helper()
	made := e.rendersMade.Load()
	out := s.Render(r, RenderOptions{})
	if len(out.Errors) > 0 {
		t.Fatalf("render %s: %v", r.Identity(), findingStrings(out.Errors))
	}
	return out, e.rendersMade.Load() != made
}

// eachCorpusRender calls fn with each TrainJob of every corpus the tests
// use (memoCorpus) that renders, its first render, and what a controller's
// lookups name for it, on an engine of the embedded CUE and a controller's
// session of it.
func eachCorpusRender(t *testing.T, fn func(f string, e *Engine, controller *Session, d Document, r Result, first Rendered, refs *lookupRefs)) {
	t.Helper()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	controller := e.NewSession(SessionOptions{Controller: true})
	corpus := memoCorpus(t)
	for _, f := range value.SortedKeys(corpus) {
		s := e.NewSession(SessionOptions{})
		for _, d := range corpus[f] {
			r := s.Admit(d)
			if r.Rejected() || r.Object == nil || !e.Renders(Kind{d.APIVersion(), d.Kind()}) {
				continue
			}
			first := s.Render(r, RenderOptions{})
			refs := controller.lookupsFor(e.compiled(), d, Request{}, false)
			if len(first.Errors) > 0 || refs == nil {
				continue
			}
			fn(f, e, controller, d, r, first, refs)
		}
	}
}

// TestExistingReadsOnCorpora: every TrainJob of every corpus the tests use
// (memoCorpus) renders the same, once the objects of its first render
// exist, whether the render is given them whole or with the paths their
// lookups' reads name (checkExistingReads, which the load runs on the
// probes of an admin's policy).
func TestExistingReadsOnCorpora(t *testing.T) {
	checked := 0
	eachCorpusRender(t, func(f string, e *Engine, controller *Session, d Document, r Result, first Rendered, refs *lookupRefs) {
		if len(existingAfter(refs, first)) > 0 {
			checked++
		}
		if p := e.checkExistingReads(e.compiled(), controller, d, r, first); p != nil {
			t.Errorf("%s: %s", f, p.Message)
		}
	})
	if checked < 50 {
		t.Errorf("%d TrainJobs rendered again with objects existing, want the corpora's (50 or more)", checked)
	}
	t.Logf("%d TrainJobs rendered again with the objects of their first render existing", checked)
}

// TestExistingReadsSeeEveryLeaf: a render given an existing object with
// the paths its lookup's reads name reads nothing else of it. For each
// corpus TrainJob once its first render's objects exist, each boolean,
// number and string of those objects outside the paths of reads is
// changed in turn (a JobSet suspended, a count moved, a name another), and
// the render must not change:
// TestExistingReadsOnCorpora compares with the paths removed, which a
// rule's default can hide.
func TestExistingReadsSeeEveryLeaf(t *testing.T) {
	changed := 0
	eachCorpusRender(t, func(f string, _ *Engine, controller *Session, _ Document, r Result, first Rendered, refs *lookupRefs) {
		whole := existingAfter(refs, first)
		render := func(existing map[string]any) Rendered {
			rr := r
			rr.existing, rr.existingRead = existing, existing
			return controller.renderOnce(rr, RenderOptions{}, true)
		}
		want := render(whole)
		for _, id := range value.SortedKeys(whole) {
			reads := refs.existing[id].Reads
			if reads == nil {
				continue
			}
			eachLeaf(whole[id], nil, func(path []string, v any) {
				if slices.ContainsFunc(reads, func(p []string) bool { return k8s.HasPrefix(path, p) }) {
					return
				}
				var other any
				switch x := v.(type) {
				case bool:
					other = !x
				case int64:
					other = x + 1
				case string:
					other = x + "x"
				default:
					return
				}
				changed++
				existing := maps.Clone(whole)
				existing[id] = setAt(value.DeepCopy(whole[id]), path, other)
				if diff := renderDifference(want, render(existing)); diff != "" {
					t.Errorf("%s: the render of %s reads existing %s's %s, which the reads of its lookup do not name (%s)", f, r.Identity(), id, strings.Join(path, "."), diff)
				}
			})
		}
	})
	if changed < 1000 {
		t.Errorf("%d values changed, want the corpora's JobSets' (1,000 or more)", changed)
	}
	t.Logf("%d values of existing objects changed in turn", changed)
}

// eachLeaf calls fn with the path (list items by index) and value of each
// scalar of v.
func eachLeaf(v any, path []string, fn func([]string, any)) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range value.SortedKeys(x) {
			eachLeaf(x[k], append(slices.Clone(path), k), fn)
		}
	case []any:
		for i, item := range x {
			eachLeaf(item, append(slices.Clone(path), strconv.Itoa(i)), fn)
		}
	default:
		fn(path, v)
	}
}

// setAt sets the value at path (list items by index) in v, a copy.
func setAt(v any, path []string, val any) any {
	if len(path) == 0 {
		return val
	}
	switch x := v.(type) {
	case map[string]any:
		x[path[0]] = setAt(x[path[0]], path[1:], val)
	case []any:
		i, _ := strconv.Atoi(path[0])
		x[i] = setAt(x[i], path[1:], val)
	}
	return v
}
