package wrapper

import (
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestYAMLIsTheObject: the YAML reads back as the object, numbers and
// quoted strings as they were given; Obj is a copy.
func TestYAMLIsTheObject(t *testing.T) {
	rt := ClusterTrainingRuntime("rt").ResourceVersion("7").Framework("fw").
		NumNodes(2).MLPolicy("fw", map[string]any{"numProcPerNode": 0}).
		PodGroupPolicy("gang", nil).
		ReplicatedJob(ReplicatedJob("node").Label("step", "s").
			Container(Container("node", "img:1").Requests(map[string]any{"cpu": "3.5", "memory": 1}).Claims("gpu")))
	var read map[string]any
	if err := yaml.Unmarshal([]byte(rt.YAML()), &read); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
		"metadata": map[string]any{"name": "rt", "resourceVersion": "7", "labels": map[string]any{"trainer.kubeflow.org/framework": "fw"}},
		"spec": map[string]any{
			"mlPolicy":       map[string]any{"numNodes": 2.0, "fw": map[string]any{"numProcPerNode": 0.0}},
			"podGroupPolicy": map[string]any{"gang": map[string]any{}},
			"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{map[string]any{
				"name": "node",
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"step": "s"}},
					"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
						"name": "node", "image": "img:1",
						"resources": map[string]any{"requests": map[string]any{"cpu": "3.5", "memory": 1.0}, "claims": []any{map[string]any{"name": "gpu"}}},
					}}}}},
				},
			}}}},
		},
	}
	if !reflect.DeepEqual(read, want) {
		t.Errorf("YAML reads as\n%v\nwant\n%v", read, want)
	}

	obj := rt.Obj()
	if got := obj.Object["spec"].(map[string]any)["mlPolicy"].(map[string]any)["numNodes"]; got != int64(2) {
		t.Errorf("numNodes %T %v, want the int64 2 of the API machinery", got, got)
	}
	obj.SetName("changed")
	if rt.Obj().GetName() != "rt" {
		t.Error("Obj is not a copy")
	}
}

// TestTrainJob: the TrainJob's fields where Kubeflow's API has them.
func TestTrainJob(t *testing.T) {
	tj := TrainJob("job").Namespace("ns").UID("u").Label("l", "v").Annotation("a", "b").
		RuntimeRef("rt").RuntimeRefKind("TrainingRuntime").
		NumNodes(2).Image("img").Args("train.py").Env("A", "1").Env("B", "2").Trainer("numProcPerNode", 4).
		Suspend(true).ManagedBy("m").ActiveDeadlineSeconds(3).
		RuntimePatch("acme.io/a", map[string]any{"template": map[string]any{}}).Obj().Object
	want := map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
		"metadata": map[string]any{"name": "job", "namespace": "ns", "uid": "u", "labels": map[string]any{"l": "v"}, "annotations": map[string]any{"a": "b"}},
		"spec": map[string]any{
			"runtimeRef": map[string]any{"name": "rt", "kind": "TrainingRuntime"},
			"trainer": map[string]any{
				"numNodes": int64(2), "image": "img", "args": []any{"train.py"}, "numProcPerNode": int64(4),
				"env": []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "2"}},
			},
			"suspend": true, "managedBy": "m", "activeDeadlineSeconds": int64(3),
			"runtimePatches": []any{map[string]any{"manager": "acme.io/a", "trainingRuntimeSpec": map[string]any{"template": map[string]any{}}}},
		},
	}
	if !reflect.DeepEqual(tj, want) {
		t.Errorf("TrainJob\n%v\nwant\n%v", tj, want)
	}
}
