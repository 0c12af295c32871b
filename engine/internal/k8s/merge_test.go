package k8s

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
)

func TestStrategicMerge(t *testing.T) {
	m := contract.Merge{Schema: "jobset.x-k8s.io/v1alpha2.JobSetSpec", KeepOrder: []string{"replicatedJobs"}}
	base := map[string]any{"replicatedJobs": []any{
		map[string]any{"name": "node", "replicas": 1},
		map[string]any{"name": "init", "replicas": 1},
	}}
	// No patch: the base itself.
	if got, err := StrategicMerge(base, nil, m); err != nil || !reflect.DeepEqual(got, base) {
		t.Errorf("no patches: %v, %v; want the base", got, err)
	}
	// A patch merges into the item of its name (the merge key), and the
	// items keep the base's order.
	got, err := StrategicMerge(base, []any{map[string]any{"replicatedJobs": []any{map[string]any{"name": "init", "replicas": 3}}}}, m)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"replicatedJobs": []any{
		map[string]any{"name": "node", "replicas": int64(1)},
		map[string]any{"name": "init", "replicas": int64(3)},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	// The base is not changed.
	if r := base["replicatedJobs"].([]any)[1].(map[string]any)["replicas"]; r != 1 {
		t.Errorf("the base changed: replicas %v", r)
	}
	// A Go type the engine does not carry is an error naming it.
	if _, err := StrategicMerge(base, []any{map[string]any{}}, contract.Merge{Schema: "v1.PodSpec"}); err == nil || !strings.Contains(err.Error(), `"v1.PodSpec"`) {
		t.Errorf("unknown schema: %v", err)
	}
}

func TestMisfit(t *testing.T) {
	jobset := func(spec map[string]any) map[string]any {
		return map[string]any{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": map[string]any{"name": "j"}, "spec": spec}
	}
	for _, tc := range []struct {
		name string
		obj  map[string]any
		want string // "" fits; else a part of the reason
	}{
		{"fits", jobset(map[string]any{"replicatedJobs": []any{map[string]any{"name": "node", "replicas": 2}}}), ""},
		{"a field the kind has not", jobset(map[string]any{"replicatedJob": []any{}}), `unknown field "spec.replicatedJob"`},
		{"a value of another type", jobset(map[string]any{"replicatedJobs": []any{map[string]any{"name": "node", "replicas": "2"}}}), "cannot unmarshal string"},
		{"a kind without a Go type", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "spec": map[string]any{"anything": 1}}, ""},
	} {
		got := Misfit(tc.obj)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: Misfit = %q, want %q", tc.name, got, tc.want)
		}
	}
}
