// Package controller runs the engine in a cluster: a controller that
// applies what `cuetrainer render` prints for a TrainJob, and Setup, which
// adds it and the admission webhooks (package controller/webhooks, which
// admit objects as `cuetrainer vet` does) to a manager, with the cluster
// reads, the policy reloader and the metrics both share. It knows no
// framework: the CUE decides.
package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cuetrainer/cuetrainer/engine"
)

// cluster reads objects for the engine's lookups through a controller-runtime
// reader (the manager's cache), as unstructured objects.
type cluster struct {
	reader client.Reader
	mapper meta.RESTMapper
	// live reads the kinds of the groups in liveGroups from the API server
	// itself: their CRDs change with the policies, and an informer started
	// before such a change keeps serving objects pruned by the old schema.
	live       client.Reader
	liveGroups map[string]bool
	// cached, when set and true, lets reader serve liveGroups too.
	cached func() bool
	// applied names what the controller applied a moment ago: the API
	// server is asked for such an object the cache does not have yet.
	applied *applied
}

var _ engine.Cluster = cluster{}

// Get returns the object, or nil when it does not exist, including when its
// kind is not installed (no JobSet CRD: no JobSet).
func (c cluster) Get(ctx context.Context, group, kind, namespace, name string) (map[string]any, error) {
	mapping, err := c.mapper.RESTMapping(schema.GroupKind{Group: group, Kind: kind})
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(mapping.GroupVersionKind)
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		namespace = ""
	}
	key := client.ObjectKey{Namespace: namespace, Name: name}
	live := c.live != nil && c.liveGroups[group]
	if live && c.cached != nil && c.cached() {
		// From the cache; what it lacks may have been created a moment
		// ago (a runtime just before its TrainJob): the API server says.
		err := c.reader.Get(ctx, key, u)
		if err == nil {
			return u.Object, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	reader := c.reader
	if live {
		reader = c.live
	}
	err = reader.Get(ctx, key, u)
	if apierrors.IsNotFound(err) && !live && c.live != nil && c.applied.recent(objectKey{group, kind, namespace, name}) {
		err = c.live.Get(ctx, key, u)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return u.Object, nil
}

// List returns every object of the kind; none when the kind is not installed.
func (c cluster) List(ctx context.Context, apiVersion, kind string) ([]map[string]any, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gv.WithKind(kind + "List"))
	if err := c.reader.List(ctx, l); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	out := make([]map[string]any, len(l.Items))
	for i := range l.Items {
		out[i] = l.Items[i].Object
	}
	return out, nil
}
