// Package serving holds what the controller's HTTPS servers need apart
// from the engine and the reconciler: the rotation of the webhook server's
// certificate (CertRotator: a CA and a serving certificate in a Secret
// every replica shares, the CA injected into the webhook configurations)
// and the metrics endpoint's authentication (MetricsAuth: TokenReview and
// SubjectAccessReview, as the API server's delegated authorization does),
// and the Go runtime's tuning of the process that serves them (MemoryLimit,
// GCPercent), which the command and test/bench both set. It is apart from package controller, as jobset keeps pkg/util/cert.
package serving
