// Package faults breaks a running cluster and checks that nothing is lost:
// etcd and kube-apiserver (envtest's binaries), and the cuetrainer
// controller binary as its own process with its webhooks, its generated
// serving certificate and a policy directory laid out as a mounted
// ConfigMap. The API server reaches the webhooks through the shipped
// configuration (deploy/webhooks.yaml, a Service and an EndpointSlice of
// this host's address, --enable-aggregator-routing), so it trusts the CA the
// controller puts into the caBundle. The faults: the controller killed, the
// API server restarted, the webhook server down, the certificate expiring,
// a broken policy file.
package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/internal/release"
	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

const (
	controllerNamespace = "cuetrainer-system"
	webhookService      = "cuetrainer-webhook"
)

var (
	k8sClient  client.Client
	skipReason string
	env        *envtest.Environment
	// logs holds each process's output, shown when a test fails.
	logs string
	// hostIP is where the API server reaches the webhook server: an
	// EndpointSlice may not hold a loopback address.
	hostIP string
	// scraperToken may read the controller's metrics.
	scraperToken string
	policyDir    string
	cuetrain     *controllerProcess
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	var err error
	if hostIP, err = hostAddress(); err != nil {
		skipReason = err.Error()
		return m.Run()
	}
	if logs, err = os.MkdirTemp("", "cuetrainer-faults-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(logs)
	apiLog, err := os.Create(filepath.Join(logs, "kube-apiserver.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer apiLog.Close()
	cp, exit := testenv.StartSuite(m, testenv.Options{
		CRDs: []string{"deploy/crds"},
		// Service webhooks go to an endpoint of the Service, not its
		// cluster IP: there is no kube-proxy.
		APIServerFlags: map[string]string{"enable-aggregator-routing": "true", "endpoint-reconciler-type": "none"},
		Configure: func(api *envtest.APIServer) error {
			// A directory of our own keeps the serving and client CAs
			// across a restart of the API server (envtest makes new ones
			// in a new directory).
			api.CertDir = filepath.Join(logs, "kube-apiserver")
			api.Out, api.Err = apiLog, apiLog
			return os.Mkdir(api.CertDir, 0o700)
		},
	}, &skipReason)
	if cp == nil {
		return exit
	}
	defer cp.Stop()
	env, k8sClient = cp.Env, cp.Client
	root := testenv.Root()
	webhookPort, err := testenv.FreePort()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := installController(root, webhookPort); err != nil {
		fmt.Fprintln(os.Stderr, "installing deploy/:", err)
		return 1
	}
	// A service account that may read the controller's metrics.
	if scraperToken, err = testenv.ServiceAccountToken(context.Background(), k8sClient, controllerNamespace, "scraper", "cuetrainer-metrics-reader"); err != nil {
		fmt.Fprintln(os.Stderr, "the metrics scraper:", err)
		return 1
	}
	kubeconfig, err := serviceAccountKubeconfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	policyDir = filepath.Join(logs, "policies")
	if err := os.Mkdir(policyDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := testenv.Publish(policyDir, 1, map[string][]byte{"nodes.cue": maxNodesPolicy(8)}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	bin := filepath.Join(logs, "cuetrainer")
	build := exec.Command("go", "build", "-o", bin, "./cmd/cuetrainer")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building cuetrainer: %v\n%s", err, out)
		return 1
	}
	cuetrain = &controllerProcess{name: "cuetrainer", bin: bin, args: []string{"controller", "--kubeconfig=" + kubeconfig,
		"--namespace=" + controllerNamespace, "--webhook-service=" + webhookService,
		"--webhook-port=" + strconv.Itoa(webhookPort), "--cert-dir=" + filepath.Join(logs, "serving-certs"),
		"--leader-elect", // as deployed
		"--policy-dir=" + policyDir, "--policy-reload-interval=200ms"}}
	ctx := context.Background()
	if err := cuetrain.start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		testenv.PrintLogs(os.Stderr, logs, 6000)
		return 1
	}
	defer cuetrain.stop()
	for _, name := range []string{"torch-distributed", "deepspeed-distributed"} {
		u, err := shippedRuntime(name)
		if err == nil {
			err = k8sClient.Create(ctx, u)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "creating the shipped runtimes:", err)
			return 1
		}
	}
	return m.Run()
}

// hostAddress is an IPv4 address of this host that is not loopback.
func hostAddress() (string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, i := range ifaces {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				return n.IP.String(), nil
			}
		}
	}
	return "", errors.New("no IPv4 address but loopback: the API server cannot reach a webhook endpoint")
}

// installController applies what a release's install.yaml installs
// (built from deploy/ as `make release` builds it) besides the CRDs, which
// the control plane starts with, and the Deployment: the namespaces, the
// RBAC, the webhook configurations and Service, the Kubeflow SDK's
// ConfigMap; and, in the place of the Deployment's pods, an EndpointSlice
// of this host at the controller's webhook port.
func installController(root string, webhookPort int) error {
	ctx := context.Background()
	install, _, err := release.Build(filepath.Join(root, "deploy"), "")
	if err != nil {
		return err
	}
	for _, doc := range strings.Split(string(install), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return fmt.Errorf("install.yaml: %w", err)
		}
		if len(u.Object) == 0 || u.GetKind() == "Deployment" || u.GetKind() == "CustomResourceDefinition" {
			continue
		}
		if err := k8sClient.Create(ctx, u); err != nil {
			return fmt.Errorf("install.yaml: %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return k8sClient.Create(ctx, endpointSlice("host", webhookPort))
}

// endpointSlice is an endpoint of the webhook Service: this host at port.
func endpointSlice(name string, port int) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: webhookService + "-" + name,
			Labels: map[string]string{discoveryv1.LabelServiceName: webhookService, discoveryv1.LabelManagedBy: "faults-test"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{hostIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("webhook"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
}

// serviceAccountKubeconfig writes a kubeconfig that acts as deploy/'s
// service account (an admin impersonating it), so that the controller has
// exactly deploy/rbac.yaml's rights.
func serviceAccountKubeconfig() (string, error) {
	user, err := env.AddUser(envtest.User{Name: "faults-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	kc, err := clientcmd.Load(data)
	if err != nil {
		return "", err
	}
	for _, a := range kc.AuthInfos {
		a.Impersonate = "system:serviceaccount:" + controllerNamespace + ":cuetrainer-controller"
		a.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + controllerNamespace, "system:authenticated"}
	}
	path := filepath.Join(logs, "kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}

// controllerProcess is `cuetrainer controller` as an OS process.
type controllerProcess struct {
	// name names its log file; cuetrainer when empty.
	name string
	bin  string
	args []string
	// extra are more flags, for the next start.
	extra         []string
	cmd           *exec.Cmd
	done          chan struct{}
	probe, metric string
	starts        int
}

// start starts the controller and waits until the API server gets answers
// from its webhooks.
func (c *controllerProcess) start(ctx context.Context) error {
	if err := c.spawn(); err != nil {
		return err
	}
	return c.waitAdmitting(ctx)
}

func (c *controllerProcess) spawn() error {
	name := c.name
	if name == "" {
		name = "cuetrainer"
	}
	out, err := os.OpenFile(filepath.Join(logs, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	c.starts++
	fmt.Fprintf(out, "\n=== start %d %s\n", c.starts, time.Now().Format(time.RFC3339Nano))
	c.probe, c.metric = testenv.FreeAddress(), testenv.FreeAddress()
	args := append(append([]string(nil), c.args...), "--health-probe-bind-address="+c.probe, "--metrics-bind-address="+c.metric)
	c.cmd = exec.Command(c.bin, append(args, c.extra...)...)
	c.cmd.Stdout, c.cmd.Stderr = out, out
	if err := c.cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("starting the controller: %w", err)
	}
	c.done = make(chan struct{})
	go func() {
		_ = c.cmd.Wait()
		out.Close()
		close(c.done)
	}()
	return nil
}

// running reports whether the process has not exited.
func (c *controllerProcess) running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// waitAdmitting waits for /readyz, then for a dry-run TrainJob create to
// pass the webhooks through the API server.
func (c *controllerProcess) waitAdmitting(ctx context.Context) error {
	deadline := time.Now().Add(90 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		if !c.running() {
			return fmt.Errorf("the controller exited: %v", c.cmd.ProcessState)
		}
		if last = c.ready(); last == nil {
			if last = dryRunRuntime(ctx); last == nil {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the controller never admitted: %v", last)
}

func (c *controllerProcess) ready() error {
	resp, err := http.Get("http://" + c.probe + "/readyz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz: %s", resp.Status)
	}
	return nil
}

// restart stops the process (SIGTERM) and starts it with extra flags.
func (c *controllerProcess) restart(ctx context.Context, extra ...string) error {
	c.stop()
	c.extra = extra
	return c.start(ctx)
}

// kill ends the process with SIGKILL: no cleanup, as a node loss or the
// OOM killer.
func (c *controllerProcess) kill() {
	if c.running() {
		_ = c.cmd.Process.Kill()
	}
	<-c.done
}

// stop ends the process with SIGTERM, as a rollout does.
func (c *controllerProcess) stop() {
	if c.running() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.kill()
	}
}

// dryRunRuntime sends a ClusterTrainingRuntime create through the API
// server, and its webhook, without storing it.
func dryRunRuntime(ctx context.Context) error {
	u, err := shippedRuntime("torch-distributed")
	if err != nil {
		return err
	}
	u.SetName("admission-probe") // never stored: a dry run
	return k8sClient.Create(ctx, u, client.DryRunAll)
}

// shippedRuntime reads a ClusterTrainingRuntime of deploy/runtimes.
func shippedRuntime(name string) (*unstructured.Unstructured, error) {
	data, err := os.ReadFile(filepath.Join(testenv.Root(), "deploy", "runtimes", name+".yaml"))
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, yaml.Unmarshal(data, &u.Object)
}

// trainJob is a TrainJob of a ClusterTrainingRuntime or, with kind, a
// TrainingRuntime.
func trainJob(ns, name, runtime string, nodes int, kind ...string) *unstructured.Unstructured {
	ref := map[string]any{"name": runtime}
	if len(kind) > 0 {
		ref["kind"] = kind[0]
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"runtimeRef": ref, "trainer": map[string]any{"numNodes": int64(nodes)}},
	}}
}

// maxNodesPolicy is a policy file that refuses TrainJobs of more than max
// nodes.
func maxNodesPolicy(max int) []byte {
	return fmt.Appendf(nil, `package schemas

admission: "trainer.kubeflow.org/v1alpha1": TrainJob: {
	object: _
	policy: maxNodes: [if object.spec.trainer.numNodes != _|_ if object.spec.trainer.numNodes > %d {
		path:   "spec.trainer.numNodes"
		type:   "Invalid value"
		value:  object.spec.trainer.numNodes
		detail: "this cluster runs at most %d nodes"
	}]
}
`, max, max)
}

func need(t *testing.T) {
	t.Helper()
	testenv.NeedProcesses(t, skipReason == "", skipReason, logs, 6000)
}
