package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/internal/serving"
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

// TestSetMemoryLimit: nine tenths of the container's limit go to the Go
// runtime, unless GOMEMLIMIT says otherwise; a value that is not a number
// of bytes is an error.
func TestSetMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		name       string
		env        map[string]string
		want       int64
		wantErr    string
		wantCalled bool
	}{
		{name: "no limit", env: map[string]string{}},
		{name: "512Mi", env: map[string]string{memoryLimitEnv: "536870912"}, want: 483183819, wantCalled: true},
		{name: "GOMEMLIMIT wins", env: map[string]string{memoryLimitEnv: "536870912", "GOMEMLIMIT": "100MiB"}},
		{name: "a quantity, not bytes", env: map[string]string{memoryLimitEnv: "512Mi"}, wantErr: `$CUETRAINER_MEMORY_LIMIT="512Mi": want the container's memory limit in bytes`},
		{name: "zero", env: map[string]string{memoryLimitEnv: "0"}, wantErr: `$CUETRAINER_MEMORY_LIMIT="0"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var called int64 = -1
			got, err := setMemoryLimit(func(k string) string { return c.env[k] }, func(n int64) int64 { called = n; return 0 })
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("limit %d, want %d", got, c.want)
			}
			if (called >= 0) != c.wantCalled || c.wantCalled && called != c.want {
				t.Errorf("runtime limit set to %d (-1: not set), want %d", called, c.want)
			}
		})
	}
}

func TestTuneServerGC(t *testing.T) {
	for _, c := range []struct {
		name    string
		env     map[string]string
		limited bool
		want    int
	}{
		{name: "no limit: the default", env: map[string]string{}},
		{name: "CUETRAINER_MEMORY_LIMIT set the limit", env: map[string]string{}, limited: true, want: serving.GCPercent},
		{name: "GOMEMLIMIT", env: map[string]string{"GOMEMLIMIT": "400MiB"}, want: serving.GCPercent},
		{name: "GOMEMLIMIT off", env: map[string]string{"GOMEMLIMIT": "off"}},
		{name: "GOGC wins", env: map[string]string{"GOGC": "100"}, limited: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			set := -1
			got := tuneServerGC(func(k string) string { return c.env[k] }, c.limited, func(n int) int { set = n; return 100 })
			if got != c.want {
				t.Errorf("target %d, want %d (0: left alone)", got, c.want)
			}
			if (set >= 0) != (c.want > 0) || c.want > 0 && set != c.want {
				t.Errorf("runtime's target set to %d (-1: not set), want %d", set, c.want)
			}
		})
	}
}
