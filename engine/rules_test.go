package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// runtimeYAML is a ClusterTrainingRuntime with the given labels,
// annotations, mlPolicy and extra pod spec, one trainer job `node`.
func runtimeYAML(name, labels, annotations, mlPolicy, pod string) string {
	return fmt.Sprintf(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: %s
  labels: {%s}
  annotations: {%s}
spec:
  mlPolicy: %s
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                %s
                containers: [{name: node, image: img}]
`, name, labels, annotations, mlPolicy, pod)
}

func jobYAML(runtime, trainer string) string {
	return fmt.Sprintf(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: job, namespace: ns}
spec:
  runtimeRef: {name: %s}
  trainer: %s
`, runtime, trainer)
}

type outcome struct{ errors, warnings []string }

func run(t *testing.T, opts SessionOptions, docs ...string) []outcome {
	t.Helper()
	s := testEngine(t).NewSession(opts)
	var out []outcome
	for _, r := range admitAll(t, s, "in.yaml", strings.Join(docs, "---\n")) {
		var o outcome
		o.errors = findingStrings(r.Errors)
		for _, w := range r.Warnings {
			o.warnings = append(o.warnings, w.Message())
		}
		out = append(out, o)
	}
	return out
}

func contains(list []string, want string) bool {
	for _, s := range list {
		if strings.Contains(s, want) {
			return true
		}
	}
	return false
}

func TestDeprecationWindow(t *testing.T) {
	rt := runtimeYAML("old", "trainer.kubeflow.org/support: deprecated, trainer.kubeflow.org/framework: torch", "cuetrainer.dev/deprecated-in: v2.1", "{torch: {}}", "")
	job := jobYAML("old", "{}")
	kubeflowWarning := `ClusterTrainingRuntime "old" is deprecated and will be removed in a future release of Kubeflow Trainer.`
	referenceWarning := `Referenced ClusterTrainingRuntime "old" is deprecated`

	t.Run("no release: only Kubeflow's warnings", func(t *testing.T) {
		o := run(t, SessionOptions{}, rt, job)
		if len(o[0].errors)+len(o[1].errors) != 0 || !contains(o[0].warnings, kubeflowWarning) || !contains(o[1].warnings, referenceWarning) {
			t.Errorf("%+v", o)
		}
		if contains(o[0].warnings, "may be removed from") {
			t.Errorf("window warning without a release: %v", o[0].warnings)
		}
	})
	t.Run("within the window", func(t *testing.T) {
		o := run(t, SessionOptions{Release: "v2.2"}, rt, job)
		want := `metadata.annotations[cuetrainer.dev/deprecated-in]: ClusterTrainingRuntime "old" was deprecated in v2.1 and may be removed from v2.3 on`
		if len(o[0].errors) != 0 || !contains(o[0].warnings, want) {
			t.Errorf("runtime: %+v", o[0])
		}
		if len(o[1].errors) != 0 || !contains(o[1].warnings, "may be removed from v2.3 on") {
			t.Errorf("TrainJob: %+v", o[1])
		}
	})
	for _, release := range []string{"v2.3", "v2.7", "v3.0"} {
		t.Run("past the window at "+release, func(t *testing.T) {
			o := run(t, SessionOptions{Release: release}, rt, job)
			if !contains(o[0].errors, "is past its removal window in "+release+": it may be removed from v2.3 on") {
				t.Errorf("runtime: %+v", o[0])
			}
			if !contains(o[1].errors, `spec.runtimeRef: Invalid value: {"name":"old"`) || !contains(o[1].errors, "past its removal window") {
				t.Errorf("TrainJob: %+v", o[1])
			}
		})
	}
	t.Run("annotation that is not a release", func(t *testing.T) {
		bad := strings.Replace(rt, "v2.1", "soon", 1)
		o := run(t, SessionOptions{Release: "v2.3"}, bad)
		if !contains(o[0].errors, `metadata.annotations[cuetrainer.dev/deprecated-in]: Invalid value: "soon": must be a release, vMAJOR.MINOR`) {
			t.Errorf("%+v", o[0])
		}
	})
}

func TestRuntimeWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      string // "" for no warning
	}{
		{"label fits", runtimeYAML("a", "trainer.kubeflow.org/framework: deepspeed", "", "{mpi: {}}", ""), ""},
		{"label missing", runtimeYAML("a", "", "", "{torch: {}}", ""), "runtime has no trainer.kubeflow.org/framework label, which the Kubeflow SDK needs to recognise it; for mlPolicy.torch use one of: torch, torchtune"},
		{"label disagrees", runtimeYAML("a", "trainer.kubeflow.org/framework: jax", "", "{xgboost: {}}", ""), `framework "jax" does not match mlPolicy.xgboost, which runs xgboost`},
		{"no mlPolicy takes any label", runtimeYAML("a", "trainer.kubeflow.org/framework: anything", "", "{numNodes: 2}", ""), ""},
		{"no trainer step", strings.Replace(runtimeYAML("a", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", ""), "trainjob-ancestor-step: trainer", "trainjob-ancestor-step: dataset-initializer", 1),
			"spec.template.spec.replicatedJobs: no replicatedJob carries the label trainer.kubeflow.org/trainjob-ancestor-step: trainer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := run(t, SessionOptions{}, tc.doc)[0]
			// "" wants no framework-label or trainer-step warning.
			if tc.want == "" && (contains(o.warnings, "framework") || contains(o.warnings, "trainjob-ancestor-step")) || tc.want != "" && !contains(o.warnings, tc.want) {
				t.Errorf("warnings %q, want %q", o.warnings, tc.want)
			}
		})
	}
}

func TestTrainJobRules(t *testing.T) {
	torch := runtimeYAML("rt", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", "")
	for _, tc := range []struct {
		name string
		docs []string
		want string // "" when admitted
	}{
		{"runtime patch manager", []string{torch, strings.Replace(jobYAML("rt", "{}"), "  trainer: {}", "  runtimePatches: [{manager: nodomain}]", 1)},
			`spec.runtimePatches.manager: Invalid value: "nodomain": must be a domain-prefixed path (such as "acme.io/foo")`},
		{"runtime patch env on node", []string{torch, strings.Replace(jobYAML("rt", "{}"), "  trainer: {}", `  runtimePatches:
  - manager: acme.io/x
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {containers: [{name: node, env: [{name: A, value: b}]}]}}}}}]}}}`, 1)},
			"spec.runtimePatches: Invalid value: [{"},
		{"runtime patch fine", []string{torch, strings.Replace(jobYAML("rt", "{}"), "  trainer: {}", `  runtimePatches: [{manager: acme.io/x, trainingRuntimeSpec: {template: {metadata: {labels: {a: b}}}}}]`, 1)}, ""},
		{"flux installer reserved", []string{runtimeYAML("fx", "trainer.kubeflow.org/framework: flux", "", "{flux: {}}", "initContainers: [{name: flux-installer, image: x}]"), jobYAML("fx", "{}")},
			`spec.trainer.initContainers: Invalid value: "flux-installer": InitContainer 'flux-installer' is reserved`},
		{"flux defaults", []string{runtimeYAML("fx", "trainer.kubeflow.org/framework: flux", "", "{flux: {numProcPerNode: 0}}", ""), jobYAML("fx", "{}")},
			`spec.mlPolicy.flux.numProcPerNode: Invalid value: 0: NumProcPerNode in fluxPolicy must be >= 1`},
		{"mpi reserved env", []string{runtimeYAML("m", "trainer.kubeflow.org/framework: mpi", "", "{mpi: {}}", ""), jobYAML("m", "{env: [{name: OMPI_MCA_plm_rsh_args, value: x}]}")},
			`must not have reserved envs, invalid envs configured: [OMPI_MCA_plm_rsh_args]`},
		{"mpi implementation enum", []string{runtimeYAML("m", "trainer.kubeflow.org/framework: mpi", "", "{mpi: {mpiImplementation: Intel}}", "")},
			`spec.mlPolicy.mpi.mpiImplementation: Unsupported value: "Intel": supported values: "OpenMPI", ""`},
		{"volcano system priority class", []string{strings.Replace(runtimeYAML("v", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", "priorityClassName: system-node-critical"), "  mlPolicy:", "  podGroupPolicy: {volcano: {}}\n  mlPolicy:", 1), jobYAML("v", "{}")}, ""},
		{"volcano priority class given", []string{"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 10\n",
			strings.Replace(runtimeYAML("v", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", "priorityClassName: high"), "  mlPolicy:", "  podGroupPolicy: {volcano: {}}\n  mlPolicy:", 1), jobYAML("v", "{}")}, ""},
		{"volcano priority class missing", []string{strings.Replace(runtimeYAML("v", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", "priorityClassName: high"), "  mlPolicy:", "  podGroupPolicy: {volcano: {}}\n  mlPolicy:", 1), jobYAML("v", "{}")},
			`spec.templateSpec.priorityClassName: Invalid value: "high": PriorityClass "high" doesn't exist`},
		{"envInjection target missing", []string{runtimeYAML("ei", "trainer.kubeflow.org/framework: torch", "", "{torch: {envInjection: {targets: [{jobName: node, containerNames: [sidecar]}]}}}", ""), jobYAML("ei", "{}")},
			`spec.runtimeRef: Invalid value: {"jobName":"node","containerNames":["sidecar"]}: envInjection target podSet "node" container "sidecar" not found in runtime template`},
		{"storageUri not a URI", []string{torch, strings.Replace(jobYAML("rt", "{}"), "  trainer: {}", "  initializer: {dataset: {storageUri: nope}}", 1)},
			`spec.initializer.dataset.storageUri: Invalid value: "nope": storageUri may be empty, or it must be a valid URI (scheme://...)`},
		{"numNodes minimum", []string{torch, jobYAML("rt", "{numNodes: -1}")},
			`spec.trainer.numNodes: Invalid value: -1: spec.trainer.numNodes in body should be greater than or equal to 0`},
		{"env listed twice", []string{torch, jobYAML("rt", "{env: [{name: A}, {name: A}]}")},
			`spec.trainer.env[1]: Duplicate value: {"name":"A"}`},
		{"image too long", []string{torch, jobYAML("rt", "{image: "+strings.Repeat("i", 501)+"}")},
			`spec.trainer.image: Too long: may not be more than 500 bytes`},
		{"activeDeadlineSeconds minimum", []string{torch, strings.Replace(jobYAML("rt", "{}"), "  trainer: {}", "  activeDeadlineSeconds: 0", 1)},
			`spec.activeDeadlineSeconds: Invalid value: 0: spec.activeDeadlineSeconds in body should be greater than or equal to 1`},
		{"webhook validation disabled", []string{strings.Replace(runtimeYAML("not-validated", "trainer.kubeflow.org/framework: torch, trainer.kubeflow.org/webhook-validation: disabled", "", "{torch: {}}", ""), "      - name: node\n", "      - name: node\n        replicas: 3\n", 1)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := run(t, SessionOptions{NoBuiltinRuntimes: true}, tc.docs...)
			var errs []string
			for _, x := range o {
				errs = append(errs, x.errors...)
			}
			if tc.want == "" && len(errs) > 0 || tc.want != "" && !contains(errs, tc.want) {
				t.Errorf("errors:\n%s\nwant: %q", strings.Join(errs, "\n"), tc.want)
			}
		})
	}
}

func TestRuntimePatchCRDRules(t *testing.T) {
	torch := runtimeYAML("rt", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", "")
	patch := func(pod string) string {
		return strings.Replace(jobYAML("rt", "{}"), "  trainer: {}", "  runtimePatches: [{manager: acme.io/x, trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: "+pod+"}}}}]}}}}]", 1)
	}
	p := "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec"
	for _, tc := range []struct{ pod, want string }{
		{"{containers: [{name: a}, {name: a}]}", p + `.containers[1]: Duplicate value: {"name":"a"}`},
		{"{containers: [{name: a, env: [{name: X}, {name: X}]}]}", p + `.containers[0].env[1]: Duplicate value: {"name":"X"}`},
		{"{terminationGracePeriodSeconds: -1}", p + ".terminationGracePeriodSeconds: Invalid value: -1: " + p + ".terminationGracePeriodSeconds in body should be greater than or equal to 0"},
		{"{serviceAccountName: " + strings.Repeat("s", 254) + "}", p + ".serviceAccountName: Too long: may not be more than 253 bytes"},
		{"{containers: [{name: \"\"}]}", p + `.containers[0].name: Invalid value: "": ` + p + ".containers[0].name in body should be at least 1 chars long"},
	} {
		o := run(t, SessionOptions{NoBuiltinRuntimes: true}, torch, patch(tc.pod))
		if !contains(o[1].errors, tc.want) {
			t.Errorf("%s: errors %q, want %q", tc.pod, o[1].errors, tc.want)
		}
	}
}

func TestTorchElasticRules(t *testing.T) {
	el := func(policy string) string {
		return runtimeYAML("el", "trainer.kubeflow.org/framework: torch", "", policy, "")
	}
	for _, tc := range []struct {
		name string
		docs []string
		want string
	}{
		{"min above max", []string{el("{torch: {elasticPolicy: {minNodes: 5, maxNodes: 4}}}")}, "spec.mlPolicy.torch.elasticPolicy: Invalid value: "},
		{"no max", []string{el("{torch: {elasticPolicy: {minNodes: 1}}}")}, "spec.mlPolicy.torch.elasticPolicy.maxNodes: Required value"},
		{"numNodes in the policy", []string{el("{numNodes: 2, torch: {elasticPolicy: {maxNodes: 4}}}")}, "spec.mlPolicy.numNodes: Forbidden: must be omitted when mlPolicy.torch.elasticPolicy is set"},
		{"numNodes in the TrainJob", []string{el("{torch: {elasticPolicy: {maxNodes: 4}}}"), jobYAML("el", "{numNodes: 2}")}, `spec.trainer.numNodes: Invalid value: 2: must be omitted: runtime "el" trains elastically`},
		{"fine", []string{el("{torch: {elasticPolicy: {minNodes: 1, maxNodes: 4, maxRestarts: 0}}}"), jobYAML("el", "{}")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errs []string
			for _, o := range run(t, SessionOptions{NoBuiltinRuntimes: true}, tc.docs...) {
				errs = append(errs, o.errors...)
			}
			if tc.want == "" && len(errs) > 0 || tc.want != "" && !contains(errs, tc.want) {
				t.Errorf("errors %q, want %q", errs, tc.want)
			}
		})
	}
}

func TestMPIJobNamesWarning(t *testing.T) {
	o := run(t, SessionOptions{}, runtimeYAML("m", "trainer.kubeflow.org/framework: mpi", "", "{mpi: {}}", ""))[0]
	if !contains(o.warnings, "spec.template.spec.replicatedJobs: mlPolicy.mpi runs MPI on the jobs named node (the hosts of the hostfile) and launcher (where mpirun starts); this runtime has no job named launcher") {
		t.Errorf("warnings %q", o.warnings)
	}
	if contains(o.warnings, "no job named node") {
		t.Errorf("warned of a node job the runtime has: %q", o.warnings)
	}
}

// TestListTypeRules: listType map and set flag every item after the first
// of its key, whatever the order, and nothing else.
func TestListTypeRules(t *testing.T) {
	torch := runtimeYAML("rt", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", "")
	out := run(t, SessionOptions{}, torch, jobYAML("rt", "{env: [{name: A}, {name: B}, {name: A}, {name: C}, {name: A}, {name: B}]}"))
	var dups []string
	for _, e := range out[1].errors {
		if strings.Contains(e, "Duplicate value") {
			dups = append(dups, e)
		}
	}
	want := []string{
		`spec.trainer.env[2]: Duplicate value: {"name":"A"}`,
		`spec.trainer.env[4]: Duplicate value: {"name":"A"}`,
		`spec.trainer.env[5]: Duplicate value: {"name":"B"}`,
	}
	if strings.Join(dups, "\n") != strings.Join(want, "\n") {
		t.Errorf("map: got\n%s\nwant\n%s", strings.Join(dups, "\n"), strings.Join(want, "\n"))
	}

	rt := runtimeYAML("ei", "trainer.kubeflow.org/framework: torch", "",
		"{torch: {envInjection: {targets: [{jobName: node, containerNames: [a, b, a, a]}, {jobName: node, containerNames: [c]}]}}}", "")
	errs := run(t, SessionOptions{}, rt)[0].errors
	p := "spec.mlPolicy.torch.envInjection.targets"
	for _, w := range []string{p + `[1]: Duplicate value: {"jobName":"node"}`, p + `[0].containerNames[2]: Duplicate value: "a"`, p + `[0].containerNames[3]: Duplicate value: "a"`} {
		if !contains(errs, w) {
			t.Errorf("no %s in %q", w, errs)
		}
	}
	for _, unwanted := range []string{p + "[0]: Duplicate", "containerNames[0]: Duplicate", "containerNames[1]: Duplicate"} {
		if contains(errs, unwanted) {
			t.Errorf("%s in %q", unwanted, errs)
		}
	}
}

// TestCoreTypesKeepTheirFields: the marker defaults (jobset.cue) are added
// to the core types on both sides, the runtime template's and the
// TrainJob's (k8s.cue), without closing the types to the fields the
// defaults name: every field of the core type is still allowed, and the
// defaults still apply.
func TestCoreTypesKeepTheirFields(t *testing.T) {
	env := `[{name: A, valueFrom: {fieldRef: {fieldPath: metadata.name}}}, {name: B, valueFrom: {configMapKeyRef: {key: k}}}, {name: C, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}]`
	volumes := `[{name: v, cephfs: {monitors: [m], secretRef: {}}}, {name: w, configMap: {items: [{key: k, path: p}]}}]`
	rt := runtimeYAML("core", "", "", "{torch: {}}", "volumes: "+volumes+"\n                initContainers: [{name: init, image: img, env: "+env+"}]")
	job := fmt.Sprintf(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: job, namespace: ns}
spec:
  runtimeRef: {name: core}
  trainer: {env: %s}
  runtimePatches:
  - manager: acme.io/m
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {volumes: %s, imagePullSecrets: [{}]}}}}}]}}}
`, env, volumes)
	s := testEngine(t).NewSession(SessionOptions{NoBuiltinRuntimes: true})
	rs := admitAll(t, s, "in.yaml", rt+"---\n"+job)
	for _, r := range rs {
		if r.Rejected() {
			t.Fatalf("%s: %v", r.Identity(), findingStrings(r.Errors))
		}
	}
	at := func(obj map[string]any, path ...any) any {
		var v any = obj
		for _, p := range path {
			switch p := p.(type) {
			case string:
				v = v.(map[string]any)[p]
			case int:
				v = v.([]any)[p]
			}
		}
		return v
	}
	pod := at(rs[0].Object, "spec", "template", "spec", "replicatedJobs", 0, "template", "spec", "template", "spec")
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"runtime env fieldRef", at(pod.(map[string]any), "initContainers", 0, "env", 0, "valueFrom", "fieldRef", "fieldPath"), "metadata.name"},
		{"runtime env configMapKeyRef name default", at(pod.(map[string]any), "initContainers", 0, "env", 1, "valueFrom", "configMapKeyRef", "name"), ""},
		{"runtime cephfs secretRef name default", at(pod.(map[string]any), "volumes", 0, "cephfs", "secretRef", "name"), ""},
		{"TrainJob env fieldRef", at(rs[1].Object, "spec", "trainer", "env", 0, "valueFrom", "fieldRef", "fieldPath"), "metadata.name"},
		{"TrainJob env resourceFieldRef", at(rs[1].Object, "spec", "trainer", "env", 2, "valueFrom", "resourceFieldRef", "resource"), "limits.cpu"},
		{"TrainJob env configMapKeyRef name default", at(rs[1].Object, "spec", "trainer", "env", 1, "valueFrom", "configMapKeyRef", "name"), ""},
		{"TrainJob patch volume secretRef name default", at(rs[1].Object, "spec", "runtimePatches", 0, "trainingRuntimeSpec", "template", "spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "volumes", 0, "cephfs", "secretRef", "name"), ""},
		{"TrainJob patch configMap items", at(rs[1].Object, "spec", "runtimePatches", 0, "trainingRuntimeSpec", "template", "spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "volumes", 1, "configMap", "items", 0, "path"), "p"},
		{"TrainJob patch imagePullSecrets name default", at(rs[1].Object, "spec", "runtimePatches", 0, "trainingRuntimeSpec", "template", "spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "imagePullSecrets", 0, "name"), ""},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}

	// And a field no core type has is still refused, on both sides.
	bad := admitAll(t, testEngine(t).NewSession(SessionOptions{NoBuiltinRuntimes: true}), "in.yaml",
		strings.Replace(rt, "fieldPath: metadata.name", "fieldPath: metadata.name, bogus: 1", 1)+"---\n"+
			strings.Replace(job, "fieldPath: metadata.name", "fieldPath: metadata.name, bogus: 1", 1))
	for _, r := range bad {
		if !contains(findingStrings(r.Errors), "bogus") {
			t.Errorf("%s: want bogus refused, got %v", r.Identity(), findingStrings(r.Errors))
		}
	}
}

// TestQuantities: a resource quantity is an integer or a string of
// Kubernetes' pattern, in a TrainJob's resourcesPerNode and in a runtime's
// containers, reported in the API server's words; one that is not used to
// reach a render as nothing (an internal error there).
func TestQuantities(t *testing.T) {
	const pattern = `'^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$'`
	for _, tc := range []struct {
		name string
		docs []string
		want []string
	}{
		{"valid", []string{jobYAML("torch-distributed", `{numNodes: 2, resourcesPerNode: {limits: {cpu: "500m", memory: 1.5Gi, nvidia.com/gpu: 2}, requests: {cpu: "+1e3", memory: ".5"}}}`)}, nil},
		{"not a quantity", []string{jobYAML("torch-distributed", `{resourcesPerNode: {limits: {cpu: "two"}, requests: {memory: "1 Gi"}}}`)}, []string{
			`spec.trainer.resourcesPerNode.limits.cpu: Invalid value: "two": spec.trainer.resourcesPerNode.limits.cpu in body should match ` + pattern,
			`spec.trainer.resourcesPerNode.requests.memory: Invalid value: "1 Gi": spec.trainer.resourcesPerNode.requests.memory in body should match ` + pattern,
		}},
		// The API server's five errors (apiextensions' ValidateCustomResource
		// over kube-openapi's anyOf, type and range checks), its path's
		// keys after dots.
		{"neither integer nor string", []string{jobYAML("torch-distributed", `{resourcesPerNode: {limits: {cpu: 0.5, nvidia.com/gpu: true}}}`)}, []string{
			`spec.trainer.resourcesPerNode.limits.cpu: Invalid value: 0.5: spec.trainer.resourcesPerNode.limits.cpu in body must be of type integer,string: "number"`,
			`<nil>: Invalid value: "": "spec.trainer.resourcesPerNode.limits.cpu" must validate at least one schema (anyOf)`,
			`spec.trainer.resourcesPerNode.limits.cpu: Invalid value: 0.5: spec.trainer.resourcesPerNode.limits.cpu in body must be of type integer: "number"`,
			`<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.trainer.resourcesPerNode.limits.cpu`,
			`spec.trainer.resourcesPerNode.limits.nvidia.com/gpu: Invalid value: true: spec.trainer.resourcesPerNode.limits.nvidia.com/gpu in body must be of type integer,string: "boolean"`,
			`<nil>: Invalid value: "": "spec.trainer.resourcesPerNode.limits.nvidia.com/gpu" must validate at least one schema (anyOf)`,
			`spec.trainer.resourcesPerNode.limits.nvidia.com/gpu: Invalid value: true: spec.trainer.resourcesPerNode.limits.nvidia.com/gpu in body must be of type integer: "boolean"`,
			`<nil>: Invalid value: null: ` + k8s.CELNotChecked,
		}},
		{"runtime containers", []string{runtimeYAML("q", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}",
			`initContainers: [{name: init, image: img, resources: {limits: {cpu: "x"}}}]`)}, []string{
			`spec.template.spec.replicatedJobs[0].template.spec.template.spec.initContainers[0].resources.limits.cpu: Invalid value: "x": spec.template.spec.replicatedJobs[0].template.spec.template.spec.initContainers[0].resources.limits.cpu in body should match ` + pattern,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := run(t, SessionOptions{}, tc.docs...)
			got := o[len(o)-1].errors
			if len(got) != len(tc.want) {
				t.Fatalf("errors %q, want %q", got, tc.want)
			}
			for i := range got {
				if !strings.HasSuffix(got[i], tc.want[i]) {
					t.Errorf("error %d: %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
	// A render of the valid TrainJob sees its quantities.
	s := testEngine(t).NewSession(SessionOptions{})
	r := admitAll(t, s, "in.yaml", jobYAML("torch-distributed", `{numNodes: 2, resourcesPerNode: {limits: {cpu: "1500m", nvidia.com/gpu: 2}}}`))[0]
	out := s.Render(r, RenderOptions{})
	if len(out.Errors) > 0 {
		t.Fatalf("render: %v", findingStrings(out.Errors))
	}
}

// TestTrainJobCRDRulesEach: every CRD check of a TrainJob that the CUE
// tests itself before it makes its error (trainjob.cue's crdChecks) fires
// on a value that breaks it, at its path, in the API server's words. A
// guard that reads the wrong field would leave its check off silently.
// (The maxItems checks are the CRD schema's, which engine/limits.go
// applies before the CUE sees the object: TestLimits.)
func TestTrainJobCRDRulesEach(t *testing.T) {
	torch := runtimeYAML("rt", "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", "")
	long := func(n int) string { return strings.Repeat("a", n) }
	p := "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs"
	pod := p + "[0].template.spec.template.spec"
	jobs := func(jobs string) string {
		return "  runtimePatches: [{manager: acme.io/x, trainingRuntimeSpec: {template: {spec: {replicatedJobs: " + jobs + "}}}}]"
	}
	podPatch := func(spec string) string {
		return jobs("[{name: node, template: {spec: {template: {spec: " + spec + "}}}}]")
	}
	for _, tc := range []struct{ spec, want string }{
		{"  runtimeRef: {name: rt, apiGroup: " + long(254) + "}", "spec.runtimeRef.apiGroup: Too long: may not be more than 253 bytes"},
		{"  runtimeRef: {name: rt, kind: " + long(254) + "}", "spec.runtimeRef.kind: Too long: may not be more than 253 bytes"},
		{"  initializer: {dataset: {storageUri: hf://" + long(2044) + "}}", "spec.initializer.dataset.storageUri: Too long: may not be more than 2048 bytes"},
		{"  initializer: {model: {env: [{name: A}, {name: B}, {name: A}]}}", `spec.initializer.model.env[2]: Duplicate value: {"name":"A"}`},
		{"  trainer: {numProcPerNode: 0}", "spec.trainer.numProcPerNode: Invalid value: 0: numProcPerNode must be greater than or equal to 1"},
		{"  trainer: {numProcPerNode: fast}", `spec.trainer.numProcPerNode: Invalid value: "fast": must have an int value or [auto cpu gpu]`},
		{"  runtimePatches: [{manager: \"\"}]", `spec.runtimePatches[0].manager: Invalid value: "": spec.runtimePatches[0].manager in body should be at least 1 chars long`},
		{"  runtimePatches: [{manager: acme.io/" + long(246) + "}]", "spec.runtimePatches[0].manager: Too long: may not be more than 253 bytes"},
		{"  runtimePatches: [{manager: acme.io/x}, {manager: acme.io/y}, {manager: acme.io/x}]", `spec.runtimePatches[2]: Duplicate value: {"manager":"acme.io/x"}`},
		{jobs("[{name: a}, {name: a}]"), p + `[1]: Duplicate value: {"name":"a"}`},
		{jobs("[{name: \"\"}]"), p + `[0].name: Invalid value: "": ` + p + "[0].name in body should be at least 1 chars long"},
		{jobs("[{name: " + long(254) + "}]"), p + "[0].name: Too long: may not be more than 253 bytes"},
		{podPatch("{volumes: [{name: v}, {name: v}]}"), pod + `.volumes[1]: Duplicate value: {"name":"v"}`},
		{podPatch("{initContainers: [{name: i}, {name: i}]}"), pod + `.initContainers[1]: Duplicate value: {"name":"i"}`},
		{podPatch("{imagePullSecrets: [{name: s}, {name: s}]}"), pod + `.imagePullSecrets[1]: Duplicate value: {"name":"s"}`},
		{podPatch("{schedulingGates: [{name: g}, {name: g}]}"), pod + `.schedulingGates[1]: Duplicate value: {"name":"g"}`},
		{podPatch("{initContainers: [{name: " + long(254) + "}]}"), pod + ".initContainers[0].name: Too long: may not be more than 253 bytes"},
		{podPatch("{initContainers: [{name: i, env: [{name: X}, {name: X}]}]}"), pod + `.initContainers[0].env[1]: Duplicate value: {"name":"X"}`},
		{podPatch("{containers: [{name: c, volumeMounts: [{name: m, mountPath: /a}, {name: m, mountPath: /b}]}]}"), pod + `.containers[0].volumeMounts[1]: Duplicate value: {"name":"m"}`},
		{"  managedBy: example.com/" + long(242), "spec.managedBy: Too long: may not be more than 253 bytes"},
		{"  managedBy: example.com/other", `spec.managedBy: Invalid value: "example.com/other": ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set`},
	} {
		job := strings.Replace(jobYAML("rt", "{}"), "  trainer: {}", tc.spec, 1)
		if strings.HasPrefix(tc.spec, "  runtimeRef:") {
			job = strings.Replace(job, "  runtimeRef: {name: rt}\n", "", 1)
		}
		o := run(t, SessionOptions{NoBuiltinRuntimes: true}, torch, job)
		if !contains(o[1].errors, tc.want) {
			t.Errorf("%s:\n errors %q\n want %q", tc.spec, o[1].errors, tc.want)
		}
	}
}
