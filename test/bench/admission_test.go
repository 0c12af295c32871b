package bench_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/cuetrainer/cuetrainer/controller"
	"github.com/cuetrainer/cuetrainer/controller/webhooks"
	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/testing/benchinput"
	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

// The load of BenchmarkAdmission: each rate for phaseDuration, after a
// warm-up; a request not answered within the webhooks' timeoutSeconds (10)
// is an error, as the API server would count it.
const (
	phaseDuration  = 5 * time.Second
	requestTimeout = 10 * time.Second
	// connections is how many keep-alive connections the generator may
	// open, as the API server's webhook client keeps a pool of them.
	connections = 64
)

var admissionRates = []int{100, 500, 1000}

// distinctRate is the rate of the load whose every request is distinct.
const distinctRate = 500

// BenchmarkAdmission measures admission latency over loopback HTTPS at
// fixed arrival rates (open loop: each request is sent at its scheduled
// time whatever the earlier ones are doing, and its latency counts from
// that time, so a server that falls behind is charged for the queue). Two
// servers run in one manager against envtest, with the controller's
// options (127.0.0.1, a self-signed certificate, HTTP/1.1 only): ours,
// registered by controller.Setup with the manager's own client (runtime
// lookups read the API server, as in a cluster), and the baseline, another
// webhook server on the same paths whose handler answers "allowed" without
// evaluating. The requests are real AdmissionReviews: for every shipped
// runtime (deploy/runtimes) three TrainJobs that use it and the runtime
// itself, to the validating and the mutating endpoints, the same reviews
// round robin but for their uids (admissionMix), each object with its
// CRD's defaults, as the API server sends it. Then at distinctRate the
// same mix with every request's object its own (distinctMix).
func BenchmarkAdmission(b *testing.B) {
	cfg, _ := controlPlane(b)
	policies, err := controller.NewPolicyReloader(engine.Options{}, 10*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	eng := policies.Engine()
	certDir, roots := selfSignedCert(b)
	serverOptions := func(port int) webhook.Options {
		return webhook.Options{Host: "127.0.0.1", Port: port, CertDir: certDir,
			TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}}
	}
	ourPort, basePort := freePort(b), freePort(b)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics:       metricsserver.Options{BindAddress: "0"},
		Client:        client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		WebhookServer: webhook.NewServer(serverOptions(ourPort)),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := controller.Setup(mgr, controller.Options{Engine: policies.Engine, Webhooks: true}); err != nil {
		b.Fatal(err)
	}
	base := webhook.NewServer(serverOptions(basePort))
	for _, k := range eng.Admitted() {
		for _, mutating := range []bool{false, true} {
			base.Register(webhooks.Path(mutating, k), &webhook.Admission{Handler: admission.HandlerFunc(
				func(context.Context, admission.Request) admission.Response { return admission.Allowed("") })})
		}
	}
	if err := mgr.Add(base); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()

	// Every review is made before the loads, with the defaults of an engine
	// of its own (not the server's: its memos would be warmed), which is
	// then dropped: the process the loads measure holds one engine, as a
	// controller's does.
	defaulter, err := engine.New(engine.Options{NoMemo: true})
	if err != nil {
		b.Fatal(err)
	}
	reviews := admissionMix(b, eng, defaulter)
	n := distinctRate * int(phaseDuration/time.Second)
	distinct := distinctMix(b, eng, defaulter, 0, n)
	distinctSample := distinctMix(b, eng, defaulter, n, 2*len(reviews))
	defaulter = nil
	runtime.GC()
	hc := &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12},
		MaxConnsPerHost:     connections,
		MaxIdleConnsPerHost: connections,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}}
	servers := []struct{ name, url string }{
		{"baseline", "https://127.0.0.1:" + strconv.Itoa(basePort)},
		{"ours", "https://127.0.0.1:" + strconv.Itoa(ourPort)},
	}
	for _, s := range servers {
		waitFor(b, 30*time.Second, s.name+" webhook server", func() error {
			conn, err := tls.Dial("tcp", s.url[len("https://"):], &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
			if err == nil {
				conn.Close()
			}
			return err
		})
		// Every review once, checked: ours admits them all (the mix is
		// of the success path), then a warm-up at the lowest rate.
		for _, r := range reviews {
			got := post(b, hc, s.url, r)
			if !got.Response.Allowed {
				b.Fatalf("%s: %s %s denied: %v", s.name, r.path, r.what, got.Response.Result)
			}
		}
		load(hc, s.url, reviews, admissionRates[0], 2*time.Second)
	}
	// One at a time, each review's service time (what the load divides
	// among the cores), by kind and endpoint: the median of 5.
	for _, s := range servers {
		b.Run("serial/"+s.name, func(b *testing.B) {
			serial := map[string][]time.Duration{}
			for i := 0; i < 5; i++ {
				for _, r := range reviews {
					start := time.Now()
					post(b, hc, s.url, r)
					key := strings.Fields(r.what)[0] + "-" + strings.TrimPrefix(r.path[:strings.Index(r.path, "-")], "/")
					serial[key] = append(serial[key], time.Since(start))
				}
			}
			for key, ds := range serial {
				slices.Sort(ds)
				b.ReportMetric(float64(ds[len(ds)/2])/float64(time.Millisecond), key+"-ms")
			}
		})
	}

	for _, rate := range admissionRates {
		for _, s := range servers {
			b.Run(fmt.Sprintf("rate=%d/%s", rate, s.name), func(b *testing.B) {
				runtime.GC()
				report(b, load(hc, s.url, reviews, rate, phaseDuration), len(reviews))
			})
			time.Sleep(500 * time.Millisecond)
		}
	}

	// Every request distinct, at the goal's rate only: the reviews of
	// distinctMix, each sent once to each server, so that nothing ours
	// keeps of one review serves another. A sample of others made alike
	// (their own objects, none of the load's) shows first that ours admits
	// them.
	for _, s := range servers {
		for _, r := range distinctSample {
			if got := post(b, hc, s.url, r); !got.Response.Allowed {
				b.Fatalf("%s: %s %s denied: %v", s.name, r.path, r.what, got.Response.Result)
			}
		}
	}
	for _, s := range servers {
		b.Run(fmt.Sprintf("distinct/rate=%d/%s", distinctRate, s.name), func(b *testing.B) {
			runtime.GC()
			report(b, load(hc, s.url, distinct, distinctRate, phaseDuration), len(distinct))
		})
		time.Sleep(500 * time.Millisecond)
	}
}

// report reports a load's latencies, its timeouts, the rate answered and
// how many different reviews it sent.
func report(b *testing.B, res loadResult, reviews int) {
	b.ReportMetric(res.percentile(0.50), "p50-ms")
	b.ReportMetric(res.percentile(0.90), "p90-ms")
	b.ReportMetric(res.percentile(0.99), "p99-ms")
	b.ReportMetric(res.percentile(1), "max-ms")
	b.ReportMetric(float64(res.errors), "errors")
	b.ReportMetric(float64(len(res.latency))/res.elapsed.Seconds(), "done-req/s")
	b.ReportMetric(float64(reviews), "reviews")
}

// review is one AdmissionReview body, with its uid left out: body[:at] +
// uid + body[at:].
type review struct {
	path, what string
	body       []byte
	at         int
}

const uidPlaceholder = "00000000-0000-4000-8000-000000000000"

// mixEntries lists the mix (benchinput.AdmissionMix).
func mixEntries(b *testing.B, e *engine.Engine) []benchinput.AdmissionEntry {
	b.Helper()
	runtimes, err := benchinput.ShippedRuntimes(testenv.Root())
	if err != nil {
		b.Fatal(err)
	}
	mutates := map[string]bool{}
	for _, k := range e.Admitted() {
		mutates[k.Kind] = e.Mutates(k)
	}
	return benchinput.AdmissionMix(runtimes, func(kind string) bool { return mutates[kind] })
}

// admissionMix builds the reviews of the mix (mixEntries): the same
// objects whenever the load comes round to them again.
func admissionMix(b *testing.B, e, defaulter *engine.Engine) []review {
	b.Helper()
	var out []review
	for _, m := range mixEntries(b, e) {
		out = append(out, encodeReview(b, defaulter, m.Object, m.Mutating))
	}
	return out
}

// distinctMix builds n reviews of which no two carry the same object, nor
// the same values of what the rules read: review k is the mix's review k
// (round robin, the same kinds and endpoints in the same proportions) with
// its object made the k-th of its own (benchinput.DistinctObject). from offsets k, so
// that a sample to check the reviews by shares nothing with the load's.
func distinctMix(b *testing.B, e, defaulter *engine.Engine, from, n int) []review {
	b.Helper()
	entries := mixEntries(b, e)
	out := make([]review, 0, n)
	for k := from; k < from+n; k++ {
		m := entries[k%len(entries)]
		out = append(out, encodeReview(b, defaulter, benchinput.DistinctObject(m.Object, k), m.Mutating))
	}
	return out
}

// apiServerDefaults is obj as an API server sends it to a webhook: with
// its CRD's defaults, applied when the request is read, before admission.
// They are the CUE's (test/integration TestGeneratedCRDs), so an engine of
// its own (not the server's: its memos would be warmed) gives them.
func apiServerDefaults(defaulter *engine.Engine, obj map[string]any) map[string]any {
	r := defaulter.NewSession(engine.SessionOptions{NoBuiltinRuntimes: true}).Admit(engine.Document{File: "bench", Object: obj})
	if r.Object == nil {
		return obj // refused by the schema: sent as it is
	}
	return r.Object
}

// encodeReview makes the AdmissionReview of obj's create, to the mutating
// or the validating endpoint, obj defaulted as the API server sends it
// (apiServerDefaults, with defaulter's CUE).
func encodeReview(b *testing.B, defaulter *engine.Engine, obj map[string]any, mutating bool) review {
	b.Helper()
	obj = apiServerDefaults(defaulter, obj)
	u := engine.Document{Object: obj}
	gv, _ := schema.ParseGroupVersion(u.APIVersion())
	raw, err := json.Marshal(obj)
	if err != nil {
		b.Fatal(err)
	}
	k := engine.Kind{APIVersion: u.APIVersion(), Kind: u.Kind()}
	ar := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:         uidPlaceholder,
			Kind:        metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: u.Kind()},
			Resource:    metav1.GroupVersionResource{Group: gv.Group, Version: gv.Version, Resource: plural(u.Kind())},
			RequestKind: &metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: u.Kind()},
			Name:        u.Name(), Namespace: u.Namespace(),
			Operation: admissionv1.Create,
			UserInfo:  authenticationv1.UserInfo{Username: "bench", Groups: []string{"system:authenticated"}},
			Object:    apiruntime.RawExtension{Raw: raw},
			Options:   apiruntime.RawExtension{Raw: []byte(`{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}`)},
		},
	}
	body, err := json.Marshal(ar)
	if err != nil {
		b.Fatal(err)
	}
	at := bytes.Index(body, []byte(uidPlaceholder))
	body = append(body[:at:at], body[at+len(uidPlaceholder):]...)
	return review{path: webhooks.Path(mutating, k), what: u.Kind() + " " + u.Name(), body: body, at: at}
}

func plural(kind string) string { return string(bytes.ToLower([]byte(kind))) + "s" }

var uidCounter atomic.Uint64

func (r review) withUID() []byte {
	uid := fmt.Sprintf("00000000-0000-4000-8000-%012x", uidCounter.Add(1))
	out := make([]byte, 0, len(r.body)+len(uid))
	out = append(out, r.body[:r.at]...)
	out = append(out, uid...)
	return append(out, r.body[r.at:]...)
}

// post sends one review and decodes the answer.
func post(b *testing.B, hc *http.Client, url string, r review) admissionv1.AdmissionReview {
	b.Helper()
	resp, err := hc.Post(url+r.path, "application/json", bytes.NewReader(r.withUID()))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("%s %s: %s: %s", r.path, r.what, resp.Status, data)
	}
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &ar); err != nil || ar.Response == nil {
		b.Fatalf("%s %s: not a review (%v): %s", r.path, r.what, err, data)
	}
	return ar
}

type loadResult struct {
	latency []time.Duration // sorted
	errors  int
	elapsed time.Duration // from the first scheduled send to the last answer
}

func (r loadResult) percentile(p float64) float64 {
	if len(r.latency) == 0 {
		return 0
	}
	i := int(p*float64(len(r.latency))+0.5) - 1
	i = max(0, min(i, len(r.latency)-1))
	return float64(r.latency[i]) / float64(time.Millisecond)
}

// load sends rate requests a second for d, round robin over the reviews,
// each at its scheduled time, from 127.0.0.1 to 127.0.0.1 only. It is
// bounded: rate×d requests, each given up after requestTimeout (counted as
// an error, with the time it waited), so it ends by itself within d +
// requestTimeout.
func load(hc *http.Client, url string, reviews []review, rate int, d time.Duration) loadResult {
	n := int(int64(rate) * int64(d) / int64(time.Second))
	interval := time.Second / time.Duration(rate)
	latency := make([]time.Duration, n)
	var errors atomic.Int64
	var wg sync.WaitGroup
	var last atomic.Int64
	start := time.Now()
	for i := 0; i < n; i++ {
		scheduled := start.Add(time.Duration(i) * interval)
		if wait := time.Until(scheduled); wait > 0 {
			time.Sleep(wait)
		}
		r := reviews[i%len(reviews)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithDeadline(context.Background(), scheduled.Add(requestTimeout))
			defer cancel()
			ok := false
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+r.path, bytes.NewReader(r.withUID()))
			if err == nil {
				req.Header.Set("Content-Type", "application/json")
				var resp *http.Response
				if resp, err = hc.Do(req); err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					ok = err == nil && resp.StatusCode == http.StatusOK
				}
			}
			now := time.Now()
			latency[i] = now.Sub(scheduled)
			if !ok {
				errors.Add(1)
			}
			for {
				l := last.Load()
				if int64(now.Sub(start)) <= l || last.CompareAndSwap(l, int64(now.Sub(start))) {
					break
				}
			}
		}()
	}
	wg.Wait()
	slices.Sort(latency)
	return loadResult{latency: latency, errors: int(errors.Load()), elapsed: time.Duration(last.Load())}
}

// selfSignedCert writes a CA-signed serving certificate for 127.0.0.1 into
// a directory as tls.crt and tls.key, and returns the directory and the CA.
func selfSignedCert(b *testing.B) (string, *x509.CertPool) {
	b.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		b.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		b.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return dir, pool
}
