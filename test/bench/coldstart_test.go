package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cuetrainer/cuetrainer/controller/webhooks"
	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

const (
	coldStarts          = 5
	controllerNamespace = "cuetrainer-system"
	certSecret          = "cuetrainer-webhook-certs"
)

// BenchmarkColdStart measures the `cuetrainer controller` binary (built
// first, as `make build` does) from its start to /readyz answering 200
// against envtest: the engine loaded with its policies, the serving
// certificate generated (its Secret is deleted before each start) and
// written, the CA put into the webhook configurations, and the webhook
// server serving. It reports the median and the slowest of coldStarts
// starts, and the engine's load time as the controller logs it.
func BenchmarkColdStart(b *testing.B) {
	_, c := controlPlane(b)
	dir := b.TempDir()
	bin := filepath.Join(dir, "cuetrainer")
	build := exec.Command("go", "build", "-o", bin, "./cmd/cuetrainer")
	build.Dir = testenv.Root()
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	kubeconfig, err := env.AdminKubeconfig("bench-controller", dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: controllerNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	// The webhook configurations the rotator puts its CA into, removed
	// again after: they name a Service envtest cannot reach, and the other
	// benchmarks create TrainJobs.
	eng, err := engine.New(engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	v, m := webhooks.Configurations(eng, controllerNamespace, "cuetrainer-webhook")
	for _, o := range []client.Object{v, m} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatal(err)
		}
		defer func() {
			if err := c.Delete(ctx, o); err != nil {
				b.Error(err)
			}
		}()
	}

	var ready, loaded []float64
	for i := 0; i < coldStarts; i++ {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: certSecret}}
		if err := c.Delete(ctx, secret); err != nil && !apierrors.IsNotFound(err) {
			b.Fatal(err)
		}
		took, policies := coldStart(b, bin, kubeconfig, filepath.Join(dir, "certs-"+strconv.Itoa(i)))
		ready = append(ready, took.Seconds())
		loaded = append(loaded, policies.Seconds())
	}
	slices.Sort(ready)
	slices.Sort(loaded)
	b.ReportMetric(ready[len(ready)/2], "ready-s")
	b.ReportMetric(ready[len(ready)-1], "ready-max-s")
	b.ReportMetric(loaded[len(loaded)/2], "policies-s")
}

// coldStart starts the controller, waits for /readyz, stops it (SIGTERM,
// killed if it has not stopped in ten seconds) and returns the time to
// ready and the time it logged for loading the policies.
func coldStart(b *testing.B, bin, kubeconfig, certDir string) (ready, policies time.Duration) {
	b.Helper()
	probe := "127.0.0.1:" + strconv.Itoa(freePort(b))
	cmd := exec.Command(bin, "controller", "--kubeconfig", kubeconfig, "--namespace", controllerNamespace,
		"--cert-dir", certDir, "--cert-secret", certSecret, "--webhook-port", strconv.Itoa(freePort(b)),
		"--metrics-bind-address", "0", "--health-probe-bind-address", probe)
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	hc := &http.Client{Timeout: time.Second}
	for {
		select {
		case err := <-exited:
			b.Fatalf("the controller exited before it was ready: %v\n%s", err, logs.String())
		default:
		}
		if resp, err := hc.Get("http://" + probe + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ready = time.Since(start)
				break
			}
		}
		if time.Since(start) > 30*time.Second {
			stop()
			b.Fatalf("the controller was not ready within 30s:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	sc := bufio.NewScanner(bytes.NewReader(logs.Bytes()))
	for sc.Scan() {
		var line struct{ Msg, Took string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "policies loaded" {
			policies, _ = time.ParseDuration(line.Took)
		}
	}
	return ready, policies
}

// syncBuffer is a bytes.Buffer the process's output can be written to while
// it is read.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.buf.Bytes()...)
}

func (s *syncBuffer) String() string { return string(s.Bytes()) }
