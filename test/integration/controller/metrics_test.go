package controller_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/cuetrainer/cuetrainer/internal/serving"
	"github.com/cuetrainer/cuetrainer/test/integration/testenv"
)

// TestMetricsAuth: the metrics filter, running with deploy/'s RBAC against
// the API server, lets through only a token the API server authenticates
// whose user may get /metrics (deploy/'s cuetrainer-metrics-reader).
func TestMetricsAuth(t *testing.T) {
	need(t)
	ctx := context.Background()
	ns := namespace(t, "metrics")
	token := func(name, clusterRole string) string {
		t.Helper()
		tok, err := testenv.ServiceAccountToken(ctx, k8sClient, ns, name, clusterRole)
		if err != nil {
			t.Fatal(err)
		}
		if clusterRole != "" {
			t.Cleanup(func() {
				_ = k8sClient.Delete(context.Background(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name}})
			})
		}
		return tok
	}
	scraper, nobody := token("scraper", "cuetrainer-metrics-reader"), token("nobody", "")
	// The filter keeps its answers a minute: ask it once the binding holds.
	eventually(t, "the scraper allowed to get /metrics", func() error {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "system:serviceaccount:" + ns + ":scraper", Groups: []string{"system:serviceaccounts"},
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}}
		if err := k8sClient.Create(ctx, sar); err != nil {
			return err
		}
		if !sar.Status.Allowed {
			return fmt.Errorf("not yet: %s", sar.Status.Reason)
		}
		return nil
	})

	hc, err := rest.HTTPClientFor(controllerCfg)
	if err != nil {
		t.Fatal(err)
	}
	filter, err := serving.MetricsAuth(controllerCfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	h, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, c := range []struct {
		what, path, auth string
		want             int
	}{
		{"no token", "/metrics", "", http.StatusUnauthorized},
		{"not a bearer token", "/metrics", "Basic " + scraper, http.StatusUnauthorized},
		{"a token the API server does not know", "/metrics", "Bearer not-a-token", http.StatusUnauthorized},
		{"a user without the permission", "/metrics", "Bearer " + nobody, http.StatusForbidden},
		{"the scraper", "/metrics", "Bearer " + scraper, http.StatusOK},
		{"the scraper, again (from the kept answer)", "/metrics", "bearer " + scraper, http.StatusOK},
		{"the scraper, another path", "/debug/pprof/", "Bearer " + scraper, http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+c.path, nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.what, resp.StatusCode, c.want)
		}
	}
}
