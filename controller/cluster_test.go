package controller

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestClusterReads: the controller's own groups are read from the cache
// while their CRDs are unchanged, with the API server asked for what the
// cache lacks; from the API server only once a CRD changed; other groups
// always from the cache.
func TestClusterReads(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "ClusterTrainingRuntime"}
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{gvk.GroupVersion(), cmGVK.GroupVersion()})
	mapper.Add(gvk, meta.RESTScopeRoot)
	mapper.Add(cmGVK, meta.RESTScopeNamespace)
	obj := func(gvk schema.GroupVersionKind, ns, name, rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetLabels(map[string]string{"from": rv})
		return u
	}
	// The cache holds an older "torch" and no "new"; the API server both.
	cache := fake.NewClientBuilder().WithObjects(obj(gvk, "", "torch", "cache"), obj(cmGVK, "ns", "cm", "cache")).Build()
	live := fake.NewClientBuilder().WithObjects(obj(gvk, "", "torch", "live"), obj(gvk, "", "new", "live"), obj(cmGVK, "ns", "cm", "live")).Build()
	unchanged := true
	c := cluster{reader: cache, live: live, mapper: mapper, liveGroups: map[string]bool{gvk.Group: true}, cached: func() bool { return unchanged }}
	from := func(kind, ns, name string) string {
		t.Helper()
		group := gvk.Group
		if kind == "ConfigMap" {
			group = ""
		}
		got, err := c.Get(context.Background(), group, kind, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil {
			return "none"
		}
		return (&unstructured.Unstructured{Object: got}).GetLabels()["from"]
	}
	for _, step := range []struct {
		unchanged      bool
		kind, ns, name string
		want           string
	}{
		{true, "ClusterTrainingRuntime", "", "torch", "cache"},
		{true, "ClusterTrainingRuntime", "", "new", "live"},
		{true, "ClusterTrainingRuntime", "", "gone", "none"},
		{true, "ConfigMap", "ns", "cm", "cache"},
		{false, "ClusterTrainingRuntime", "", "torch", "live"},
		{false, "ConfigMap", "ns", "cm", "cache"},
	} {
		unchanged = step.unchanged
		if got := from(step.kind, step.ns, step.name); got != step.want {
			t.Errorf("CRDs unchanged %v: %s %s read from %s, want %s", step.unchanged, step.kind, step.name, got, step.want)
		}
	}
	// Without a cache switch (the webhooks), always the API server.
	c.cached = nil
	if got := from("ClusterTrainingRuntime", "", "torch"); got != "live" {
		t.Errorf("the webhooks' cluster read torch from %s, want live", got)
	}
}

// TestClusterReadsWhatItApplied: an object the controller applied a moment
// ago, which the cache does not have yet, is read from the API server (the
// next reconcile must not make a runtime snapshot again); past the window,
// the cache is believed again.
func TestClusterReadsWhatItApplied(t *testing.T) {
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{cmGVK.GroupVersion()})
	mapper.Add(cmGVK, meta.RESTScopeNamespace)
	snapshot := &unstructured.Unstructured{}
	snapshot.SetGroupVersionKind(cmGVK)
	snapshot.SetNamespace("ns")
	snapshot.SetName("train-runtime-snapshot")
	now := time.Unix(1000, 0)
	applies := newApplied(func() time.Time { return now })
	c := cluster{reader: fake.NewClientBuilder().Build(), live: fake.NewClientBuilder().WithObjects(snapshot).Build(), mapper: mapper, applied: applies}
	found := func() bool {
		t.Helper()
		got, err := c.Get(context.Background(), "", "ConfigMap", "ns", "train-runtime-snapshot")
		if err != nil {
			t.Fatal(err)
		}
		return got != nil
	}
	if found() {
		t.Errorf("an object the controller did not apply was read from the API server")
	}
	applies.note(objectKey{"", "ConfigMap", "ns", "train-runtime-snapshot"})
	if !found() {
		t.Errorf("the snapshot just applied, not in the cache yet, was taken as missing")
	}
	now = now.Add(appliedWindow + time.Second)
	if found() {
		t.Errorf("past the window, the API server was still asked")
	}
	// Expired entries are forgotten at the next note.
	applies.note(objectKey{"", "ConfigMap", "ns", "other"})
	if n := len(applies.at); n != 1 {
		t.Errorf("%d objects remembered, want the one just applied", n)
	}
}
