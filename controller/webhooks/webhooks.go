// Package webhooks holds the admission webhooks of every kind the engine
// admits: the handlers (Admission), which answer as `cuetrainer vet`
// does, the paths they are served at (Path) and the webhook configurations
// that send the API server's requests there (Configurations). Package
// controller's Setup registers them on a manager (Register) beside the
// TrainJob reconciler; they share the engine, the cluster reads and the
// metrics (controller/metrics) it passes, and nothing else.
package webhooks

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/cuetrainer/cuetrainer/engine"
)

// Path is where a kind's admission handler is served, as controller-runtime
// and Kubeflow Trainer name it: /validate-trainer-kubeflow-org-v1alpha1-trainjob.
func Path(mutating bool, k engine.Kind) string {
	gv, _ := schema.ParseGroupVersion(k.APIVersion)
	prefix := "/validate-"
	if mutating {
		prefix = "/mutate-"
	}
	return prefix + strings.ReplaceAll(gv.Group, ".", "-") + "-" + gv.Version + "-" + strings.ToLower(k.Kind)
}

// Register serves a validating and a mutating handler for every kind of
// kinds on srv, at Path: copies of h, Mutating set for the mutating one.
func Register(srv webhook.Server, kinds []engine.Kind, h Admission) {
	for _, k := range kinds {
		for _, mutating := range []bool{false, true} {
			a := h
			a.Mutating = mutating
			srv.Register(Path(mutating, k), &webhook.Admission{Handler: &a})
		}
	}
}

// Configurations are the admission webhook configurations of every
// kind the engine admits, served by the service in namespace: a validating
// webhook per kind, a mutating one per kind that mutates, named as Kubeflow
// Trainer names them (validator.trainjob.trainer.kubeflow.org). Requests from
// kube-system and the controller's own namespace are not sent; runtimes
// labelled webhook-validation: disabled still are, since the webhook also
// checks the CRD rules the CUE holds (and the CUE honours the label).
func Configurations(e *engine.Engine, namespace, service string) (*admissionregistrationv1.ValidatingWebhookConfiguration, *admissionregistrationv1.MutatingWebhookConfiguration) {
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(10)
	equivalent := admissionregistrationv1.Equivalent
	namespaces := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", namespace},
	}}}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: "cuetrainer-validator"},
	}
	m := &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: "cuetrainer-defaulter"},
	}
	for _, k := range e.Admitted() {
		gv, _ := schema.ParseGroupVersion(k.APIVersion)
		rules := []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{gv.Group}, APIVersions: []string{gv.Version},
				Resources: []string{plural(k.Kind)}},
		}}
		client := func(mutating bool) admissionregistrationv1.WebhookClientConfig {
			path := Path(mutating, k)
			return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: namespace, Name: service, Path: &path}}
		}
		name := strings.ToLower(k.Kind) + "." + gv.Group
		v.Webhooks = append(v.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name: "validator." + name, ClientConfig: client(false), Rules: rules, FailurePolicy: &fail, MatchPolicy: &equivalent,
			SideEffects: &none, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: namespaces,
		})
		if e.Mutates(k) {
			m.Webhooks = append(m.Webhooks, admissionregistrationv1.MutatingWebhook{
				Name: "defaulter." + name, ClientConfig: client(true), Rules: rules, FailurePolicy: &fail, MatchPolicy: &equivalent,
				SideEffects: &none, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: namespaces,
			})
		}
	}
	return v, m
}

// plural is the resource name of a kind, as the API server's default
// (lower case, +s); the CRDs the CUE generates use the same.
func plural(kind string) string {
	return strings.ToLower(kind) + "s"
}
