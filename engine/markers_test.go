package engine

import (
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

const boundsPolicy = `package schemas

import "strings"

#MLPolicy: paddle?: {
	// masterPort is where the master listens: a bound in CUE alone.
	masterPort: *36000 | int32 & >=1024 & <=65535
	// workers: a bound as a marker alone.
	// +kubebuilder:validation:Minimum=1
	workers?: int32
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:Pattern=` + "`^[a-z]+$`" + `
	queue?: string
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:MaxLength=3
	tags?: [...string]
	// +kubebuilder:validation:MinProperties=1
	selector?: [string]: string
	// zone: a length in CUE.
	zone?: strings.MaxRunes(4)
}

frameworks: paddle: {labels: ["paddle"]}
`

// boundsRuntime is a runtime of boundsPolicy's framework whose policy is
// written as YAML.
func boundsRuntime(t *testing.T, policy string) string {
	return wrapper.ClusterTrainingRuntime("paddle").Framework("paddle").NumNodes(1).
		MLPolicy("paddle", yamlValue(t, policy).(map[string]any)).ReplicatedJob(nodeJob("paddle")).YAML()
}

// A bound is written once, in CUE or as a marker, and reaches both the
// CRD (which the API server checks) and the CUE (which vet and the
// webhooks check), in the API server's words. Before, a CUE bound was not
// in the CRD and a marker was not checked by vet.
func TestBoundsWrittenOnce(t *testing.T) {
	t.Parallel()
	dir := writePolicy(t, map[string]string{"paddle.cue": boundsPolicy})
	e, err := New(Options{PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	crds, err := e.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var paddle map[string]any
	for _, c := range crds {
		if k8s.Meta(c)["name"] == "clustertrainingruntimes.trainer.kubeflow.org" {
			paddle = value.At(c, []string{"spec", "versions"}).([]any)[0].(map[string]any)
			for _, f := range []string{"schema", "openAPIV3Schema", "properties", "spec", "properties", "mlPolicy", "properties", "paddle", "properties"} {
				paddle = paddle[f].(map[string]any)
			}
		}
	}
	for field, want := range map[string]map[string]any{
		"masterPort": {"minimum": int64(1024), "maximum": int64(65535)},
		"workers":    {"minimum": int64(1)},
		"queue":      {"maxLength": int64(8), "pattern": "^[a-z]+$"},
		"tags":       {"maxItems": int64(2)},
		"selector":   {"minProperties": int64(1)},
		"zone":       {"maxLength": int64(4)},
	} {
		got := paddle[field].(map[string]any)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("CRD %s.%s = %v (%T), want %v", field, k, got[k], got[k], v)
			}
		}
	}

	// A string or list too long keeps the API server from evaluating the
	// CRD's CEL rules, and it says so.
	const celNote = "\n<nil>: Invalid value: null: " + k8s.CELNotChecked
	for value, want := range map[string]string{
		"{masterPort: 80}":    "spec.mlPolicy.paddle.masterPort: Invalid value: 80: spec.mlPolicy.paddle.masterPort in body should be greater than or equal to 1024",
		"{masterPort: 70000}": "spec.mlPolicy.paddle.masterPort: Invalid value: 70000: spec.mlPolicy.paddle.masterPort in body should be less than or equal to 65535",
		"{workers: 0}":        "spec.mlPolicy.paddle.workers: Invalid value: 0: spec.mlPolicy.paddle.workers in body should be greater than or equal to 1",
		"{queue: waytoolong}": "spec.mlPolicy.paddle.queue: Too long: may not be more than 8 bytes" + celNote,
		"{queue: Q1}":         "spec.mlPolicy.paddle.queue: Invalid value: \"Q1\": spec.mlPolicy.paddle.queue in body should match '^[a-z]+$'",
		"{tags: [a, b, c]}":   "spec.mlPolicy.paddle.tags: Too many: 3: must have at most 2 items" + celNote,
		"{zone: europe}":      "spec.mlPolicy.paddle.zone: Too long: may not be more than 4 bytes" + celNote,
		"{tags: [abcd]}":      "spec.mlPolicy.paddle.tags[0]: Too long: may not be more than 3 bytes" + celNote,
		"{selector: {}}":      "spec.mlPolicy.paddle.selector: Invalid value: 0: spec.mlPolicy.paddle.selector in body should have at least 1 properties",
		"{masterPort: 2000, workers: 2, queue: ok, tags: [a], zone: eu, selector: {a: b}}": "",
	} {
		r := e.NewSession(SessionOptions{}).Admit(readOne(t, boundsRuntime(t, value)))
		got := strings.Join(findingStrings(r.Errors), "\n")
		if got != want {
			t.Errorf("paddle: %s:\n got %s\nwant %s", value, got, want)
		}
	}
}

// TestMarkerMistakes: a +kubebuilder marker of a policy that cuetrainer
// cannot read fails the load at the marker: a misspelt name (with a
// suggestion) or prefix, a value that is no whole number, a form without
// a value, one that would do nothing here (a printcolumn), a default
// that is not the field's CUE default; Optional says nothing, a CEL rule
// is the CRD's (its crdChecks twin is the admin's), and a default the CUE
// says too is documentation: they load.
func TestMarkerMistakes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ marker, want string }{
		{"+kubebuilder:validation:Minimun=1024", "p.cue:4:2: +kubebuilder:validation:Minimun=1024: Minimun is not a validation marker cuetrainer reads (MaxItems, MaxLength, Maximum, MinItems, MinLength, MinProperties, Minimum, Pattern, Enum): did you mean Minimum?"},
		{"+kubebuilder:validaton:Minimum=1024", "cuetrainer reads only the +kubebuilder:validation: and default markers of a policy, so this one would do nothing"},
		{"+kubebuilder:validation:Minimum=1O24", `Minimum takes a whole number, not "1O24"`},
		{"+kubebuilder:validation:Minimum:1024", "a validation marker is +kubebuilder:validation:Name=value"},
		{`+kubebuilder:validation:XValidation:rule="self >= 1024"`, ""},
		{"+kubebuilder:default=36000", ""},
		{"+kubebuilder:default=3600", "p.cue:4:2: +kubebuilder:default=3600: the field's CUE default is 36000, which is what the CRD and vet take: the marker says another"},
		{"+kubebuilder:printcolumn:name=Port", "cuetrainer reads only the +kubebuilder:validation: and default markers of a policy, so this one would do nothing"},
		{"+kubebuilder:validation:Optional", ""},
	} {
		src := "package schemas\n\n#MLPolicy: paddle?: {\n\t// " + tc.marker + "\n\tmasterPort: *36000 | int32\n}\n\nframeworks: paddle: {labels: [\"paddle\"]}\n"
		loadPolicyWant(t, tc.marker, map[string]string{"p.cue": src}, tc.want)
	}
}

// TestDefaultMarkerWithoutCUEDefault: a +kubebuilder:default marker on a
// field without a CUE default fails the load: the CRD's and vet's defaults
// are the CUE's, so the marker would do nothing.
func TestDefaultMarkerWithoutCUEDefault(t *testing.T) {
	t.Parallel()
	src := "package schemas\n\n#MLPolicy: paddle?: {\n\t// +kubebuilder:default=36000\n\tmasterPort?: int32\n}\n\nframeworks: paddle: {labels: [\"paddle\"]}\n"
	loadPolicyWant(t, "no CUE default", map[string]string{"p.cue": src}, "p.cue:4:2: +kubebuilder:default=36000: the field has no CUE default, which is what the CRD and vet take, so the marker would do nothing: write masterPort: *36000 | ...")
}
