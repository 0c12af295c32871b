package controller_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cuetrainer/cuetrainer/internal/serving"
)

// TestCertRotator: the rotator makes a certificate for the Service, shares
// it through the Secret (a second replica reuses it), writes it for the
// webhook server, puts the CA into the webhook configuration, and renews it
// when a third of its life remains.
func TestCertRotator(t *testing.T) {
	need(t)
	ctx := context.Background()
	ns := namespace(t, "certs")
	path := "/nowhere"
	none := admissionregistrationv1.SideEffectClassNone
	ignore := admissionregistrationv1.Ignore
	cfgName := "rotator-test"
	if err := k8sClient.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: cfgName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "nothing.cuetrainer.dev", SideEffects: &none, FailurePolicy: &ignore, AdmissionReviewVersions: []string{"v1"},
			ClientConfig:      admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "hook", Path: &path}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"no-namespace-has": "this"}},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	rotator := func(dir string) *serving.CertRotator {
		return &serving.CertRotator{Client: k8sClient, Namespace: ns, Secret: "hook-certs", Service: "hook", CertDir: dir,
			Validating: cfgName, Validity: 90 * 24 * time.Hour, Now: func() time.Time { return now }}
	}
	a, b := rotator(t.TempDir()), rotator(t.TempDir())
	if err := a.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if !a.Ready() {
		t.Error("not ready after Ensure")
	}
	if err := b.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	first := readCert(t, a.CertDir)
	if !bytes.Equal(first, readCert(t, b.CertDir)) {
		t.Error("two replicas hold different certificates")
	}

	s := &corev1.Secret{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hook-certs"}, s); err != nil {
		t.Fatal(err)
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: cfgName}, v); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v.Webhooks[0].ClientConfig.CABundle, s.Data["ca.crt"]) {
		t.Error("the webhook configuration does not hold the CA")
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(a.CertDir, "tls.crt"), filepath.Join(a.CertDir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.Data["ca.crt"])
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "hook." + ns + ".svc", Roots: pool, CurrentTime: now}); err != nil {
		t.Errorf("the certificate does not serve hook.%s.svc: %v", ns, err)
	}

	// 30 days later two thirds of its life remain: kept. 70 days later: renewed.
	now = now.Add(30 * 24 * time.Hour)
	if err := a.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, readCert(t, a.CertDir)) {
		t.Error("renewed with two thirds of its life left")
	}
	now = now.Add(40 * 24 * time.Hour)
	if err := a.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first, readCert(t, a.CertDir)) {
		t.Error("not renewed with less than a third of its life left")
	}
	// Until the old CA expires the bundle trusts both: the replica that has
	// not yet taken the renewal still serves the old certificate.
	oldCA := s.Data["ca.crt"]
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hook-certs"}, s); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: cfgName}, v); err != nil {
		t.Fatal(err)
	}
	if want := append(append([]byte(nil), s.Data["ca.crt"]...), oldCA...); !bytes.Equal(v.Webhooks[0].ClientConfig.CABundle, want) {
		t.Errorf("after a renewal the bundle holds %d bytes, want the new CA then the old (%d)", len(v.Webhooks[0].ClientConfig.CABundle), len(want))
	}
	if err := b.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readCert(t, a.CertDir), readCert(t, b.CertDir)) {
		t.Error("the other replica did not take the renewed certificate")
	}

	// Once the old CA has expired it leaves the bundle (at the next check).
	now = now.Add(21 * 24 * time.Hour)
	if err := a.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: cfgName}, v); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v.Webhooks[0].ClientConfig.CABundle, s.Data["ca.crt"]) {
		t.Error("the expired CA is still in the bundle")
	}
}

func readCert(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
