package faults

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestInstallReadableByTheSDK: what install.yaml installs for the Kubeflow
// SDK, as Kubeflow Trainer v2.3.0 ships it, on the real API server: any
// authenticated user reads kubeflow-system/kubeflow-trainer-public (the
// SDK's TrainerClient() does, and warns without it), and nothing else of
// kubeflow-system.
func TestInstallReadableByTheSDK(t *testing.T) {
	need(t)
	ctx := context.Background()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "a-data-scientist", Groups: []string{"system:authenticated"}}
	user, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := user.Get(ctx, client.ObjectKey{Namespace: "kubeflow-system", Name: "kubeflow-trainer-public"}, &cm); err != nil {
		t.Fatalf("an authenticated user reads the SDK's ConfigMap: %v", err)
	}
	if v := cm.Data["kubeflow_trainer_version"]; v != "v2.3.0" {
		t.Errorf("kubeflow_trainer_version %q, want v2.3.0", v)
	}
	err = user.Get(ctx, client.ObjectKey{Namespace: "kubeflow-system", Name: "another"}, &cm)
	if !apierrors.IsForbidden(err) {
		t.Errorf("another ConfigMap of kubeflow-system: %v, want Forbidden", err)
	}
}
