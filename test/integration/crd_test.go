package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/objdiff"
)

// TestGeneratedCRDs installs the CRDs generated from the CUE schemas in
// the API server, then creates every runtime and TrainJob of the corpus's
// admitted cases through it: the structural schemas accept them, and the
// API server's defaulting from the generated schemas agrees with ours.
func TestGeneratedCRDs(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	e := loadEngine(t)
	installGeneratedCRDs(t, e)
	dirs, _ := filepath.Glob("../conformance/testdata/kubeflow/cases/*")
	created := 0
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "expected.yaml")); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		s := e.NewSession(engine.SessionOptions{})
		for _, doc := range engine.ReadYAML("input.yaml", data) {
			ours := s.Admit(doc).Object
			u := &unstructured.Unstructured{Object: doc.Object}
			u.SetUID("") // the corpus fixes uids for owner references; the API server sets them
			if err := dryRunApply(t, ctx, u); err != nil {
				t.Errorf("%s: %s %s: %v", filepath.Base(dir), u.GetKind(), u.GetName(), err)
				continue
			}
			created++
			// The API server defaulted the object from the generated schema:
			// it must agree with the CUE's defaults.
			if ours != nil && u.GetAPIVersion() == "trainer.kubeflow.org/v1alpha1" {
				for _, d := range objdiff.DiffValues(ours["spec"], u.Object["spec"], u.GetKind()+"/"+u.GetName()+".spec") {
					t.Errorf("%s: defaults differ: %s", filepath.Base(dir), d)
				}
			}
		}
	}
	if created < 60 {
		t.Errorf("the API server took %d objects, want the corpus's", created)
	}
}

func installGeneratedCRDs(t *testing.T, e *engine.Engine) {
	t.Helper()
	crds, err := e.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var typed []*apiextensionsv1.CustomResourceDefinition
	for _, c := range crds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c, crd); err != nil {
			t.Fatal(err)
		}
		typed = append(typed, crd)
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: typed}); err != nil {
		t.Fatalf("installing the generated CRDs: %v", err)
	}
}

// TestGeneratedCRDsRejectLikeKubeflow: with only the generated CRDs (no
// webhooks), the API server itself rejects each corpus case that Kubeflow's
// CRD rejected, with Kubeflow's words: the CRDs carry the validations
// (markers in the CUE schemas' comments) that the crd rules check for vet
// and the webhooks.
func TestGeneratedCRDsRejectLikeKubeflow(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	e := loadEngine(t)
	installGeneratedCRDs(t, e)
	dirs, _ := filepath.Glob("../conformance/testdata/kubeflow/cases/*")
	checked := 0
	for _, dir := range dirs {
		want, err := os.ReadFile(filepath.Join(dir, "expected-error.txt"))
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		s := e.NewSession(engine.SessionOptions{})
		// The document the CRD rejects: the first whose findings are all
		// of the CRD phase.
		var rejected *engine.Document
		for _, d := range engine.ReadYAML("input.yaml", data) {
			r := s.Admit(d)
			crd := r.Rejected()
			for _, f := range r.Errors {
				crd = crd && f.Phase == engine.PhaseCRD
			}
			if crd {
				rejected = &d
				break
			}
		}
		if rejected == nil {
			continue
		}
		checked++
		u := &unstructured.Unstructured{Object: rejected.Object}
		u.SetUID("") // the corpus fixes uids for owner references; the API server sets them
		err = dryRunApply(t, ctx, u)
		if err == nil {
			t.Errorf("%s: the API server admitted what Kubeflow's CRD rejects: %s", filepath.Base(dir), strings.TrimSpace(string(want)))
			continue
		}
		if got := err.Error(); got != strings.TrimSpace(string(want)) {
			t.Errorf("%s: the API server says\n  %s\nKubeflow's said\n  %s", filepath.Base(dir), got, strings.TrimSpace(string(want)))
		}
	}
	if checked < 5 {
		t.Errorf("checked %d cases the CRD rejects, want the corpus's (65, 67, 68, 69, 71, 73)", checked)
	}
}

// TestCRDChecksAreTheAPIServers: what the webhooks and the controller leave
// to the API server (engine.Request.SchemaChecked, the CUE's crdChecks) the
// API server does refuse. For objects that break one CRD check after
// another, of every kind, the CRD-phase errors a full review finds and a
// schema-checked one does not are errors the API server, with only the
// generated CRDs installed, answers with: it refuses each object as
// Invalid, and its message holds each of them in the same words.
func TestCRDChecksAreTheAPIServers(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	e := loadEngine(t)
	installGeneratedCRDs(t, e)
	job := func(name, spec string) string {
		return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: " + name + ", namespace: crd-checks}\nspec:\n  runtimeRef: {name: torch-distributed}\n" + spec
	}
	patch := func(pod string) string {
		return "  runtimePatches: [{manager: acme.io/x, trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: " + pod + "}}}}]}}}}]\n"
	}
	runtime := func(name, mlPolicy, extra, pod string) string {
		return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: " + name + ", labels: {trainer.kubeflow.org/framework: torch}}\nspec:\n" +
			"  mlPolicy: " + mlPolicy + "\n" + extra +
			"  template:\n    spec:\n      replicatedJobs:\n      - name: node\n        template:\n          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n" +
			"          spec: {template: {spec: {containers: [{name: node, image: img" + pod + "}]}}}\n"
	}
	docs := []string{
		job("num-nodes", "  trainer: {numNodes: -1}\n"),
		job("procs", "  trainer: {numProcPerNode: 0}\n"),
		job("procs-word", "  trainer: {numProcPerNode: fast}\n"),
		job("env", "  trainer: {env: [{name: A}, {name: A}]}\n"),
		job(strings.Repeat("n", 64), ""),
		job("1name", ""),
		job("managed", "  managedBy: example.com/other\n"),
		job("image", "  trainer: {image: "+strings.Repeat("i", 501)+"}\n"),
		job("storage", "  initializer: {dataset: {storageUri: not-a-uri}}\n"),
		job("deadline", "  activeDeadlineSeconds: 0\n"),
		job("manager", "  runtimePatches: [{manager: \"\"}]\n"),
		job("managers", "  runtimePatches: [{manager: acme.io/x}, {manager: acme.io/x}]\n"),
		job("patch-containers", patch("{containers: [{name: a}, {name: a}]}")),
		job("patch-grace", patch("{terminationGracePeriodSeconds: -1}")),
		runtime("mpi-procs", "{mpi: {numProcPerNode: 0}}", "", ""),
		runtime("mpi-impl", "{mpi: {mpiImplementation: Intel}}", "", ""),
		runtime("mpi-ssh", "{mpi: {sshAuthMountPath: /"+strings.Repeat("s", 4100)+"}}", "", ""),
		runtime("flux-procs", "{flux: {numProcPerNode: 0}}", "", ""),
		runtime("targets-set", "{torch: {envInjection: {targets: [{jobName: node, containerNames: [a, a]}]}}}", "", ""),
		runtime("targets-node", "{torch: {envInjection: {targets: [{jobName: node, containerNames: [node]}]}}}", "", ""),
		runtime("targets-job", "{torch: {envInjection: {targets: [{jobName: \"\", containerNames: [a]}]}}}", "", ""),
		runtime("volcano-mode", "{torch: {}}", "  podGroupPolicy: {volcano: {networkTopology: {mode: medium}}}\n", ""),
		"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: empty-template}\nspec: {template: {}}\n",
		// The API server's checks of every object's metadata (the engine's
		// objectMetaFindings): a label key, a label value, an annotation
		// key, a name that is no RFC 1123 subdomain.
		"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: label-key, namespace: crd-checks, labels: {\"bad key!\": x}}\nspec: {runtimeRef: {name: torch-distributed}}\n",
		"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: label-value, namespace: crd-checks, labels: {team: " + strings.Repeat("v", 64) + "}}\nspec: {runtimeRef: {name: torch-distributed}}\n",
		"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: annotation-key, annotations: {-nope: z}}\nspec: {template: {}}\n",
		job("Upper", ""),
		// JobSet's own CEL rules, which the runtime CRDs carry with its types.
		"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: startup-depends, labels: {trainer.kubeflow.org/framework: torch}}\nspec:\n  mlPolicy: {numNodes: 1, torch: {}}\n  template:\n    spec:\n      startupPolicy: {startupPolicyOrder: InOrder}\n      replicatedJobs:\n      - name: init\n        template: {spec: {template: {spec: {containers: [{name: init, image: x}]}}}}\n      - name: node\n        dependsOn: [{name: init, status: Complete}]\n        template:\n          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n          spec: {template: {spec: {containers: [{name: node, image: x}]}}}\n",
		"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: claim-namespace, labels: {trainer.kubeflow.org/framework: torch}}\nspec:\n  mlPolicy: {numNodes: 1, torch: {}}\n  template:\n    spec:\n      volumeClaimPolicies:\n      - templates: [{metadata: {name: data, namespace: other}, spec: {}}]\n      replicatedJobs:\n      - name: node\n        template:\n          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n          spec: {template: {spec: {containers: [{name: node, image: x}]}}}\n",
	}
	// The review's own CRD-phase rules, which the CRD does not carry: a
	// schema-checked review keeps them.
	for _, text := range []string{
		runtime("torch-procs", "{torch: {numProcPerNode: 0}}", "", ""),
		runtime("torch-elastic", "{torch: {elasticPolicy: {minNodes: 3, maxNodes: 2}}}", "", ""),
		job("overrides", "  podTemplateOverrides: [{targetJobs: [{name: node}]}]\n"),
	} {
		d := engine.ReadYAML("doc.yaml", []byte(text))[0]
		full := e.NewSession(engine.SessionOptions{}).AdmitRequest(ctx, d, engine.Request{})
		checked := e.NewSession(engine.SessionOptions{}).AdmitRequest(ctx, d, engine.Request{SchemaChecked: true})
		if !full.Rejected() || !slices.Equal(findingText(checked.Errors), findingText(full.Errors)) {
			t.Errorf("%s: schema-checked errors %q, want the full review's %q", full.Identity(), findingText(checked.Errors), findingText(full.Errors))
		}
	}
	left := 0
	for _, text := range docs {
		for _, d := range engine.ReadYAML("doc.yaml", []byte(text)) {
			full := e.NewSession(engine.SessionOptions{}).AdmitRequest(ctx, d, engine.Request{})
			checked := e.NewSession(engine.SessionOptions{}).AdmitRequest(ctx, d, engine.Request{SchemaChecked: true})
			kept := map[string]bool{}
			for _, f := range checked.Errors {
				kept[f.String()] = true
			}
			var leftOut []string
			for _, f := range full.Errors {
				if f.Phase == engine.PhaseCRD && !kept[f.String()] {
					leftOut = append(leftOut, f.String())
				}
			}
			if len(leftOut) == 0 {
				t.Errorf("%s: no CRD check left out (full review: %v): the case checks nothing", full.Identity(), full.Errors)
				continue
			}
			left += len(leftOut)
			// A create, not an apply: server-side apply refuses a list
			// with a duplicate key before validation, in its own words.
			ensureNamespace(t, ctx, d.Namespace())
			err := k8sClient.Create(ctx, &unstructured.Unstructured{Object: d.Object}, client.DryRunAll)
			if !apierrors.IsInvalid(err) {
				t.Errorf("%s: the API server answered %v, want it Invalid: %q", full.Identity(), err, leftOut)
				continue
			}
			for _, f := range leftOut {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("%s: the API server says\n  %v\nnot\n  %s", full.Identity(), err, f)
				}
			}
		}
	}
	if left < len(docs) {
		t.Errorf("%d CRD errors left out over %d objects", left, len(docs))
	}
}

// TestSchemaErrorsAreTheAPIServers: what the structural schema refuses
// (a quantity its pattern does not match, wherever the core types have
// one; a required field left out), vet refuses in the API server's words.
func TestSchemaErrorsAreTheAPIServers(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	e := loadEngine(t)
	installGeneratedCRDs(t, e)
	ensureNamespace(t, ctx, "schema-errors")
	runtime := func(name, mlPolicy, pod string) string {
		return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: " + name + ", labels: {trainer.kubeflow.org/framework: torch}}\nspec:\n" +
			"  mlPolicy: " + mlPolicy + "\n  template:\n    spec:\n      replicatedJobs:\n      - name: node\n        template:\n          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n" +
			"          spec: {template: {spec: " + pod + "}}\n"
	}
	for _, text := range []string{
		runtime("limits", "{torch: {}}", "{containers: [{name: node, image: img, resources: {limits: {cpu: lots}}}]}"),
		runtime("size-limit", "{torch: {}}", "{containers: [{name: node, image: img}], volumes: [{name: shm, emptyDir: {sizeLimit: big}}]}"),
		runtime("divisor", "{torch: {}}", "{containers: [{name: node, image: img, env: [{name: C, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: one}}}]}]}"),
		// JobSet's enums, each a value it does not have.
		"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: enums, labels: {trainer.kubeflow.org/framework: torch}}\nspec:\n  mlPolicy: {torch: {}}\n  template:\n    spec:\n" +
			"      failurePolicy: {restartStrategy: Sometimes, rules: [{name: r, action: Explode}]}\n      startupPolicy: {startupPolicyOrder: Random}\n      successPolicy: {operator: Most}\n" +
			"      volumeClaimPolicies: [{templates: [{metadata: {name: d}, spec: {}}], retentionPolicy: {whenDeleted: Never}}]\n      replicatedJobs:\n" +
			"      - name: init\n        template: {spec: {template: {spec: {containers: [{name: i, image: x}]}}}}\n" +
			"      - name: node\n        dependsOn: [{name: init, status: Done}]\n        template:\n          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n          spec: {template: {spec: {containers: [{name: node, image: x}]}}}\n",
		// envInjection's containerNames is required (Kubeflow's +required).
		runtime("no-containers", "{torch: {envInjection: {targets: [{jobName: node}]}}}", "{containers: [{name: node, image: img}]}"),
		"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: per-node, namespace: schema-errors}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {resourcesPerNode: {requests: {memory: 2 GB}}}\n",
	} {
		d := engine.ReadYAML("doc.yaml", []byte(text))[0]
		r := e.NewSession(engine.SessionOptions{}).AdmitRequest(ctx, d, engine.Request{})
		if !r.Rejected() {
			t.Errorf("%s: vet admits it", r.Identity())
			continue
		}
		err := k8sClient.Create(ctx, &unstructured.Unstructured{Object: d.Object}, client.DryRunAll)
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: the API server answered %v, want it Invalid", r.Identity(), err)
			continue
		}
		for _, f := range r.Errors {
			if f.Phase != engine.PhaseSchema || !strings.Contains(err.Error(), f.String()) {
				t.Errorf("%s: vet says\n  %s (%s)\nthe API server\n  %v", r.Identity(), f, f.Phase, err)
			}
		}
	}
}

// TestTypeErrorsAreTheAPIServers: a value of the wrong type gets, from
// vet, the errors the API server gives (issue 20: it gave four where vet
// gave one): each of vet's with its path and detail among the API
// server's, as many as it gives. The printed value may differ: vet prints
// the value, the API server the type it found.
func TestTypeErrorsAreTheAPIServers(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	e := loadEngine(t)
	installGeneratedCRDs(t, e)
	ensureNamespace(t, ctx, "type-errors")
	for _, trainer := range []string{
		"{resourcesPerNode: {limits: {cpu: 1.5}}}",
		"{resourcesPerNode: {limits: {nvidia.com/gpu: true, cpu: [1]}}}",
		"{resourcesPerNode: {requests: {cpu: 1e20, memory: \"1 Gi\"}}}",
		"{numNodes: 1.5}",
		"{numNodes: true}",
		"{numNodes: 1e20}",
		"{numNodes: 99999999999}",
		"{numNodes: two, image: 3}",
		"{image: 1.5, args: [1, true]}",
		"{env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 0.5}}}]}",
	} {
		text := "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: typed, namespace: type-errors}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer: " + trainer + "\n"
		d := engine.ReadYAML("doc.yaml", []byte(text))[0]
		r := e.NewSession(engine.SessionOptions{}).AdmitRequest(ctx, d, engine.Request{})
		err := k8sClient.Create(ctx, &unstructured.Unstructured{Object: d.Object}, client.DryRunAll)
		var status apierrors.APIStatus
		if !errors.As(err, &status) || status.Status().Details == nil {
			t.Errorf("%s: the API server answered %v, want it Invalid", trainer, err)
			continue
		}
		causes := status.Status().Details.Causes
		if len(causes) != len(r.Errors) {
			t.Errorf("%s: vet gives %d errors, the API server %d:\n  vet %q\n  API %v", trainer, len(r.Errors), len(causes), findingText(r.Errors), err)
		}
		for _, f := range r.Errors {
			found := false
			for _, c := range causes {
				field := c.Field
				if field == "" {
					field = "<nil>"
				}
				path := f.Path
				if !f.HasPath {
					path = "<nil>"
				}
				if field == path && strings.HasSuffix(c.Message, f.Detail) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: vet says\n  %s\nthe API server\n  %v", trainer, f, err)
			}
		}
	}
}

// TestEmbeddedMetadataIsKubeflows: a template's metadata has the fields
// controller-gen's embedded ObjectMeta has and no more: under kubectl's
// default (strict) field validation the API server refuses another, as
// vet does; the object's own metadata takes them all.
func TestEmbeddedMetadataIsKubeflows(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	e := loadEngine(t)
	installGeneratedCRDs(t, e)
	const text = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: embedded-meta, creationTimestamp: null, labels: {trainer.kubeflow.org/framework: torch}}\nspec:\n  mlPolicy: {torch: {}}\n  template:\n" +
		"    metadata: {creationTimestamp: null, labels: {a: b}}\n    spec:\n      replicatedJobs:\n      - name: node\n        template:\n" +
		"          metadata: {generateName: x-, finalizers: [f], labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n" +
		"          spec: {template: {metadata: {name: p, namespace: q, annotations: {c: d}}, spec: {containers: [{name: node, image: img}]}}}\n"
	d := engine.ReadYAML("doc.yaml", []byte(text))[0]
	r := e.NewSession(engine.SessionOptions{}).AdmitRequest(ctx, d, engine.Request{})
	var paths []string
	for _, f := range r.Errors {
		paths = append(paths, f.Path)
	}
	want := []string{"spec.template.metadata.creationTimestamp", "spec.template.spec.replicatedJobs[0].template.metadata.generateName"}
	if !slices.Equal(paths, want) {
		t.Errorf("vet refuses %q (%q), want %q", paths, findingText(r.Errors), want)
	}
	err := k8sClient.Create(ctx, &unstructured.Unstructured{Object: d.Object}, client.DryRunAll, client.FieldValidation("Strict"))
	if err == nil {
		t.Fatal("the API server takes it")
	}
	for _, p := range want {
		if !strings.Contains(err.Error(), `unknown field "`+p+`"`) {
			t.Errorf("the API server does not refuse %s: %v", p, err)
		}
	}
	if n := strings.Count(err.Error(), "unknown field"); n != len(want) {
		t.Errorf("the API server refuses %d fields: %v", n, err)
	}
}

func findingText(fs []engine.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

// TestNullsArePruned: the API server drops the null value of a field whose
// schema is not nullable before it defaults and validates
// (apiextensions-apiserver's pruning), so such an object is created, its
// nulls gone; vet admits it too, with the same object (issue 20, class 1:
// vet said "Invalid value: null: must be of type integer").
func TestNullsArePruned(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	e := loadEngine(t)
	installGeneratedCRDs(t, e)
	ensureNamespace(t, ctx, "nulls")
	for _, text := range []string{
		"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: nulls, namespace: nulls}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {numNodes: null, numProcPerNode: null, image: null, env: null}\n",
		"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: nulls-spec, namespace: nulls, labels: null}\nspec:\n  runtimeRef: {name: torch-distributed, kind: null}\n  suspend: null\n",
	} {
		d := engine.ReadYAML("doc.yaml", []byte(text))[0]
		r := e.NewSession(engine.SessionOptions{}).AdmitRequest(ctx, d, engine.Request{})
		if r.Rejected() {
			t.Errorf("%s: vet rejects it: %v", r.Identity(), findingText(r.Errors))
			continue
		}
		u := &unstructured.Unstructured{Object: d.Object}
		if err := k8sClient.Create(ctx, u, client.DryRunAll); err != nil {
			t.Errorf("%s: the API server refuses it: %v", r.Identity(), err)
			continue
		}
		spec := u.Object["spec"].(map[string]any)
		vetSpec := r.Object["spec"].(map[string]any)
		for _, f := range []string{"trainer", "suspend"} {
			if fmt.Sprint(spec[f]) != fmt.Sprint(vetSpec[f]) {
				t.Errorf("%s: spec.%s: the API server stores %v, vet gives %v", r.Identity(), f, spec[f], vetSpec[f])
			}
		}
		if fmt.Sprint(spec["runtimeRef"]) != fmt.Sprint(vetSpec["runtimeRef"]) {
			t.Errorf("%s: runtimeRef: the API server stores %v, vet gives %v", r.Identity(), spec["runtimeRef"], vetSpec["runtimeRef"])
		}
	}
}

// TestTrainJobColumns: `kubectl get trainjobs` shows Kubeflow's columns,
// from the generated CRD, as the API server serves them (a Table): the
// name, State (the type of the last condition) and Age.
func TestTrainJobColumns(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	installGeneratedCRDs(t, loadEngine(t))
	ensureNamespace(t, ctx, "columns")
	tj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
		"metadata": map[string]any{"name": "listed", "namespace": "columns"},
		"spec":     map[string]any{"runtimeRef": map[string]any{"name": "torch-distributed"}},
	}}
	if err := k8sClient.Create(ctx, tj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), tj) })
	condition := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "reason": typ, "message": typ, "lastTransitionTime": "2026-01-02T03:04:05Z"}
	}
	tj.Object["status"] = map[string]any{"conditions": []any{condition("Suspended"), condition("Complete")}}
	if err := k8sClient.Status().Update(ctx, tj); err != nil {
		t.Fatal(err)
	}

	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/apis/trainer.kubeflow.org/v1alpha1/namespaces/columns/trainjobs", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(body, &table); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s as a Table: %s, %v:\n%s", req.URL, resp.Status, err, body)
	}
	var columns []string
	for _, c := range table.ColumnDefinitions {
		columns = append(columns, c.Name)
	}
	if !slices.Equal(columns, []string{"Name", "State", "Age"}) {
		t.Errorf("columns %q, want Kubeflow's [Name State Age]", columns)
	}
	if len(table.Rows) != 1 || len(table.Rows[0].Cells) != 3 || table.Rows[0].Cells[0] != "listed" || table.Rows[0].Cells[1] != "Complete" {
		t.Errorf("rows %+v, want listed, Complete (the last condition), an age", table.Rows)
	}
}
