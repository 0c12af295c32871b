package engine

import (
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// The runtimes and TrainJobs the tests build (package wrapper) from the
// same parts. A test about the text of its input (lines, YAML's scalars)
// keeps it as text.

// stepLabel marks the replicated job that runs a step of the TrainJob.
const stepLabel = "trainer.kubeflow.org/trainjob-ancestor-step"

// trainerJob is a runtime's replicated job "node", which runs the trainer
// step in its containers.
func trainerJob(containers ...*wrapper.ContainerWrapper) *wrapper.ReplicatedJobWrapper {
	return wrapper.ReplicatedJob("node").Label(stepLabel, "trainer").Container(containers...)
}

// nodeJob is the trainerJob with one container, "node", of image.
func nodeJob(image string) *wrapper.ReplicatedJobWrapper {
	return trainerJob(wrapper.Container("node", image))
}

// torchRuntime is the ClusterTrainingRuntime name of the torch framework
// on nodes nodes, with the replicated jobs given.
func torchRuntime(name string, nodes int, jobs ...*wrapper.ReplicatedJobWrapper) *wrapper.RuntimeWrapper {
	return wrapper.ClusterTrainingRuntime(name).Framework("torch").
		NumNodes(nodes).MLPolicy("torch", nil).ReplicatedJob(jobs...)
}

// teamRuntime is the TrainingRuntime team/rt of two torch nodes that the
// tests' clusters hold, with its uid, at resourceVersion rv.
func teamRuntime(uid, rv string, node *wrapper.ReplicatedJobWrapper) *wrapper.RuntimeWrapper {
	return wrapper.TrainingRuntime("rt").Namespace("team").UID(uid).ResourceVersion(rv).
		NumNodes(2).MLPolicy("torch", nil).ReplicatedJob(node)
}

// teamJob is the TrainJob team/job, with its uid, of teamRuntime: it runs
// train.py.
func teamJob(uid string) *wrapper.TrainJobWrapper {
	return wrapper.TrainJob("job").Namespace("team").UID(uid).
		RuntimeRef("rt").RuntimeRefKind("TrainingRuntime").Args("train.py")
}

// yamlValue reads a value a test writes as YAML (a field of a builder's
// object that reads better so).
func yamlValue(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
