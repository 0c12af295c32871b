package engine

import (
	"fmt"
	"sort"
	"sync"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/crd"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// CRDs generates the CustomResourceDefinitions the CUE's `crds` declare,
// each with a structural schema made from its definition.
func (e *Engine) CRDs() (_ []map[string]any, err error) {
	c := e.cur.Load()
	defer func() {
		if r := recover(); r != nil {
			err = e.recovered(r, "the CRDs", c)
		}
	}()
	crds := c.Schemas.LookupPath(contract.PathCRDs)
	var out []map[string]any
	it, err := crds.Fields()
	if err != nil {
		return nil, e.cueError("reading crds", err)
	}
	for it.Next() {
		crd, err := crd.Of(e.src, it.Selector().Unquoted(), it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, crd)
	}
	sort.Slice(out, func(i, j int) bool {
		return fmt.Sprint(k8s.Meta(out[i])["name"]) < fmt.Sprint(k8s.Meta(out[j])["name"])
	})
	return out, nil
}

// crdSchemas holds the structural schema of each kind with a CRD, by
// apiVersion and kind, made from the CUE the first time the kind is read
// (crdOf): one kind's, not every kind's, so that a run that reads two
// kinds makes two. One is made at a time.
type crdSchemas struct {
	mu    sync.Mutex
	byKey map[string]map[string]any
}

// crdSchema is the openAPIV3Schema of the kind's CRD, nil when it has none.
func (e *Engine) crdSchema(apiVersion, kind string) map[string]any {
	key := apiVersion + "\x00" + kind
	e.schemas.mu.Lock()
	defer e.schemas.mu.Unlock()
	if schema, ok := e.schemas.byKey[key]; ok {
		return schema
	}
	if e.schemas.byKey == nil {
		e.schemas.byKey = map[string]map[string]any{}
	}
	schema, ok := map[string]any(nil), false
	if e.embeddedOnly {
		// Made ahead from the same CUE (crd/crdschemas.go).
		if data, found := crd.EmbeddedSchemas()[crd.SchemaKey(apiVersion, kind)]; found {
			schema, ok = crd.SchemaFromJSON(data)
		}
	}
	if !ok {
		schema = crd.Schema(e.src, e.cur.Load().Schemas, apiVersion, kind)
	}
	e.schemas.byKey[key] = schema
	return schema
}
