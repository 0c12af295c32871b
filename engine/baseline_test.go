package engine

// A hand-written Go baseline for the render benchmarks: what a typed Go
// controller does for a torch, a TorchTune and a DeepSpeed (MPI) TrainJob,
// building the same objects as the CUE with k8s and JobSet structs. It
// knows the runtimes it serves; the CUE knows every framework.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/internal/objdiff"
)

// baselineRuntime is a runtime decoded once, as a controller caches it.
type baselineRuntime struct {
	object   map[string]any
	template jobsetv1alpha2.JobSetSpec
	mpi      bool
	// tune: a TorchTune runtime (torchtune-<model>-<size>), whose TrainJob
	// runs `tune run`; model is its TorchTune model.
	tune  bool
	model string
}

func newBaselineRuntime(tb testing.TB, obj map[string]any) *baselineRuntime {
	tb.Helper()
	spec := obj["spec"].(map[string]any)
	data, err := json.Marshal(spec["template"].(map[string]any)["spec"])
	if err != nil {
		tb.Fatal(err)
	}
	rt := &baselineRuntime{object: obj}
	if err := json.Unmarshal(data, &rt.template); err != nil {
		tb.Fatal(err)
	}
	_, rt.mpi = spec["mlPolicy"].(map[string]any)["mpi"]
	if name := obj["metadata"].(map[string]any)["name"].(string); strings.HasPrefix(name, "torchtune-") {
		parts := strings.Split(name, "-")
		rt.tune, rt.model = true, strings.ReplaceAll(parts[1], ".", "_")+"/"+strings.ToUpper(parts[2])
	}
	return rt
}

func upsertEnv(env []corev1.EnvVar, add ...corev1.EnvVar) []corev1.EnvVar {
	for _, a := range add {
		found := false
		for i := range env {
			if env[i].Name == a.Name {
				env[i], found = a, true
				break
			}
		}
		if !found {
			env = append(env, a)
		}
	}
	return env
}

// baselineRender builds the objects for a TrainJob named name in team-a.
func baselineRender(rt *baselineRuntime, name string, numNodes int32, labels map[string]string) []any {
	owner := []metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: name, UID: "u", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	meta := func(n string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: n, Namespace: "team-a", OwnerReferences: owner}
	}
	spec := *rt.template.DeepCopy()
	spec.Suspend = ptr.To(false)
	completionIndex := &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
	var objects []any
	if !rt.mpi {
		for i := range spec.ReplicatedJobs {
			job := &spec.ReplicatedJobs[i]
			if job.Template.Labels["trainer.kubeflow.org/trainjob-ancestor-step"] != "trainer" {
				job.Template.Spec.Parallelism, job.Template.Spec.Completions = ptr.To(int32(1)), ptr.To(int32(1))
				continue
			}
			job.Template.Spec.Parallelism, job.Template.Spec.Completions = ptr.To(numNodes), ptr.To(numNodes)
			c := &job.Template.Spec.Template.Spec.Containers[0]
			procs := "1" // auto on a node without GPUs or CPU requests
			gpus := c.Resources.Limits.Name("nvidia.com/gpu", "0").Value()
			if gpus > 0 {
				procs = "auto"
			}
			env := []corev1.EnvVar{
				{Name: "PET_NNODES", Value: fmt.Sprint(numNodes)},
				{Name: "PET_NPROC_PER_NODE", Value: procs},
				{Name: "PET_NODE_RANK", ValueFrom: completionIndex},
			}
			if rt.tune {
				// tune run: the recipe and config for the model, and the
				// runtime's immutable configs; the rendezvous endpoint
				// with more than one device.
				command := []string{"tune", "run"}
				if numNodes > 1 || gpus > 1 {
					command = append(command, fmt.Sprintf("--rdzv_endpoint=%s-node-0-0.%s:29500", name, name))
				}
				command = append(command, "full_finetune_distributed", "--config", rt.model+"_full")
				for _, arg := range c.Command {
					switch strings.SplitN(arg, "=", 2)[0] {
					case "output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file":
						command = append(command, arg)
					}
				}
				c.Command = command
			} else {
				env = append(env,
					corev1.EnvVar{Name: "PET_MASTER_ADDR", Value: fmt.Sprintf("%s-node-0-0.%s", name, name)},
					corev1.EnvVar{Name: "PET_MASTER_PORT", Value: "29500"})
			}
			c.Env = upsertEnv(c.Env, env...)
			c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: 29500})
		}
	} else {
		secret := name + "-mpi-ssh-auth"
		var hostfile strings.Builder
		for i := range spec.ReplicatedJobs {
			job := &spec.ReplicatedJobs[i]
			job.Template.Spec.Parallelism, job.Template.Spec.Completions = ptr.To(int32(1)), ptr.To(int32(1))
			pod := &job.Template.Spec.Template.Spec
			pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "mpi-ssh-auth", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: secret, DefaultMode: ptr.To(int32(256)), Items: []corev1.KeyToPath{
					{Key: "ssh-privatekey", Path: "id_rsa", Mode: ptr.To(int32(416))},
					{Key: "ssh-publickey", Path: "id_rsa.pub", Mode: ptr.To(int32(420))},
					{Key: "ssh-publickey", Path: "authorized_keys", Mode: ptr.To(int32(420))},
				}}}})
			c := &pod.Containers[0]
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "mpi-ssh-auth", MountPath: "/home/mpiuser/.ssh"})
			fmt.Fprintf(&hostfile, "%s-%s-0-0.%s slots=1\n", name, job.Name, name)
			if job.Name == "launcher" {
				pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "mpi-hostfile", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: name + "-mpi-hostfile"},
					Items:                []corev1.KeyToPath{{Key: "hostfile", Path: "hostfile", Mode: ptr.To(int32(292))}}}}})
				c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "mpi-hostfile", MountPath: "/etc/mpi"})
				c.Env = upsertEnv(c.Env,
					corev1.EnvVar{Name: "OMPI_MCA_orte_default_hostfile", Value: "/etc/mpi/hostfile"},
					corev1.EnvVar{Name: "OMPI_MCA_orte_keep_fqdn_hostnames", Value: "true"},
					corev1.EnvVar{Name: "OMPI_MCA_orte_set_default_slots", Value: "1"},
					corev1.EnvVar{Name: "OMPI_MCA_plm_rsh_args", Value: "-o ConnectionAttempts=10"})
			}
		}
		key, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
		der, _ := x509.MarshalECPrivateKey(key)
		private := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
		objects = append(objects,
			&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta(name + "-mpi-hostfile"), Data: map[string]string{"hostfile": hostfile.String()}},
			&corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta(secret), Type: corev1.SecretTypeSSHAuth, Immutable: ptr.To(true),
				Data: map[string][]byte{"ssh-privatekey": private, "ssh-publickey": []byte("ecdsa-sha2-nistp521 AAAA\n")}})
	}
	snapshot, _ := yaml.Marshal(rt.object)
	jobset := &jobsetv1alpha2.JobSet{TypeMeta: metav1.TypeMeta{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet"}, ObjectMeta: meta(name), Spec: spec}
	_ = batchv1.JobSpec{}
	return append(objects, jobset,
		&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta(name + "-runtime-snapshot"), Data: map[string]string{"runtime": string(snapshot)}})
}

func toMaps(tb testing.TB, objs []any) []map[string]any {
	var out []map[string]any
	for _, o := range objs {
		data, err := json.Marshal(o)
		if err != nil {
			tb.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			tb.Fatal(err)
		}
		delete(m, "status")
		out = append(out, m)
	}
	return out
}

// baselineCase renders a case with the engine and with the baseline.
func baselineCase(tb testing.TB, caseName string, numNodes int32) (*Session, Result, *baselineRuntime) {
	s, tj := renderInput(tb, caseName)
	c := s.e.cur.Load()
	doc := Document{Object: tj.Object}
	runtime, _, _, err := s.resolve(context.Background(), doc, s.lookupRefs(c, doc, c.Ctx.Encode(s.e.decl.Opaque.Aliases(nil).Alias(tj.Object)), nil))
	if err != nil || runtime == nil {
		tb.Fatalf("no runtime for the case: %v", err)
	}
	return s, tj, newBaselineRuntime(tb, runtime.doc.Object)
}

// TestBaselineEqualsEngine: the baseline builds the objects the engine
// renders, by the conformance rules (the SSH keys aside), so the benchmark
// compares like with like.
func TestBaselineEqualsEngine(t *testing.T) {
	for _, c := range []struct {
		name  string
		nodes int32
	}{{"03-torch-numnodes-override", 4}, {"36-torchtune-llama3.2-1b-default", 1}, {"28-deepspeed-shipped-minimal", 1}} {
		s, tj, rt := baselineCase(t, c.name, c.nodes)
		tj = varied(tj, 7)
		tj.Object["metadata"].(map[string]any)["uid"] = "u"
		tj.Object["metadata"].(map[string]any)["namespace"] = "team-a"
		ours := s.Render(tj, RenderOptions{})
		if len(ours.Errors) > 0 {
			t.Fatal(ours.Errors)
		}
		theirs := toMaps(t, baselineRender(rt, "job-7", c.nodes, nil))
		for _, objs := range [][]map[string]any{ours.Objects, theirs} {
			for _, o := range objs {
				if o["kind"] == "Secret" {
					o["data"] = map[string]any{"ssh-privatekey": objdiff.Wildcard, "ssh-publickey": objdiff.Wildcard}
				}
			}
		}
		for _, d := range objdiff.Diff(ours.Objects, theirs) {
			t.Errorf("%s: %s", c.name, d)
		}
	}
}

func benchmarkBaseline(b *testing.B, caseName string, numNodes int32) {
	_, _, rt := baselineCase(b, caseName, numNodes)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		baselineRender(rt, fmt.Sprintf("job-%d", i%256), numNodes, map[string]string{fmt.Sprintf("run-%d", i%1000): "x"})
	}
}

func BenchmarkBaselineTorch(b *testing.B) { benchmarkBaseline(b, "03-torch-numnodes-override", 4) }
func BenchmarkBaselineTorchTune(b *testing.B) {
	benchmarkBaseline(b, "36-torchtune-llama3.2-1b-default", 1)
}
func BenchmarkBaselineDeepSpeed(b *testing.B) {
	benchmarkBaseline(b, "28-deepspeed-shipped-minimal", 1)
}
