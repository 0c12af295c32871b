package engine

import (
	"fmt"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// ReadCUE reads CUE source that evaluates to objects: one object (a struct
// with a kind), a list of objects, or a struct whose fields are objects.
func (e *Engine) ReadCUE(file string, data []byte) (docs []Document) {
	c := e.compiled()
	// A panic of CUE's reading the document is no mistake of the
	// document's (defect.go).
	defer func() {
		if r := recover(); r != nil {
			docs = []Document{{File: file, Line: 1, Err: e.recovered(r, "the CUE document "+file, c)}}
		}
	}()
	v := c.Ctx.CompileBytes(data, cue.Filename(file))
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return []Document{{File: file, Line: k8s.CUEErrLine(err), Err: fmt.Errorf("CUE: %s", e.Details(err))}}
	}
	add := func(v cue.Value) {
		d, err := k8s.DocumentFromValue(e.src, v, file)
		if err != nil {
			d = Document{File: file, Line: v.Pos().Line(), Err: err}
		}
		docs = append(docs, d)
	}
	switch {
	case v.IncompleteKind() == cue.ListKind:
		it, _ := v.List()
		for it.Next() {
			add(it.Value())
		}
	case v.LookupPath(contract.PathKind).Exists():
		add(v)
	default:
		it, err := v.Fields()
		if err != nil {
			return []Document{{File: file, Line: 1, Err: fmt.Errorf("CUE: %s", e.Details(err))}}
		}
		for it.Next() {
			add(it.Value())
		}
	}
	return docs
}
