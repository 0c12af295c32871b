package engine

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"k8s.io/apimachinery/pkg/api/resource"
)

// FuzzRender admits a TrainJob with fuzzed fields on a shipped runtime and,
// when admitted, renders it twice: no panic, the same objects both times
// (the plan cache serves the second), every object in the TrainJob's
// namespace and controlled by it, and a JobSet of its name. An admitted
// TrainJob renders without errors, unless a quantity of it does not parse
// (admission does not check quantities yet: #Quantity is _).
func FuzzRender(f *testing.F) {
	f.Add(uint8(3), int64(2), "img:1", "--epochs=1", "MY_ENV", "v", false, "2", "app", "x")
	f.Add(uint8(0), int64(4), "", "", "PET_NNODES", "4", true, "500m", "a/b", "")
	f.Add(uint8(8), int64(0), "x", "\n", "", "", false, "abc", "", "\x00")
	f.Add(uint8(1), int64(-1), strings.Repeat("i", 600), "a b", "E", "$(E)", false, "1Ei", "k", "v")
	e := testEngine(f)
	runtimes := e.Builtin()
	f.Fuzz(func(t *testing.T, rt uint8, numNodes int64, image, arg, envName, envValue string, suspend bool, cpu, labelKey, labelValue string) {
		trainer := map[string]any{"numNodes": numNodes}
		if image != "" {
			trainer["image"] = image
		}
		if arg != "" {
			trainer["args"] = []any{arg}
		}
		if envName != "" {
			trainer["env"] = []any{map[string]any{"name": envName, "value": envValue}}
		}
		if cpu != "" {
			trainer["resourcesPerNode"] = map[string]any{"limits": map[string]any{"cpu": cpu}}
		}
		md := map[string]any{"name": "fz", "namespace": "ns", "uid": "uid-1"}
		if labelKey != "" {
			md["labels"] = map[string]any{labelKey: labelValue}
		}
		obj := map[string]any{
			"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": md,
			"spec": map[string]any{"runtimeRef": map[string]any{"name": runtimes[int(rt)%len(runtimes)].Name()}, "suspend": suspend, "trainer": trainer},
		}
		s := e.NewSession(SessionOptions{})
		r := s.Admit(Document{File: "fuzz", Line: 1, Object: obj})
		for _, x := range append(r.Errors, r.Warnings...) {
			_ = x.String()
		}
		if r.Rejected() {
			return
		}
		first, second := s.Render(r, RenderOptions{}), s.Render(r, RenderOptions{})
		if a, b := withoutKeys(first.Objects), withoutKeys(second.Objects); !reflect.DeepEqual(a, b) || !reflect.DeepEqual(first.Errors, second.Errors) {
			t.Fatalf("two renders differ:\n%v\n%v", a, b)
		}
		if len(first.Errors) > 0 {
			if _, err := resource.ParseQuantity(cpu); cpu != "" && err != nil {
				return
			}
			t.Fatalf("an admitted TrainJob does not render: %v", findingStrings(first.Errors))
		}
		jobSet := false
		for _, o := range first.Objects {
			m := k8s.Meta(o)
			if m["namespace"] != "ns" {
				t.Errorf("%v %v in namespace %v", o["kind"], m["name"], m["namespace"])
			}
			owners, _ := m["ownerReferences"].([]any)
			owned := false
			for _, ref := range owners {
				ref, _ := ref.(map[string]any)
				if ref["kind"] == "TrainJob" && ref["name"] == "fz" && ref["uid"] == "uid-1" && ref["controller"] == true {
					owned = true
				}
			}
			if !owned {
				t.Errorf("%v %v is not controlled by the TrainJob: %v", o["kind"], m["name"], owners)
			}
			if o["kind"] == "JobSet" && m["name"] == "fz" {
				jobSet = true
			}
		}
		if !jobSet {
			t.Errorf("no JobSet fz among %d objects", len(first.Objects))
		}
	})
}

// withoutKeys copies objects without the data of Secrets, whose keys each
// render generates afresh.
func withoutKeys(objs []map[string]any) []map[string]any {
	out := make([]map[string]any, len(objs))
	for i, o := range objs {
		out[i] = o
		if o["kind"] == "Secret" {
			c := make(map[string]any, len(o))
			for k, v := range o {
				if k != "data" && k != "stringData" {
					c[k] = v
				}
			}
			out[i] = c
		}
	}
	return out
}
