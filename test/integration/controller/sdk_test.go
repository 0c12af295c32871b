package controller_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// The TrainJobs the Kubeflow SDK (0.5, kubeflow/sdk
// kubeflow/trainer/backends/kubernetes) builds and POSTs as JSON, as its
// TrainerClient().train() writes them: get_trainer_cr_from_custom_trainer
// (a CustomTrainer's `bash -c` script ending in torchrun, or a
// CustomTrainerContainer's image), get_resources_per_node (the same map as
// requests and limits, numbers as Python writes them: 1.0),
// get_trainer_cr_from_builtin_trainer (TorchTune: `tune run` and key=value
// args, with the initializers' storage URIs), and runtime patches.
var sdkTrainJobs = map[string]string{
	"custom-trainer": `{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
 "metadata": {"name": "a1b2c3d4e5f6"},
 "spec": {"runtimeRef": {"name": "torch-distributed"},
  "trainer": {"numNodes": 2,
   "resourcesPerNode": {"requests": {"cpu": 1.0, "memory": "2Gi"}, "limits": {"cpu": 1.0, "memory": "2Gi"}},
   "command": ["bash", "-c", "\nif ! [ -x \"$(command -v pip)\" ]; then\n    python -m ensurepip || python -m ensurepip --user\nfi\n\nread -r -d '' SCRIPT << EOM\n\ndef train(lr):\n    print(lr)\n\ntrain(**{'lr': 0.001})\n\nEOM\nprintf \"%s\" \"$SCRIPT\" > \"train.py\"\ntorchrun \"train.py\""],
   "env": [{"name": "LEARNING_RATE", "value": "0.001"}]}}}`,
	"container-trainer": `{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
 "metadata": {"name": "b1b2c3d4e5f6", "labels": {"team": "vision"}},
 "spec": {"runtimeRef": {"name": "torch-distributed"},
  "trainer": {"numNodes": 1, "image": "ghcr.io/acme/train:1",
   "resourcesPerNode": {"requests": {"nvidia.com/gpu": 2, "cpu": 4}, "limits": {"nvidia.com/gpu": 2, "cpu": 4}},
   "env": [{"name": "EPOCHS", "value": "3"}]}}}`,
	"builtin-torchtune": `{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
 "metadata": {"name": "c1b2c3d4e5f6"},
 "spec": {"runtimeRef": {"name": "torchtune-llama3.2-1b"},
  "initializer": {"dataset": {"storageUri": "hf://tatsu-lab/alpaca/data"}},
  "trainer": {"numNodes": 1, "command": ["tune", "run"],
   "args": ["batch_size=2", "epochs=1", "loss=torchtune.modules.loss.CEWithChunkedOutputLoss", "dataset.data_dir=/workspace/dataset/data"],
   "resourcesPerNode": {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 1}}}}}`,
	"runtime-patches": `{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
 "metadata": {"name": "d1b2c3d4e5f6"},
 "spec": {"runtimeRef": {"name": "deepspeed-distributed"},
  "runtimePatches": [{"manager": "trainer.kubeflow.org/kubeflow-sdk",
   "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{"name": "node",
    "template": {"spec": {"template": {"spec": {"nodeSelector": {"pool": "gpu"}}}}}}]}}}}],
  "trainer": {"numNodes": 2, "command": ["mpirun", "--hostfile", "/etc/mpi/hostfile", "bash", "-c", "python /home/mpiuser/train.py"]}}}`,
}

// TestSDKTrainJobs sends the TrainJobs the Kubeflow SDK builds through the
// API server, the webhooks and the controller, on the shipped runtimes:
// each is admitted and rendered into the JobSet Kubeflow's controller
// would apply; a reserved env is refused in Kubeflow's words.
func TestSDKTrainJobs(t *testing.T) {
	need(t)
	ns := namespace(t, "sdk")
	for _, name := range []string{"torch-distributed", "torchtune-llama3.2-1b", "deepspeed-distributed"} {
		installShippedRuntime(t, name)
	}
	post := func(body string) error {
		t.Helper()
		return postTrainJob(t, ns, body)
	}
	for name, body := range sdkTrainJobs {
		if err := post(body); err != nil {
			t.Errorf("%s: the SDK's TrainJob refused: %v", name, err)
		}
	}

	jobSet := func(name string) *unstructured.Unstructured {
		t.Helper()
		var js *unstructured.Unstructured
		eventually(t, "the JobSet of "+name, func() error {
			var err error
			js, err = get(t, "jobset.x-k8s.io/v1alpha2", "JobSet", ns, name)
			return err
		})
		return js
	}
	container := func(js *unstructured.Unstructured, job, name string) map[string]any {
		t.Helper()
		jobs, _, _ := unstructured.NestedSlice(js.Object, "spec", "replicatedJobs")
		for _, j := range jobs {
			if j.(map[string]any)["name"] != job {
				continue
			}
			cs, _, _ := unstructured.NestedSlice(j.(map[string]any), "template", "spec", "template", "spec", "containers")
			for _, c := range cs {
				if c.(map[string]any)["name"] == name {
					return c.(map[string]any)
				}
			}
		}
		t.Fatalf("JobSet %s has no container %s in job %s", js.GetName(), name, job)
		return nil
	}
	envOf := func(c map[string]any) map[string]string {
		env := map[string]string{}
		list, _ := c["env"].([]any)
		for _, e := range list {
			v, _ := e.(map[string]any)["value"].(string)
			env[e.(map[string]any)["name"].(string)] = v
		}
		return env
	}

	// CustomTrainer: the script is the command, torchrun's env is set, the
	// quantity 1.0 is the canonical 1.
	node := container(jobSet("a1b2c3d4e5f6"), "node", "node")
	if cmd := fmt.Sprint(node["command"]); !strings.HasPrefix(cmd, "[bash -c ") || !strings.HasSuffix(cmd, `torchrun "train.py"]`) {
		t.Errorf("custom trainer's command: %s", cmd)
	}
	if env := envOf(node); env["LEARNING_RATE"] != "0.001" || env["PET_NNODES"] != "2" {
		t.Errorf("custom trainer's env: %v", env)
	}
	if cpu, _, _ := unstructured.NestedFieldNoCopy(node, "resources", "limits", "cpu"); fmt.Sprint(cpu) != "1" {
		t.Errorf("custom trainer's cpu limit: %v, want 1", cpu)
	}

	// CustomTrainerContainer: the image; with GPUs, torchrun's own auto (a
	// process per GPU).
	node = container(jobSet("b1b2c3d4e5f6"), "node", "node")
	if node["image"] != "ghcr.io/acme/train:1" || envOf(node)["PET_NPROC_PER_NODE"] != "auto" || envOf(node)["EPOCHS"] != "3" {
		t.Errorf("container trainer: image %v, env %v", node["image"], envOf(node))
	}

	// TorchTune: tune run with the runtime's recipe and config, then the
	// SDK's args.
	node = container(jobSet("c1b2c3d4e5f6"), "node", "node")
	if cmd := fmt.Sprint(node["command"]); !strings.HasPrefix(cmd, "[tune run ") || !strings.Contains(cmd, "--config") || !strings.Contains(fmt.Sprint(node["args"]), "batch_size=2") {
		t.Errorf("torchtune: command %s, args %v", cmd, node["args"])
	}

	// A runtime patch reaches the node job's pods.
	js := jobSet("d1b2c3d4e5f6")
	jobs, _, _ := unstructured.NestedSlice(js.Object, "spec", "replicatedJobs")
	patched := false
	for _, j := range jobs {
		if j.(map[string]any)["name"] == "node" {
			sel, _, _ := unstructured.NestedStringMap(j.(map[string]any), "template", "spec", "template", "spec", "nodeSelector")
			patched = sel["pool"] == "gpu"
		}
	}
	if !patched {
		t.Error("the runtime patch's nodeSelector is not in the node job")
	}

	// A reserved env, as a CustomTrainer's env dict gives it.
	err := post(strings.Replace(strings.Replace(sdkTrainJobs["custom-trainer"], "a1b2c3d4e5f6", "e1b2c3d4e5f6", 1), `"LEARNING_RATE"`, `"PET_NNODES"`, 1))
	want := `admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.trainer.env: Invalid value: [{"name":"PET_NNODES","value":"0.001"}]: must not have reserved envs, invalid envs configured: [PET_NNODES]`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("reserved env: %v\nwant %s", err, want)
	}
}

// postTrainJob creates a TrainJob from its JSON bytes as they are (a
// client that re-encodes them would write 1.0 as 1).
func postTrainJob(t *testing.T, ns, body string) error {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSuffix(cfg.Host, "/") + "/apis/trainer.kubeflow.org/v1alpha1/namespaces/" + ns + "/trainjobs"
	resp, err := hc.Post(url, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusCreated {
		return nil
	}
	data, _ := io.ReadAll(resp.Body)
	var status struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &status) != nil || status.Message == "" {
		return fmt.Errorf("%s: %s", resp.Status, data)
	}
	return fmt.Errorf("%s: %s", resp.Status, status.Message)
}

// installShippedRuntime creates one of deploy/runtimes, unless an earlier
// test did.
func installShippedRuntime(t *testing.T, name string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "runtimes", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Create(context.Background(), u); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("%s: %v", name, err)
	}
}
