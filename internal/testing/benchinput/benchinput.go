// Package benchinput makes the benchmarks' inputs: the vet corpora (one
// that repeats, one where nothing does), the admission benchmark's reviews'
// objects and the controller benchmark's TrainJobs. The benchmarks measure
// on them, and the engine's tests check on them that its memos change
// nothing (engine TestMemoChangesNothingOnBenchInputs), so both take them
// from here. It does not import the engine, whose own tests use it.
package benchinput

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// ShippedRuntimes returns the ClusterTrainingRuntimes deploy/runtimes ships,
// by file name, root being the repository's root.
func ShippedRuntimes(root string) ([]map[string]any, error) {
	files, err := filepath.Glob(filepath.Join(root, "deploy", "runtimes", "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if obj["kind"] == "ClusterTrainingRuntime" {
			out = append(out, obj)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no ClusterTrainingRuntime in %s", filepath.Join(root, "deploy", "runtimes"))
	}
	return out, nil
}

// Size is how many runtimes and TrainJobs a vet corpus has.
type Size struct{ Runtimes, TrainJobs int }

// VetSize is the vet benchmarks' corpora's: 1,000 documents.
var VetSize = Size{Runtimes: 100, TrainJobs: 900}

func name(obj map[string]any) string {
	n, _ := obj["metadata"].(map[string]any)["name"].(string)
	return n
}

// oneNode says whether a runtime trains on one node (a TorchTune model),
// so that its TrainJobs ask for no more.
func oneNode(runtimeName string) bool { return strings.HasPrefix(runtimeName, "torchtune") }

// VetMixed is the repeating vet corpus, as an admin's CI would vet it, as
// YAML documents: size.Runtimes ClusterTrainingRuntimes (the shipped ones,
// renamed in turn) and size.TrainJobs TrainJobs spread over them, which
// differ only in name, namespace, numNodes (1 to 4), their runtime and one
// env value. Its runtimes replace the shipped ones (vet
// --no-builtin-runtimes).
func VetMixed(runtimes []map[string]any, size Size) (rts, jobs []string, err error) {
	var names []string
	for i := 0; i < size.Runtimes; i++ {
		obj := apiruntime.DeepCopyJSON(runtimes[i%len(runtimes)])
		md := obj["metadata"].(map[string]any)
		md["name"] = fmt.Sprintf("%s-v%d", md["name"], i)
		data, err := yaml.Marshal(obj)
		if err != nil {
			return nil, nil, err
		}
		rts = append(rts, string(data))
		names = append(names, md["name"].(string))
	}
	for j := 0; j < size.TrainJobs; j++ {
		rt := names[j%len(names)]
		trainer := fmt.Sprintf("  trainer:\n    numNodes: %d\n    env:\n    - {name: RUN, value: \"%d\"}\n", 1+j%4, j)
		if oneNode(rt) {
			trainer = "  trainer: {numNodes: 1}\n"
		}
		jobs = append(jobs, fmt.Sprintf("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: job-%d\n  namespace: team-%d\n  labels: {team: t%d}\nspec:\n  runtimeRef: {name: %s}\n%s",
			j, j%7, j%5, rt, trainer))
	}
	return rts, jobs, nil
}

// VetDistinct is the vet corpus where nothing repeats what the rules read
// of another document, as YAML documents: size.Runtimes
// ClusterTrainingRuntimes (the shipped ones in turn, each the k-th of its
// own: wrapper.Distinct) and size.TrainJobs TrainJobs, each the j-th of
// its own for a runtime of the shipped ones and the corpus's own in turn
// (DistinctTrainJob), with a team label. The shipped runtimes exist beside
// them.
func VetDistinct(runtimes []map[string]any, size Size) (rts, jobs []string, err error) {
	var targets []string
	for _, rt := range runtimes {
		targets = append(targets, name(rt))
	}
	for i := 0; i < size.Runtimes; i++ {
		rt := runtimes[i%len(runtimes)]
		obj := apiruntime.DeepCopyJSON(rt)
		n := fmt.Sprintf("%s-d%d", name(rt), i)
		wrapper.Distinct(obj, n, i, oneNode(n))
		data, err := yaml.Marshal(obj)
		if err != nil {
			return nil, nil, err
		}
		rts = append(rts, string(data))
		targets = append(targets, n)
	}
	for j := 0; j < size.TrainJobs; j++ {
		obj := DistinctTrainJob(j, targets[j%len(targets)])
		obj["metadata"].(map[string]any)["labels"] = map[string]any{"team": fmt.Sprintf("t%d", j%5)}
		data, err := yaml.Marshal(obj)
		if err != nil {
			return nil, nil, err
		}
		jobs = append(jobs, string(data))
	}
	return rts, jobs, nil
}

// AdmissionEntry is one review of the admission benchmark's mix: an
// object, to the mutating or the validating endpoint.
type AdmissionEntry struct {
	Object   map[string]any
	Mutating bool
}

// AdmissionMix is the admission benchmark's mix: for each shipped runtime,
// three TrainJobs that use it and the runtime itself (renamed), each to the
// validating endpoint and, for a kind that mutates, to the mutating one.
func AdmissionMix(runtimes []map[string]any, mutates func(kind string) bool) []AdmissionEntry {
	var out []AdmissionEntry
	add := func(obj map[string]any) {
		for _, mutating := range []bool{false, true} {
			if mutating && !mutates(obj["kind"].(string)) {
				continue
			}
			out = append(out, AdmissionEntry{Object: obj, Mutating: mutating})
		}
	}
	for _, rt := range runtimes {
		for i := 0; i < 3; i++ {
			add(map[string]any{
				"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
				"metadata": map[string]any{"name": fmt.Sprintf("job-%d", i), "namespace": "team-a"},
				"spec":     map[string]any{"runtimeRef": map[string]any{"name": name(rt)}},
			})
		}
		copied := apiruntime.DeepCopyJSON(rt)
		copied["metadata"].(map[string]any)["name"] = name(rt) + "-copy"
		add(copied)
	}
	return out
}

// DistinctObject is a copy of an admission mix's object made the k-th of
// its own: a TrainJob is DistinctTrainJob's for its runtime, a runtime
// wrapper.Distinct's.
func DistinctObject(obj map[string]any, k int) map[string]any {
	if obj["kind"] == "TrainJob" {
		return DistinctTrainJob(k, obj["spec"].(map[string]any)["runtimeRef"].(map[string]any)["name"].(string))
	}
	out := apiruntime.DeepCopyJSON(obj)
	wrapper.Distinct(out, fmt.Sprintf("%s-%d", name(out), k), k, oneNode(name(out)))
	return out
}

// DistinctTrainJob is the k-th TrainJob of its own that uses the runtime:
// its name, namespace, numNodes, env, resourcesPerNode and a runtimePatch
// its own, and on a runtime with initializer jobs (a TorchTune one, which
// trains on one node) its initializers' storage URIs.
func DistinctTrainJob(k int, runtime string) map[string]any {
	numNodes := int64(1 + k%8)
	spec := map[string]any{"runtimeRef": map[string]any{"name": runtime}}
	if oneNode(runtime) {
		numNodes = 1
		spec["initializer"] = map[string]any{
			"dataset": map[string]any{"storageUri": fmt.Sprintf("hf://bench/dataset-%d", k)},
			"model":   map[string]any{"storageUri": fmt.Sprintf("hf://bench/model-%d", k)},
		}
	}
	spec["trainer"] = map[string]any{
		"numNodes": numNodes,
		"env": []any{
			map[string]any{"name": "RUN", "value": strconv.Itoa(k)},
			map[string]any{"name": fmt.Sprintf("OPTION_%d", k%11), "value": fmt.Sprintf("v%d", k)},
		},
		"resourcesPerNode": map[string]any{"requests": map[string]any{
			"cpu": strconv.Itoa(1 + k%8), "memory": fmt.Sprintf("%dGi", 1+k%16)}},
	}
	spec["runtimePatches"] = []any{map[string]any{
		"manager": fmt.Sprintf("bench.example.com/ci-%d", k%5),
		"trainingRuntimeSpec": map[string]any{"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"bench.example.com/run": strconv.Itoa(k)}},
			"spec": map[string]any{"replicatedJobs": []any{map[string]any{
				"name": "node",
				"template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
					"nodeSelector": map[string]any{"bench.example.com/pool": fmt.Sprintf("pool-%d", k%13)}}}}},
			}}},
		}},
	}}
	return map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
		"metadata": map[string]any{"name": fmt.Sprintf("job-%d", k), "namespace": fmt.Sprintf("team-%d", k%7)},
		"spec":     spec,
	}
}

// ControllerTrainJob is a TrainJob of the controller benchmark's burst, as
// YAML: all alike but for their names (torch-distributed, two nodes).
func ControllerTrainJob(name, ns string) string {
	return fmt.Sprintf(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: %s, namespace: %s}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: 2}
`, name, ns)
}

// ControllerDistinctTrainJob is the i-th TrainJob of the burst where they
// differ: ControllerTrainJob's with a numNodes (1 to 8) and env of its own.
func ControllerDistinctTrainJob(i int, ns string) string {
	return fmt.Sprintf(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: job-%04d, namespace: %s}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: %d
    env:
    - {name: RUN, value: "%d"}
    - {name: OPTION_%d, value: "v%d"}
`, i, ns, 1+i%8, i, i%11, i)
}
