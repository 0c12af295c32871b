package serving

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// CertRotator keeps the webhook server's certificate: a CA and a serving
// certificate for the webhook Service, kept in a Secret that every replica
// shares, written to the server's certificate directory (which it watches),
// and the CA put into the webhook configurations. Certificates are renewed
// when less than a third of their life remains.
type CertRotator struct {
	// Client must read live (not from a cache): it runs before the caches.
	Client client.Client
	// Namespace and Secret name the Secret; Service the webhook Service
	// (its DNS names go into the certificate).
	Namespace, Secret, Service string
	// CertDir is the webhook server's certificate directory.
	CertDir string
	// Validating and Mutating name the webhook configurations to patch.
	Validating, Mutating string
	// Validity is a certificate's life; one year when zero.
	Validity time.Duration
	// Check is how often the certificate is checked; an hour when zero.
	Check time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	ready atomic.Bool
}

// Ready reports whether a valid certificate is in place.
func (c *CertRotator) Ready() bool { return c.ready.Load() }

// NeedLeaderElection is false: every replica serves webhooks, and so needs
// the certificate.
func (c *CertRotator) NeedLeaderElection() bool { return false }

// Start keeps the certificate until ctx ends.
func (c *CertRotator) Start(ctx context.Context) error {
	check := c.Check
	if check == 0 {
		check = time.Hour
	}
	for {
		next := check
		if err := c.Ensure(ctx); err != nil {
			log.FromContext(ctx).Error(err, "keeping the webhook certificate")
			next = min(check, 5*time.Second) // soon, then back to check
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

func (c *CertRotator) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Ensure makes the certificate valid now: reads the Secret, renews what is
// missing or expiring (another replica's concurrent renewal wins, and is
// read back), writes the files and the CA bundles.
func (c *CertRotator) Ensure(ctx context.Context) error {
	for attempt := 0; attempt < 5; attempt++ {
		s := &corev1.Secret{}
		err := c.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Secret}, s)
		exists := err == nil
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading Secret %s/%s: %w", c.Namespace, c.Secret, err)
		}
		if !exists || !c.valid(s.Data) {
			data, err := c.generate()
			if err != nil {
				return err
			}
			s.Data = data
			s.Type = corev1.SecretTypeTLS
			if exists {
				err = c.Client.Update(ctx, s)
			} else {
				s.ObjectMeta = metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Secret}
				err = c.Client.Create(ctx, s)
			}
			if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
				continue // another replica renewed it: use theirs
			}
			if err != nil {
				return fmt.Errorf("writing Secret %s/%s: %w", c.Namespace, c.Secret, err)
			}
		}
		// The CA first: the API server trusts the new certificate before
		// any replica serves it, and still trusts the old one that other
		// replicas serve until their next check.
		if err := c.injectCA(ctx, s.Data["ca.crt"]); err != nil {
			return err
		}
		if err := c.write(s.Data); err != nil {
			return err
		}
		c.ready.Store(true)
		return nil
	}
	return fmt.Errorf("Secret %s/%s keeps changing under us", c.Namespace, c.Secret)
}

// valid reports whether the Secret holds a CA and a serving certificate for
// the Service with more than a third of its life left.
func (c *CertRotator) valid(data map[string][]byte) bool {
	pair, err := tls.X509KeyPair(data["tls.crt"], data["tls.key"])
	if err != nil || len(data["ca.crt"]) == 0 {
		return false
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return false
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data["ca.crt"]) {
		return false
	}
	now := c.now()
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: c.dnsNames()[2], Roots: pool, CurrentTime: now}); err != nil {
		return false
	}
	life := cert.NotAfter.Sub(cert.NotBefore)
	return cert.NotAfter.Sub(now) > life/3
}

func (c *CertRotator) dnsNames() []string {
	return []string{c.Service, c.Service + "." + c.Namespace, c.Service + "." + c.Namespace + ".svc", c.Service + "." + c.Namespace + ".svc.cluster.local"}
}

// generate makes a CA and a serving certificate signed by it (ECDSA P-256).
func (c *CertRotator) generate() (map[string][]byte, error) {
	validity := c.Validity
	if validity == 0 {
		validity = 365 * 24 * time.Hour
	}
	now := c.now()
	// Valid from a little before now, for clocks behind ours: an hour, or
	// a tenth of a short validity (an hour more of a 30 s life would put
	// every check in its last third).
	notBefore := now.Add(-min(time.Hour, validity/10))
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial := func() *big.Int {
		n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
		return n
	}
	ca := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "cuetrainer-webhook-ca"},
		NotBefore: notBefore, NotAfter: now.Add(validity),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serving := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: c.dnsNames()[2]}, DNSNames: c.dnsNames(),
		NotBefore: notBefore, NotAfter: now.Add(validity),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, serving, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		"ca.crt":  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// write puts the certificate where the webhook server reads it, when it
// changed (the server's watcher reloads it).
func (c *CertRotator) write(data map[string][]byte) error {
	if err := os.MkdirAll(c.CertDir, 0o700); err != nil {
		return err
	}
	for _, name := range []string{"tls.key", "tls.crt"} { // key first: the watcher reloads on tls.crt
		p := filepath.Join(c.CertDir, name)
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data[name]) {
			continue
		}
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, data[name], 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
	}
	return nil
}

// injectCA puts the CA into every webhook of the configurations, with the
// CAs the bundle already holds that are still valid: a replica that has not
// yet taken a renewed certificate still serves one of those.
func (c *CertRotator) injectCA(ctx context.Context, ca []byte) error {
	if c.Validating != "" {
		v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := c.Client.Get(ctx, client.ObjectKey{Name: c.Validating}, v); err != nil {
			return fmt.Errorf("reading ValidatingWebhookConfiguration %s: %w", c.Validating, err)
		}
		changed := false
		for i := range v.Webhooks {
			cc := &v.Webhooks[i].ClientConfig
			if b := c.bundle(ca, cc.CABundle); !bytes.Equal(cc.CABundle, b) {
				cc.CABundle, changed = b, true
			}
		}
		if changed {
			if err := c.Client.Update(ctx, v); err != nil {
				return fmt.Errorf("updating ValidatingWebhookConfiguration %s: %w", c.Validating, err)
			}
		}
	}
	if c.Mutating != "" {
		m := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := c.Client.Get(ctx, client.ObjectKey{Name: c.Mutating}, m); err != nil {
			return fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", c.Mutating, err)
		}
		changed := false
		for i := range m.Webhooks {
			cc := &m.Webhooks[i].ClientConfig
			if b := c.bundle(ca, cc.CABundle); !bytes.Equal(cc.CABundle, b) {
				cc.CABundle, changed = b, true
			}
		}
		if changed {
			if err := c.Client.Update(ctx, m); err != nil {
				return fmt.Errorf("updating MutatingWebhookConfiguration %s: %w", c.Mutating, err)
			}
		}
	}
	return nil
}

// bundle is ca followed by the certificates of old that are not ca, parse,
// and have not expired, in their order.
func (c *CertRotator) bundle(ca, old []byte) []byte {
	out := append([]byte(nil), ca...)
	now := c.now()
	for rest := old; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return out
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil || !now.Before(cert.NotAfter) {
			continue
		}
		b := pem.EncodeToMemory(block)
		if bytes.Contains(out, b) {
			continue
		}
		out = append(out, b...)
	}
}
