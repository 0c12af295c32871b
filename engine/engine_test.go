package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

var (
	sharedOnce sync.Once
	shared     *Engine
	sharedErr  error
)

// testEngine is one engine for the package's tests, as a server shares one.
func testEngine(t testing.TB) *Engine {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = New(Options{}) })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// memoAndFresh loads the CUE, with the policy directories, twice: an
// engine with its memos and one without, whose results are to agree.
func memoAndFresh(t testing.TB, dirs ...string) (memo, fresh *Engine) {
	t.Helper()
	var err error
	if memo, err = New(Options{PolicyDirs: dirs}); err != nil {
		t.Fatal(err)
	}
	if fresh, err = New(Options{PolicyDirs: dirs, NoMemo: true}); err != nil {
		t.Fatal(err)
	}
	return memo, fresh
}

// missEngine is a shared engine without memos, for the benchmarks that
// measure one evaluation: their inputs repeat, and would be the memos' hits.
func missEngine(t testing.TB) *Engine {
	t.Helper()
	missOnce.Do(func() { missed, missErr = New(Options{NoMemo: true}) })
	if missErr != nil {
		t.Fatal(missErr)
	}
	return missed
}

var (
	missOnce sync.Once
	missed   *Engine
	missErr  error
)

const torchJob = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: %s
  namespace: team-a
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 2
    env:
      - name: PET_NNODES
        value: "4"
`

func admitAll(t testing.TB, s *Session, file, data string) []Result {
	t.Helper()
	var out []Result
	for _, d := range k8s.ReadYAML(file, []byte(data)) {
		out = append(out, s.Admit(d))
	}
	return out
}

func findingStrings(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

func TestAdmitDefaultsAndRules(t *testing.T) {
	e := testEngine(t)
	s := e.NewSession(SessionOptions{})
	rs := admitAll(t, s, "job.yaml", fmt.Sprintf(torchJob, "mnist"))
	if len(rs) != 1 {
		t.Fatalf("got %d results", len(rs))
	}
	r := rs[0]
	want := []string{`spec.trainer.env: Invalid value: [{"name":"PET_NNODES","value":"4"}]: must not have reserved envs, invalid envs configured: [PET_NNODES]`}
	if got := findingStrings(r.Errors); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%q\nwant:\n%q", got, want)
	}
	spec := r.Object["spec"].(map[string]any)
	ref := spec["runtimeRef"].(map[string]any)
	for field, want := range map[string]any{"suspend": false, "managedBy": "trainer.kubeflow.org/trainjob-controller"} {
		if spec[field] != want {
			t.Errorf("spec.%s = %v, want the CRD default %v", field, spec[field], want)
		}
	}
	if ref["apiGroup"] != "trainer.kubeflow.org" || ref["kind"] != "ClusterTrainingRuntime" {
		t.Errorf("runtimeRef defaults: %v", ref)
	}
	if got := r.Doc.LineOf(r.Errors[0].Path); got != 11 {
		t.Errorf("line of spec.trainer.env = %d, want 11", got)
	}
}

func TestAdmitSchemaErrors(t *testing.T) {
	e := testEngine(t)
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"wrong type", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: a, namespace: ns}
spec: {runtimeRef: {name: torch-distributed}, trainer: {numNodes: two}}
`, []string{`spec.trainer.numNodes: Invalid value: "two": spec.trainer.numNodes in body must be of type integer: "string"`}},
		{"unknown field", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: a, namespace: ns}
spec: {runtimeRef: {name: torch-distributed}, trainer: {imagee: x}}
`, []string{`spec.trainer.imagee: Forbidden: unknown field: the schema has no such field`}},
		{"missing required", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: a, namespace: ns}
spec: {trainer: {}}
`, []string{`spec.runtimeRef.name: Required value`}},
		{"older API overrides", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: a, namespace: ns}
spec: {runtimeRef: {name: torch-distributed}, podTemplateOverrides: [{targetJobs: [{name: node}]}]}
`, []string{`spec.podTemplateOverrides: Forbidden: podTemplateOverrides was replaced by spec.runtimePatches`}},
		{"numProcPerNode word", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: a, namespace: ns}
spec: {runtimeRef: {name: torch-distributed}, trainer: {numProcPerNode: many}}
`, []string{`spec.trainer.numProcPerNode: Invalid value: "many": must have an int value or [auto cpu gpu]`}},
		{"missing kind", `apiVersion: trainer.kubeflow.org/v1alpha1
metadata: {name: a}
`, []string{`kind: Required value: not a Kubernetes object: the document has no kind`}},
		{"unknown kind of our group", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingJob
metadata: {name: a}
`, []string{`kind: Unsupported value: "TrainingJob": no kind "TrainingJob" is registered`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := admitAll(t, e.NewSession(SessionOptions{}), "x.yaml", tc.doc)
			got := strings.Join(findingStrings(rs[0].Errors), "\n")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("errors:\n%s\nwant one containing:\n%s", got, w)
				}
			}
		})
	}
}

func TestAdmitNumProcPerNodeWordsAccepted(t *testing.T) {
	e := testEngine(t)
	for _, w := range []string{"auto", "cpu", "gpu"} {
		doc := fmt.Sprintf(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: a, namespace: ns}
spec: {runtimeRef: {name: torch-distributed}, trainer: {numProcPerNode: %s}}
`, w)
		if rs := admitAll(t, e.NewSession(SessionOptions{}), "x.yaml", doc); rs[0].Rejected() {
			t.Errorf("numProcPerNode %s rejected: %v", w, findingStrings(rs[0].Errors))
		}
	}
}

// TestAdmitDuplicateNamesTheFirstPlace: a second object of a name an
// admitted one took is refused, naming the first; a name a refused object
// gave is free, as in a cluster, which never created that object.
func TestAdmitDuplicateNamesTheFirstPlace(t *testing.T) {
	e := testEngine(t)
	valid := "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: a, namespace: team-a}\nspec: {runtimeRef: {name: torch-distributed}}\n"
	refused := fmt.Sprintf(torchJob, "a") // PET_NNODES is reserved
	s := e.NewSession(SessionOptions{})
	rs := admitAll(t, s, "two.yaml", valid+"---\n"+valid)
	if len(rs) != 2 || rs[0].Rejected() {
		t.Fatalf("got %d results, the first %v", len(rs), findingStrings(rs[0].Errors))
	}
	got := strings.Join(findingStrings(rs[1].Errors), "\n")
	if !strings.Contains(got, "TrainJob team-a/a is defined twice: first at two.yaml:1") {
		t.Errorf("second document: %s", got)
	}

	s = e.NewSession(SessionOptions{})
	rs = admitAll(t, s, "two.yaml", refused+"---\n"+valid+"---\n"+valid)
	if len(rs) != 3 || !rs[0].Rejected() || rs[1].Rejected() {
		t.Fatalf("a refused object's name taken: %d results, %v, then %v", len(rs), findingStrings(rs[0].Errors), findingStrings(rs[1].Errors))
	}
	if got := strings.Join(findingStrings(rs[2].Errors), "\n"); !strings.Contains(got, "is defined twice: first at two.yaml:15") {
		t.Errorf("third document, after an admitted second: %s", got)
	}
}

func TestAdmitRuntimeVisibleToLaterTrainJobs(t *testing.T) {
	e := testEngine(t)
	s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true})
	job := func(name, namespace string) string {
		return wrapper.TrainJob(name).Namespace(namespace).RuntimeRef("mine").RuntimeRefKind("TrainingRuntime").YAML()
	}
	rt := wrapper.TrainingRuntime("mine").Namespace("team-a").Framework("torch").
		MLPolicy("torch", nil).ReplicatedJob(nodeJob("x")).YAML()
	before := admitAll(t, s, "a.yaml", job("a", "team-a"))[0]
	if !strings.Contains(strings.Join(findingStrings(before.Errors), ""), `trainingruntimes.trainer.kubeflow.org "mine" not found`) {
		t.Errorf("TrainJob before its runtime: %v", findingStrings(before.Errors))
	}
	if r := admitAll(t, s, "b.yaml", rt)[0]; r.Rejected() {
		t.Fatalf("runtime rejected: %v", findingStrings(r.Errors))
	}
	if r := admitAll(t, s, "c.yaml", job("b", "team-a"))[0]; r.Rejected() {
		t.Errorf("TrainJob after its runtime: %v", findingStrings(r.Errors))
	}
	if r := admitAll(t, s, "d.yaml", job("b", "team-b"))[0]; !r.Rejected() {
		t.Errorf("a TrainingRuntime of another namespace was found")
	}
}

func TestPolicyDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy := `package schemas

admission: "trainer.kubeflow.org/v1alpha1": TrainJob: {
	object: _
	webhook: requireImage: [if object.spec.trainer.image == _|_ {
		path:   "spec.trainer.image"
		type:   "Required value"
		detail: "this cluster requires an image"
	}]
}
`
	if err := os.WriteFile(filepath.Join(dir, "image.cue"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	rs := admitAll(t, e.NewSession(SessionOptions{}), "j.yaml", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: a, namespace: ns}
spec: {runtimeRef: {name: torch-distributed}, trainer: {}}
`)
	want := []string{"spec.trainer.image: Required value: this cluster requires an image"}
	if got := findingStrings(rs[0].Errors); !reflect.DeepEqual(got, want) {
		t.Errorf("errors %q, want %q", got, want)
	}
}

func TestPolicyDirBrokenFileFailsAtLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.cue"), []byte("package schemas\n\nfoo: {\n\tbar: 1 +\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{PolicyDirs: []string{dir}})
	if err == nil {
		t.Fatal("a broken policy file loaded")
	}
	if !regexp.MustCompile(`broken\.cue:\d+:\d+`).MatchString(err.Error()) {
		t.Errorf("error does not name file:line:col: %v", err)
	}
	if strings.Contains(err.Error(), "zz-policy") {
		t.Errorf("error names the loader's internal file name: %v", err)
	}
}

func TestPolicyDirMissing(t *testing.T) {
	t.Parallel()
	if _, err := New(Options{PolicyDirs: []string{filepath.Join(t.TempDir(), "nope")}}); err == nil {
		t.Fatal("a missing policy directory loaded")
	}
}

// TestConcurrentSessions evaluates the one engine from 64 goroutines and
// compares every result with the sequential evaluation of the same input.
func TestConcurrentSessions(t *testing.T) {
	e := testEngine(t)
	input := func(i int) string {
		return fmt.Sprintf(torchJob, fmt.Sprintf("job-%d", i)) + "---\n" + strings.ReplaceAll(fmt.Sprintf(torchJob, fmt.Sprintf("ok-%d", i)), "PET_NNODES", fmt.Sprintf("MY_VAR_%d", i))
	}
	type outcome struct {
		objects  []map[string]any
		errors   []string
		warnings []string
	}
	evaluate := func(i int) outcome {
		var o outcome
		for _, r := range admitAll(t, e.NewSession(SessionOptions{}), "x.yaml", input(i)) {
			o.objects = append(o.objects, r.Object)
			o.errors = append(o.errors, findingStrings(r.Errors)...)
			o.warnings = append(o.warnings, findingStrings(r.Warnings)...)
		}
		return o
	}
	const n = 64
	want := make([]outcome, n)
	for i := range want {
		want[i] = evaluate(i)
	}
	got := make([]outcome, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = evaluate(i)
		}()
	}
	wg.Wait()
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("input %d: concurrent result differs from sequential:\n%+v\n%+v", i, got[i], want[i])
		}
		if len(want[i].errors) != 1 {
			t.Errorf("input %d: %d errors, want 1", i, len(want[i].errors))
		}
	}
}

// TestRuntimeCRDDefaults checks defaults the CRD schemas give embedded core
// types (the Go markers `cue get go` drops).
func TestRuntimeCRDDefaults(t *testing.T) {
	e := testEngine(t)
	rs := admitAll(t, e.NewSession(SessionOptions{}), "rt.yaml", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: d, labels: {trainer.kubeflow.org/framework: mpi}}
spec:
  mlPolicy: {mpi: {}}
  podGroupPolicy: {coscheduling: {}}
  template:
    spec:
      failurePolicy: {maxRestarts: 2}
      volumeClaimPolicies: [{templates: [], retentionPolicy: {}}]
      replicatedJobs:
      - name: launcher
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                imagePullSecrets: [{}]
                volumes: [{name: c, configMap: {}}, {name: r, rbd: {monitors: [m], image: i}}]
                containers:
                - name: node
                  ports: [{containerPort: 22}]
                  readinessProbe: {grpc: {port: 1}}
                  env: [{name: A, valueFrom: {secretKeyRef: {key: k}}}]
                  envFrom: [{configMapRef: {}}]
`)
	if rs[0].Rejected() {
		t.Fatalf("rejected: %v", findingStrings(rs[0].Errors))
	}
	obj := rs[0].Object
	get := func(path string) any {
		var v any = obj
		for _, p := range strings.Split(path, ".") {
			switch x := v.(type) {
			case map[string]any:
				v = x[p]
			case []any:
				var i int
				fmt.Sscan(p, &i)
				v = x[i]
			}
		}
		return v
	}
	pod := "spec.template.spec.replicatedJobs.0.template.spec.template.spec."
	for path, want := range map[string]any{
		"spec.mlPolicy.mpi.numProcPerNode":                                     float64(1),
		"spec.mlPolicy.mpi.mpiImplementation":                                  "OpenMPI",
		"spec.mlPolicy.mpi.sshAuthMountPath":                                   "/root/.ssh",
		"spec.mlPolicy.mpi.runLauncherAsNode":                                  false,
		"spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds":              float64(60),
		"spec.template.spec.failurePolicy.restartStrategy":                     "Recreate",
		"spec.template.spec.volumeClaimPolicies.0.retentionPolicy.whenDeleted": "Delete",
		"spec.template.spec.replicatedJobs.0.replicas":                         float64(1),
		"spec.template.spec.replicatedJobs.0.groupName":                        "default",
		pod + "imagePullSecrets.0.name":                                        "",
		pod + "volumes.0.configMap.name":                                       "",
		pod + "volumes.1.rbd.pool":                                             "rbd",
		pod + "containers.0.ports.0.protocol":                                  "TCP",
		pod + "containers.0.readinessProbe.grpc.service":                       "",
		pod + "containers.0.env.0.valueFrom.secretKeyRef.name":                 "",
		pod + "containers.0.envFrom.0.configMapRef.name":                       "",
	} {
		if got := get(path); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v (%T), want %v", path, got, got, want)
		}
	}
}

// TestRecycle: after RecycleAfter evaluations the engine swaps in a fresh
// CUE runtime, and evaluates the same way on it.
func TestRecycle(t *testing.T) {
	e, err := New(Options{RecycleAfter: 5})
	if err != nil {
		t.Fatal(err)
	}
	var before []string
	for i := 0; i < 40 && e.Recycled() == 0; i++ {
		rs := admitAll(t, e.NewSession(SessionOptions{}), "j.yaml", fmt.Sprintf(torchJob, fmt.Sprintf("j%d", i)))
		before = findingStrings(rs[0].Errors)
		time.Sleep(10 * time.Millisecond)
	}
	if e.Recycled() == 0 {
		t.Fatal("the engine never recycled its CUE runtime")
	}
	rs := admitAll(t, e.NewSession(SessionOptions{}), "j.yaml", fmt.Sprintf(torchJob, "after"))
	if got := findingStrings(rs[0].Errors); !reflect.DeepEqual(got, before) {
		t.Errorf("after recycling: %q, before: %q", got, before)
	}
}

// TestAdmitTypeErrors: a value of the wrong JSON type gets the API
// server's errors (its detail names the type it found; the value printed
// is the value), however the schema spells the type, and the API server's
// note that the CRD's CEL rules were not evaluated.
func TestAdmitTypeErrors(t *testing.T) {
	rs := admitAll(t, testEngine(t).NewSession(SessionOptions{}), "x.yaml", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: a, namespace: ns}
spec: {runtimeRef: {name: torch-distributed}, trainer: "x", suspend: 3, initializer: {dataset: {env: {a: b}}}}
`)
	want := []string{
		`<nil>: Invalid value: null: ` + k8s.CELNotChecked,
		`spec.initializer.dataset.env: Invalid value: {"a":"b"}: spec.initializer.dataset.env in body must be of type array: "object"`,
		`spec.suspend: Invalid value: 3: spec.suspend in body must be of type boolean: "integer"`,
		`spec.trainer: Invalid value: "x": spec.trainer in body must be of type object: "string"`,
	}
	got := findingStrings(rs[0].Errors)
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
