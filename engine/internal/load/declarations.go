// Package load holds the CUE compiled into one runtime and the values read
// out of it (Program, made by Compile for each runtime the engine
// recycles), and the top-level declarations decoded into Go values once
// per load (Declarations): read-only after they are made, they are what
// the admission, the render and the checks of an admin's CUE all read.
package load

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// Declarations are the compiled CUE's top-level declarations the engine
// carries out, decoded: the kinds it knows and how to read and merge
// their objects (ReadKinds and ReadInputReads, before the checks of an
// admin's CUE, which compare the rules with them; ReadServing after).
type Declarations struct {
	// RuntimeKinds are the kinds a TrainJob's runtimeRef may name, by
	// their registry key; ClusterKinds the kinds the engine knows for
	// cluster-scoped, by "<kind>.<group>": runtime kinds not namespaced,
	// and kinds whose CRD has scope Cluster.
	RuntimeKinds map[string]RuntimeKind
	ClusterKinds map[string]bool
	// PlanReads are the input paths each kind's plan reads, LookupReads
	// those its lookups read, by operation; MutatorReads those its mutator
	// reads, when it says (absent: the whole object); by apiVersion and
	// kind.
	PlanReads    map[string]map[string][][]string
	LookupReads  map[string]map[string]map[string][][]string
	MutatorReads map[string]map[string][][]string
	// MutatorNeeds are, by kind, what each mutation of its mutator needs
	// of a request (#Mutator.needs), when every mutation says.
	MutatorNeeds map[string]map[string][][]string

	// TypedParts are the parts of a kind's objects Kubeflow reads as Go
	// types (k8s/typed.go), by apiVersion and kind, in name order.
	TypedParts map[string]map[string][]k8s.TypedPart
	// Merges are the strategic merges a render needs first.
	Merges map[string]map[string]map[string]contract.Merge
	// Groups are the API groups whose every kind must have a review;
	// GroupHints say what serves a group no review does.
	Groups     map[string]bool
	GroupHints map[string]string
	// KnownKeys are the label and annotation keys with a meaning
	// (k8s/metakeys.go).
	KnownKeys k8s.KnownKeys
	// ContextKinds maps apiVersion and kind to the #Context field that
	// holds such objects, by name.
	ContextKinds map[string]map[string]string
	// Owned are the kinds renders create, by apiVersion.
	Owned map[string]map[string]bool
	// Opaque says which map keys reach an evaluation as tokens.
	Opaque *k8s.OpaqueKeys
	// ServerManaged are the paths of the fields a schema-checked review
	// and objects read from a cluster are not given.
	ServerManaged [][]string
}

// RuntimeKind is a kind a TrainJob's runtimeRef may name (runtimeKinds).
type RuntimeKind struct {
	Group      string `json:"group"`
	Kind       string `json:"kind"`
	Namespaced bool   `json:"namespaced"`
}

// ReadKinds reads the runtime kinds and the cluster-scoped ones.
func (d *Declarations) ReadKinds(src *source.Files, schemas cue.Value) error {
	if err := schemas.LookupPath(contract.PathRuntimeKinds).Decode(&d.RuntimeKinds); err != nil {
		return cueError(src, "reading runtimeKinds", err)
	}
	return d.readClusterKinds(src, schemas)
}

// ReadInputReads reads which paths of the input each kind's plan, lookups
// and mutator are given (their `reads`, and a mutator's `needs`), which
// the checks of an admin's CUE compare the rules' reads with; plans,
// lookups and mutators are the kinds' compiled ones, by apiVersion and
// kind. problems are the admin's mistakes in them, at their lines; err a
// declaration the engine cannot read.
func (d *Declarations) ReadInputReads(src *source.Files, plans, lookups, mutators map[string]map[string]cue.Value) (problems []source.Problem, err error) {
	d.PlanReads = map[string]map[string][][]string{}
	for apiVersion, kinds := range plans {
		d.PlanReads[apiVersion] = map[string][][]string{}
		for kind, v := range kinds {
			var reads map[string][]string
			if err := v.LookupPath(contract.PathReads).Decode(&reads); err != nil {
				return nil, cueError(src, "reading plans", err)
			}
			d.PlanReads[apiVersion][kind] = pathsByName(reads)
		}
	}
	d.LookupReads = map[string]map[string]map[string][][]string{}
	for apiVersion, kinds := range lookups {
		d.LookupReads[apiVersion] = map[string]map[string][][]string{}
		for kind, v := range kinds {
			var reads, updateReads map[string][]string
			if err := v.LookupPath(contract.PathReads).Decode(&reads); err != nil {
				return nil, cueError(src, "reading lookups", err)
			}
			if err := v.LookupPath(contract.PathUpdateReads).Decode(&updateReads); err != nil {
				return nil, cueError(src, "reading lookups", err)
			}
			named := pathsByName(reads)
			d.LookupReads[apiVersion][kind] = map[string][][]string{
				contract.OpCreate: named,
				contract.OpUpdate: append(slices.Clone(named), pathsByName(updateReads)...),
			}
		}
	}
	d.MutatorReads = map[string]map[string][][]string{}
	d.MutatorNeeds = map[string]map[string][][]string{}
	for apiVersion, kinds := range mutators {
		for kind, v := range kinds {
			if problems, err := d.readMutatorNeeds(src, apiVersion, kind, v); problems != nil || err != nil {
				return problems, err
			}
			r := v.LookupPath(contract.PathReads)
			if !r.Exists() {
				continue
			}
			var byName map[string][]string
			if err := r.Decode(&byName); err != nil {
				return nil, cueError(src, "reading mutators", err)
			}
			if d.MutatorReads[apiVersion] == nil {
				d.MutatorReads[apiVersion] = map[string][][]string{}
			}
			d.MutatorReads[apiVersion][kind] = pathsByName(byName)
		}
	}
	return nil, nil
}

// readMutatorNeeds reads what each mutation of a kind's mutator needs of a
// request; a need of no mutation is the admin's mistake.
func (d *Declarations) readMutatorNeeds(src *source.Files, apiVersion, kind string, v cue.Value) ([]source.Problem, error) {
	var needs map[string][]string
	if err := v.LookupPath(contract.PathNeeds).Decode(&needs); err != nil {
		return nil, cueError(src, "reading mutators", err)
	}
	var names []string
	if it, err := v.LookupPath(contract.PathMutations).Fields(); err == nil {
		for it.Next() {
			names = append(names, it.Selector().Unquoted())
		}
	}
	var problems []source.Problem
	for _, name := range value.SortedKeys(needs) {
		if !slices.Contains(names, name) {
			msg := fmt.Sprintf("needs: %s is no mutation of mutators: %q: %s (%s), so what it says would hold for none", name, apiVersion, kind, strings.Join(names, ", "))
			if sug := source.Suggest(name, names); sug != "" {
				msg += fmt.Sprintf(": did you mean %s?", sug)
			}
			p := src.ProblemAt(src.WrittenAt(v.LookupPath(cue.MakePath(append(contract.PathNeeds.Selectors(), cue.Str(name))...))), "%s", msg)
			p.Check = checks.MutatorReads.Name
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return problems, nil
	}
	var byMutation [][]string
	for _, name := range names {
		if len(needs[name]) == 0 {
			return nil, nil // made whatever the request: evaluated for each
		}
		byMutation = append(byMutation, needs[name])
	}
	if len(byMutation) > 0 {
		if d.MutatorNeeds[apiVersion] == nil {
			d.MutatorNeeds[apiVersion] = map[string][][]string{}
		}
		d.MutatorNeeds[apiVersion][kind] = byMutation
	}
	return nil, nil
}

// readClusterKinds reads the kinds the CUE says are cluster-scoped: the
// runtime kinds registered as not namespaced, and the kinds whose CRD has
// scope Cluster.
func (d *Declarations) readClusterKinds(src *source.Files, schemas cue.Value) error {
	d.ClusterKinds = map[string]bool{}
	for key, k := range d.RuntimeKinds {
		if !k.Namespaced {
			d.ClusterKinds[key] = true
		}
	}
	it, err := schemas.LookupPath(contract.PathCRDs).Fields()
	for err == nil && it.Next() {
		var group, scope string
		if group, err = it.Value().LookupPath(contract.PathCRDGroup).String(); err != nil {
			break
		}
		if scope, err = it.Value().LookupPath(contract.PathCRDScope).String(); err != nil {
			break
		}
		if scope == contract.CRDScopeCluster {
			d.ClusterKinds[it.Selector().Unquoted()+"."+group] = true
		}
	}
	if err != nil {
		return cueError(src, "reading crds", err)
	}
	return nil
}

// ReadServing reads the rest of the declarations: how to read, merge and
// name the kinds' objects. keyReads are the paths of the maps whose keys
// an admin's rules read as data (lint.Report): such a map reaches the
// rules with its keys, not as tokens.
func (d *Declarations) ReadServing(src *source.Files, schemas cue.Value, instances []*build.Instance, keyReads [][]string) error {
	if err := d.readTypedParts(src, schemas); err != nil {
		return err
	}
	if err := schemas.LookupPath(contract.PathMerges).Decode(&d.Merges); err != nil {
		return cueError(src, "reading merges", err)
	}
	if err := schemas.LookupPath(contract.PathGroups).Decode(&d.Groups); err != nil {
		return cueError(src, "reading groups", err)
	}
	if err := schemas.LookupPath(contract.PathGroupHints).Decode(&d.GroupHints); err != nil {
		return cueError(src, "reading groupHints", err)
	}
	var err error
	if d.KnownKeys, err = k8s.ReadKnownKeys(schemas); err != nil {
		return cueError(src, "reading knownKeys", err)
	}
	if err := schemas.LookupPath(contract.PathContextKinds).Decode(&d.ContextKinds); err != nil {
		return cueError(src, "reading contextKinds", err)
	}
	if err := schemas.LookupPath(contract.PathOwned).Decode(&d.Owned); err != nil {
		return cueError(src, "reading owned", err)
	}
	d.Opaque = &k8s.OpaqueKeys{Named: k8s.NamedStrings(instances)}
	if err := schemas.LookupPath(contract.PathOpaqueMaps).Decode(&d.Opaque.Suffixes); err != nil {
		return cueError(src, "reading opaqueMaps", err)
	}
	d.Opaque.Suffixes = slices.DeleteFunc(d.Opaque.Suffixes, func(suffix []string) bool {
		return slices.ContainsFunc(keyReads, func(p []string) bool { return HasSuffix(p, suffix) })
	})
	if err := schemas.LookupPath(contract.PathServerManaged).Decode(&d.ServerManaged); err != nil {
		return cueError(src, "reading serverManaged", err)
	}
	for _, p := range d.ServerManaged {
		if len(p) == 0 {
			return fmt.Errorf("serverManaged: an empty path")
		}
	}
	return nil
}

// readTypedParts reads typedParts: each part's type must be one the engine
// knows (k8s.TypedTypes).
func (d *Declarations) readTypedParts(src *source.Files, schemas cue.Value) error {
	var byName map[string]map[string]map[string]k8s.TypedPart
	if err := schemas.LookupPath(contract.PathTypedParts).Decode(&byName); err != nil {
		return cueError(src, "reading typedParts", err)
	}
	d.TypedParts = map[string]map[string][]k8s.TypedPart{}
	for apiVersion, kinds := range byName {
		d.TypedParts[apiVersion] = map[string][]k8s.TypedPart{}
		for kind, parts := range kinds {
			for _, name := range value.SortedKeys(parts) {
				p := parts[name]
				if p.T = k8s.TypedTypes[p.Type]; p.T == nil {
					return fmt.Errorf("typedParts: %s %s %s: no Go type %q (the engine knows %s)", apiVersion, kind, name, p.Type, strings.Join(value.SortedKeys(k8s.TypedTypes), ", "))
				}
				d.TypedParts[apiVersion][kind] = append(d.TypedParts[apiVersion][kind], p)
			}
		}
	}
	return nil
}

// pathsByName is the paths of a `reads` struct (a path by name), in the
// order of their names.
func pathsByName(byName map[string][]string) [][]string {
	var paths [][]string
	for _, name := range value.SortedKeys(byName) {
		paths = append(paths, byName[name])
	}
	return paths
}

// HasSuffix reports whether p ends with suffix.
func HasSuffix(p, suffix []string) bool {
	return len(p) >= len(suffix) && slices.Equal(p[len(p)-len(suffix):], suffix)
}

// cueError is a declaration the engine cannot read: what it was reading,
// and CUE's error at the files' names.
func cueError(src *source.Files, what string, err error) error {
	return fmt.Errorf("%s: %s", what, src.Details(err))
}
