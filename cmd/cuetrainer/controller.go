package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/cuetrainer/cuetrainer/controller"
	"github.com/cuetrainer/cuetrainer/controller/webhooks"
	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/serving"
)

type controllerOptions struct {
	globals
	kubeconfig, kubeContext string
	release                 string
	namespace               string
	service                 string
	certDir, certSecret     string
	selfSignedCerts         bool
	webhookPort             int
	metricsAddr, probeAddr  string
	metricsSecure           bool
	leaderElect             bool
	webhooks, reconcile     bool
	policyReload            time.Duration
	certValidity, certCheck time.Duration
	leaseDuration           time.Duration
	renewDeadline           time.Duration
	retryPeriod             time.Duration
	concurrency             int
	recycleAfter            int
	planCacheSize           int
}

func newControllerCmd() *cobra.Command {
	o := &controllerOptions{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the admission webhooks and the TrainJob controller in a cluster",
		Long: `controller serves the admission webhooks of every kind cuetrainer admits (the checks
of vet, with its warnings) and reconciles TrainJobs into the objects render prints,
applied with server-side apply. Its serving certificate is generated and rotated
(--self-signed-certs) or read from --cert-dir.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.globals.addEngineFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "the kubeconfig file (in a pod: the service account)")
	f.StringVar(&o.kubeContext, "context", "", "the kubeconfig context to use")
	f.StringVar(&o.release, "release", "", "the Kubeflow Trainer release the cluster is vetted for (vMAJOR.MINOR), for the deprecation windows")
	f.StringVar(&o.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the controller's namespace (the webhooks skip it); default $POD_NAMESPACE")
	f.StringVar(&o.service, "webhook-service", "cuetrainer-webhook", "the webhook Service, named in the serving certificate")
	f.StringVar(&o.certDir, "cert-dir", "/tmp/cuetrainer/serving-certs", "the directory of the serving certificate (tls.crt, tls.key)")
	f.StringVar(&o.certSecret, "cert-secret", "cuetrainer-webhook-certs", "the Secret that keeps the generated certificate")
	f.BoolVar(&o.selfSignedCerts, "self-signed-certs", true, "generate and rotate the serving certificate, and put its CA into the webhook configurations; false: read --cert-dir as mounted")
	f.DurationVar(&o.certValidity, "cert-validity", 365*24*time.Hour, "how long a generated certificate (and its CA) is valid; it is renewed when a third of that remains")
	f.DurationVar(&o.certCheck, "cert-check-interval", time.Hour, "how often the generated certificate is checked for renewal")
	f.IntVar(&o.webhookPort, "webhook-port", 9443, "the webhook server's port")
	f.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "where Prometheus metrics are served; 0 turns them off")
	f.BoolVar(&o.metricsSecure, "metrics-secure", true, "serve the metrics over HTTPS to clients the API server authenticates (a bearer token) and authorizes (get on the non-resource URL /metrics), as Kubeflow Trainer does; false: plain HTTP to anyone")
	f.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "where /healthz and /readyz are served")
	f.BoolVar(&o.leaderElect, "leader-elect", false, "elect one replica to reconcile (webhooks are served by all)")
	f.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a lease is held after its last renewal: a new leader waits that long after the old one dies")
	f.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew its lease (the API server unreachable, say) before it gives up and exits")
	f.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "how often the lease is tried")
	f.BoolVar(&o.webhooks, "webhooks", true, "serve the admission webhooks")
	f.BoolVar(&o.reconcile, "reconcile", true, "run the TrainJob controller")
	f.IntVar(&o.concurrency, "max-concurrent-reconciles", controller.DefaultConcurrency, "how many TrainJobs are reconciled at once (never the same one twice)")
	f.IntVar(&o.recycleAfter, "engine-recycle-after", engine.DefaultRecycleAfter, "how many evaluations one CUE runtime serves before the engine compiles a fresh one (what a runtime keeps per evaluation grows until then)")
	f.IntVar(&o.planCacheSize, "engine-plan-cache-size", engine.DefaultPlanCacheSize, "how many render plans (one per runtime's content) a CUE runtime keeps; a cluster of more runtimes plans some renders again")
	f.DurationVar(&o.policyReload, "policy-reload-interval", 10*time.Second, "how often the policy directories are checked for changes (a new version is loaded without a restart; one that does not load leaves the last good one in force)")
	return cmd
}

func (o *controllerOptions) run(cmd *cobra.Command) error {
	ctrl.SetLogger(zap.New(zap.WriteTo(cmd.ErrOrStderr())))
	ctx := ctrl.SetupSignalHandler()
	if o.namespace == "" {
		return usageError{errors.New("--namespace (or $POD_NAMESPACE) is required")}
	}
	if o.concurrency < 1 {
		return usageError{errors.New("--max-concurrent-reconciles must be at least 1")}
	}
	if o.recycleAfter < 1 || o.planCacheSize < 1 {
		return usageError{errors.New("--engine-recycle-after and --engine-plan-cache-size must be at least 1")}
	}
	if o.certValidity <= 0 || o.certCheck <= 0 {
		return usageError{errors.New("--cert-validity and --cert-check-interval must be positive")}
	}
	limit, err := setMemoryLimit(os.Getenv, debug.SetMemoryLimit)
	if err != nil {
		return usageError{err}
	}
	if limit > 0 {
		ctrl.Log.Info("memory limit for the collector", "bytes", limit)
	}
	if gc := tuneServerGC(os.Getenv, limit > 0, debug.SetGCPercent); gc > 0 {
		ctrl.Log.Info("collector's target under the memory limit", "GOGC", gc)
	}
	cfg, err := o.restConfig()
	if err != nil {
		return usageError{fmt.Errorf("kubeconfig: %w", err)}
	}
	start := time.Now()
	opts := o.options()
	opts.RecycleAfter, opts.PlanCacheSize = o.recycleAfter, o.planCacheSize
	policies, err := controller.NewPolicyReloader(opts, o.policyReload)
	if err != nil {
		return usageError{err}
	}
	// The webhooks and the controller serve the kinds of the policy in
	// force; with none (it did not load), those of the embedded CUE, closed
	// until the policy loads (docs/controller.md).
	eng := policies.Engine()
	if eng == nil {
		ctrl.Log.Error(policies.LastError(), "the policies do not load: admission is closed and the replica not ready until they do; the directories are read again every interval", "policyDirs", o.policyDirs, "interval", o.policyReload.String())
		embedded := opts
		embedded.PolicyDirs = nil
		if eng, err = engine.New(embedded); err != nil {
			return err
		}
	} else {
		ctrl.Log.Info("policies loaded", "policyDirs", o.policyDirs, "took", time.Since(start).String(), "warnings", len(eng.Warnings()))
	}

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics: o.metricsOptions(),
		// Lookups read unstructured objects: from the informers, not the API server.
		Client:                  client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "cuetrainer-controller.trainer.kubeflow.org",
		LeaderElectionNamespace: o.namespace,
		// The process ends when the manager does: hand the lease over at
		// once on SIGTERM (a rollout) rather than after it expires.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.leaseDuration,
		RenewDeadline:                 &o.renewDeadline,
		RetryPeriod:                   &o.retryPeriod,
		WebhookServer: webhook.NewServer(webhook.Options{
			Port:    o.webhookPort,
			CertDir: o.certDir,
			// HTTP/2 off (CVE-2023-44487, CVE-2023-39325), as kubebuilder's
			// projects do.
			TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }},
		}),
	})
	if err != nil {
		return err
	}
	policies.Recorder, policies.Pod = mgr.GetEventRecorder("policies"), controller.OwnPod(os.Getenv("POD_NAME"), o.namespace)
	policies.LogWarnings(ctx)
	if err := controller.Setup(mgr, controller.Options{Engine: policies.Engine, Closed: policies.Closed, Registered: eng, Release: o.release, Webhooks: o.webhooks, Reconcile: o.reconcile, Concurrency: o.concurrency}); err != nil {
		return err
	}
	if len(o.policyDirs) > 0 {
		if err := mgr.Add(policies); err != nil {
			return err
		}
	}

	var certsReady func() bool = func() bool { return true }
	if o.webhooks && o.selfSignedCerts {
		live, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
		if err != nil {
			return err
		}
		v, m := webhooks.Configurations(eng, o.namespace, o.service)
		rot := &serving.CertRotator{Client: live, Namespace: o.namespace, Secret: o.certSecret, Service: o.service, CertDir: o.certDir, Validating: v.Name, Mutating: m.Name,
			Validity: o.certValidity, Check: o.certCheck}
		// The certificate first, so that the webhook server starts with it.
		if err := rot.Ensure(ctx); err != nil {
			return err
		}
		if err := mgr.Add(rot); err != nil {
			return err
		}
		certsReady = rot.Ready
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	ready := func(req *http.Request) error {
		if !certsReady() {
			return errors.New("no serving certificate yet")
		}
		if o.webhooks {
			return mgr.GetWebhookServer().StartedChecker()(req)
		}
		return nil
	}
	if err := mgr.AddReadyzCheck("webhooks", ready); err != nil {
		return err
	}
	// Not ready while no policy is in force: a rollout of a policy that
	// does not load stops at its first replica.
	if err := mgr.AddReadyzCheck("policy", policies.Ready); err != nil {
		return err
	}
	ctrl.Log.Info("starting", "webhooks", o.webhooks, "reconcile", o.reconcile, "setup", time.Since(start).String())
	return mgr.Start(ctx)
}

// restConfig reads the kubeconfig. Client-side rate limiting is off, as
// controller-runtime's own loader leaves it, and the API server's priority
// and fairness decides: client-go's default of 5 requests a second held a
// burst of TrainJobs to about one reconcile a second.
func (o *controllerOptions) restConfig() (*rest.Config, error) {
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	loading.ExplicitPath = o.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, &clientcmd.ConfigOverrides{CurrentContext: o.kubeContext}).ClientConfig()
	if err != nil {
		return nil, err
	}
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS = -1
	}
	return cfg, nil
}

// memoryLimitEnv holds the container's memory limit in bytes (deploy/
// passes it from the downward API).
const memoryLimitEnv = "CUETRAINER_MEMORY_LIMIT"

// setMemoryLimit gives the Go runtime the soft memory limit of
// serving.MemoryLimit for the container's ($CUETRAINER_MEMORY_LIMIT):
// the informers' caches grow with the cluster. GOMEMLIMIT, when set, wins.
// It returns the limit it set, 0 for none.
func setMemoryLimit(getenv func(string) string, set func(int64) int64) (int64, error) {
	v := getenv(memoryLimitEnv)
	if v == "" || getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("$%s=%q: want the container's memory limit in bytes", memoryLimitEnv, v)
	}
	limit := serving.MemoryLimit(n)
	set(limit)
	return limit, nil
}

// tuneServerGC sets the collector's target to serving.GCPercent when a
// soft memory limit is in force (limited: $CUETRAINER_MEMORY_LIMIT set it;
// or GOMEMLIMIT) and GOGC does not set the target itself. It returns the
// target it set, 0 when it left the runtime's alone: without a limit the
// default keeps the heap at twice what is live.
func tuneServerGC(getenv func(string) string, limited bool, set func(int) int) int {
	if getenv("GOGC") != "" {
		return 0
	}
	if m := getenv("GOMEMLIMIT"); !limited && (m == "" || m == "off") {
		return 0
	}
	set(serving.GCPercent)
	return serving.GCPercent
}

// metricsOptions serves the metrics as kubebuilder's projects and Kubeflow
// Trainer do: over HTTPS (a self-signed certificate), to a caller the API
// server authenticates with a TokenReview and authorizes with a
// SubjectAccessReview (get on /metrics): serving.MetricsAuth.
func (o *controllerOptions) metricsOptions() metricsserver.Options {
	opts := metricsserver.Options{BindAddress: o.metricsAddr}
	if o.metricsSecure {
		opts.SecureServing = true
		opts.FilterProvider = serving.MetricsAuth
		// HTTP/2 off, as for the webhooks.
		opts.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	return opts
}
