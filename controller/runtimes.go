package controller

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cuetrainer/cuetrainer/engine"
)

// ReadRuntimes reads a cluster's objects of the kinds the engine lists (the
// runtimes: every kind whose review has a summary), cluster-scoped ones and
// those of namespace, as documents to admit. In a cluster the shipped
// runtimes are these objects: nothing is added.
func ReadRuntimes(ctx context.Context, e *engine.Engine, c client.Reader, mapper meta.RESTMapper, namespace string) ([]engine.Document, error) {
	return readRuntimes(ctx, e, c, mapper, func(ns string) bool { return ns == "" || ns == namespace })
}

// readRuntimes reads the runtimes of the namespaces keep keeps ("" for
// cluster-scoped ones).
func readRuntimes(ctx context.Context, e *engine.Engine, c client.Reader, mapper meta.RESTMapper, keep func(namespace string) bool) ([]engine.Document, error) {
	cl := cluster{reader: c, mapper: mapper}
	var docs []engine.Document
	for _, k := range e.Summarized() {
		objs, err := cl.List(ctx, k.APIVersion, k.Kind)
		if err != nil {
			return nil, err
		}
		sort.Slice(objs, func(i, j int) bool { return name(objs[i]) < name(objs[j]) })
		for _, o := range objs {
			d := engine.Document{File: "cluster", Object: o}
			if !keep(d.Namespace()) {
				continue
			}
			docs = append(docs, d)
		}
	}
	return docs, nil
}

func name(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	s, _ := md["namespace"].(string)
	n, _ := md["name"].(string)
	return s + "/" + n
}
