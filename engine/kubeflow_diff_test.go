package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// Issue 20's classes of inputs on which cuetrainer's behaviour differed
// from Kubeflow Trainer's (v2.3.0), one test each, built from inputs of
// our own; ../shared/docs/semantics.md cites Kubeflow's source.

// TestVolcanoQueueWithPatchAnnotations (class 4). Kubeflow's volcano
// plugin (pkg/runtime/framework/plugins/volcano/volcano.go, Validate)
// reads the queue from the JobSet's annotations, the runtime template's
// then each runtimePatch's, and refuses only a queue annotation that is
// present and empty; its PodGroup takes the queue. A runtimePatch with
// template annotations but not the queue's made the rule fail ("cannot
// range over sources") instead.
func TestVolcanoQueueWithPatchAnnotations(t *testing.T) {
	e := testEngine(t)
	for _, c := range []struct {
		annotations        map[string]any
		wantErr, wantQueue string
	}{
		{map[string]any{"example.com/x": "z"}, "", "q1"},
		{map[string]any{}, "", "q1"},
		{map[string]any{"scheduling.volcano.sh/queue-name": "q2"}, "", "q2"},
		{map[string]any{"scheduling.volcano.sh/queue-name": ""}, `spec.annotations[scheduling.volcano.sh/queue-name]: Invalid value: "": Volcano queue name must not be empty`, ""},
	} {
		input := volcanoPatch(c.annotations)
		s := e.NewSession(SessionOptions{})
		var r Result
		for _, d := range k8s.ReadYAML("v.yaml", []byte(input)) {
			r = s.Admit(d)
		}
		got := strings.Join(findingStrings(r.Errors), "\n")
		if got != c.wantErr {
			t.Errorf("patch annotations %v: errors %q, want %q", c.annotations, got, c.wantErr)
			continue
		}
		if c.wantErr != "" {
			continue
		}
		out := s.Render(r, RenderOptions{})
		if len(out.Errors) > 0 {
			t.Errorf("patch annotations %v: render %v", c.annotations, findingStrings(out.Errors))
			continue
		}
		queue := ""
		for _, o := range out.Objects {
			if o["kind"] == "PodGroup" {
				queue, _ = o["spec"].(map[string]any)["queue"].(string)
			}
		}
		if queue != c.wantQueue {
			t.Errorf("patch annotations %v: PodGroup queue %q, want %q", c.annotations, queue, c.wantQueue)
		}
	}
}

// TestNoDeprecationWarningWithoutTheWebhook (class 6). Kubeflow's runtime
// webhooks are registered with an objectSelector that leaves out runtimes
// labelled trainer.kubeflow.org/webhook-validation: disabled (its
// manifests' ValidatingWebhookConfiguration), so such a runtime gets none
// of the webhook's warnings, the deprecation warning among them;
// cuetrainer warned it.
func TestNoDeprecationWarningWithoutTheWebhook(t *testing.T) {
	e := testEngine(t)
	runtime := func() *wrapper.RuntimeWrapper {
		return torchRuntime("old", 1, nodeJob("x")).Label("trainer.kubeflow.org/support", "deprecated")
	}
	deprecated := func(r Result) bool {
		for _, w := range r.Warnings {
			if strings.Contains(w.Detail, `"old" is deprecated`) {
				return true
			}
		}
		return false
	}
	if r := e.NewSession(SessionOptions{}).Admit(readOne(t, runtime().YAML())); !deprecated(r) {
		t.Errorf("a deprecated runtime: warnings %v, want Kubeflow's deprecation warning", findingStrings(r.Warnings))
	}
	if r := e.NewSession(SessionOptions{}).Admit(readOne(t, runtime().Label("trainer.kubeflow.org/webhook-validation", "disabled").YAML())); deprecated(r) || r.Rejected() {
		t.Errorf("one that opts out of the webhook: warnings %v, errors %v; want neither", findingStrings(r.Warnings), findingStrings(r.Errors))
	}
}

// TestObjectMetadataChecks (class 3). The API server checks every custom
// resource's metadata before its schema (apiextensions-apiserver's
// customResourceStrategy.Validate: ValidateObjectMetaAccessor with
// NameIsDNSSubdomain): the name, label keys and values, annotation keys.
// vet let them through. A schema-checked request has passed them
// (TestCRDChecksAreTheAPIServers shows the API server's words are these).
func TestObjectMetadataChecks(t *testing.T) {
	e := testEngine(t)
	job := `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: %s
  namespace: team-a
  labels: {%s}
spec: {runtimeRef: {name: torch-distributed}}
`
	for _, c := range []struct{ name, labels, want string }{
		{"ok", "team: ml", ""},
		{"labels", `"bad key!": x`, `metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters`},
		{"value", "team: " + strings.Repeat("v", 64), `metadata.labels: Invalid value: "` + strings.Repeat("v", 64) + `": must be no more than 63 bytes`},
		{"Upper", "team: ml", `metadata.name: Invalid value: "Upper": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters`},
	} {
		d := readOne(t, fmt.Sprintf(job, c.name, c.labels))
		r := e.NewSession(SessionOptions{}).Admit(d)
		got := strings.Join(findingStrings(r.Errors), "\n")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: errors %q, want %q", c.name, got, c.want)
		}
		if c.want == "" {
			continue
		}
		checked := e.NewSession(SessionOptions{}).AdmitRequest(context.Background(), d, Request{SchemaChecked: true})
		if strings.Contains(strings.Join(findingStrings(checked.Errors), "\n"), c.want) {
			t.Errorf("%s: schema-checked, the metadata checked again", c.name)
		}
	}
}

// TestMetadataThatDoesNotDecode (issue 44, item 6). An unquoted yes in a
// TrainJob's annotations is a bool (YAML 1.1, as kubectl reads it), which
// the API server cannot decode into an ObjectMeta: it fails the request
// with its decoder's one error, before any field is validated
// (apiextensions-apiserver's objectmeta.GetObjectMetaWithOptions, the
// apiserver's transformDecodeError). vet reported a field error of the
// schema's. A schema-checked request has been decoded: it has none.
func TestMetadataThatDoesNotDecode(t *testing.T) {
	e := testEngine(t)
	job := "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: %s\nmetadata:\n  name: j\n  namespace: team-a\n%s\nspec: {runtimeRef: {name: torch-distributed}}\n"
	for _, c := range []struct{ kind, meta, want string }{
		{"TrainJob", "  annotations: {example.com/debug: yes}", `TrainJob in version "v1alpha1" cannot be handled as a TrainJob: json: cannot unmarshal bool into Go struct field ObjectMeta.annotations of type string`},
		{"TrainJob", "  labels: {replicas: 3}", `TrainJob in version "v1alpha1" cannot be handled as a TrainJob: json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string`},
		{"TrainJob", "  finalizers: example.com/keep", `TrainJob in version "v1alpha1" cannot be handled as a TrainJob: json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string`},
		{"TrainJob", `  annotations: {example.com/debug: "yes"}`, ""},
	} {
		d := readOne(t, fmt.Sprintf(job, c.kind, c.meta))
		r := e.NewSession(SessionOptions{}).Admit(d)
		got := findingStrings(r.Errors)
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: errors %q, want none", c.meta, got)
		case c.want != "" && (len(got) != 1 || got[0] != c.want || r.Errors[0].Phase != PhaseSchema):
			t.Errorf("%s: errors %q, want the one %q", c.meta, got, c.want)
		}
	}
	// A name that is no string: the decoder's words for a kind the
	// engine admits; a ConfigMap keeps the engine's own.
	for _, c := range []struct{ doc, want string }{
		{"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: 5, namespace: team-a}\nspec: {runtimeRef: {name: torch-distributed}}\n",
			`TrainJob in version "v1alpha1" cannot be handled as a TrainJob: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string`},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 5, namespace: team-a}\n", "metadata.name: Invalid value: 5: must be of type string"},
	} {
		r := e.NewSession(SessionOptions{}).Admit(readOne(t, c.doc))
		if got := findingStrings(r.Errors); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: errors %q, want the one %q", c.doc, got, c.want)
		}
	}
}

// TestNullsPruned (class 1). The API server drops the null value of a
// field whose schema is not nullable before it defaults and validates
// (apiextensions-apiserver's pruning; TestNullsArePruned in
// test/integration shows it): vet said "Invalid value: null". The
// caller's object keeps its nulls.
func TestNullsPruned(t *testing.T) {
	e := testEngine(t)
	d := readOne(t, `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: nulls, namespace: team-a, labels: null}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: null, numProcPerNode: null, image: null, env: [{name: A, value: null}]}
`)
	r := e.NewSession(SessionOptions{}).Admit(d)
	if r.Rejected() {
		t.Fatalf("rejected: %v", findingStrings(r.Errors))
	}
	trainer := r.Object["spec"].(map[string]any)["trainer"].(map[string]any)
	if _, ok := trainer["numNodes"]; ok || trainer["image"] != nil {
		t.Errorf("trainer %v, want its nulls gone", trainer)
	}
	if env := trainer["env"].([]any)[0].(map[string]any); len(env) != 1 {
		t.Errorf("env entry %v, want the name alone", env)
	}
	given := d.Object["spec"].(map[string]any)["trainer"].(map[string]any)
	if v, ok := given["numNodes"]; !ok || v != nil {
		t.Errorf("the caller's object changed: %v", given)
	}
}

// TestWholeFloatsAreIntegers. The API server reads a JSON number as a
// float64 and takes a whole one where the schema wants an integer
// (kube-openapi's type validator), then writes it as an integer: a JSON
// TrainJob with `"numNodes": 2.0` is admitted with numNodes 2. vet made no
// object of it and said nothing: the document counted as admitted, and
// render wrote nothing. A fraction is still refused in the API server's
// words, and an object the engine cannot make is never admitted silently.
func TestWholeFloatsAreIntegers(t *testing.T) {
	e := testEngine(t)
	d := k8s.ReadObject("job.json", []byte(`{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
"metadata": {"name": "floats", "namespace": "team-a"},
"spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 2.0, "numProcPerNode": 4.0,
"resourcesPerNode": {"requests": {"cpu": 2.0}}}}}`))
	s := e.NewSession(SessionOptions{})
	r := s.Admit(d)
	if r.Rejected() || r.Object == nil {
		t.Fatalf("rejected (%v) or no object: %v", findingStrings(r.Errors), r.Object)
	}
	trainer := r.Object["spec"].(map[string]any)["trainer"].(map[string]any)
	if trainer["numNodes"] != int64(2) || trainer["numProcPerNode"] != int64(4) {
		t.Errorf("trainer %#v, want numNodes and numProcPerNode the integers 2 and 4", trainer)
	}
	if out := s.Render(r, RenderOptions{}); len(out.Errors) > 0 || len(out.Objects) == 0 {
		t.Errorf("render: %d objects, %v", len(out.Objects), findingStrings(out.Errors))
	}
	if given := d.Object["spec"].(map[string]any)["trainer"].(map[string]any); given["numNodes"] != float64(2) {
		t.Errorf("the caller's object changed: %#v", given)
	}

	fraction := k8s.ReadObject("job.json", []byte(`{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
"metadata": {"name": "floats", "namespace": "team-a"},
"spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 2.5}}}`))
	if got := strings.Join(findingStrings(e.NewSession(SessionOptions{}).Admit(fraction).Errors), "\n"); !strings.Contains(got, "spec.trainer.numNodes in body must be of type int32") {
		t.Errorf("numNodes 2.5: %q, want the API server's type error", got)
	}

	// A schema-checked object is taken as the API server sends it, with
	// integers: a float it would never send makes no object, and the
	// review says so rather than admitting nothing.
	checked := e.NewSession(SessionOptions{}).AdmitRequest(context.Background(), d, Request{SchemaChecked: true})
	if !checked.Rejected() || checked.Object != nil {
		t.Errorf("a schema-checked float: admitted silently (errors %v, object %v)", findingStrings(checked.Errors), checked.Object != nil)
	}
}

// TestYAMLReadAsKubectlReadsIt (class 2). kubectl reads YAML with
// sigs.k8s.io/yaml: YAML 1.1's scalars (go-yaml v2: unquoted yes, no, on,
// off, y and n are booleans; 1e3 is a number) turned into JSON, which the
// API server reads back (an integral number as an integer). vet read YAML
// 1.2: yes a string, 1e3 a float. Each document here must read as
// sigs.k8s.io/yaml and the API server's JSON decoding read it.
func TestYAMLReadAsKubectlReadsIt(t *testing.T) {
	for _, doc := range []string{
		"a: yes\nb: no\nc: on\nd: off\ne: y\nf: n\ng: Yes\nh: OFF\n",
		"cpu: 1e3\nmemory: 1.0\nreplicas: 2.0\nratio: 1.5\nbig: 1e21\n",
		"hex: 0x1F\noctal: 017\nunderscored: 1_000\nneg: -3\nplus: +4\n",
		"s: 'yes'\nt: \"on\"\nu: yesterday\nv: 1e3x\nw: .5\nx: 5.\n",
		"list: [y, n, 2.0, '3']\nnested: {k: on}\n",
	} {
		var want map[string]any
		js, err := sigsyaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("%q: sigs.k8s.io/yaml: %v", doc, err)
		}
		if err := utiljson.Unmarshal(js, &want); err != nil {
			t.Fatal(err)
		}
		docs := k8s.ReadYAML("k.yaml", []byte(doc))
		if len(docs) != 1 || docs[0].Err != nil {
			t.Fatalf("%q: %+v", doc, docs)
		}
		if got, w := fmt.Sprint(docs[0].Object), fmt.Sprint(want); got != w {
			t.Errorf("%q:\n read %s\n kubectl and the API server: %s", doc, got, w)
		}
	}
}

// TestJobSetRulesInTheRuntimeTemplate (class 5). Kubeflow's runtime CRDs
// embed JobSet's types with their CEL rules (jobset_types.go:
// JobSetSpec's "StartupPolicy and DependsOn APIs are mutually exclusive",
// VolumeClaimPolicy's namespace rule); vet enforced neither, nor did the
// generated CRDs carry them (TestCRDChecksAreTheAPIServers shows the API
// server's words now).
func TestJobSetRulesInTheRuntimeTemplate(t *testing.T) {
	e := testEngine(t)
	rt := torchRuntime("dep", 1,
		wrapper.ReplicatedJob("init").Container(wrapper.Container("init", "x")),
		nodeJob("x").DependsOn("init", "Complete")).
		JobSetSpec("startupPolicy", map[string]any{"startupPolicyOrder": "InOrder"}).
		JobSetSpec("volumeClaimPolicies", []any{map[string]any{"templates": []any{
			map[string]any{"metadata": map[string]any{"name": "data", "namespace": "other"}, "spec": map[string]any{}},
		}}})
	r := e.NewSession(SessionOptions{}).Admit(readOne(t, rt.YAML()))
	want := []string{
		"spec.template.spec: Invalid value: StartupPolicy and DependsOn APIs are mutually exclusive",
		"spec.template.spec.volumeClaimPolicies[0]: Invalid value: namespace cannot be set for VolumeClaimPolicies templates",
	}
	if got := findingStrings(r.Errors); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors %q, want %q", got, want)
	}
	crds, err := e.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(crds)
	for _, rule := range []string{"StartupPolicy and DependsOn APIs are mutually exclusive", "namespace cannot be set for VolumeClaimPolicies templates"} {
		if strings.Count(string(data), rule) != 2 {
			t.Errorf("the two runtime CRDs do not carry %q", rule)
		}
	}
}

// TestBothGangSchedulers (class 8). A runtime's podGroupPolicy may name
// coscheduling and volcano both (the CRD allows it); Kubeflow runs both
// plugins (plugins/coscheduling, plugins/volcano), which build a PodGroup
// each and mark the pods for each. cuetrainer's render failed: the two
// parts' sums were one list.
func TestBothGangSchedulers(t *testing.T) {
	e := testEngine(t)
	s := e.NewSession(SessionOptions{})
	var r Result
	rt := torchRuntime("both", 2, trainerJob(wrapper.Container("node", "x").Requests(map[string]any{"cpu": 1}))).
		PodGroupPolicy("coscheduling", map[string]any{"scheduleTimeoutSeconds": 60}).PodGroupPolicy("volcano", nil)
	tj := wrapper.TrainJob("tj").Namespace("a").RuntimeRef("both")
	for _, d := range k8s.ReadYAML("both.yaml", []byte(rt.YAML()+"---\n"+tj.YAML())) {
		r = s.Admit(d)
	}
	out := s.Render(r, RenderOptions{})
	if len(out.Errors) > 0 {
		t.Fatalf("render: %v", findingStrings(out.Errors))
	}
	groups := map[string]string{}
	for _, o := range out.Objects {
		if o["kind"] == "PodGroup" {
			spec := o["spec"].(map[string]any)
			groups[o["apiVersion"].(string)] = fmt.Sprint(spec["minMember"], " ", spec["minResources"])
		}
	}
	want := map[string]string{"scheduling.x-k8s.io/v1alpha1": "2 map[cpu:2]", "scheduling.volcano.sh/v1beta1": "2 map[cpu:2]"}
	if fmt.Sprint(groups) != fmt.Sprint(want) {
		t.Errorf("PodGroups %v, want %v", groups, want)
	}
	data, _ := json.Marshal(out.Objects)
	for _, mark := range []string{`"scheduling.x-k8s.io/pod-group":"tj"`, `"scheduling.k8s.io/group-name":"tj"`} {
		if !strings.Contains(string(data), mark) {
			t.Errorf("the pods lack %s", mark)
		}
	}
}

// TestEnvAsKubeflowWritesIt (class 7). Kubeflow rebuilds the TrainJob's
// env with its apply helpers (pkg/apply) before it writes it into the
// trainer's container: a fieldRef keeps its fieldPath alone, a
// resourceFieldRef always has a divisor ("0", a Quantity's zero, when
// unset), an entry with a valueFrom loses its value. cuetrainer copied the
// entries as written.
func TestEnvAsKubeflowWritesIt(t *testing.T) {
	s := testEngine(t).NewSession(SessionOptions{})
	r := s.Admit(readOne(t, `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: env, namespace: a}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    env:
    - {name: A, value: a}
    - {name: POD, valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.name}}}
    - {name: CPU, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}
    - {name: BOTH, value: x, valueFrom: {secretKeyRef: {name: s, key: k}}}
`))
	out := s.Render(r, RenderOptions{})
	env := map[string]string{}
	for _, o := range out.Objects {
		if o["kind"] != "JobSet" {
			continue
		}
		c := value.At(o, []string{"spec", "replicatedJobs"}).([]any)[0].(map[string]any)
		containers := value.At(c, []string{"template", "spec", "template", "spec", "containers"}).([]any)
		for _, e := range containers[0].(map[string]any)["env"].([]any) {
			m := e.(map[string]any)
			data, _ := json.Marshal(m)
			env[m["name"].(string)] = string(data)
		}
	}
	for name, want := range map[string]string{
		"A":    `{"name":"A","value":"a"}`,
		"POD":  `{"name":"POD","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}`,
		"CPU":  `{"name":"CPU","valueFrom":{"resourceFieldRef":{"divisor":"0","resource":"limits.cpu"}}}`,
		"BOTH": `{"name":"BOTH","valueFrom":{"secretKeyRef":{"key":"k","name":"s"}}}`,
	} {
		if env[name] != want {
			t.Errorf("%s: %s, want %s", name, env[name], want)
		}
	}
}

// TestQuantitiesCanonical (class 10). Kubeflow marshals the runtime
// snapshot and the JobSet from typed objects, so their quantities are
// canonical (resource.Quantity: "3.5" is 3500m, 0.5Gi is 512Mi, 4000m is
// "4"); cuetrainer copied the input's text into the snapshot, and left a
// volume's sizeLimit as written in the JobSet.
func TestQuantitiesCanonical(t *testing.T) {
	node := wrapper.Container("node", "x").
		Requests(map[string]any{"cpu": "3.5", "memory": "1.5Gi"}).Limits(map[string]any{"cpu": "4000m"})
	rt := torchRuntime("snap", 1, trainerJob(node).
		PodSpec("volumes", []any{map[string]any{"name": "shm", "emptyDir": map[string]any{"medium": "Memory", "sizeLimit": "0.5Gi"}}}))
	out := renderDocs(t, rt.YAML(), wrapper.TrainJob("tj").Namespace("a").RuntimeRef("snap").YAML())
	var snapshot, jobset string
	for _, o := range out.Objects {
		switch o["kind"] {
		case "ConfigMap":
			snapshot = fmt.Sprint(o["data"])
		case "JobSet":
			data, _ := json.Marshal(o)
			jobset = string(data)
		}
	}
	for _, want := range []string{"cpu: 3500m", "memory: 1536Mi", `cpu: "4"`, "sizeLimit: 512Mi"} {
		if !strings.Contains(snapshot, want) {
			t.Errorf("the runtime snapshot lacks %q:\n%s", want, snapshot)
		}
	}
	if !strings.Contains(jobset, `"sizeLimit":"512Mi"`) {
		t.Errorf("the JobSet's sizeLimit is not canonical: %s", jobset)
	}
}

// TestResourceClaimsNotRendered (class 9). When a TrainJob sets
// resourcesPerNode, Kubeflow merges it into the node container and writes
// back limits and requests alone (runtime/core/trainingruntime.go): the
// claims of the TrainJob and those the runtime's container had are both
// gone from the JobSet. cuetrainer merged the claims by name.
func TestResourceClaimsNotRendered(t *testing.T) {
	runtime := torchRuntime("claims", 1, trainerJob(wrapper.Container("node", "x").Requests(map[string]any{"cpu": 1}).Claims("gpu-a")).
		PodSpec("resourceClaims", []any{
			map[string]any{"name": "gpu-a", "resourceClaimTemplateName": "t"},
			map[string]any{"name": "gpu-b", "resourceClaimTemplateName": "t"},
		})).YAML()
	// resources renders a TrainJob with the resourcesPerNode given (nil:
	// none) and returns the resources of its node container.
	resources := func(resourcesPerNode map[string]any) string {
		tj := wrapper.TrainJob("tj").Namespace("a").RuntimeRef("claims")
		if resourcesPerNode != nil {
			tj.Trainer("resourcesPerNode", resourcesPerNode)
		}
		out := renderDocs(t, runtime, tj.YAML())
		for _, o := range out.Objects {
			if o["kind"] == "JobSet" {
				rj := value.At(o, []string{"spec", "replicatedJobs"}).([]any)[0].(map[string]any)
				c := value.At(rj, []string{"template", "spec", "template", "spec", "containers"}).([]any)[0]
				data, _ := json.Marshal(c.(map[string]any)["resources"])
				return string(data)
			}
		}
		t.Fatal("no JobSet rendered")
		return ""
	}
	if got, want := resources(map[string]any{"limits": map[string]any{"cpu": 2}, "claims": []any{map[string]any{"name": "gpu-b"}}}), `{"limits":{"cpu":"2"},"requests":{"cpu":"1"}}`; got != want {
		t.Errorf("with resourcesPerNode: resources %s, want %s", got, want)
	}
	// Without resourcesPerNode the runtime's container is left as written.
	if got, want := resources(nil), `{"claims":[{"name":"gpu-a"}],"requests":{"cpu":"1"}}`; got != want {
		t.Errorf("without resourcesPerNode: resources %s, want %s", got, want)
	}
}

// TestCoreFieldsInTheTemplate: the fields of the core types a runtime's
// pod template may carry are the core types', defaults or not. A
// ConfigMapEnvSource's `optional` and an EphemeralContainer's
// targetContainerName were refused as unknown fields (our defaults closed
// them to a LocalObjectReference and a Container); Kubeflow's CRD takes
// them.
func TestCoreFieldsInTheTemplate(t *testing.T) {
	node := wrapper.Container("node", "x").
		Set("envFrom", yamlValue(t, `[{configMapRef: {name: c, optional: true}}, {secretRef: {name: s, optional: false}}]`))
	rt := torchRuntime("core", 1, trainerJob(node).
		PodSpec("initContainers", yamlValue(t, `[{name: prep, image: x, envFrom: [{configMapRef: {name: c, optional: true}}]}]`)).
		PodSpec("ephemeralContainers", yamlValue(t, `[{name: debug, image: x, targetContainerName: node, envFrom: [{secretRef: {name: s, optional: true}}]}]`)).
		PodSpec("volumes", yamlValue(t, `[{name: v, projected: {sources: [{configMap: {name: a, optional: true, items: [{key: k, path: p}]}}]}}]`)))
	r := testEngine(t).NewSession(SessionOptions{}).Admit(readOne(t, rt.YAML()))
	if r.Rejected() {
		t.Fatalf("refused: %v", findingStrings(r.Errors))
	}
	c := value.At(r.Object, []string{"spec", "template", "spec", "replicatedJobs"}).([]any)[0].(map[string]any)
	pod := value.At(c, []string{"template", "spec", "template", "spec"}).(map[string]any)
	data, _ := json.Marshal(pod["ephemeralContainers"])
	if !strings.Contains(string(data), `"targetContainerName":"node"`) || !strings.Contains(string(data), `"optional":true`) {
		t.Errorf("ephemeralContainers %s", data)
	}
}
