package load

import (
	"fmt"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// Program is the CUE compiled into one runtime: the package schemas (the
// admin's files in it) and the shipped runtimes, and the values the engine
// evaluates, read out of them once per runtime, by apiVersion and kind.
// It is only read after Compile; a recycled runtime is a new Program.
type Program struct {
	Ctx      *cue.Context
	Schemas  cue.Value
	Runtimes cue.Value
	// Reviews holds the review of each admitted kind, with its kind's CRD
	// checks (crdChecks); Checked the same without them, for objects the
	// API server has checked (a schema-checked request), but for the kinds
	// a policy adds CRD checks or parts to (PolicyCRD), which the API
	// server's CRD does not hold.
	Reviews   map[string]map[string]cue.Value
	Checked   map[string]map[string]cue.Value
	PolicyCRD map[string]map[string]bool
	// CRDCheckParts are each kind's CRD check parts (crdCheckParts).
	CRDCheckParts map[string]map[string]cue.Value
	// Lookups are what a review needs the engine to find first; Renders
	// how each kind that renders is rendered; Plans the runtimes' plans;
	// Parts the render parts, by apiVersion, kind and name.
	Lookups map[string]map[string]cue.Value
	Renders map[string]map[string]cue.Value
	Plans   map[string]map[string]cue.Value
	Parts   map[string]map[string]map[string]cue.Value
	// Controllers are the parts of renders only a controller reads.
	Controllers map[string]map[string]cue.Value
	// RenderChecks are the checks of renders only the load's trial
	// renders evaluate; DeclaredChecks the checks of the objects a policy
	// declares in CUE; Refusals what the cluster refuses of the objects
	// renders build: the load's alone.
	RenderChecks   map[string]map[string]cue.Value
	DeclaredChecks map[string]map[string]cue.Value
	Refusals       map[string]map[string]cue.Value
	// Mutators are the kinds' mutating webhooks' rules; Probes make
	// documents to try a policy's rules on, from each runtime, by the
	// runtime's apiVersion and kind.
	Mutators map[string]map[string]cue.Value
	Probes   map[string]map[string]cue.Value
}

// Compile builds instances (the package schemas, then the runtimes) into a
// fresh CUE runtime made with opts, and reads what the engine evaluates.
// problems are CUE's errors of the files, at the admin's lines first; err
// a declaration the engine cannot read.
func Compile(src *source.Files, instances []*build.Instance, opts ...cuecontext.Option) (_ *Program, problems []source.Problem, err error) {
	if len(instances) != 2 {
		return nil, nil, fmt.Errorf("compiling %d packages, want the schemas and the runtimes", len(instances))
	}
	p := &Program{Ctx: cuecontext.New(opts...)}
	values := make([]cue.Value, len(instances))
	for i, inst := range instances {
		values[i] = p.Ctx.BuildInstance(inst)
		if err := values[i].Validate(); err != nil {
			return nil, src.CUEProblemsIn(err, values[i]), nil
		}
	}
	p.Schemas, p.Runtimes = values[0], values[1]
	if p.Checked, err = p.ByKind(src, contract.FieldAdmission); err != nil {
		return nil, nil, err
	}
	crdChecks, err := p.ByKind(src, contract.FieldCRDChecks)
	if err != nil {
		return nil, nil, err
	}
	// A review with its kind's CRD checks is made once, here: a request
	// unifies it with the object once, as it does the review alone.
	p.Reviews = map[string]map[string]cue.Value{}
	for apiVersion, kinds := range p.Checked {
		p.Reviews[apiVersion] = map[string]cue.Value{}
		for kind, review := range kinds {
			if checks, ok := crdChecks[apiVersion][kind]; ok {
				review = review.Unify(checks)
				if err := review.Validate(); err != nil {
					return nil, nil, cueError(src, "adding the CRD checks of "+kind, err)
				}
			}
			p.Reviews[apiVersion][kind] = review
		}
	}
	// crdChecks for a kind without a review are a policy's mistake
	// (the lint's checkKind says so at load).
	if p.CRDCheckParts, err = p.ByKind(src, contract.FieldCRDCheckParts); err != nil {
		return nil, nil, err
	}
	// A policy's CRD checks are not in the CRD the API server holds (the
	// TrainJob's is Kubeflow's), so a schema-checked request of their kind
	// is reviewed with them, parts and all: the object passed the API
	// server's own checks, which the shipped ones copy, so only the
	// policy's can find anything.
	p.PolicyCRD = policyCRDKinds(src, crdChecks, p.CRDCheckParts)
	for apiVersion, kinds := range p.PolicyCRD {
		for kind := range kinds {
			if review, ok := p.Reviews[apiVersion][kind]; ok {
				p.Checked[apiVersion][kind] = review
			}
		}
	}
	for _, f := range []struct {
		into  *map[string]map[string]cue.Value
		field string
	}{
		{&p.Lookups, contract.FieldLookups},
		{&p.Renders, contract.FieldRender},
		{&p.Plans, contract.FieldPlans},
		{&p.Controllers, contract.FieldControllers},
		{&p.RenderChecks, contract.FieldRenderChecks},
		{&p.DeclaredChecks, contract.FieldDeclaredChecks},
		{&p.Refusals, contract.FieldRefusals},
		{&p.Mutators, contract.FieldMutators},
		{&p.Probes, contract.FieldProbes},
	} {
		if *f.into, err = p.ByKind(src, f.field); err != nil {
			return nil, nil, err
		}
	}
	parts, err := p.ByKind(src, contract.FieldRenderParts)
	if err != nil {
		return nil, nil, err
	}
	p.Parts = map[string]map[string]map[string]cue.Value{}
	for apiVersion, kinds := range parts {
		p.Parts[apiVersion] = map[string]map[string]cue.Value{}
		for kind, v := range kinds {
			p.Parts[apiVersion][kind] = map[string]cue.Value{}
			it, err := v.Fields()
			if err != nil {
				return nil, nil, cueError(src, "reading renderParts", err)
			}
			for it.Next() {
				p.Parts[apiVersion][kind][it.Selector().Unquoted()] = it.Value()
			}
		}
	}
	return p, nil, nil
}

// ByKind reads a field of the schemas, a struct of values by apiVersion
// and kind.
func (p *Program) ByKind(src *source.Files, field string) (map[string]map[string]cue.Value, error) {
	out := map[string]map[string]cue.Value{}
	it, err := p.Schemas.LookupPath(cue.ParsePath(field)).Fields()
	if err != nil {
		return nil, cueError(src, "reading "+field, err)
	}
	for it.Next() {
		apiVersion := it.Selector().Unquoted()
		kinds, err := it.Value().Fields()
		if err != nil {
			return nil, cueError(src, "reading "+field, err)
		}
		out[apiVersion] = map[string]cue.Value{}
		for kinds.Next() {
			out[apiVersion][kinds.Selector().Unquoted()] = kinds.Value()
		}
	}
	return out, nil
}

// policyCRDKinds are the kinds whose CRD checks (crdChecks' crd rules)
// or CRD check parts a policy file declares, by apiVersion and kind.
func policyCRDKinds(src *source.Files, checks, parts map[string]map[string]cue.Value) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	mark := func(apiVersion, kind string, v cue.Value) {
		it, err := v.Fields()
		if err != nil {
			return
		}
		for it.Next() {
			if src.FromPolicy(it.Value()) {
				if out[apiVersion] == nil {
					out[apiVersion] = map[string]bool{}
				}
				out[apiVersion][kind] = true
				return
			}
		}
	}
	for apiVersion, kinds := range checks {
		for kind, v := range kinds {
			mark(apiVersion, kind, v.LookupPath(cue.MakePath(cue.Str(string(contract.PhaseCRD)))))
		}
	}
	for apiVersion, kinds := range parts {
		for kind, v := range kinds {
			mark(apiVersion, kind, v)
		}
	}
	return out
}
