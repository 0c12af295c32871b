package serving

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// metricsAuthTTL is how long an answer about a token is kept: a scraper's
// token is reviewed once a minute, not at every scrape.
const metricsAuthTTL = time.Minute

// metricsAuthCacheSize bounds the answers kept (they are dropped all at once
// when it is reached).
const metricsAuthCacheSize = 1024

// MetricsAuth is a metrics server FilterProvider that lets through only a
// request whose bearer token the API server authenticates (a TokenReview)
// and whose user it allows to get the request's path (a SubjectAccessReview
// of a non-resource URL, /metrics), as the API server's delegated
// authentication and authorization do for kubebuilder's projects: 401
// without a valid token, 403 without the permission. It needs create on
// tokenreviews and subjectaccessreviews.
func MetricsAuth(cfg *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	authn, err := authnclient.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	authz, err := authzclient.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	a := &metricsAuth{reviews: authn.TokenReviews(), access: authz.SubjectAccessReviews(), now: time.Now}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			code, err := a.allow(r.Context(), r)
			if err != nil {
				log.Error(err, "authorizing a metrics request")
			}
			if code != http.StatusOK {
				http.Error(w, http.StatusText(code), code)
				return
			}
			next.ServeHTTP(w, r)
		}), nil
	}, nil
}

type metricsAuth struct {
	reviews authnclient.TokenReviewInterface
	access  authzclient.SubjectAccessReviewInterface
	now     func() time.Time

	mu      sync.Mutex
	answers map[[sha256.Size]byte]metricsAnswer
}

type metricsAnswer struct {
	code    int
	expires time.Time
}

// allow returns the HTTP status the request gets: 200, 401 or 403, or 500
// with the error when the API server could not say.
func (a *metricsAuth) allow(ctx context.Context, r *http.Request) (int, error) {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return http.StatusUnauthorized, nil
	}
	verb := strings.ToLower(r.Method)
	// The token is kept only as a hash, with what it was asked for.
	key := sha256.Sum256([]byte(verb + "\x00" + r.URL.Path + "\x00" + token))
	now := a.now()
	a.mu.Lock()
	ans, ok := a.answers[key]
	a.mu.Unlock()
	if ok && now.Before(ans.expires) {
		return ans.code, nil
	}
	code, err := a.review(ctx, token, verb, r.URL.Path)
	if err != nil {
		return http.StatusInternalServerError, err
	}
	a.mu.Lock()
	if a.answers == nil || len(a.answers) >= metricsAuthCacheSize {
		a.answers = map[[sha256.Size]byte]metricsAnswer{}
	}
	a.answers[key] = metricsAnswer{code: code, expires: now.Add(metricsAuthTTL)}
	a.mu.Unlock()
	return code, nil
}

func (a *metricsAuth) review(ctx context.Context, token, verb, path string) (int, error) {
	tr, err := a.reviews.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return 0, fmt.Errorf("reviewing the token: %w", err)
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, nil
	}
	u := tr.Status.User
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range u.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := a.access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, Groups: u.Groups, UID: u.UID, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return 0, fmt.Errorf("reviewing the access of %s: %w", u.Username, err)
	}
	if !sar.Status.Allowed {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, nil
}
