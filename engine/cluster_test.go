package engine

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/load"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"sigs.k8s.io/yaml"
)

// mapCluster is a cluster held in memory, for the engine's side of the
// Cluster contract; the webhook and controller tests use a real API server.
type mapCluster struct {
	objects map[string]map[string]any // group/kind/namespace/name
	gets    int
	read    map[string]int // gets by group/kind/namespace/name
	err     error
}

func (m *mapCluster) add(t *testing.T, text string) {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		t.Fatal(err)
	}
	// As a client reads it: whole numbers are integers.
	d := serverDefaulted(t, Document{Object: value.AsJSON(obj).(map[string]any)})
	if m.objects == nil {
		m.objects = map[string]map[string]any{}
	}
	m.objects[k8s.GroupOf(d.APIVersion())+"/"+d.Kind()+"/"+d.Namespace()+"/"+d.Name()] = d.Object
}

// serverDefaulted is doc as an API server holds it, with its CRD's
// defaults, when it is of a kind with one: the CUE's object, which the
// generated CRDs default alike (test/integration TestGeneratedCRDs). A
// schema-checked review takes its input so.
func serverDefaulted(t testing.TB, doc Document) Document {
	t.Helper()
	e := testEngine(t)
	if e.crdSchema(doc.APIVersion(), doc.Kind()) == nil {
		return doc
	}
	r := e.NewSession(SessionOptions{NoBuiltinRuntimes: true}).Admit(doc)
	if r.Object == nil {
		t.Fatalf("%s: no object to default: %v", r.Identity(), findingStrings(r.Errors))
	}
	doc.Object = r.Object
	return doc
}

func (m *mapCluster) Get(_ context.Context, group, kind, namespace, name string) (map[string]any, error) {
	m.gets++
	if m.read == nil {
		m.read = map[string]int{}
	}
	m.read[group+"/"+kind+"/"+namespace+"/"+name]++
	if m.err != nil {
		return nil, m.err
	}
	return m.objects[group+"/"+kind+"/"+namespace+"/"+name], nil
}

func (m *mapCluster) List(_ context.Context, apiVersion, kind string) ([]map[string]any, error) {
	var out []map[string]any
	for _, o := range m.objects {
		d := Document{Object: o}
		if d.APIVersion() == apiVersion && d.Kind() == kind {
			out = append(out, o)
		}
	}
	return out, nil
}

// clusterRuntime is the cluster's runtime team/rt, its node of image
// live:1; clusterTrainJob a TrainJob of it.
var (
	clusterRuntime  = teamRuntime("rt-uid", "7", nodeJob("live:1")).YAML()
	clusterTrainJob = teamJob("job-uid").YAML()
)

func readOne(t *testing.T, text string) Document {
	t.Helper()
	docs := k8s.ReadYAML("in.yaml", []byte(text))
	if len(docs) != 1 || docs[0].Err != nil {
		t.Fatalf("reading: %v", docs)
	}
	return docs[0]
}

// TestClusterLookup: with a cluster, a TrainJob's runtime comes from it
// (with its defaults, evaluated once per uid and resourceVersion), and so
// does the "not found" of a missing one.
func TestClusterLookup(t *testing.T) {
	e := testEngine(t)
	cl := &mapCluster{}
	cl.add(t, clusterRuntime)
	s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl})
	r := s.AdmitRequest(context.Background(), readOne(t, clusterTrainJob), Request{})
	if r.Rejected() {
		t.Fatalf("rejected: %v", findingStrings(r.Errors))
	}
	out := s.Render(r, RenderOptions{})
	if len(out.Errors) > 0 {
		t.Fatalf("render: %v", findingStrings(out.Errors))
	}
	if env := envOf(t, out, "node"); env["PET_NNODES"] != "2" {
		t.Errorf("PET_NNODES = %q, want the cluster runtime's numNodes 2", env["PET_NNODES"])
	}

	first := e.existing(cl.objects["trainer.kubeflow.org/TrainingRuntime/team/rt"])
	if again := e.existing(cl.objects["trainer.kubeflow.org/TrainingRuntime/team/rt"]); again != first {
		t.Errorf("same uid and resourceVersion evaluated twice")
	}
	if first.doc.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["replicatedJobs"].([]any)[0].(map[string]any)["replicas"] == nil {
		b, _ := yaml.Marshal(first.doc.Object)
		t.Errorf("the cluster's runtime was not given its defaults:\n%s", b)
	}

	missing := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: &mapCluster{}})
	r = missing.AdmitRequest(context.Background(), readOne(t, clusterTrainJob), Request{})
	if got := strings.Join(findingStrings(r.Errors), "\n"); !strings.Contains(got, `trainingruntimes.trainer.kubeflow.org "rt" not found: specified trainingRuntime must be created before the TrainJob is created`) {
		t.Errorf("missing runtime: got %q", got)
	}

	broken := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: &mapCluster{err: errors.New("connection refused")}})
	r = broken.AdmitRequest(context.Background(), readOne(t, clusterTrainJob), Request{})
	if got := strings.Join(findingStrings(r.Errors), "\n"); !strings.Contains(got, "reading TrainingRuntime rt: connection refused") {
		t.Errorf("unreadable cluster: got %q", got)
	}
}

// TestClusterLookupTooBig: a runtime in the cluster too big to evaluate
// (k8s/limits.go), put there past the webhooks, is not evaluated for the
// TrainJobs that name it, which are refused saying why; one within the
// limits is read as before.
func TestClusterLookupTooBig(t *testing.T) {
	e := testEngine(t)
	job := func(runtime string) Document {
		return Document{File: "tj.yaml", Line: 1, Object: map[string]any{
			"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
			"metadata": map[string]any{"name": "job", "namespace": "team"},
			"spec":     map[string]any{"runtimeRef": map[string]any{"name": runtime}},
		}}
	}
	for _, tc := range []struct {
		runtime Document
		want    string
	}{
		{volumesRuntime(249, 4), "ClusterTrainingRuntime volumes is too big to evaluate: the object has 1004 list items: cuetrainer evaluates objects of at most 1000"},
		{volumesRuntime(998, 1), ""},
	} {
		cl := &mapCluster{objects: map[string]map[string]any{"trainer.kubeflow.org/ClusterTrainingRuntime//volumes": tc.runtime.Object}}
		for _, controller := range []bool{false, true} {
			s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl, Controller: controller})
			r := s.AdmitRequest(context.Background(), job("volumes"), Request{})
			got := strings.Join(findingStrings(r.Errors), "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("controller %v: got %q, want %q", controller, got, tc.want)
			}
		}
	}
}

// TestClusterPinnedCopy: the controller's session renders from the pinned
// copy (the runtime snapshot) when it exists; admission reads the live
// runtime; a copy another object controls is an error.
func TestClusterPinnedCopy(t *testing.T) {
	e := testEngine(t)
	// The copy was taken at an earlier resourceVersion.
	snapshot := teamRuntime("rt-uid", "6", nodeJob("pinned:1")).YAML()
	cm := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "job-runtime-snapshot", "namespace": "team",
			"ownerReferences": []any{map[string]any{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "job", "uid": "job-uid", "controller": true}}},
		"data": map[string]any{"runtime": snapshot},
	}
	cl := &mapCluster{}
	cl.add(t, clusterRuntime)
	cl.objects["/ConfigMap/team/job-runtime-snapshot"] = cm

	render := func(pinned bool) Rendered {
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl, Controller: pinned})
		r := s.AdmitRequest(context.Background(), readOne(t, clusterTrainJob), Request{})
		if r.Rejected() {
			t.Fatalf("rejected: %v", findingStrings(r.Errors))
		}
		return s.Render(r, RenderOptions{})
	}
	hasSnapshot := func(out Rendered) bool {
		for _, o := range out.Objects {
			if o["kind"] == "ConfigMap" && k8s.Meta(o)["name"] == "job-runtime-snapshot" {
				return true
			}
		}
		return false
	}
	cl.read = nil
	pinned := render(true)
	// The snapshot is both the runtime's pinned copy and an existing object
	// of the render: one read serves both.
	if n := cl.read["/ConfigMap/team/job-runtime-snapshot"]; n != 1 {
		t.Errorf("the snapshot was read %d times, want once", n)
	}
	live := render(false)
	if got := imageOf(t, pinned); got != "pinned:1" {
		t.Errorf("pinned session renders %q, want the snapshot's pinned:1", got)
	}
	if got := imageOf(t, live); got != "live:1" {
		t.Errorf("admission session renders %q, want the live live:1", got)
	}
	// The snapshot is made once: the controller, which finds it, does not
	// apply it again; a render that does not look (offline, admission)
	// lists it.
	if hasSnapshot(pinned) {
		t.Error("the controller's render applies the existing snapshot again")
	}
	if !hasSnapshot(live) {
		t.Error("the render without the cluster's objects has no snapshot")
	}

	cm["metadata"].(map[string]any)["ownerReferences"].([]any)[0].(map[string]any)["uid"] = "other"
	s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl, Controller: true})
	r := s.AdmitRequest(context.Background(), readOne(t, clusterTrainJob), Request{})
	if got := strings.Join(findingStrings(r.Errors), "\n"); !strings.Contains(got, "invalid pinned copy ConfigMap team/job-runtime-snapshot: it exists but is controlled by another object") {
		t.Errorf("foreign snapshot: got %q", got)
	}
}

// TestPinnedCopyParsedOncePerVersion: a controller parses a pinned copy
// once per resourceVersion of its ConfigMap (it reads the same one on
// every reconcile), and reads a new version's.
func TestPinnedCopyParsedOncePerVersion(t *testing.T) {
	e := testEngine(t)
	owner := []any{map[string]any{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "job", "uid": "job-uid", "controller": true}}
	snapshot := func(version, image string) map[string]any {
		return map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "job-runtime-snapshot", "namespace": "team", "uid": "cm-uid", "resourceVersion": version, "ownerReferences": owner},
			"data":     map[string]any{"runtime": teamRuntime("rt-uid", "6"+version, nodeJob(image)).YAML()},
		}
	}
	cl := &mapCluster{}
	cl.add(t, clusterRuntime)
	image := func() string {
		t.Helper()
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl, Controller: true})
		r := s.AdmitRequest(context.Background(), readOne(t, clusterTrainJob), Request{})
		if r.Rejected() {
			t.Fatalf("rejected: %v", findingStrings(r.Errors))
		}
		return imageOf(t, s.Render(r, RenderOptions{}))
	}
	cl.objects["/ConfigMap/team/job-runtime-snapshot"] = snapshot("1", "pinned:1")
	if got := image(); got != "pinned:1" {
		t.Fatalf("renders %q, want pinned:1", got)
	}
	// The same version again: the copy parsed before (a ConfigMap's data
	// never changes without its resourceVersion; here it does, to tell).
	cm := snapshot("1", "pinned:1")
	cm["data"] = map[string]any{"runtime": "not: [yaml"}
	cl.objects["/ConfigMap/team/job-runtime-snapshot"] = cm
	if got := image(); got != "pinned:1" {
		t.Errorf("the same version renders %q, want pinned:1, parsed once", got)
	}
	cl.objects["/ConfigMap/team/job-runtime-snapshot"] = snapshot("2", "pinned:2")
	if got := image(); got != "pinned:2" {
		t.Errorf("a new version renders %q, want its pinned:2", got)
	}
}

// TestControllerApplyOrder: a controller applies the JobSet after the
// objects it needs (here its runtime snapshot), though the render lists it
// first.
func TestControllerApplyOrder(t *testing.T) {
	e := testEngine(t)
	cl := &mapCluster{}
	cl.add(t, clusterRuntime)
	s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl, Controller: true})
	r := s.AdmitRequest(context.Background(), readOne(t, clusterTrainJob), Request{})
	out := s.Render(r, RenderOptions{})
	kinds := func(objs []map[string]any) (ks []string) {
		for _, o := range objs {
			ks = append(ks, o["kind"].(string))
		}
		return ks
	}
	if got := strings.Join(kinds(out.Objects), ","); got != "JobSet,ConfigMap" {
		t.Errorf("render order %s, want JobSet,ConfigMap (%v)", got, findingStrings(out.Errors))
	}
	if got := strings.Join(kinds(out.InApplyOrder()), ","); got != "ConfigMap,JobSet" {
		t.Errorf("apply order %s, want ConfigMap,JobSet", got)
	}

}

func imageOf(t *testing.T, out Rendered) string {
	t.Helper()
	for _, o := range out.Objects {
		if o["kind"] == "JobSet" {
			job := o["spec"].(map[string]any)["replicatedJobs"].([]any)[0].(map[string]any)
			c := job["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0]
			return c.(map[string]any)["image"].(string)
		}
	}
	t.Fatalf("no JobSet: %v", findingStrings(out.Errors))
	return ""
}

const patchedTrainJob = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: job, namespace: team, uid: job-uid}
spec:
  runtimeRef: {name: rt, kind: TrainingRuntime}
  suspend: SUSPEND
  runtimePatches:
  - manager: acme.io/a
    TIME_A
    trainingRuntimeSpec: {template: {metadata: {labels: {a: "A"}}}}
  - manager: acme.io/b
    trainingRuntimeSpec: {template: {metadata: {labels: {b: "B"}}}}
`

func patched(t *testing.T, suspend bool, timeA, labelA string) Document {
	t.Helper()
	text := strings.Replace(patchedTrainJob, "SUSPEND", map[bool]string{true: "true", false: "false"}[suspend], 1)
	if timeA != "" {
		text = strings.Replace(text, "TIME_A", "time: "+timeA, 1)
	} else {
		text = strings.Replace(text, "    TIME_A\n", "", 1)
	}
	return readOne(t, strings.Replace(text, `a: "A"`, "a: "+labelA, 1))
}

func patchTimes(mutated map[string]any) map[string]any {
	out := map[string]any{}
	if mutated == nil {
		return nil
	}
	for _, p := range mutated["spec"].(map[string]any)["runtimePatches"].([]any) {
		pm := p.(map[string]any)
		out[pm["manager"].(string)] = pm["time"]
	}
	return out
}

// TestMutationRuntimePatchTime: the TrainJob's mutating rules stamp new and
// changed runtime patches with the request's time, as Kubeflow's defaulter.
func TestMutationRuntimePatchTime(t *testing.T) {
	e := testEngine(t)
	cl := &mapCluster{}
	cl.add(t, clusterRuntime)
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	admit := func(doc Document, req Request) map[string]any {
		req.Now = now
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl})
		if r := s.AdmitRequest(context.Background(), doc, req); r.Rejected() {
			t.Fatalf("rejected: %v", findingStrings(r.Errors))
		}
		mutated, err := s.Mutate(doc, req)
		if err != nil {
			t.Fatal(err)
		}
		return mutated
	}
	stamp := "2026-11-23T10:00:00Z"
	earlier := "2026-01-02T03:04:05Z"

	got := patchTimes(admit(patched(t, false, "", "A"), Request{}))
	if got["acme.io/a"] != stamp || got["acme.io/b"] != stamp {
		t.Errorf("create without times: %v, want both %s", got, stamp)
	}
	got = patchTimes(admit(patched(t, false, earlier, "A"), Request{}))
	if got["acme.io/a"] != earlier || got["acme.io/b"] != stamp {
		t.Errorf("create with a time: %v, want a kept and b stamped", got)
	}

	old := patched(t, true, earlier, "A").Object
	old["spec"].(map[string]any)["runtimePatches"].([]any)[1].(map[string]any)["time"] = earlier
	// Unchanged patches keep their times even when the request drops them.
	r := admit(patched(t, true, "", "A"), Request{Operation: "UPDATE", OldObject: old})
	got = patchTimes(r)
	if got["acme.io/a"] != earlier || got["acme.io/b"] != earlier {
		t.Errorf("update, nothing changed: %v, want both kept at %s", got, earlier)
	}
	// A changed patch gets the new time, even when it carries the old one.
	got = patchTimes(admit(patched(t, true, earlier, "changed"), Request{Operation: "UPDATE", OldObject: old}))
	if got["acme.io/a"] != stamp || got["acme.io/b"] != earlier {
		t.Errorf("update, a changed: %v, want a stamped and b kept", got)
	}
	// Without a time the rules make no mutation.
	s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl})
	if m, err := s.Mutate(patched(t, false, "", "A"), Request{}); m != nil || err != nil {
		t.Errorf("no time given, yet mutated: %v (%v)", patchTimes(m), err)
	}
}

// TestUpdateRules: runtimePatches change only while suspended and with no
// active job; a TrainingRuntime's update skips the runtime webhook, a
// ClusterTrainingRuntime's does not.
func TestUpdateRules(t *testing.T) {
	e := testEngine(t)
	cl := &mapCluster{}
	cl.add(t, clusterRuntime)
	admit := func(doc Document, old Document) []string {
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl})
		return findingStrings(s.AdmitRequest(context.Background(), doc, Request{Operation: "UPDATE", OldObject: old.Object}).Errors)
	}
	const notSuspended = "spec.runtimePatches: Forbidden: RuntimePatches can only be modified when the TrainJob is suspended before or after the update"
	if got := admit(patched(t, false, "", "changed"), patched(t, false, "", "A")); len(got) != 1 || got[0] != notSuspended {
		t.Errorf("running, patch changed: %v", got)
	}
	if got := admit(patched(t, false, "", "A"), patched(t, false, "", "A")); len(got) != 0 {
		t.Errorf("running, nothing changed: %v", got)
	}
	if got := admit(patched(t, true, "", "changed"), patched(t, false, "", "A")); len(got) != 0 {
		t.Errorf("suspended by the update, no JobSet: %v", got)
	}
	cl.add(t, `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: job, namespace: team}
status:
  replicatedJobsStatus:
  - {name: node, active: 2, ready: 0, succeeded: 0, failed: 0, suspended: 0}
  - {name: launcher, active: 0, ready: 0, succeeded: 0, failed: 0, suspended: 0}
`)
	want := "spec.runtimePatches: Forbidden: RuntimePatches cannot be modified when the JobSet's ReplicatedJob node is still active"
	if got := admit(patched(t, true, "", "changed"), patched(t, false, "", "A")); len(got) != 1 || got[0] != want {
		t.Errorf("suspended, JobSet active: %v", got)
	}
	// The JobSet is read for an update that changes runtimePatches, and
	// for no other.
	const jobSetKey = "jobset.x-k8s.io/JobSet/team/job"
	before := cl.read[jobSetKey]
	admit(patched(t, true, "", "A"), patched(t, true, "", "A"))
	admit(patched(t, false, "", "A"), patched(t, false, "", "A"))
	if n := cl.read[jobSetKey] - before; n != 0 {
		t.Errorf("updates that leave runtimePatches alone read the JobSet %d times", n)
	}
	admit(patched(t, true, "", "changed"), patched(t, true, "", "A"))
	if n := cl.read[jobSetKey] - before; n != 1 {
		t.Errorf("an update that changes runtimePatches read the JobSet %d times, want 1", n)
	}

	bad := `apiVersion: trainer.kubeflow.org/v1alpha1
kind: KIND
metadata: {name: rt, namespace: team}
spec:
  template:
    spec:
      replicatedJobs:
      - name: node
        replicas: 2
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node}]}}}
`
	for kind, wantErrs := range map[string]int{"TrainingRuntime": 0, "ClusterTrainingRuntime": 1} {
		text := strings.Replace(bad, "KIND", kind, 1)
		if kind == "ClusterTrainingRuntime" {
			text = strings.Replace(text, ", namespace: team", "", 1)
		}
		doc := readOne(t, text)
		if got := admit(doc, doc); len(got) != wantErrs {
			t.Errorf("%s update: %d errors %v, want %d", kind, len(got), got, wantErrs)
		}
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true})
		if got := s.AdmitRequest(context.Background(), doc, Request{Operation: "CREATE"}).Errors; len(got) != 1 {
			t.Errorf("%s create: %v, want the replicas error", kind, findingStrings(got))
		}
	}
}

// TestClusterExistingJobSet: the controller's render leaves a running JobSet
// alone, and applies it again while it or the TrainJob is suspended.
func TestClusterExistingJobSet(t *testing.T) {
	e := testEngine(t)
	kinds := func(cl *mapCluster, trainJob string) []string {
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl, Controller: true})
		r := s.AdmitRequest(context.Background(), readOne(t, trainJob), Request{})
		if r.Rejected() {
			t.Fatalf("rejected: %v", findingStrings(r.Errors))
		}
		out := s.Render(r, RenderOptions{})
		var ks []string
		for _, o := range out.Objects {
			ks = append(ks, o["kind"].(string))
		}
		return ks
	}
	cl := &mapCluster{}
	cl.add(t, clusterRuntime)
	if got := strings.Join(kinds(cl, clusterTrainJob), ","); got != "JobSet,ConfigMap" {
		t.Errorf("no JobSet yet: %s", got)
	}
	cl.add(t, "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: job, namespace: team}\nspec: {suspend: false}\n")
	if got := strings.Join(kinds(cl, clusterTrainJob), ","); got != "ConfigMap" {
		t.Errorf("running JobSet: %s, want it left alone", got)
	}
	suspended := teamJob("job-uid").Suspend(true).YAML()
	if got := strings.Join(kinds(cl, suspended), ","); got != "JobSet,ConfigMap" {
		t.Errorf("suspended TrainJob: %s, want the JobSet applied", got)
	}
}

// TestClusterExistingClaimPolicies: a JobSet applied again (resumed) keeps
// its volumeClaimPolicies as the cluster holds them: JobSet's webhook
// defaulted their retentionPolicy on create, and its CRD refuses any change
// (self == oldSelf). A new JobSet has them as the runtime says.
func TestClusterExistingClaimPolicies(t *testing.T) {
	e := testEngine(t)
	// Another object than clusterRuntime: the engine keeps a cluster's
	// objects evaluated by uid and resourceVersion.
	rt := teamRuntime("rt-claims", "1", nodeJob("live:1")).JobSetSpec("volumeClaimPolicies", []any{map[string]any{
		"templates": []any{map[string]any{
			"metadata": map[string]any{"name": "cache"},
			"spec":     map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
		}},
	}}).YAML()
	job := teamJob("job-uid").Suspend(true).YAML()
	claims := func(cl *mapCluster) string {
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl, Controller: true})
		r := s.AdmitRequest(context.Background(), readOne(t, job), Request{})
		if r.Rejected() {
			t.Fatalf("rejected: %v", findingStrings(r.Errors))
		}
		for _, o := range s.Render(r, RenderOptions{}).Objects {
			if o["kind"] == "JobSet" {
				b, _ := json.Marshal(o["spec"].(map[string]any)["volumeClaimPolicies"])
				return string(b)
			}
		}
		t.Fatal("no JobSet")
		return ""
	}
	cl := &mapCluster{}
	cl.add(t, rt)
	if got, want := claims(cl), `[{"templates":[{"metadata":{"name":"cache"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}]}]`; got != want {
		t.Errorf("a new JobSet's claim policies:\n%s\nwant the runtime's\n%s", got, want)
	}
	cl.add(t, `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: job, namespace: team}
spec:
  suspend: true
  volumeClaimPolicies:
  - retentionPolicy: {whenDeleted: Delete}
    templates: [{metadata: {name: cache}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]
`)
	if got, want := claims(cl), `[{"retentionPolicy":{"whenDeleted":"Delete"},"templates":[{"metadata":{"name":"cache"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}]}]`; got != want {
		t.Errorf("an existing JobSet's claim policies:\n%s\nwant the cluster's\n%s", got, want)
	}
}

// TestControllerPartOnlyForControllers: a kind's controllers part is
// evaluated when a controller renders and never in an offline render. A
// policy's controller rule that fails to evaluate shows which: the
// controller's render reports it, the offline render of the same TrainJob
// does not, and both build the same objects otherwise.
func TestControllerPartOnlyForControllers(t *testing.T) {
	t.Parallel()
	dir := writePolicy(t, map[string]string{"probe.cue": `package schemas

controllers: (#APIVersion): TrainJob: {
	#tj: _
	controller: status: fields: probe: #tj.spec.trainer.numNodes + "nodes"
}
`})
	e, err := New(Options{PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	cl := &mapCluster{}
	cl.add(t, clusterRuntime)
	render := func(controller bool) Rendered {
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl, Controller: controller})
		r := s.AdmitRequest(context.Background(), readOne(t, clusterTrainJob), Request{})
		if r.Rejected() {
			t.Fatalf("rejected: %v", findingStrings(r.Errors))
		}
		return s.Render(r, RenderOptions{})
	}
	if out := render(true); len(out.Errors) == 0 || !strings.Contains(strings.Join(findingStrings(out.Errors), "\n"), "probe") {
		t.Errorf("the controller's render did not evaluate the controller part: errors %v", findingStrings(out.Errors))
	}
	off := render(false)
	if len(off.Errors) > 0 {
		t.Errorf("the offline render evaluated the controller part: %v", findingStrings(off.Errors))
	}
	if len(off.Objects) != 2 {
		t.Errorf("offline render: %d objects, want the JobSet and the snapshot", len(off.Objects))
	}
}

// TestVerdictOnly: a webhook's request (Request.VerdictOnly) gets the same
// findings and warnings as a full admission, for valid and invalid
// runtimes and TrainJobs, deprecated runtimes and missing ones, created
// and updated, and no object.
func TestVerdictOnly(t *testing.T) {
	e := testEngine(t)
	cl := &mapCluster{}
	deprecated := runtimeYAML("old", "trainer.kubeflow.org/support: deprecated, trainer.kubeflow.org/framework: torch", "", "{torch: {}}", "")
	cl.add(t, deprecated)
	cl.add(t, runtimeYAML("torch", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", ""))
	docs := []string{
		deprecated,
		runtimeYAML("bad", "", "", "{torch: {numProcPerNode: 0}}", ""),
		jobYAML("torch", "{numNodes: 2}"),
		jobYAML("old", "{numNodes: 2}"),
		jobYAML("missing", "{numNodes: 2}"),
		jobYAML("torch", "{numNodes: -1}"),
		jobYAML("torch", "{env: [{name: PET_NNODES, value: '3'}]}"),
	}
	docs = append(docs, strings.Split(admitAllCorpus(3), "---\n")...)
	checked, rejected, warned := 0, 0, 0
	compareRequests(e, cl, docs, func(r *Request) { r.VerdictOnly = true }, func(op Request, full, verdict Result) {
		if verdict.Object != nil {
			t.Errorf("%s: a verdict has the object", full.Identity())
		}
		if got, want := findingStrings(verdict.Errors), findingStrings(full.Errors); !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s: verdict errors %q, want %q", full.Identity(), op.Operation, got, want)
		}
		if got, want := findingStrings(verdict.Warnings), findingStrings(full.Warnings); !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s: verdict warnings %q, want %q", full.Identity(), op.Operation, got, want)
		}
		if full.Object != nil {
			checked++
		}
		if len(full.Errors) > 0 {
			rejected++
		}
		if len(full.Warnings) > 0 {
			warned++
		}
	})
	// The corpus has admitted objects, rejected ones and warnings.
	if checked < 20 || rejected < 10 || warned < 2 {
		t.Errorf("%d results with an object, %d rejected, %d with warnings: the corpus lacks cases", checked, rejected, warned)
	}
}

// TestSchemaChecked: for an object the API server has checked against its
// CRD (Request.SchemaChecked), the review leaves out the CUE's copy of the
// CRD's checks (crdChecks) and nothing else. Over objects of every kind
// that pass those checks, the findings and the defaulted object are the
// same with and without it. An object that fails them gets only those of
// its CRD-phase errors that the review's own rules find, the rules the
// CRD does not carry (test/integration's TestCRDChecksAreTheAPIServers
// shows that the API server refuses what the checks left out find).
func TestSchemaChecked(t *testing.T) {
	e := testEngine(t)
	cl := &mapCluster{}
	cl.add(t, runtimeYAML("torch", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", ""))
	cl.add(t, runtimeYAML("old", "trainer.kubeflow.org/support: deprecated, trainer.kubeflow.org/framework: torch", "", "{torch: {}}", ""))
	docs := []string{
		// The CRD's checks fail, one kind and rule after another.
		jobYAML("torch", "{numNodes: -1}"),
		jobYAML("torch", "{numProcPerNode: 0}"),
		jobYAML("torch", "{env: [{name: A}, {name: A}]}"),
		strings.Replace(jobYAML("torch", "{}"), "name: job,", "name: "+strings.Repeat("j", 70)+",", 1),
		runtimeYAML("two", "", "", "{torch: {}, mpi: {}}", ""),
		runtimeYAML("mpi0", "", "", "{mpi: {numProcPerNode: 0}}", ""),
		runtimeYAML("flux0", "", "", "{flux: {numProcPerNode: 0}}", ""),
		jobYAML("torch", "{image: "+strings.Repeat("i", 501)+"}"),
		runtimeYAML("targets", "", "", "{torch: {envInjection: {targets: [{jobName: node, containerNames: [node, node]}]}}}", ""),
		runtimeYAML("mpi-intel", "", "", "{mpi: {mpiImplementation: Intel}}", ""),
		// The CRD does not carry these: the review's own rules, in the CRD's
		// phase.
		runtimeYAML("elastic", "", "", "{torch: {elasticPolicy: {minNodes: 3, maxNodes: 2}}}", ""),
		runtimeYAML("procs0", "", "", "{torch: {numProcPerNode: 0}}", ""),
		strings.Replace(jobYAML("torch", "{}"), "spec:\n", "spec:\n  podTemplateOverrides: [{targetJobs: [{name: node}]}]\n", 1),
		// They pass, and the rest of the review finds something or not.
		runtimeYAML("bad", "", "", "{torch: {numProcPerNode: 3}}", ""),
		jobYAML("torch", "{numNodes: 2}"),
		jobYAML("old", "{numNodes: 2}"),
		jobYAML("missing", "{numNodes: 2}"),
		jobYAML("torch", "{env: [{name: PET_NNODES, value: '3'}]}"),
	}
	docs = append(docs, strings.Split(admitAllCorpus(5), "---\n")...)
	// crdRejected counts the results whose CRD errors the checks left out
	// (some or all), reviewsOwn those the review's own rules find alone.
	same, crdRejected, reviewsOwn := 0, 0, 0
	compareRequests(e, cl, docs, func(r *Request) { r.SchemaChecked = true }, func(op Request, full, checked Result) {
		if hasPhase(full.Errors, contract.PhaseCRD) {
			fullCRD := findingStrings(full.Errors)
			for _, f := range findingStrings(checked.Errors) {
				if !slices.Contains(fullCRD, f) {
					t.Errorf("%s %s: with SchemaChecked %q, not among %q", full.Identity(), op.Operation, f, fullCRD)
				}
			}
			if len(checked.Errors) < len(full.Errors) {
				crdRejected++
			} else {
				reviewsOwn++
			}
			return
		}
		same++
		if got, want := findingStrings(checked.Errors), findingStrings(full.Errors); !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s: errors %q, want %q", full.Identity(), op.Operation, got, want)
		}
		if got, want := findingStrings(checked.Warnings), findingStrings(full.Warnings); !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s: warnings %q, want %q", full.Identity(), op.Operation, got, want)
		}
		if !reflect.DeepEqual(checked.Object, full.Object) {
			t.Errorf("%s %s: the defaulted object differs:\n%v\nwant\n%v", full.Identity(), op.Operation, checked.Object, full.Object)
		}
	})
	if crdRejected < 18 || reviewsOwn < 6 || same < 40 {
		t.Errorf("%d results with CRD errors the checks left out, %d with the review's own, %d that pass: the corpus lacks cases", crdRejected, reviewsOwn, same)
	}
}

// TestSchemaCheckedLeavesOutServerManagedFields: a schema-checked review is
// not given the fields the API server writes itself (serverManaged): an
// object's managedFields neither reach the rules nor come back in the
// defaulted object, and the caller's object is left as it was. vet, which
// is not schema-checked, still checks their shape.
func TestSchemaCheckedLeavesOutServerManagedFields(t *testing.T) {
	e := testEngine(t)
	cl := &mapCluster{}
	cl.add(t, runtimeYAML("torch", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", ""))
	managed := `
  managedFields:
  - {manager: kubectl, operation: Apply, apiVersion: trainer.kubeflow.org/v1alpha1, fieldsType: FieldsV1,
     fieldsV1: {"f:spec": {"f:trainer": {"f:env": {"k:{\"name\":\"A\"}": {}}}}}}`
	text := strings.Replace(jobYAML("torch", "{numNodes: 2, env: [{name: A, value: x}]}"), "metadata: {name: job, namespace: ns}", "metadata:\n  name: job\n  namespace: ns"+managed, 1)
	d := k8s.ReadYAML("job.yaml", []byte(text))[0]
	before := value.DeepCopy(d.Object)
	full := e.NewSession(SessionOptions{Cluster: cl, NoBuiltinRuntimes: true}).AdmitRequest(context.Background(), d, Request{})
	// As the API server sends it: with its CRD's defaults (serverDefaulted).
	dc := d
	dc.Object = full.Object
	checked := e.NewSession(SessionOptions{Cluster: cl, NoBuiltinRuntimes: true}).AdmitRequest(context.Background(), dc, Request{Operation: "UPDATE", OldObject: dc.Object, SchemaChecked: true})
	if full.Rejected() || checked.Rejected() {
		t.Fatalf("rejected: %v / %v", full.Errors, checked.Errors)
	}
	if _, ok := full.Object["metadata"].(map[string]any)["managedFields"]; !ok {
		t.Errorf("the full review's object lost its managedFields")
	}
	if _, ok := checked.Object["metadata"].(map[string]any)["managedFields"]; ok {
		t.Errorf("the schema-checked review was given the managedFields")
	}
	if !reflect.DeepEqual(d.Object, before) {
		t.Errorf("the caller's object changed")
	}
	if checked.Doc.Object["metadata"].(map[string]any)["managedFields"] == nil {
		t.Errorf("the result's document lost its managedFields")
	}
	// Their shape: vet checks it, a schema-checked review does not look.
	bad := k8s.ReadYAML("job.yaml", []byte(strings.Replace(jobYAML("torch", "{}"), "metadata: {name: job, namespace: ns}", "metadata: {name: job, namespace: ns, managedFields: [{manager: 7}]}", 1)))[0]
	if r := e.NewSession(SessionOptions{Cluster: cl, NoBuiltinRuntimes: true}).AdmitRequest(context.Background(), bad, Request{}); !hasPhase(r.Errors, contract.PhaseSchema) {
		t.Errorf("vet of a malformed managedFields: %v, want a schema error", r.Errors)
	}
	// As the API server sends it, with its defaults (and this metadata,
	// which it writes itself).
	badChecked := serverDefaulted(t, k8s.ReadYAML("job.yaml", []byte(jobYAML("torch", "{}")))[0])
	badChecked.Object["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": int64(7)}}
	if r := e.NewSession(SessionOptions{Cluster: cl, NoBuiltinRuntimes: true}).AdmitRequest(context.Background(), badChecked, Request{SchemaChecked: true}); r.Rejected() {
		t.Errorf("a schema-checked review looked at the managedFields: %v", r.Errors)
	}
}

func TestWithoutServerManaged(t *testing.T) {
	spec := map[string]any{"a": 1}
	obj := map[string]any{"metadata": map[string]any{"name": "x", "managedFields": []any{1}}, "spec": spec}
	e := &core{decl: load.Declarations{ServerManaged: [][]string{{"metadata", "managedFields"}, {"status"}, {"spec", "a", "b"}}}}
	got := e.withoutServerManaged(obj)
	if want := map[string]any{"metadata": map[string]any{"name": "x"}, "spec": spec}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, ok := obj["metadata"].(map[string]any)["managedFields"]; !ok {
		t.Errorf("the input changed: %v", obj)
	}
	// Nothing to drop: the same map back, not a copy.
	plain := map[string]any{"metadata": map[string]any{"name": "x"}}
	if got := e.withoutServerManaged(plain); reflect.ValueOf(got).Pointer() != reflect.ValueOf(plain).Pointer() {
		t.Errorf("a copy of an object without the fields")
	}
}

// compareRequests admits every document of docs twice over, as a create
// and as an update of itself, each time in a fresh session on cl: once as
// asked and once with change made to the request, and hands both results
// to check.
func compareRequests(e *Engine, cl Cluster, docs []string, change func(*Request), check func(op Request, asked, changed Result)) {
	for _, text := range docs {
		for _, d := range k8s.ReadYAML("doc.yaml", []byte(text)) {
			for _, op := range []Request{{}, {Operation: "UPDATE", OldObject: d.Object}} {
				asked := e.NewSession(SessionOptions{Cluster: cl, NoBuiltinRuntimes: true}).AdmitRequest(context.Background(), d, op)
				change(&op)
				dd := d
				if op.SchemaChecked && asked.Object != nil {
					// As the API server sends it: with its CRD's defaults,
					// which are the CUE's (serverDefaulted).
					dd.Object = asked.Object
					if op.OldObject != nil {
						op.OldObject = asked.Object
					}
				}
				changed := e.NewSession(SessionOptions{Cluster: cl, NoBuiltinRuntimes: true}).AdmitRequest(context.Background(), dd, op)
				check(op, asked, changed)
			}
		}
	}
}

// TestClusterObjectsWithoutServerManagedFields: objects read from the
// cluster (a runtime, the render's existing objects, the context kinds)
// reach an evaluation without the fields the API server writes itself, and
// the cluster's copies keep them.
func TestClusterObjectsWithoutServerManagedFields(t *testing.T) {
	e := testEngine(t)
	cl := &mapCluster{}
	managed := "managedFields: [{manager: kubectl, operation: Apply, fieldsType: FieldsV1, fieldsV1: {\"f:spec\": {}}}]"
	cl.add(t, strings.Replace(runtimeYAML("torch", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", ""), "  name: torch\n", "  name: torch\n  uid: rt-1\n  resourceVersion: '3'\n  "+managed+"\n", 1))
	cl.add(t, "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: job, namespace: ns, "+managed+"}\nspec: {suspend: true}\n")
	cl.add(t, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high, "+managed+"}\nvalue: 1000\n")
	d := serverDefaulted(t, k8s.ReadYAML("job.yaml", []byte(jobYAML("torch", "{numNodes: 2}")))[0])
	s := e.NewSession(SessionOptions{Cluster: cl, NoBuiltinRuntimes: true, Controller: true})
	r := s.AdmitRequest(context.Background(), d, Request{Operation: "UPDATE", OldObject: d.Object, SchemaChecked: true})
	if r.Rejected() || r.runtime == nil || r.existing["jobset"] == nil {
		t.Fatalf("errors %v, runtime %v, existing %v", r.Errors, r.runtime != nil, r.existing)
	}
	has := func(obj any) bool {
		_, ok := obj.(map[string]any)["metadata"].(map[string]any)["managedFields"]
		return ok
	}
	if has(r.runtime.doc.Object) || has(r.existing["jobset"]) {
		t.Errorf("managedFields reached the evaluation: runtime %v, jobset %v", has(r.runtime.doc.Object), has(r.existing["jobset"]))
	}
	listed, err := s.clusterContext(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if pc := listed["priorityClasses"]["high"]; pc == nil || has(pc) {
		t.Errorf("the PriorityClass as the rules get it: %v", pc)
	}
	for key, obj := range cl.objects {
		if !has(obj) {
			t.Errorf("the cluster's %s lost its managedFields", key)
		}
	}
}

// TestSchemaCheckedTakesTheInput: a schema-checked review takes its input,
// checked and defaulted by the API server, as the object, without the
// kind's schema: what the CRD would have pruned is not refused. An input
// that is not such an object (a default missing, a value of the wrong
// type) is reviewed with the schema, as vet reviews it.
func TestSchemaCheckedTakesTheInput(t *testing.T) {
	e := testEngine(t)
	cl := &mapCluster{}
	cl.add(t, runtimeYAML("torch", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", ""))
	admit := func(d Document, checked bool) Result {
		t.Helper()
		return e.NewSession(SessionOptions{Cluster: cl, NoBuiltinRuntimes: true}).AdmitRequest(context.Background(), d, Request{SchemaChecked: checked})
	}
	defaulted := serverDefaulted(t, readOne(t, jobYAML("torch", "{numNodes: 2}")))
	defaulted.Object["spec"].(map[string]any)["pruned"] = "by the API server"
	if r := admit(defaulted, true); r.Rejected() || r.Object["spec"].(map[string]any)["pruned"] == nil {
		t.Errorf("a defaulted object: errors %v, object %v; want it taken as it is", findingStrings(r.Errors), r.Object["spec"])
	}
	if r := admit(defaulted, false); !r.Rejected() {
		t.Errorf("vet of an unknown field: admitted")
	}
	for _, text := range []string{
		jobYAML("torch", "{numNodes: 2}"),       // runtimeRef's defaults missing
		jobYAML("torch", "{numNodes: \"two\"}"), // the wrong type
	} {
		raw := readOne(t, text)
		want, got := admit(raw, false), admit(raw, true)
		if hasPhase(got.Errors, contract.PhaseRuleError) || !reflect.DeepEqual(findingStrings(got.Errors), findingStrings(want.Errors)) || !reflect.DeepEqual(got.Object, want.Object) {
			t.Errorf("%s: schema-checked %v, vet %v", text, findingStrings(got.Errors), findingStrings(want.Errors))
		}
	}
}

// TestClusterScopedCRDLookup: a lookup of a kind whose CRD (crds) has
// scope Cluster leaves the namespace it gives out, as the cluster's reads
// do, so the object is found; a namespaced kind keeps it.
func TestClusterScopedCRDLookup(t *testing.T) {
	t.Parallel()
	e := loadPolicyWant(t, "quota", map[string]string{"p.cue": `package schemas

#Quota: {
	apiVersion: "platform.example.com/v1"
	kind:       "Quota"
	metadata: name: string
	spec?: gpus?: int
}
crds: Quota: {
	group:    "platform.example.com"
	version:  "v1"
	plural:   "quotas"
	singular: "quota"
	scope:    "Cluster"
	schema:   #Quota
}

#Context: quota?: {...}

lookups: (#APIVersion): TrainJob: {
	input: _
	reads: ns: ["metadata", "namespace"]
	objects: quota: {
		group:     "platform.example.com"
		kind:      "Quota"
		namespace: *input.metadata.namespace | "default"
		name:      "gpus"
	}
}

admission: (#APIVersion): TrainJob: {
	context: _
	policy: quotaInstalled: [if context.quota == _|_ {
		path:   "metadata.namespace"
		detail: "the cluster's GPU quota must be installed"
	}]
}
`}, "")
	if e == nil {
		t.FailNow()
	}
	for _, tc := range []struct {
		group, kind string
		want        bool
	}{
		{"platform.example.com", "Quota", true},
		{"trainer.kubeflow.org", "ClusterTrainingRuntime", true},
		{"trainer.kubeflow.org", "TrainingRuntime", false},
		{"trainer.kubeflow.org", "TrainJob", false},
	} {
		if got := e.clusterScoped(tc.group, tc.kind); got != tc.want {
			t.Errorf("clusterScoped(%s, %s) = %v, want %v", tc.group, tc.kind, got, tc.want)
		}
	}
	cl := &mapCluster{}
	cl.add(t, clusterRuntime)
	cl.objects["platform.example.com/Quota//gpus"] = map[string]any{
		"apiVersion": "platform.example.com/v1", "kind": "Quota",
		"metadata": map[string]any{"name": "gpus", "uid": "q-uid", "resourceVersion": "1"},
	}
	s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: cl})
	r := s.AdmitRequest(context.Background(), readOne(t, clusterTrainJob), Request{})
	if r.Rejected() {
		t.Errorf("the quota in the cluster was not found: %v", findingStrings(r.Errors))
	}
	if n := cl.read["platform.example.com/Quota/team/gpus"]; n != 0 {
		t.Errorf("the quota was read under the TrainJob's namespace %d times", n)
	}
}

// TestClusterScopedNamespaceCleared: a ClusterTrainingRuntime whose YAML
// carries a namespace is admitted as the API server admits it, the
// namespace cleared before the webhooks see it, and a TrainJob finds it;
// it was kept under its namespace, so every TrainJob of it was refused as
// not found. The document read is left as it was.
func TestClusterScopedNamespaceCleared(t *testing.T) {
	e := testEngine(t)
	runtime := strings.Replace(runtimeYAML("org-torch", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", ""), "  name: org-torch\n", "  name: org-torch\n  namespace: kubeflow-system\n", 1)
	docs := k8s.ReadYAML("in.yaml", []byte(runtime+"---\n"+jobYAML("org-torch", "{numNodes: 2}")))
	rs := e.NewSession(SessionOptions{}).AdmitAll(context.Background(), docs, 1)
	for _, r := range rs {
		if r.Rejected() {
			t.Errorf("%s: refused: %v", r.Identity(), r.Errors)
		}
	}
	if got := rs[0].Identity(); got != "ClusterTrainingRuntime org-torch" {
		t.Errorf("the runtime's identity %q, want ClusterTrainingRuntime org-torch", got)
	}
	if ns := docs[0].Namespace(); ns != "kubeflow-system" {
		t.Errorf("the document read: namespace %q, want it as read", ns)
	}
}
