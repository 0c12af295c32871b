// Package controller_test runs cuetrainer's admission webhooks and TrainJob
// controller against a real kube-apiserver and etcd: the API server calls
// the webhooks over TLS, and the controller applies to it.
package controller_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/controller"
	"github.com/cuetrainer/cuetrainer/controller/webhooks"
	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

// controllerNamespace is where the controller runs: the webhooks skip it.
const controllerNamespace = "cuetrainer-system"

var (
	cfg        *rest.Config
	k8sClient  client.Client
	skipReason string
	warnings   = &warningLog{}
	applied    *recordingClient
	policyDir  string
	policies   *controller.PolicyReloader
)

// recordingClient keeps the last body the controller applied for each
// object, so that the tests compare what it applies, not what the API
// server made of it (defaults, status).
type recordingClient struct {
	client.Client
	// crashed makes every apply fail, as if the process died between two
	// applies of a reconcile.
	crashed atomic.Bool
	mu      sync.Mutex
	objects map[string]map[string]any // namespace/kind/name
	// applies counts the applies by namespace/kind/name.
	applies map[string]int
	// statusPatches counts the status writes by namespace/name.
	statusPatches map[string]int
}

// Status records the status writes.
func (r *recordingClient) Status() client.SubResourceWriter {
	return recordingStatus{SubResourceWriter: r.inner().Status(), r: r}
}

type recordingStatus struct {
	client.SubResourceWriter
	r *recordingClient
}

func (s recordingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.r.mu.Lock()
	if s.r.statusPatches == nil {
		s.r.statusPatches = map[string]int{}
	}
	s.r.statusPatches[obj.GetNamespace()+"/"+obj.GetName()]++
	s.r.mu.Unlock()
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// statusWrites returns how many times the controller wrote the object's
// status.
func (r *recordingClient) statusWrites(namespace, name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statusPatches[namespace+"/"+name]
}

func (r *recordingClient) setClient(c client.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Client = c
}

func (r *recordingClient) inner() client.Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Client
}

func (r *recordingClient) Apply(ctx context.Context, obj apiruntime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if r.crashed.Load() {
		return fmt.Errorf("crashed")
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	u := unstructured.Unstructured{Object: m}
	r.mu.Lock()
	key := u.GetNamespace() + "/" + u.GetKind() + "/" + u.GetName()
	r.objects[key] = m
	if r.applies == nil {
		r.applies = map[string]int{}
	}
	r.applies[key]++
	r.mu.Unlock()
	return r.inner().Apply(ctx, obj, opts...)
}

// get returns the last body applied for the object, nil if none.
func (r *recordingClient) get(namespace, kind, name string) map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.objects[namespace+"/"+kind+"/"+name]
}

// applyCount returns how many times the controller applied the object.
func (r *recordingClient) applyCount(namespace, kind, name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.applies[namespace+"/"+kind+"/"+name]
}

func (r *recordingClient) forget(namespace, kind, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.objects, namespace+"/"+kind+"/"+name)
}

// warningLog keeps the API server's warnings (the webhooks' among them).
type warningLog struct {
	mu   sync.Mutex
	seen []string
}

func (w *warningLog) HandleWarningHeader(code int, agent string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warningLog) since(n int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen[n:]...)
}

func (w *warningLog) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen)
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	// The controller's policy directory, empty at start (a test adds a
	// framework to it).
	var err error
	if policyDir, err = os.MkdirTemp("", "cuetrainer-policies-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(policyDir)
	if policies, err = controller.NewPolicyReloader(engine.Options{PolicyDirs: []string{policyDir}}, 200*time.Millisecond); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// A reload of a directory that holds loadPanics panics in the load,
	// as a defect of cuetrainer's would (TestPolicyReloadPanics).
	policies.Load = func(o engine.Options) (*engine.Engine, error) {
		if _, err := os.Stat(filepath.Join(policyDir, loadPanics)); err == nil {
			panic("a defect of the load's")
		}
		return engine.New(o)
	}
	eng := policies.Engine()
	validating, mutating := webhooks.Configurations(eng, controllerNamespace, "cuetrainer-webhook")
	cp, exit := testenv.StartSuite(m, testenv.Options{
		CRDs: []string{"deploy/crds", "test/integration/testdata/crds"},
		Webhooks: envtest.WebhookInstallOptions{
			ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{validating},
			MutatingWebhooks:   []*admissionregistrationv1.MutatingWebhookConfiguration{mutating},
		},
	}, &skipReason)
	if cp == nil {
		return exit
	}
	defer cp.Stop()
	env, root := cp.Env, testenv.Root()
	testEnv, cfg = env, cp.Config
	userCfg := rest.CopyConfig(cfg)
	userCfg.WarningHandler = warnings
	if k8sClient, err = client.New(userCfg, client.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	// The controller runs as deploy/'s service account, with deploy/'s RBAC:
	// what it lacks fails the tests.
	if err := applyFiles(k8sClient, filepath.Join(root, "deploy", "namespace.yaml"), filepath.Join(root, "deploy", "rbac.yaml")); err != nil {
		fmt.Fprintln(os.Stderr, "applying deploy/ RBAC:", err)
		return 1
	}
	saCfg := rest.CopyConfig(cfg)
	saCfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + controllerNamespace + ":cuetrainer-controller",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + controllerNamespace, "system:authenticated"},
	}

	// Two managers, as two replicas would be: one serves the webhooks (and
	// keeps the policies), the other reconciles and can be stopped and
	// started again (TestControllerRestartDuringBurst).
	wo := &env.WebhookInstallOptions
	hooksCfg := rest.CopyConfig(saCfg)
	hooksCfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return countRuntimeGets{rt} }
	hooks, err := ctrl.NewManager(hooksCfg, ctrl.Options{
		Metrics:        metricsserver.Options{BindAddress: "0"},
		Client:         client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		WebhookServer:  webhook.NewServer(webhook.Options{Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir}),
		LeaderElection: false,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := controller.Setup(hooks, controller.Options{Engine: policies.Engine, Webhooks: true}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := hooks.Add(policies); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- hooks.Start(ctx) }()
	if err := waitForWebhook(ctx, wo); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	applied = &recordingClient{objects: map[string]map[string]any{}}
	controllerCfg = saCfg
	if stopController, err = startController(saCfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	stopController()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
	}
	return code
}

// runtimeGets counts the webhooks' manager's reads of one runtime from the
// API server (not its informers' lists and watches).
var runtimeGets atomic.Int64

var runtimeGetPath = regexp.MustCompile(`^/apis/trainer\.kubeflow\.org/v1alpha1/(namespaces/[^/]+/)?(trainingruntimes|clustertrainingruntimes)/[^/]+$`)

type countRuntimeGets struct{ http.RoundTripper }

func (c countRuntimeGets) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && runtimeGetPath.MatchString(req.URL.Path) {
		runtimeGets.Add(1)
	}
	return c.RoundTripper.RoundTrip(req)
}

var (
	testEnv        *envtest.Environment
	controllerCfg  *rest.Config
	stopController func()
)

// startController starts a manager that runs the TrainJob controller, and
// returns how to stop it (which waits until it has stopped).
func startController(cfg *rest.Config) (func(), error) {
	return startControllerWith(cfg, controller.Options{Engine: policies.Engine, Reconcile: true, Client: applied})
}

// startControllerWith starts a manager that runs the TrainJob controller
// set up with o, and the runnables, and returns how to stop it.
func startControllerWith(cfg *rest.Config, o controller.Options, runnables ...manager.Runnable) (func(), error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics:        metricsserver.Options{BindAddress: "0"},
		Client:         client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		LeaderElection: false,
		Controller:     config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	applied.setClient(mgr.GetClient())
	if err := controller.Setup(mgr, o); err != nil {
		return nil, err
	}
	for _, r := range runnables {
		if err := mgr.Add(r); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "controller manager:", err)
		}
	}, nil
}

// waitForWebhook waits until the webhook server answers TLS.
func waitForWebhook(ctx context.Context, wo *envtest.WebhookInstallOptions) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := dialTLS(wo)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the webhook server did not come up: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func need(t *testing.T) {
	t.Helper()
	testenv.Need(t, k8sClient != nil, skipReason)
}

func dialTLS(wo *envtest.WebhookInstallOptions) error {
	d := &net.Dialer{Timeout: time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", net.JoinHostPort(wo.LocalServingHost, strconv.Itoa(wo.LocalServingPort)), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a readiness probe of our own test server
	if err != nil {
		return err
	}
	return conn.Close()
}

// applyFiles creates the objects of YAML files (server-side apply).
func applyFiles(c client.Client, files ...string) error {
	return apply(c, nil, files...)
}

func apply(c client.Client, opts []client.ApplyOption, files ...string) error {
	return applyRenamed(c, opts, "", files...)
}

// applyRenamed applies the objects of files with a suffix on their names.
func applyRenamed(c client.Client, opts []client.ApplyOption, suffix string, files ...string) error {
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			u.SetName(u.GetName() + suffix)
			if err := c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u), append([]client.ApplyOption{client.FieldOwner("test"), client.ForceOwnership}, opts...)...); err != nil {
				return fmt.Errorf("%s: %s %s: %w", f, u.GetKind(), u.GetName(), err)
			}
		}
	}
	return nil
}
