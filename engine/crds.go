package engine

import (
	"fmt"
	"sort"

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
