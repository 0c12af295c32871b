package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/edit"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// renderDocs admits the documents and renders the last one.
func renderDocs(t *testing.T, docs ...string) Rendered {
	t.Helper()
	s := testEngine(t).NewSession(SessionOptions{NoBuiltinRuntimes: true})
	var last Result
	for _, r := range admitAll(t, s, "in.yaml", strings.Join(docs, "---\n")) {
		if r.Rejected() {
			t.Fatalf("%s rejected: %v", r.Identity(), findingStrings(r.Errors))
		}
		last = r
	}
	return s.Render(last, RenderOptions{})
}

// envOf returns the env of the node container of the JobSet's job.
func envOf(t *testing.T, out Rendered, job string) map[string]string {
	t.Helper()
	for _, o := range out.Objects {
		if o["kind"] != "JobSet" {
			continue
		}
		for _, j := range o["spec"].(map[string]any)["replicatedJobs"].([]any) {
			jm := j.(map[string]any)
			if jm["name"] != job {
				continue
			}
			pod := jm["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			for _, c := range pod["containers"].([]any) {
				cm := c.(map[string]any)
				if cm["name"] == "node" {
					env := map[string]string{}
					for _, e := range cm["env"].([]any) {
						em := e.(map[string]any)
						env[fmt.Sprint(em["name"])] = fmt.Sprint(em["value"])
					}
					return env
				}
			}
		}
	}
	t.Fatalf("no node container in job %s: %v", job, out.Errors)
	return nil
}

// TestRenderNumProcPerNodeOlderVocabulary: the older API's auto, cpu and gpu
// render as Kubeflow 2.1 did.
func TestRenderNumProcPerNodeOlderVocabulary(t *testing.T) {
	for _, tc := range []struct {
		name, policy, job, resources, want string
	}{
		{"int from the TrainJob", "{}", "numProcPerNode: 3", "", "3"},
		{"unset, no GPU: the CPU count rounded up", "{}", "", "requests: {cpu: 3500m}", "4"},
		{"unset, GPUs: auto", "{}", "", "limits: {nvidia.com/gpu: 2}", "auto"},
		{"policy cpu, with GPUs: the CPU count", "{numProcPerNode: cpu}", "", "limits: {cpu: 2, nvidia.com/gpu: 2}", "2"},
		{"policy gpu: left to torchrun", "{numProcPerNode: gpu}", "", "limits: {nvidia.com/gpu: 2}", "gpu"},
		{"TrainJob auto beats the policy's int", "{numProcPerNode: 5}", "numProcPerNode: auto", "limits: {nvidia.com/gpu: 1}", "auto"},
		{"policy auto without anything: 1", "{numProcPerNode: auto}", "", "", "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := renderDocs(t, runtimeYAML("rt", "trainer.kubeflow.org/framework: torch", "", "{torch: "+tc.policy+"}", ""),
				jobYAML("rt", fmt.Sprintf("{resourcesPerNode: {%s}%s}", tc.resources, map[bool]string{true: ", " + tc.job}[tc.job != ""])))
			if len(out.Errors) > 0 {
				t.Fatal(findingStrings(out.Errors))
			}
			if got := envOf(t, out, "node")["PET_NPROC_PER_NODE"]; got != tc.want {
				t.Errorf("PET_NPROC_PER_NODE = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRenderRuleErrors: a runtime let in without its webhook that breaks a
// render rule gets Kubeflow's error, not a panic or half the objects.
func TestRenderRuleErrors(t *testing.T) {
	noNode := strings.Replace(runtimeYAML("rt", "trainer.kubeflow.org/framework: torch, trainer.kubeflow.org/webhook-validation: disabled", "", "{torch: {}}", ""), "containers: [{name: node, image: img}]", "containers: [{name: main, image: img}]", 1)
	out := renderDocs(t, noNode, jobYAML("rt", "{}"))
	if len(out.Objects) > 0 || !strings.Contains(strings.Join(findingStrings(out.Errors), "\n"), `spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers: Invalid value: ["main"]: must contain the required container for the ancestor: trainer`) {
		t.Errorf("no node container: objects %d, errors %v", len(out.Objects), findingStrings(out.Errors))
	}
}

// TestRenderResourcesPerNode: resourcesPerNode merges key by key into the
// trainer's node container, and counts in a PodGroup's minResources.
func TestRenderResourcesPerNode(t *testing.T) {
	rt := strings.Replace(runtimeYAML("rt", "trainer.kubeflow.org/framework: torch", "", "{numNodes: 2, torch: {}}", ""),
		"containers: [{name: node, image: img}]", "containers: [{name: node, image: img, resources: {requests: {cpu: 1, memory: 1Gi}, limits: {cpu: 2}}}]", 1)
	rt = strings.Replace(rt, "  mlPolicy:", "  podGroupPolicy: {coscheduling: {}}\n  mlPolicy:", 1)
	out := renderDocs(t, rt, jobYAML("rt", "{resourcesPerNode: {requests: {memory: 3Gi, nvidia.com/gpu: 1}}}"))
	if len(out.Errors) > 0 {
		t.Fatal(findingStrings(out.Errors))
	}
	var resources, minResources any
	for _, o := range out.Objects {
		switch o["kind"] {
		case "JobSet":
			j := o["spec"].(map[string]any)["replicatedJobs"].([]any)[0].(map[string]any)
			resources = j["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"]
		case "PodGroup":
			minResources = o["spec"].(map[string]any)["minResources"]
		}
	}
	if got, want := fmt.Sprint(resources), "map[limits:map[cpu:2] requests:map[cpu:1 memory:3Gi nvidia.com/gpu:1]]"; got != want {
		t.Errorf("resources %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(minResources), "map[cpu:2 memory:6Gi nvidia.com/gpu:2]"; got != want {
		t.Errorf("minResources %s, want %s", got, want)
	}
}

// TestRenderRuntimePatches: patches merge strategically onto the runtime's
// JobSet spec in order (containers by name, the last patch winning), the
// jobs keep the runtime's order, and patch metadata reaches the JobSet.
func TestRenderRuntimePatches(t *testing.T) {
	rt := strings.Replace(runtimeYAML("rt", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", ""),
		"      replicatedJobs:\n", "      replicatedJobs:\n      - name: side\n        template: {spec: {template: {spec: {containers: [{name: s, image: s}]}}}}\n", 1)
	job := strings.Replace(jobYAML("rt", "{}"), "  trainer: {}", `  runtimePatches:
  - manager: acme.io/a
    trainingRuntimeSpec:
      template:
        metadata: {labels: {team: a}, annotations: {note: first}}
        spec:
          replicatedJobs:
          - name: node
            template: {spec: {template: {spec: {nodeSelector: {pool: a}, containers: [{name: node, securityContext: {runAsUser: 1}}]}}}}
  - manager: acme.io/b
    trainingRuntimeSpec:
      template:
        metadata: {annotations: {note: second}}
        spec:
          replicatedJobs:
          - name: node
            template: {spec: {template: {spec: {nodeSelector: {pool: b}}}}}`, 1)
	out := renderDocs(t, rt, job)
	if len(out.Errors) > 0 {
		t.Fatal(findingStrings(out.Errors))
	}
	for _, o := range out.Objects {
		if o["kind"] != "JobSet" {
			continue
		}
		md := o["metadata"].(map[string]any)
		if fmt.Sprint(md["labels"]) != "map[team:a]" || fmt.Sprint(md["annotations"]) != "map[note:second]" {
			t.Errorf("JobSet metadata: %v", md)
		}
		jobs := o["spec"].(map[string]any)["replicatedJobs"].([]any)
		if len(jobs) != 2 || jobs[0].(map[string]any)["name"] != "side" {
			t.Fatalf("jobs out of the runtime's order: %v", jobs)
		}
		pod := jobs[1].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		if fmt.Sprint(pod["nodeSelector"]) != "map[pool:b]" {
			t.Errorf("nodeSelector %v, want the last patch's", pod["nodeSelector"])
		}
		c := pod["containers"].([]any)[0].(map[string]any)
		if c["image"] != "img" || fmt.Sprint(c["securityContext"]) != "map[runAsUser:1]" {
			t.Errorf("node container: %v", c)
		}
		return
	}
	t.Fatal("no JobSet")
}

// TestEditsLeaveAbsentListsAbsent: an upsert of no items must not write a
// null list (the API server rejects `env: null`).
func TestEditsLeaveAbsentListsAbsent(t *testing.T) {
	obj := map[string]any{"c": map[string]any{}}
	for _, op := range []string{"upsert", "append"} {
		if err := (edit.Edit{Object: "o", Path: []any{"c", "env"}, Op: op, By: []string{"name"}}).Apply(obj); err != nil {
			t.Fatal(err)
		}
		if _, ok := obj["c"].(map[string]any)["env"]; ok {
			t.Errorf("%s of no items wrote env: %v", op, obj)
		}
	}
}

// TestUpsertNeedsItsFields: an upsert's item with none of the fields it
// is matched by would replace the first item (two absent fields match):
// the edit fails instead, and an item with one of them is upserted.
func TestUpsertNeedsItsFields(t *testing.T) {
	env := func() map[string]any {
		return map[string]any{"env": []any{map[string]any{"name": "A", "value": "1"}}}
	}
	obj := env()
	err := (edit.Edit{Path: []any{"env"}, Op: "upsert", By: []string{"nmae"}, Items: []any{map[string]any{"name": "B"}}}).Apply(obj)
	if err == nil || !strings.Contains(err.Error(), "env: upsert's item 0 has none of the fields it is matched by (by: nmae)") {
		t.Errorf("upsert by a field the item has not: %v, want the edit's error", err)
	}
	obj = env()
	if err := (edit.Edit{Path: []any{"env"}, Op: "upsert", By: []string{"name"}, Items: []any{map[string]any{"name": "B"}}}).Apply(obj); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(obj["env"]); got != "[map[name:A value:1] map[name:B]]" {
		t.Errorf("env %s, want A kept and B appended", got)
	}
}

// TestRenderTorchElastic: the older API's elastic policy renders torchrun's
// elastic flags and the JobSet's restart bound, on maxNodes pods.
func TestRenderTorchElastic(t *testing.T) {
	rt := runtimeYAML("el", "trainer.kubeflow.org/framework: torch", "", "{torch: {elasticPolicy: {minNodes: 2, maxNodes: 4, maxRestarts: 3, metrics: [{type: Resource}]}}}", "")
	out := renderDocs(t, rt, jobYAML("el", "{}"))
	if len(out.Errors) > 0 {
		t.Fatal(findingStrings(out.Errors))
	}
	env := envOf(t, out, "node")
	for name, want := range map[string]string{
		"PET_NNODES": "2:4", "PET_RDZV_BACKEND": "c10d", "PET_RDZV_ENDPOINT": "job-node-0-0.job:29500",
		"PET_MAX_RESTARTS": "3", "PET_MASTER_ADDR": "job-node-0-0.job",
	} {
		if env[name] != want {
			t.Errorf("%s = %q, want %q", name, env[name], want)
		}
	}
	for _, o := range out.Objects {
		if o["kind"] == "JobSet" {
			spec := o["spec"].(map[string]any)
			if got := fmt.Sprint(spec["failurePolicy"]); got != "map[maxRestarts:3]" {
				t.Errorf("failurePolicy %s", got)
			}
			job := spec["replicatedJobs"].([]any)[0].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			if fmt.Sprint(job["parallelism"]) != "4" {
				t.Errorf("parallelism %v, want maxNodes", job["parallelism"])
			}
		}
	}
	if !strings.Contains(strings.Join(findingStrings(out.Warnings), "\n"), "elasticPolicy.metrics are not rendered") {
		t.Errorf("no warning about metrics: %v", findingStrings(out.Warnings))
	}
}

// TestEditsChecked: the engine checks each edit as an #Edit, so that a rule
// with a misspelt field fails rather than doing nothing: at load, where
// the engine renders its probes, at the edit group.
func TestEditsChecked(t *testing.T) {
	t.Parallel()
	dir := writePolicy(t, map[string]string{"typo.cue": `package schemas

render: (#APIVersion): TrainJob: edits: misspelt: {
	order: 99
	ops: [{object: "jobset", path: ["spec", "ttlSecondsAfterFinished"], op: "set", valeu: 60}]
}
`})
	_, err := New(Options{PolicyDirs: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), `typo.cue:3:41: rule edits.misspelt cannot be evaluated`) || !strings.Contains(err.Error(), `unknown field "valeu"`) {
		t.Errorf("load: %v, want the unknown field at the edit group", err)
	}
}

// TestEditUsesMissingOp: an edit that names an op its plan lacks fails,
// at load.
func TestEditUsesMissingOp(t *testing.T) {
	t.Parallel()
	dir := writePolicy(t, map[string]string{"use.cue": `package schemas

render: (#APIVersion): TrainJob: edits: missing: {
	order: 99
	ops: [{use: "noSuchOp", value: 60}]
}
`})
	_, err := New(Options{PolicyDirs: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), `use.cue:3:34: rule edits cannot be evaluated`) || !strings.Contains(err.Error(), `no op "noSuchOp" in the plan`) {
		t.Errorf("load: %v, want the missing op at the edits", err)
	}
}

// TestDeepCopy: deepCopy shares no map or list with the original and keeps
// its leaves and nils; with numbers, it gives what asJSON gives for the
// leaves the reader, the API server and decodeJSON write.
func TestDeepCopy(t *testing.T) {
	in := map[string]any{
		"a": []any{int64(3), 1.5, "s", true, nil, map[string]any{"x": []any(nil)}},
		"b": map[string]any(nil),
		"c": json.Number("7"),
		"d": json.Number("7.5"),
	}
	got := value.DeepCopy(in)
	if !reflect.DeepEqual(got, in) {
		t.Errorf("deepCopy %#v, want %#v", got, in)
	}
	got.(map[string]any)["a"].([]any)[5].(map[string]any)["x"] = "changed"
	if _, ok := in["a"].([]any)[5].(map[string]any)["x"].([]any); !ok {
		t.Error("the copy shares a map with the original")
	}
	// What JSON decodes to has no typed nil (a null is nil).
	decoded := map[string]any{"a": []any{int64(3), 1.5, "s", true, nil, map[string]any{"x": nil}}, "c": json.Number("7"), "d": json.Number("7.5")}
	if n, want := value.Numbers(value.DeepCopy(decoded)), value.AsJSON(decoded); !reflect.DeepEqual(n, want) {
		t.Errorf("numbers(deepCopy) %#v, asJSON %#v", n, want)
	}
}

// TestFillIn: an object keeps its own fields and takes the skeleton's
// others, field by field, as copies.
func TestFillIn(t *testing.T) {
	skeleton := map[string]any{"kind": "JobSet", "metadata": map[string]any{"labels": map[string]any{"a": "1"}, "name": "skeleton"}}
	got := value.FillIn(map[string]any{"metadata": map[string]any{"name": "own"}}, skeleton)
	want := map[string]any{"kind": "JobSet", "metadata": map[string]any{"labels": map[string]any{"a": "1"}, "name": "own"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	got["metadata"].(map[string]any)["labels"].(map[string]any)["a"] = "changed"
	if skeleton["metadata"].(map[string]any)["labels"].(map[string]any)["a"] != "1" {
		t.Error("the object shares a map with the skeleton")
	}
}

// TestRenderParts: a render takes the parts its plan names, and only
// those; a part no renderParts declares fails the render.
func TestRenderParts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy := `package schemas

plans: (#APIVersion): TrainJob: {
	mlPolicy: _
	parts: marked: mlPolicy.torch != _|_
}
renderParts: (#APIVersion): TrainJob: marked: {
	objects: jobset: metadata: annotations: marked: "yes"
}
`
	if err := os.WriteFile(filepath.Join(dir, "part.cue"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	marked := func(runtime string) string {
		s := e.NewSession(SessionOptions{})
		var last Result
		for _, r := range admitAll(t, s, "j.yaml", strings.ReplaceAll(fmt.Sprintf(torchJob, "parts"), "torch-distributed", runtime)) {
			last = r
		}
		out := s.Render(last, RenderOptions{})
		for _, o := range out.Objects {
			if o["kind"] == "JobSet" {
				return fmt.Sprint(value.At(o, []string{"metadata", "annotations", "marked"}))
			}
		}
		t.Fatalf("no JobSet: %v", findingStrings(out.Errors))
		return ""
	}
	if got := marked("torch-distributed"); got != "yes" {
		t.Errorf("torch runtime: annotation %q, want the part's", got)
	}
	if got := marked("deepspeed-distributed"); got != "<nil>" {
		t.Errorf("MPI runtime: annotation %q, want none", got)
	}

	ghost := filepath.Join(t.TempDir(), "ghost.cue")
	if err := os.WriteFile(ghost, []byte("package schemas\n\nplans: (#APIVersion): TrainJob: parts: ghost: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A plan that names a part no file declares fails the load, at the
	// plan (it rendered an error for every TrainJob before).
	if _, err = New(Options{PolicyDirs: []string{filepath.Dir(ghost)}}); err == nil || !strings.Contains(err.Error(), "ghost.cue:3:40: plans: the part ghost has no renderParts entry") {
		t.Errorf("load: %v, want the undeclared part", err)
	}
}

// TestObjectQuantitiesCanonical: a quantity a rule writes as a number into
// an object comes out canonical, as a typed controller marshals it.
func TestObjectQuantitiesCanonical(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy := `package schemas

render: (#APIVersion): TrainJob: {
	input: _
	objects: quota: {
		apiVersion: "v1"
		kind:       "ResourceQuota"
		metadata: name: "\(input.metadata.name)-q"
		spec: hard: requests: {cpu: 0.5, memory: 1024}
	}
}

owned: v1: ResourceQuota: true
`
	if err := os.WriteFile(filepath.Join(dir, "quota.cue"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession(SessionOptions{})
	var last Result
	for _, r := range admitAll(t, s, "j.yaml", fmt.Sprintf(torchJob, "quota")) {
		last = r
	}
	out := s.Render(last, RenderOptions{})
	for _, o := range out.Objects {
		if o["kind"] == "ResourceQuota" {
			if got := fmt.Sprint(value.At(o, []string{"spec", "hard", "requests"})); got != "map[cpu:500m memory:1024]" {
				t.Errorf("requests %s, want canonical quantities", got)
			}
			return
		}
	}
	t.Fatalf("no ResourceQuota: %v", findingStrings(out.Errors))
}

// TestRenderExisting: objects a rule builds once are left out when they
// exist (the SSH keys of an MPI job), and only they.
func TestRenderExisting(t *testing.T) {
	s, tj := renderInput(t, "28-deepspeed-shipped-minimal")
	kinds := func(opts RenderOptions) map[string]bool {
		out := s.Render(tj, opts)
		if len(out.Errors) > 0 {
			t.Fatal(findingStrings(out.Errors))
		}
		got := map[string]bool{}
		for _, o := range out.Objects {
			got[fmt.Sprint(o["kind"])] = true
			if o["kind"] == "Secret" {
				data, _ := o["data"].(map[string]any)
				if data["ssh-privatekey"] == nil || data["ssh-publickey"] == nil || o["immutable"] != true {
					t.Errorf("Secret %v: want generated keys, immutable", o)
				}
			}
		}
		return got
	}
	if got := kinds(RenderOptions{}); !got["Secret"] || !got["ConfigMap"] || !got["JobSet"] {
		t.Errorf("new job: kinds %v, want the Secret too", got)
	}
	if got := kinds(RenderOptions{Existing: []string{"sshAuth"}}); got["Secret"] || !got["ConfigMap"] || !got["JobSet"] {
		t.Errorf("existing keys: kinds %v, want no Secret", got)
	}
}

// TestTypedPartsOmitZeros: Kubeflow's controller reads a runtime's JobSet
// template and a TrainJob's runtimePatches into Go types, whose omitempty
// fields at their zero value are as absent: a patch's readOnly: false and
// tolerations: [] change nothing, a template's tty: false is not in the
// JobSet nor in the runtime snapshot; a pointer's zero stays.
func TestTypedPartsOmitZeros(t *testing.T) {
	rt := `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: zero-rt
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                tolerations: [{key: a, operator: Exists}]
                containers:
                - name: node
                  image: x/torch:2
                  tty: false
                  resources: {limits: {cpu: 1000m}}
                  volumeMounts: [{name: data, mountPath: /data, readOnly: true}]
                volumes: [{name: data, emptyDir: {}}]
`
	tj := `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: z, namespace: team}
spec:
  runtimeRef: {name: zero-rt}
  runtimePatches:
  - manager: example.com/me
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  spec:
                    tolerations: []
                    terminationGracePeriodSeconds: 0
                    containers:
                    - name: node
                      volumeMounts: [{name: data, mountPath: /data, readOnly: false}]
`
	out := renderDocs(t, rt, tj)
	if len(out.Errors) > 0 {
		t.Fatal(findingStrings(out.Errors))
	}
	for _, o := range out.Objects {
		switch o["kind"] {
		case "JobSet":
			pod := o["spec"].(map[string]any)["replicatedJobs"].([]any)[0].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			c := pod["containers"].([]any)[0].(map[string]any)
			if _, ok := c["tty"]; ok {
				t.Errorf("the template's tty: false is in the JobSet: %v", c)
			}
			if got := fmt.Sprint(c["volumeMounts"]); got != "[map[mountPath:/data name:data readOnly:true]]" {
				t.Errorf("volumeMounts %s: the patch's readOnly: false replaced the runtime's true", got)
			}
			if got := fmt.Sprint(pod["tolerations"]); got != "[map[key:a operator:Exists]]" {
				t.Errorf("tolerations %s: the patch's [] replaced the runtime's", got)
			}
			if got := fmt.Sprint(pod["terminationGracePeriodSeconds"]); got != "0" {
				t.Errorf("terminationGracePeriodSeconds %s: a pointer's zero is the patch's", got)
			}
		case "ConfigMap":
			if text := fmt.Sprint(o["data"]); strings.Contains(text, "tty") || !strings.Contains(text, "readOnly: true") {
				t.Errorf("snapshot %s: want the runtime as Kubeflow reads it", text)
			}
		}
	}
}
