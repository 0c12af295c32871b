package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cuetrainer/cuetrainer/engine"
)

// packagesScript is what the Kubeflow SDK's get_runtime_packages runs on the
// trainer's node: the Python version, pip list, and the GPUs if any.
const packagesScript = `python -c "import sys; print(f'Python: {sys.version}')"
if command -v pip >/dev/null 2>&1; then pip list; else echo "Unable to get installed packages: pip command not found"; fi
if command -v nvidia-smi >/dev/null 2>&1; then echo "Available GPUs on the single training node"; nvidia-smi; fi
`

// JobSet's labels on the pods of a replicatedJob.
const (
	labelJobSetName    = "jobset.sigs.k8s.io/jobset-name"
	labelReplicatedJob = "jobset.sigs.k8s.io/replicatedjob-name"
	labelJobIndex      = "jobset.sigs.k8s.io/job-index"
)

func newRuntimesPackagesCmd() *cobra.Command {
	o := &runtimeSource{}
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "packages NAME --cluster [-n NAMESPACE]",
		Short: "Print a runtime's Python packages and GPUs, as the Kubeflow SDK's get_runtime_packages does",
		Long: `packages runs what the Kubeflow SDK's get_runtime_packages runs: a TrainJob of one node on
the runtime (one CPU unless the runtime's trainer has GPUs) that prints the Python version, pip
list and nvidia-smi; it waits for the TrainJob to finish, prints its trainer node's log, and
deletes it. The runtime is the namespace's TrainingRuntime of that name, else the
ClusterTrainingRuntime, as the SDK looks them up. A runtime of a framework the SDK runs only its
BuiltinTrainer on (the frameworks' builtinTrainer) is refused, as the SDK refuses it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !o.cluster {
				return usageError{errors.New("packages runs a TrainJob in a cluster: give --cluster")}
			}
			return o.runPackages(cmd, args[0], timeout)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait for the TrainJob to finish")
	return cmd
}

func (o *runtimeSource) runPackages(cmd *cobra.Command, name string, timeout time.Duration) error {
	ctx := cmd.Context()
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	list, err := o.load(cmd)
	if err != nil {
		return err
	}
	rt, ok := findRuntime(list, name, o.namespace)
	if !ok {
		fmt.Fprintf(cmd.ErrOrStderr(), "Error: no TrainingRuntime %q in namespace %s and no ClusterTrainingRuntime %q\n", name, o.namespace, name)
		return exitError{exitRejected}
	}
	if sum := rt.RuntimeSummary(); sum.BuiltinTrainer {
		fmt.Fprintf(cmd.ErrOrStderr(), "Error: Cannot get Runtime packages for BuiltinTrainer (runtime %q, framework %v)\n", name, sum.Framework)
		return exitError{exitRejected}
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}

	tj := packagesTrainJob(rt, o.namespace)
	if err := c.Create(ctx, tj); err != nil {
		return fmt.Errorf("creating TrainJob %s/%s: %w", o.namespace, tj.GetName(), err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "TrainJob %s/%s created on %s %s\n", o.namespace, tj.GetName(), rt.Object["kind"], name)
	// The TrainJob goes whatever happens; its JobSet and pods with it.
	defer func() {
		del := context.WithoutCancel(ctx)
		if err := c.Delete(del, tj, client.PropagationPolicy("Background")); err != nil && !apierrors.IsNotFound(err) {
			fmt.Fprintf(cmd.ErrOrStderr(), "Warning: deleting TrainJob %s/%s: %v\n", o.namespace, tj.GetName(), err)
			return
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "TrainJob %s/%s deleted\n", o.namespace, tj.GetName())
	}()

	state, err := waitFinished(ctx, c, tj, timeout)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "TrainJob %s/%s %s\n", o.namespace, tj.GetName(), state)
	sum := rt.RuntimeSummary()
	if err := printTrainerLog(ctx, clientset, cmd.OutOrStdout(), o.namespace, tj.GetName(), sum.TrainerJob, sum.TrainerContainer); err != nil {
		return err
	}
	if state != "Complete" {
		return exitError{exitRejected}
	}
	return nil
}

// findRuntime looks a runtime up as the SDK does: the namespace's
// TrainingRuntime first, then the ClusterTrainingRuntime.
func findRuntime(list []engine.Listed, name, namespace string) (engine.Listed, bool) {
	var cluster *engine.Listed
	for i, l := range list {
		r := rowOf(l)
		if r.Name != name {
			continue
		}
		if r.Kind == "TrainingRuntime" && r.Namespace == namespace {
			return l, true
		}
		if r.Kind == "ClusterTrainingRuntime" {
			cluster = &list[i]
		}
	}
	if cluster != nil {
		return *cluster, true
	}
	return engine.Listed{}, false
}

// packagesTrainJob is the TrainJob get_runtime_packages creates: a name of a
// letter and 11 hex digits, one node, one CPU unless the runtime's trainer
// has GPUs, the packages script as the trainer's command.
func packagesTrainJob(rt engine.Listed, namespace string) *unstructured.Unstructured {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "p" + hex.EncodeToString(b[:])[:11]
	trainer := map[string]any{
		"numNodes": int64(1),
		"command":  []any{"bash", "-c", packagesScript},
	}
	if !sdkGPU(rt) {
		cpu := map[string]any{"cpu": "1"}
		trainer["resourcesPerNode"] = map[string]any{"requests": cpu, "limits": cpu}
	}
	md, _ := rt.Object["metadata"].(map[string]any)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1",
		"kind":       "TrainJob",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"runtimeRef": map[string]any{"name": md["name"], "kind": rt.Object["kind"]},
			"trainer":    trainer,
		},
	}}
}

// sdkGPU reports whether the SDK sees the runtime's device as "gpu"
// (get_container_devices): the trainer job's trainer container has an
// nvidia.com/gpu limit.
func sdkGPU(rt engine.Listed) bool {
	sum := rt.RuntimeSummary()
	job, container := sum.TrainerJob, sum.TrainerContainer
	jobs, _, _ := unstructured.NestedFieldNoCopy(rt.Object, "spec", "template", "spec", "replicatedJobs")
	for _, j := range asList(jobs) {
		jm, _ := j.(map[string]any)
		if jm["name"] != job {
			continue
		}
		cs, _, _ := unstructured.NestedFieldNoCopy(jm, "template", "spec", "template", "spec", "containers")
		for _, c := range asList(cs) {
			cm, _ := c.(map[string]any)
			if cm["name"] != container {
				continue
			}
			_, ok, _ := unstructured.NestedFieldNoCopy(cm, "resources", "limits", "nvidia.com/gpu")
			return ok
		}
	}
	return false
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// waitFinished polls the TrainJob until a Complete or Failed condition is
// true, and returns which.
func waitFinished(ctx context.Context, c client.Client, tj *unstructured.Unstructured, timeout time.Duration) (string, error) {
	var state string
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(tj.GroupVersionKind())
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, types.NamespacedName{Namespace: tj.GetNamespace(), Name: tj.GetName()}, got); err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, x := range conds {
			m, _ := x.(map[string]any)
			if (m["type"] == "Complete" || m["type"] == "Failed") && m["status"] == "True" {
				state = m["type"].(string)
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("TrainJob %s/%s did not finish within %s", tj.GetNamespace(), tj.GetName(), timeout)
	}
	return state, nil
}

// printTrainerLog copies the log of the trainer container of the trainer
// job's first pod (the SDK's node-0).
func printTrainerLog(ctx context.Context, cs kubernetes.Interface, w io.Writer, namespace, trainJob, job, container string) error {
	selector := labels.SelectorFromSet(labels.Set{labelJobSetName: trainJob, labelReplicatedJob: job, labelJobIndex: "0"})
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return fmt.Errorf("listing the TrainJob's pods: %w", err)
	}
	if len(pods.Items) == 0 {
		return fmt.Errorf("TrainJob %s/%s has no pod of job %q", namespace, trainJob, job)
	}
	pod := pods.Items[0].Name
	stream, err := cs.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).Stream(ctx)
	if err != nil {
		return fmt.Errorf("reading the log of pod %s/%s: %w", namespace, pod, err)
	}
	defer stream.Close()
	_, err = io.Copy(w, stream)
	return err
}
