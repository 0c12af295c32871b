package engine

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/crd"
)

// TestCELRuleMarker: an XValidation marker's arguments, Go-quoted, with
// commas and quotes inside; what is not one is an error naming it.
func TestCELRuleMarker(t *testing.T) {
	got, err := crd.CELRule(`rule="self in ['a', 'b']",message="must be \"a\", or b"`)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"rule": "self in ['a', 'b']", "message": `must be "a", or b`}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for in, want := range map[string]string{
		`message="m"`:           "no rule",
		`rule=self`:             "rule: invalid syntax",
		`rule="x",severity="y"`: `unknown argument "severity"`,
	} {
		if _, err := crd.CELRule(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}

// TestCRDValidations: the generated TrainJob CRD carries the markers of
// the CUE schema: bounds where the fields are, CEL rules with Kubeflow's
// messages, and the root's rules on the root.
func TestCRDValidations(t *testing.T) {
	crds, err := testEngine(t).CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	for _, c := range crds {
		if c["spec"].(map[string]any)["names"].(map[string]any)["kind"] == "TrainJob" {
			root = c["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
		}
	}
	prop := func(path ...string) map[string]any {
		s := root
		for _, p := range path {
			if p == "[]" {
				s = s["items"].(map[string]any)
				continue
			}
			s = s["properties"].(map[string]any)[p].(map[string]any)
		}
		return s
	}
	if got := prop("spec", "runtimeRef", "name"); got["minLength"] != int64(1) || got["maxLength"] != int64(253) {
		t.Errorf("runtimeRef.name %v", got)
	}
	if got := prop("spec", "runtimePatches"); got["maxItems"] != int64(16) || got["x-kubernetes-list-type"] != "map" {
		t.Errorf("runtimePatches %v", got)
	}
	if got := prop("spec", "runtimePatches", "[]", "manager"); !reflect.DeepEqual(got["x-kubernetes-validations"], []any{map[string]any{"rule": "self == oldSelf", "message": "field is immutable"}}) {
		t.Errorf("manager %v", got)
	}
	if got := prop("spec", "trainer", "numNodes"); got["minimum"] != int64(0) {
		t.Errorf("numNodes %v", got)
	}
	// Quantities are int-or-string with Kubernetes' pattern (controller-gen
	// writes the same), from the CUE's resource.#Quantity.
	const wantPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
	for _, kind := range []string{"limits", "requests"} {
		got := prop("spec", "trainer", "resourcesPerNode", kind)["additionalProperties"].(map[string]any)
		if got["pattern"] != wantPattern || got["x-kubernetes-int-or-string"] != true {
			t.Errorf("resourcesPerNode.%s values: %v, want int-or-string with pattern %s", kind, got, wantPattern)
		}
	}
	rules, _ := root["x-kubernetes-validations"].([]any)
	if len(rules) != 2 || rules[1].(map[string]any)["message"] != "metadata.name must be no more than 63 characters" {
		t.Errorf("root rules %v", rules)
	}
}
