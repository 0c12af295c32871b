package main

import (
	"testing"

	"github.com/cuetrainer/cuetrainer/engine"
)

// TestPackagesTrainJob: the TrainJob get_runtime_packages creates has one
// node and the packages script, and one CPU unless the runtime's trainer
// container has an nvidia.com/gpu limit (the SDK's device "gpu").
func TestPackagesTrainJob(t *testing.T) {
	runtime := func(limits map[string]any) engine.Listed {
		c := map[string]any{"name": "node", "image": "x"}
		if limits != nil {
			c["resources"] = map[string]any{"limits": limits}
		}
		return engine.Listed{
			Object: map[string]any{"kind": "ClusterTrainingRuntime", "metadata": map[string]any{"name": "rt"},
				"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{
					map[string]any{"name": "launcher", "template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
						"containers": []any{c}}}}}}}}}}},
			Summary: map[string]any{"trainerJob": "launcher", "trainerContainer": "node"},
		}
	}
	for _, tc := range []struct {
		name   string
		limits map[string]any
		cpu    bool
	}{
		{"no resources", nil, true},
		{"cpu limits", map[string]any{"cpu": "4"}, true},
		{"a MIG slice is no gpu device", map[string]any{"nvidia.com/mig-1g.5gb": 1}, true},
		{"gpus", map[string]any{"nvidia.com/gpu": 8}, false},
	} {
		tj := packagesTrainJob(runtime(tc.limits), "team")
		trainer := tj.Object["spec"].(map[string]any)["trainer"].(map[string]any)
		_, hasResources := trainer["resourcesPerNode"]
		if hasResources != tc.cpu || trainer["numNodes"] != int64(1) || len(tj.GetName()) != 12 || tj.GetNamespace() != "team" {
			t.Errorf("%s: resourcesPerNode %v (want one CPU: %v), numNodes %v, name %q", tc.name, trainer["resourcesPerNode"], tc.cpu, trainer["numNodes"], tj.GetName())
		}
		ref := tj.Object["spec"].(map[string]any)["runtimeRef"].(map[string]any)
		if ref["name"] != "rt" || ref["kind"] != "ClusterTrainingRuntime" {
			t.Errorf("%s: runtimeRef %v", tc.name, ref)
		}
	}
}
