// Package e2e runs TrainJobs on a simulated cluster: etcd, kube-apiserver,
// kube-controller-manager (Jobs, service accounts), kube-scheduler, a kwok
// fake node whose stages run pods to completion, the JobSet controller with
// its webhooks, and the cuetrainer controller binary, each its own process.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

var (
	k8sClient  client.Client
	skipReason string
	// logs holds each process's output, shown when a test fails.
	logs string
	// kubeconfig is the cluster admin's, and cuetrainer the binary the
	// suite built, for tests that run its commands.
	kubeconfig, cuetrainerBin string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	jobsetDir, err := testenv.JobSetModule()
	if err != nil {
		skipReason = err.Error()
		return m.Run()
	}
	mutating, validating, err := jobSetWebhooks(filepath.Join(jobsetDir, "config", "components", "webhook", "manifests.yaml"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cp, exit := testenv.StartSuite(m, testenv.Options{
		Cluster: true,
		CRDs:    []string{"deploy/crds"},
		// The JobSet controller serves these: envtest points them at its
		// port, with a certificate of its own.
		Webhooks: envtest.WebhookInstallOptions{MutatingWebhooks: mutating, ValidatingWebhooks: validating},
		// No node network to reconcile endpoints for; a new node is not
		// tainted until a node lifecycle controller clears it.
		APIServerFlags: map[string]string{"endpoint-reconciler-type": "none", "disable-admission-plugins": "TaintNodesByCondition"},
	}, &skipReason)
	if cp == nil {
		return exit
	}
	defer cp.Stop()
	env, bins, root := cp.Env, cp.Env.BinaryAssetsDirectory, testenv.Root()
	k8sClient = cp.Client
	if logs, err = os.MkdirTemp("", "cuetrainer-e2e-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(logs)
	kubeconfig, err = cp.AdminKubeconfig("e2e-admin", logs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	ctx, cancel := context.WithCancel(context.Background())
	var procs []*exec.Cmd
	defer func() {
		cancel()
		for _, p := range procs {
			_ = p.Wait()
		}
	}()
	start := func(name string, args ...string) error {
		p, err := startProcess(ctx, name, args...)
		if err != nil {
			return err
		}
		procs = append(procs, p)
		return nil
	}

	stages, err := filepath.Glob(filepath.Join(bins, "kwok-stages", "*.yaml"))
	if err != nil || len(stages) == 0 {
		fmt.Fprintln(os.Stderr, "no kwok stages in", bins, "(make testbins)")
		return 1
	}
	// kwok serves the node's kubelet API (logs) at this host's port, so the
	// API server reaches it at the node's address.
	kubeletPort, err := testenv.FreePort()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kwokConfig, err := kwokKubelet(logs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kwokArgs := []string{"--kubeconfig=" + kubeconfig, "--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		fmt.Sprintf("--server-address=127.0.0.1:%d", kubeletPort), "--node-ip=127.0.0.1", fmt.Sprintf("--node-port=%d", kubeletPort),
		"--tls-cert-file=" + filepath.Join(logs, "kubelet.crt"), "--tls-private-key-file=" + filepath.Join(logs, "kubelet.key"),
		"--config=" + kwokConfig}
	for _, s := range stages {
		kwokArgs = append(kwokArgs, "--config="+s)
	}
	jobsetConfig := filepath.Join(logs, "jobset-config.yaml")
	wo := &env.WebhookInstallOptions
	if err := os.WriteFile(jobsetConfig, fmt.Appendf(nil, `apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {host: %q, port: %d, certDir: %q}
`, wo.LocalServingHost, wo.LocalServingPort, wo.LocalServingCertDir), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	probe := testenv.FreeAddress()
	cuetrainer := filepath.Join(logs, "cuetrainer")
	cuetrainerBin = cuetrainer
	build := exec.Command("go", "build", "-o", cuetrainer, "./cmd/cuetrainer")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building cuetrainer: %v\n%s", err, out)
		return 1
	}

	for _, p := range []struct {
		name string
		args []string
	}{
		{filepath.Join(bins, "kube-controller-manager"), []string{"--kubeconfig=" + kubeconfig,
			"--controllers=job-controller,serviceaccount-controller", "--leader-elect=false", "--secure-port=0"}},
		{filepath.Join(bins, "kube-scheduler"), []string{"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0"}},
		{filepath.Join(bins, "kwok"), kwokArgs},
		{filepath.Join(bins, "jobset-controller"), []string{"--kubeconfig=" + kubeconfig, "--config=" + jobsetConfig,
			"--metrics-bind-address=0", "--health-probe-bind-address=0"}},
		{cuetrainer, []string{"controller", "--kubeconfig=" + kubeconfig, "--namespace=cuetrainer-system", "--webhooks=false",
			"--metrics-bind-address=0", "--health-probe-bind-address=" + probe}},
	} {
		if err := start(p.name, p.args...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := setUpCluster(ctx, root, probe); err != nil {
		fmt.Fprintln(os.Stderr, "setting up the cluster:", err)
		testenv.PrintLogs(os.Stderr, logs, 6000)
		return 1
	}
	return m.Run()
}

// startProcess starts a component with its output in the logs directory;
// it ends with ctx.
func startProcess(ctx context.Context, name string, args ...string) (*exec.Cmd, error) {
	out, err := os.Create(filepath.Join(logs, filepath.Base(name)+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return cmd, nil
}

// jobSetWebhooks reads the JobSet controller's webhook configurations, with
// the pod webhooks limited to JobSet pods as its kustomize patches do.
func jobSetWebhooks(file string) ([]*admissionregistrationv1.MutatingWebhookConfiguration, []*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	jobSetPods := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "jobset.sigs.k8s.io/jobset-name", Operator: metav1.LabelSelectorOpExists}}}
	var mutating []*admissionregistrationv1.MutatingWebhookConfiguration
	var validating []*admissionregistrationv1.ValidatingWebhookConfiguration
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var head metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		switch head.Kind {
		case "MutatingWebhookConfiguration":
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.Unmarshal(doc, &c); err != nil {
				return nil, nil, err
			}
			for i := range c.Webhooks {
				if isPodWebhook(c.Webhooks[i].ClientConfig) {
					c.Webhooks[i].ObjectSelector = jobSetPods
				}
			}
			mutating = append(mutating, &c)
		case "ValidatingWebhookConfiguration":
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			if err := yaml.Unmarshal(doc, &c); err != nil {
				return nil, nil, err
			}
			for i := range c.Webhooks {
				if isPodWebhook(c.Webhooks[i].ClientConfig) {
					c.Webhooks[i].ObjectSelector = jobSetPods
				}
			}
			validating = append(validating, &c)
		}
	}
	if len(mutating) == 0 || len(validating) == 0 {
		return nil, nil, fmt.Errorf("%s: no webhook configurations", file)
	}
	return mutating, validating, nil
}

func isPodWebhook(c admissionregistrationv1.WebhookClientConfig) bool {
	return c.Service != nil && c.Service.Path != nil && strings.HasSuffix(*c.Service.Path, "-pod")
}

// setUpCluster adds the fake node and the shipped runtimes, and waits for
// the node to be ready and the JobSet webhooks to answer.
func setUpCluster(ctx context.Context, root, probe string) error {
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		resp, err := http.Get("http://" + probe + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}); err != nil {
		return fmt.Errorf("cuetrainer controller never ready at %s: %w", probe, err)
	}
	node := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: kwok-node-0}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
`), &node.Object); err != nil {
		return err
	}
	if err := k8sClient.Create(ctx, node); err != nil {
		return err
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		n := &unstructured.Unstructured{}
		n.SetAPIVersion("v1")
		n.SetKind("Node")
		if err := k8sClient.Get(ctx, types.NamespacedName{Name: "kwok-node-0"}, n); err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(n.Object, "status", "conditions")
		for _, c := range conds {
			m := c.(map[string]any)
			if m["type"] == "Ready" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("the kwok node never became Ready: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(root, "deploy", "runtimes", "*-distributed.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no shipped runtimes in deploy/runtimes: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := k8sClient.Create(ctx, u); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

func need(t *testing.T) {
	t.Helper()
	testenv.NeedProcesses(t, skipReason == "", skipReason, logs, 6000)
}
