package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// fakeNodeLog is what kwok serves as the log of every trainer container
// of the namespace e2e-packages (kwok runs no container): CRI log lines,
// as a kubelet keeps them.
const fakeNodeLog = `2026-01-02T03:04:05.000000000Z stdout F Python: 3.12.3 (fake, served by kwok)
2026-01-02T03:04:05.000000001Z stdout F Package    Version
2026-01-02T03:04:05.000000002Z stdout F torch      2.13.0
`

// kwokKubelet writes what kwok needs to serve the node's kubelet API: a
// serving certificate (the API server does not check a kubelet's), and a
// ClusterLogs that gives the trainer containers of e2e-packages a log. It
// returns the ClusterLogs file.
func kwokKubelet(dir string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kwok-node-0"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", err
	}
	logFile := filepath.Join(dir, "fake-node.log")
	config := filepath.Join(dir, "kwok-logs.yaml")
	for name, data := range map[string][]byte{
		"kubelet.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"kubelet.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		logFile:       []byte(fakeNodeLog),
		config: []byte(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata: {name: e2e-packages}
spec:
  selector: {matchNamespaces: [e2e-packages]}
  logs:
  - containers: [node]
    logsFile: ` + logFile + "\n"),
	} {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		if err := os.WriteFile(name, data, 0o600); err != nil {
			return "", err
		}
	}
	return config, nil
}
