package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Options say what a suite's control plane has.
type Options struct {
	// Cluster asks for the simulated-cluster tier of binaries (make
	// testbins), which the suite starts itself; else the envtest tier.
	Cluster bool
	// CRDs are the files or directories of CRDs, relative to the
	// repository's root, installed beside JobSet's.
	CRDs []string
	// Webhooks are installed pointing at envtest's local serving host and
	// port.
	Webhooks envtest.WebhookInstallOptions
	// APIServerFlags are set on the kube-apiserver's command line.
	APIServerFlags map[string]string
	// Configure may change the API server's process settings (its
	// certificate directory, its output) before it starts.
	Configure func(api *envtest.APIServer) error
}

// ControlPlane is a suite's etcd and kube-apiserver (envtest), with the
// CRDs installed, and an admin client.
type ControlPlane struct {
	Env    *envtest.Environment
	Config *rest.Config
	Client client.Client
}

// StartControlPlane starts a suite's control plane. When the binaries or the
// JobSet module are not there, it returns a reason to skip (Need fails
// instead under CI=true) and no error; anything else that goes wrong is
// an error.
func StartControlPlane(o Options) (cp *ControlPlane, skip string, err error) {
	find := Binaries
	if o.Cluster {
		find = ClusterBinaries
	}
	bins, err := find()
	if err != nil {
		return nil, err.Error(), nil
	}
	jobset, err := JobSetCRD()
	if err != nil {
		return nil, err.Error(), nil
	}
	paths := []string{jobset}
	for _, p := range o.CRDs {
		paths = append(paths, filepath.Join(Root(), p))
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: bins,
		CRDInstallOptions:     envtest.CRDInstallOptions{ErrorIfPathMissing: true, Paths: paths},
		WebhookInstallOptions: o.Webhooks,
	}
	api := env.ControlPlane.GetAPIServer()
	for k, v := range o.APIServerFlags {
		api.Configure().Set(k, v)
	}
	if o.Configure != nil {
		if err := o.Configure(api); err != nil {
			return nil, "", err
		}
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, "", fmt.Errorf("starting etcd and kube-apiserver: %w", err)
	}
	cp = &ControlPlane{Env: env, Config: cfg}
	if cp.Client, err = client.New(cfg, client.Options{}); err != nil {
		cp.Stop()
		return nil, "", err
	}
	return cp, "", nil
}

// StartSuite starts a suite's control plane from its TestMain. Without the
// binaries or the JobSet module, it sets *skip to why, runs the tests
// (Need skips them, or fails them under CI=true) and returns no control
// plane and their exit code; when the control plane fails to start, it
// prints why and returns exit code 1. Else the suite sets up the rest,
// runs its tests and stops cp.
func StartSuite(m *testing.M, o Options, skip *string) (cp *ControlPlane, exit int) {
	cp, why, err := StartControlPlane(o)
	if why != "" {
		*skip = why
		return nil, m.Run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return nil, 1
	}
	return cp, 0
}

// Stop stops the API server and etcd; what fails is printed, as TestMain
// has no test to fail.
func (cp *ControlPlane) Stop() {
	if err := cp.Env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
	}
}

// AdminKubeconfig writes a kubeconfig of a new user named name, in
// system:masters, to dir/kubeconfig and returns its path: for the processes
// a suite starts (a controller, a scheduler).
func (cp *ControlPlane) AdminKubeconfig(name, dir string) (string, error) {
	u, err := cp.Env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	data, err := u.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

// ServiceAccountToken creates the service account namespace/name, binds it
// to clusterRole when one is named (a ClusterRoleBinding named
// namespace-name), and returns a token of it, valid for an hour.
func ServiceAccountToken(ctx context.Context, c client.Client, namespace, name, clusterRole string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.Create(ctx, sa); err != nil {
		return "", err
	}
	if clusterRole != "" {
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: clusterRole},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: namespace, Name: name}},
		}
		if err := c.Create(ctx, binding); err != nil {
			return "", err
		}
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}
