package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestControllerRestConfigNoClientRateLimit: the controller's client is
// not held to client-go's default 5 requests a second.
func TestControllerRestConfigNoClientRateLimit(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := (&controllerOptions{kubeconfig: kubeconfig}).restConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS >= 0 || cfg.RateLimiter != nil {
		t.Errorf("QPS %v, rate limiter %v: client-side rate limiting is on", cfg.QPS, cfg.RateLimiter)
	}
}
