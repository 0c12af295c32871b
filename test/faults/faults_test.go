package faults

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

const burstSize = 60

// mpiRuntime makes the shipped DeepSpeed runtime a TrainingRuntime of ns.
func mpiRuntime(t *testing.T, ns string) {
	t.Helper()
	rt, err := shippedRuntime("deepspeed-distributed")
	if err != nil {
		t.Fatal(err)
	}
	rt.SetKind("TrainingRuntime")
	rt.SetNamespace(ns)
	rt.SetName("mpi")
	if err := k8sClient.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
}

// midBurst waits until a quarter of the burst's TrainJobs have their
// JobSet, for the fault to strike, and returns how many have.
func midBurst(t *testing.T, ns string) int {
	t.Helper()
	var c int
	eventually(t, 2*time.Minute, "a quarter of the JobSets", func() error {
		if c = count(t, ns, "JobSet"); c < burstSize/4 {
			return fmt.Errorf("%d JobSets", c)
		}
		return nil
	})
	return c
}

// TestControllerKilledMidBurst: the controller process gets SIGKILL while
// a burst of MPI TrainJobs is being created and reconciled, and is started
// again. While it is down, creates are refused (the webhooks are down,
// failurePolicy Fail) and retried. Every TrainJob ends with exactly its
// objects, and nothing made before the kill is made again.
func TestControllerKilledMidBurst(t *testing.T) {
	need(t)
	ctx := context.Background()
	ns := namespace(t, "kill")
	mpiRuntime(t, ns)
	start := time.Now()
	b := startBurst(ns, "mpi", "TrainingRuntime", burstSize)
	midBurst(t, ns)
	cuetrain.kill()
	done := count(t, ns, "JobSet")
	before, err := takeInventory(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed after %s: %d TrainJobs created, %d JobSets", time.Since(start).Round(time.Millisecond), len(before.trainJobs), done)
	if done == 0 || done >= burstSize {
		t.Fatalf("the kill was not mid-burst: %d of %d JobSets", done, burstSize)
	}
	time.Sleep(time.Second) // creates meet the webhooks down
	down := time.Now()
	if err := cuetrain.start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("admitting again %s after the restart", time.Since(down).Round(time.Millisecond))
	b.wait(t)
	after := converge(t, ns, b.names, mpiObjects)
	kept := keptFrom(t, before, after)
	t.Logf("converged %s after the start: %d creates refused while down, %d objects from before the kill kept their uid",
		time.Since(start).Round(time.Millisecond), b.refused.Load(), kept)
	if b.refused.Load() == 0 && b.created.Load() > int64(len(before.trainJobs)) {
		t.Error("no create was refused while the webhooks were down")
	}
}

// TestAPIServerRestartMidBurst: the kube-apiserver process is killed in
// the middle of a burst (etcd keeps running) and starts again on the same
// port with the same certificates. The controller, a separate process, carries
// on by itself (it is not restarted), and every TrainJob converges.
func TestAPIServerRestartMidBurst(t *testing.T) {
	need(t)
	ctx := context.Background()
	ns := namespace(t, "apiserver")
	mpiRuntime(t, ns)
	// The leader keeps trying to renew its lease for 30 s, more than this
	// restart takes under load. With the default 10 s an outage longer than
	// that makes it exit (leader election lost), and the kubelet starts it
	// again.
	if err := cuetrain.restart(ctx, "--leader-elect-lease-duration=40s", "--leader-elect-renew-deadline=30s"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cuetrain.restart(ctx); err != nil {
			t.Error(err)
		}
	})
	starts := cuetrain.starts
	start := time.Now()
	b := startBurst(ns, "mpi", "TrainingRuntime", burstSize)
	done := midBurst(t, ns)
	created := b.created.Load()
	api := env.ControlPlane.GetAPIServer()
	port := api.SecureServing.Port
	stopped := time.Now()
	// SIGKILL, as a crash: its graceful shutdown waits for requests in
	// flight, at times longer than envtest waits (20 s).
	killAPIServer(t, api.CertDir)
	if err := api.Stop(); err != nil { // reaps it
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := api.Start(); err != nil {
		t.Fatalf("starting the API server again: %v", err)
	}
	if api.SecureServing.Port != port {
		t.Fatalf("the API server came back on port %s, not %s", api.SecureServing.Port, port)
	}
	t.Logf("API server down %s, %s into the burst: %d TrainJobs created, %d JobSets or more", time.Since(stopped).Round(time.Millisecond), stopped.Sub(start).Round(time.Millisecond), created, done)
	if done >= burstSize {
		t.Fatalf("the restart was not mid-burst: %d of %d JobSets", done, burstSize)
	}
	b.wait(t)
	inv := converge(t, ns, b.names, mpiObjects)
	if !cuetrain.running() || cuetrain.starts != starts {
		t.Error("the controller process did not survive the API server's restart")
	}
	t.Logf("converged %s after the start: %d TrainJobs, %d objects; %d creates found no API server, %d met a server error, %d refused",
		time.Since(start).Round(time.Millisecond), len(inv.trainJobs), len(inv.objects), b.unreachable.Load(), b.serverErrors.Load(), b.refused.Load())
	// The controller still admits and reconciles after it.
	if err := k8sClient.Create(ctx, trainJob(ns, "after", "mpi", 2, "TrainingRuntime")); err != nil {
		t.Fatal(err)
	}
	converge(t, ns, append(b.names, "after"), mpiObjects)
}

// killAPIServer sends SIGKILL to the kube-apiserver whose certificates are
// in dir.
func killAPIServer(t *testing.T, dir string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(cmdline, []byte("kube-apiserver")) || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("no kube-apiserver process found")
}

// TestWebhookServerDown: the shipped webhooks are failurePolicy Fail. With
// the webhook server down, the API server refuses every create and update
// they match ("failed calling webhook") and stores nothing; deletes are not
// sent to them and go through. Once it is back, the same create is
// admitted and reconciled.
func TestWebhookServerDown(t *testing.T) {
	need(t)
	ctx := context.Background()
	ns := namespace(t, "down")
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: "cuetrainer-validator"}, v); err != nil {
		t.Fatal(err)
	}
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: "cuetrainer-defaulter"}, m); err != nil {
		t.Fatal(err)
	}
	for _, w := range v.Webhooks {
		if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Fail {
			t.Errorf("%s: failurePolicy %v, the test expects Fail", w.Name, w.FailurePolicy)
		}
	}
	for _, w := range m.Webhooks {
		if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Fail {
			t.Errorf("%s: failurePolicy %v, the test expects Fail", w.Name, w.FailurePolicy)
		}
	}
	if err := k8sClient.Create(ctx, trainJob(ns, "before", "torch-distributed", 2)); err != nil {
		t.Fatal(err)
	}
	// No garbage collector runs here: the TrainJob deleted while down has
	// a namespace of its own, where its objects stay.
	doomedNS := namespace(t, "down-deleted")
	doomed := trainJob(doomedNS, "doomed", "torch-distributed", 2)
	if err := k8sClient.Create(ctx, doomed); err != nil {
		t.Fatal(err)
	}

	cuetrain.stop()
	err := k8sClient.Create(ctx, trainJob(ns, "while-down", "torch-distributed", 2))
	if !isWebhookUnreachable(err) {
		t.Fatalf("a create with the webhook server down: %#v, want the API server's \"failed calling webhook\"", err)
	}
	t.Logf("create while down: %v", err)
	got := &unstructured.Unstructured{}
	got.SetAPIVersion("trainer.kubeflow.org/v1alpha1")
	got.SetKind("TrainJob")
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "while-down"}, got); !apierrors.IsNotFound(err) {
		t.Errorf("the refused TrainJob: %v, want NotFound", err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "before"}, got); err != nil {
		t.Fatal(err)
	}
	got.SetLabels(map[string]string{"touched": "while-down"})
	if err := k8sClient.Update(ctx, got); !isWebhookUnreachable(err) {
		t.Errorf("an update with the webhook server down: %v, want refused", err)
	}
	rt, err := shippedRuntime("torch-distributed")
	if err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Create(ctx, rt, client.DryRunAll); !isWebhookUnreachable(err) {
		t.Errorf("a ClusterTrainingRuntime create with the webhook server down: %v, want refused", err)
	}
	if err := k8sClient.Delete(ctx, doomed); err != nil {
		t.Errorf("a delete with the webhook server down: %v", err)
	}

	if err := cuetrain.start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Create(ctx, trainJob(ns, "while-down", "torch-distributed", 2)); err != nil {
		t.Fatalf("the same create once the webhook server is back: %v", err)
	}
	converge(t, ns, []string{"before", "while-down"}, torchObjects)
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "before"}, got); err != nil {
		t.Fatal(err)
	}
	if got.GetLabels()["touched"] != "" {
		t.Error("the refused update was stored")
	}
}

// TestCertificateRotationKeepsAdmitting: two replicas share a 15 s
// certificate; one checks it every 250 ms and renews it twice (each renewal
// a new CA), the other every 3 s, so it serves the old certificate for a
// while after each renewal. Admission requests go through the API server,
// to both, without pause: none fails (the caBundle trusts the old CA and
// the new), and the webhook server ends up serving the Secret's
// certificate.
func TestCertificateRotationKeepsAdmitting(t *testing.T) {
	need(t)
	ctx := context.Background()
	ns := namespace(t, "certs")
	restart := func(extra ...string) {
		t.Helper()
		// A new Secret: the running one was made for another validity.
		s := &corev1.Secret{}
		s.SetNamespace(controllerNamespace)
		s.SetName("cuetrainer-webhook-certs")
		if err := k8sClient.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		if err := cuetrain.restart(ctx, extra...); err != nil {
			t.Fatal(err)
		}
	}
	restart("--cert-validity=15s", "--cert-check-interval=250ms")
	t.Cleanup(func() { restart() })

	// A second replica, as the Deployment runs, checks every 3 s: after a
	// renewal it serves the old certificate for up to 3 s, and the API
	// server sends it a share of the requests.
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	replica := &controllerProcess{name: "cuetrainer-replica", bin: cuetrain.bin, args: withFlags(cuetrain.args,
		"--webhook-port="+strconv.Itoa(port), "--cert-dir="+filepath.Join(logs, "serving-certs-replica"),
		"--cert-validity=15s", "--cert-check-interval=3s")}
	if err := replica.spawn(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(replica.stop)
	eventually(t, time.Minute, "the replica ready", replica.ready)
	slice := endpointSlice("replica", port)
	if err := k8sClient.Create(ctx, slice); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, slice) })

	caOf := func() []byte {
		s := &corev1.Secret{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: controllerNamespace, Name: "cuetrainer-webhook-certs"}, s); err != nil {
			return nil
		}
		return s.Data["ca.crt"]
	}
	var ok, failed atomic.Int64
	var mu sync.Mutex
	var failures []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				err := k8sClient.Create(ctx, trainJob(ns, fmt.Sprintf("probe-%d-%d", w, i), "torch-distributed", 2), client.DryRunAll)
				if err != nil {
					failed.Add(1)
					mu.Lock()
					failures = append(failures, time.Now().Format("15:04:05.000")+" "+err.Error())
					mu.Unlock()
					continue
				}
				ok.Add(1)
			}
		}()
	}
	first := caOf()
	cas := [][]byte{first}
	began := time.Now()
	eventually(t, 90*time.Second, "two renewals", func() error {
		if ca := caOf(); ca != nil && !bytes.Equal(ca, cas[len(cas)-1]) {
			cas = append(cas, ca)
			t.Logf("renewed %s in", time.Since(began).Round(time.Millisecond))
		}
		if len(cas) < 3 {
			return fmt.Errorf("%d renewals", len(cas)-1)
		}
		return nil
	})
	// The server serves the certificate of the Secret, and the API server
	// trusts it.
	eventually(t, 30*time.Second, "the renewed certificate served", func() error {
		return servesSecretCert(ctx)
	})
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	t.Logf("%d admission requests through two renewals, %d failed", ok.Load(), failed.Load())
	for i, f := range failures {
		if i == 10 {
			t.Errorf("and %d more", len(failures)-10)
			break
		}
		t.Errorf("failed during rotation: %s", f)
	}
	if ok.Load() < 20 {
		t.Errorf("only %d admission requests went through", ok.Load())
	}
	for _, c := range []*controllerProcess{cuetrain, replica} {
		if n := webhookRequests(t, c); n == 0 {
			t.Errorf("%s served no admission request", c.metric)
		} else {
			t.Logf("%s (%s) served %v admission requests", c.name, c.metric, n)
		}
	}
}

// withFlags is args with flags in the place of those of the same name.
func withFlags(args []string, flags ...string) []string {
	out := append([]string(nil), args...)
	for _, f := range flags {
		name, _, _ := strings.Cut(f, "=")
		replaced := false
		for i, a := range out {
			if strings.HasPrefix(a, name+"=") {
				out[i], replaced = f, true
			}
		}
		if !replaced {
			out = append(out, f)
		}
	}
	return out
}

// webhookRequests is how many admission requests a controller answered
// (controller-runtime's controller_runtime_webhook_requests_total).
func webhookRequests(t *testing.T, c *controllerProcess) float64 {
	t.Helper()
	body := scrape(t, c)
	total := 0.0
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "controller_runtime_webhook_requests_total{") {
			f := strings.Fields(sc.Text())
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			total += v
		}
	}
	return total
}

// servesSecretCert checks that the webhook server's certificate is the
// Secret's tls.crt.
func servesSecretCert(ctx context.Context) error {
	s := &corev1.Secret{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: controllerNamespace, Name: "cuetrainer-webhook-certs"}, s); err != nil {
		return err
	}
	block, _ := pem.Decode(s.Data["tls.crt"])
	if block == nil {
		return fmt.Errorf("no tls.crt in the Secret")
	}
	port := ""
	for _, a := range cuetrain.args {
		if p, ok := strings.CutPrefix(a, "--webhook-port="); ok {
			port = p
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.Data["ca.crt"])
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", net.JoinHostPort(hostIP, port),
		&tls.Config{ServerName: webhookService + "." + controllerNamespace + ".svc", RootCAs: pool})
	if err != nil {
		return err
	}
	defer conn.Close()
	if !bytes.Equal(conn.ConnectionState().PeerCertificates[0].Raw, block.Bytes) {
		return fmt.Errorf("the server serves another certificate than the Secret's")
	}
	return nil
}

// TestBrokenPolicyConfigMap: the policy directory, a mounted ConfigMap,
// gets a file that does not compile while the controller runs: the error is
// logged with the file and counted, the last good policy stays in force
// (its refusal still given, TrainJobs still admitted and rendered), and the
// fixed version is loaded. A controller that starts while the ConfigMap is
// broken stays up with admission closed (saying why, naming the file) and
// not ready, and opens once the ConfigMap is fixed, with no restart.
func TestBrokenPolicyConfigMap(t *testing.T) {
	need(t)
	ctx := context.Background()
	ns := namespace(t, "policy")
	refusedBy := func(nodes int, detail string) {
		t.Helper()
		err := k8sClient.Create(ctx, trainJob(ns, fmt.Sprintf("nodes-%d", nodes), "torch-distributed", nodes), client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), detail) {
			t.Errorf("a TrainJob of %d nodes: %v, want refused: %s", nodes, err, detail)
		}
	}
	refusedBy(9, "this cluster runs at most 8 nodes")
	failed, loaded := policyReloads(t)

	broken := []byte("package schemas\n\nfoo: {\n")
	if err := testenv.Publish(policyDir, 2, map[string][]byte{"nodes.cue": maxNodesPolicy(8), "broken.cue": broken}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the broken policy counted", func() error {
		if f, _ := policyReloads(t); f != failed+1 {
			return fmt.Errorf("cuetrainer_policy_reloads_total{result=\"failed\"} %v, want %v", f, failed+1)
		}
		return nil
	})
	if line := logLine("the last good ones stay in force"); !strings.Contains(line, "broken.cue") {
		t.Errorf("the log does not name the broken file: %q", line)
	}
	refusedBy(9, "this cluster runs at most 8 nodes")
	if err := k8sClient.Create(ctx, trainJob(ns, "while-broken", "torch-distributed", 2)); err != nil {
		t.Fatalf("a TrainJob under the last good policy: %v", err)
	}
	converge(t, ns, []string{"while-broken"}, torchObjects)

	if err := testenv.Publish(policyDir, 3, map[string][]byte{"nodes.cue": maxNodesPolicy(4)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the fixed policy loaded", func() error {
		if _, l := policyReloads(t); l != loaded+1 {
			return fmt.Errorf("cuetrainer_policy_reloads_total{result=\"loaded\"} %v, want %v", l, loaded+1)
		}
		return nil
	})
	refusedBy(6, "this cluster runs at most 4 nodes")

	startsBefore := cuetrain.starts
	// A controller (re)started while the ConfigMap is broken has no last
	// good policy: it stays up with admission closed, not ready, creating
	// nothing, and opens once the ConfigMap is fixed, with no restart
	// (docs/controller.md).
	if err := testenv.Publish(policyDir, 4, map[string][]byte{"nodes.cue": maxNodesPolicy(4), "broken.cue": broken}); err != nil {
		t.Fatal(err)
	}
	cuetrain.stop()
	if err := cuetrain.spawn(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "a create refused as admission is closed", func() error {
		if !cuetrain.running() {
			return fmt.Errorf("the controller exited: %v", cuetrain.cmd.ProcessState)
		}
		err := k8sClient.Create(ctx, trainJob(ns, "while-closed", "torch-distributed", 2), client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "admission is closed until it does") || !strings.Contains(err.Error(), "broken.cue") {
			return fmt.Errorf("a TrainJob with no policy in force: %v", err)
		}
		return nil
	})
	if err := cuetrain.ready(); err == nil {
		t.Error("the controller is ready with no policy in force")
	}
	if got := metric(t, cuetrain, "cuetrainer_policy_in_force"); got != 0 {
		t.Errorf("cuetrainer_policy_in_force %v, want 0", got)
	}
	if line := logLine("admission is closed"); !strings.Contains(line, "broken.cue") {
		t.Errorf("the log does not say admission is closed, naming broken.cue: %q", line)
	}
	if err := testenv.Publish(policyDir, 5, map[string][]byte{"nodes.cue": maxNodesPolicy(8)}); err != nil {
		t.Fatal(err)
	}
	if err := cuetrain.waitAdmitting(ctx); err != nil {
		t.Fatal(err)
	}
	if cuetrain.starts != startsBefore+1 {
		t.Errorf("the controller started %d times, want once: it opens without a restart", cuetrain.starts-startsBefore)
	}
	if got := metric(t, cuetrain, "cuetrainer_policy_in_force"); got != 1 {
		t.Errorf("cuetrainer_policy_in_force %v, want 1", got)
	}
	refusedBy(9, "this cluster runs at most 8 nodes")
	if err := k8sClient.Create(ctx, trainJob(ns, "after-closed", "torch-distributed", 2)); err != nil {
		t.Fatal(err)
	}
	converge(t, ns, []string{"while-broken", "after-closed"}, torchObjects)
}

// metric reads one unlabelled metric of a controller's.
func metric(t *testing.T, c *controllerProcess, name string) float64 {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(scrape(t, c)))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return v
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// scrape reads a controller's metrics as Prometheus would: over HTTPS, with
// the token of a service account bound to deploy/'s
// cuetrainer-metrics-reader (the controller serves no one else).
func scrape(t *testing.T, c *controllerProcess) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://"+c.metric+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+scraperToken)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the controller's self-signed metrics certificate
	// A controller a test just restarted answers /readyz a moment before
	// its metrics server listens (both are the manager's runnables).
	var resp *http.Response
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if resp, err = hc.Do(req); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scraping %s: %s: %s", c.metric, resp.Status, body)
	}
	return body
}

// policyReloads scrapes the controller's cuetrainer_policy_reloads_total.
func policyReloads(t *testing.T) (failed, loaded float64) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(scrape(t, cuetrain)))
	for sc.Scan() {
		for label, v := range map[string]*float64{`result="failed"`: &failed, `result="loaded"`: &loaded} {
			if rest, ok := strings.CutPrefix(sc.Text(), "cuetrainer_policy_reloads_total{"+label+"} "); ok {
				*v, _ = strconv.ParseFloat(rest, 64)
			}
		}
	}
	return failed, loaded
}

// logLine is the last line of the controller's log that holds s.
func logLine(s string) string {
	data, _ := os.ReadFile(filepath.Join(logs, "cuetrainer.log"))
	lines := strings.Split(string(data), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return lines[i]
		}
	}
	return ""
}
