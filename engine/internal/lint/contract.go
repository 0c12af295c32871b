package lint

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/crd"
	"github.com/cuetrainer/cuetrainer/engine/internal/edit"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The checks of this file hold an admin's declarations to what the engine
// and the rules do with them: a review or render for a kind Kubeflow's
// group does not serve, a part of a kind's render or checks for a kind
// that has no review (or, for a render's part, no render), a framework without its policy or its registry
// entry, a render part no plan chooses, an entry of a map the engine reads
// by name that it never reads (optional, hidden), one name given to two
// rules. CUE accepts each of them, and each would silently do nothing.
// The items a rule or mutation writes as literals are checked here too,
// since CUE checks them only when the rule fires.

// byKindFields are the contract's fields keyed by apiVersion and kind,
// and whether a kind under them must have a review (admission).
var byKindFields = map[string]bool{
	contract.FieldAdmission: false, contract.FieldMutators: false, contract.FieldMerges: false,
	contract.FieldCRDChecks: true, contract.FieldCRDCheckParts: true, contract.FieldLookups: true, contract.FieldPlans: true, contract.FieldRender: true, contract.FieldRenderParts: true, contract.FieldControllers: true, contract.FieldRenderChecks: true,
	contract.FieldDeclaredChecks: true,
}

// renderFields are the contract's fields keyed by kind that only a kind's
// render reads.
var renderFields = map[string]bool{contract.FieldRenderParts: true, contract.FieldPlans: true, contract.FieldControllers: true, contract.FieldRenderChecks: true}

// checkContract checks the sites of the admin's declarations.
func (l *linter) checkContract() {
	served := l.servedKinds()
	reviews := l.in.Reviews
	// A label two frameworks list is said once.
	sharedLabels := map[string]bool{}
	for _, st := range append(l.sites, l.computedKindSites()...) {
		if len(st.path) < 2 {
			continue
		}
		field := st.path[0].String()
		needsReview, byKind := byKindFields[field]
		switch {
		case byKind && len(st.path) == 2 && st.path[1].IsString():
			l.checkAPIVersion(st, field, served)
		case byKind && len(st.path) == 3 && st.path[1].IsString() && st.path[2].IsString():
			l.checkKind(st, field, served, reviews, needsReview)
		case field == contract.FieldFrameworks && len(st.path) == 2 && st.path[1].IsString():
			name := st.path[1].Unquoted()
			policy := l.lookup(lpath{sels: []cue.Selector{contract.SelMLPolicy}, ok: true})
			if !policy.Allows(cue.Str(name)) {
				msg := fmt.Sprintf("frameworks: %s has no policy: #MLPolicy has no field %s, which a runtime's mlPolicy.%s would need", name, name, name)
				if s := source.Suggest(name, l.frameworkPolicies()); s != "" {
					msg += fmt.Sprintf(": did you mean %s?", s)
				} else {
					msg += fmt.Sprintf("; declare it: #MLPolicy: %s?: {...}", name)
				}
				l.problem(checks.FrameworkWithoutPolicy, st.pos, "%s", msg)
			}
			l.checkRenderPartNeeded(st, name)
			l.checkFrameworkLabels(st, name, sharedLabels)
		case (field == "#MLPolicy" || field == "#PodGroupPolicy") && len(st.path) == 2 && st.path[1].IsString() && !st.optional:
			// A policy a runtime chooses is optional: a regular field of
			// the definition would be in every runtime's, by its default.
			name := st.path[1].Unquoted()
			if name != "numNodes" {
				l.problem(checks.PolicyNotOptional, st.pos, "%s.%s is not optional, so every runtime would have it (and break the one-policy rule): write %s?: {...}", field, name, name)
			}
			fallthrough
		case field == "#MLPolicy" && len(st.path) == 2 && st.path[1].IsString():
			name := st.path[1].Unquoted()
			if name == "numNodes" || field != "#MLPolicy" {
				continue
			}
			if !l.in.Schemas.LookupPath(cue.MakePath(contract.SelFrameworks, cue.Str(name))).Exists() {
				l.problem(checks.PolicyWithoutFramework, st.pos, "#MLPolicy.%s has no frameworks entry: the runtime checks and the one-policy rule know a framework by it; add frameworks: %s: {labels: [%q]} (the trainer.kubeflow.org/framework labels it runs)", name, name, name)
			}
		}
		if field == contract.FieldRenderParts && len(st.path) == 4 && st.path[3].IsString() {
			l.checkRenderPart(st)
		}
		if field == contract.FieldKnownKeys && len(st.path) == 2 {
			l.checkKnownKeysEntry(st)
		}
		if field == contract.FieldContextKinds && len(st.path) == 2 && st.path[1].IsString() {
			// An apiVersion is a version (v1) or group/version: a group
			// alone names no object the engine meets.
			if av := st.path[1].Unquoted(); !strings.Contains(av, "/") && strings.Contains(av, ".") {
				l.problem(checks.ContextKind, st.pos, "contextKinds: %q is a group, not an apiVersion: objects are filed by apiVersion (%s/VERSION), so none would be", av, av)
			}
		}
		if field == contract.FieldContextKinds && len(st.path) == 3 {
			if name, err := l.lookup(lpath{sels: st.path, ok: true}).String(); err == nil {
				l.checkContextField(st, name, "contextKinds files such objects")
			}
		}
	}
	for _, st := range l.contextSites {
		l.checkContextField(st, st.path[4].Unquoted(), "the lookup gives what it finds")
	}
	l.checkPlannedParts()
}

// checkFrameworkLabels checks that no other framework lists one of the
// trainer.kubeflow.org/framework label values the framework name lists:
// the Kubeflow SDK picks a runtime's trainer by the value, so a framework
// that lists another's value would have its runtimes taken for the
// other's, and the runtime checks would take a runtime of either for
// both. said holds the values already said.
func (l *linter) checkFrameworkLabels(st site, name string, said map[string]bool) {
	frameworks := l.lookup(lpath{sels: []cue.Selector{contract.SelFrameworks}, ok: true})
	labelsOf := func(framework string) []string {
		var labels []string
		_ = frameworks.LookupPath(cue.MakePath(cue.Str(framework), contract.SelFrameworkLabels)).Decode(&labels)
		return labels
	}
	for _, label := range labelsOf(name) {
		for _, other := range source.FieldNames(frameworks) {
			if other == name || said[label] || !slices.Contains(labelsOf(other), label) {
				continue
			}
			said[label] = true
			l.problem(checks.FrameworkLabelShared, st.pos, "frameworks: %s lists the label value %q, which frameworks: %s lists too: the Kubeflow SDK picks a runtime's trainer by its framework label (#Labels.framework), so the runtimes of one would be taken for the other's; give %s a value of its own", name, label, other, name)
		}
	}
}

// checkRenderPartNeeded checks that a framework whose registry entry
// says it needs a render part (needsRenderPart: one that counts its pods
// in place of the shared part) has one of its name: without it, a
// TrainJob's numNodes would reach no pod, in silence.
func (l *linter) checkRenderPartNeeded(st site, name string) {
	needs, err := l.lookup(lpath{sels: []cue.Selector{contract.SelFrameworks, cue.Str(name), contract.SelNeedsRenderPart}, ok: true}).Bool()
	if err != nil || !needs {
		return
	}
	parts := l.lookup(lpath{sels: []cue.Selector{contract.SelRenderParts}, ok: true})
	for _, apiVersion := range source.FieldNames(parts) {
		for _, kind := range source.FieldNames(parts.LookupPath(cue.MakePath(cue.Str(apiVersion)))) {
			if parts.LookupPath(cue.MakePath(cue.Str(apiVersion), cue.Str(kind), cue.Str(name))).Exists() {
				return
			}
		}
	}
	l.problem(checks.FrameworkRenderPart, st.pos, "frameworks: %s needs a render part of its own (needsRenderPart: its pods are counted by it, in place of the shared part), and declares none (renderParts: (#APIVersion): TrainJob: %s): a TrainJob's numNodes would reach no pod", name, name)
}

// checkKnownKeysEntry checks that a knownKeys entry says where its maps
// are: an entry without `at` (a new one, by a misspelt name) checks no
// map.
func (l *linter) checkKnownKeysEntry(st site) {
	entry := l.lookup(lpath{sels: st.path, ok: true})
	if at := entry.LookupPath(cue.MakePath(cue.Str(contract.FieldAt))); at.Validate(cue.Concrete(true)) == nil {
		// Each field of at is one an object the engine meets may have: a
		// misspelt one (lables) or a dotted path (metadata.labels) names
		// no map, and the entry checks nothing.
		var fields []string
		if at.Decode(&fields) != nil {
			return
		}
		known := l.objectFieldNames()
		for _, f := range fields {
			switch {
			case known[f]:
				continue
			case strings.Contains(f, "."):
				l.problem(checks.KnownKeysEntry, st.pos, "knownKeys: %s: at names %q, a dotted path: at names the fields one by one (%q), so this entry checks no map", st.path[1].Unquoted(), f, strings.Split(f, "."))
			default:
				msg := fmt.Sprintf("knownKeys: %s: at names %q, a field no object the engine admits or renders has, so this entry checks no map", st.path[1].Unquoted(), f)
				if s := source.Suggest(f, value.SortedKeys(known)); s != "" {
					msg += fmt.Sprintf(": did you mean %s?", s)
				}
				l.problem(checks.KnownKeysEntry, st.pos, "%s", msg)
			}
			return
		}
		return
	}
	name := st.path[1].Unquoted()
	msg := fmt.Sprintf("knownKeys: %s says no maps (at), so none of its keys is checked", name)
	var others []string
	for _, n := range source.FieldNames(l.lookup(lpath{sels: st.path[:1], ok: true})) {
		if n != name {
			others = append(others, n)
		}
	}
	if s := source.Suggest(name, others); s != "" {
		msg += fmt.Sprintf(": did you mean %s?", s)
	} else {
		msg += `: give the end of their path, at: ["metadata", "labels"]`
	}
	l.problem(checks.KnownKeysEntry, st.pos, "%s", msg)
}

// objectFieldNames are the names of the fields the objects the engine
// meets may have: those of its kinds' CRD schemas, and of the Go types
// of the kinds renders build (fitTypes).
func (l *linter) objectFieldNames() map[string]bool {
	if l.fieldNames != nil {
		return l.fieldNames
	}
	names := map[string]bool{}
	var walkSchema func(s map[string]any, depth int)
	walkSchema = func(s map[string]any, depth int) {
		if s == nil || depth > 40 {
			return
		}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			names[name] = true
			ps, _ := p.(map[string]any)
			walkSchema(ps, depth+1)
		}
		for _, k := range []string{"items", "additionalProperties"} {
			sub, _ := s[k].(map[string]any)
			walkSchema(sub, depth+1)
		}
	}
	for apiVersion, kinds := range l.in.Reviews {
		for kind := range kinds {
			walkSchema(crd.Schema(l.in.Src, l.in.Schemas, apiVersion, kind), 0)
		}
	}
	seen := map[reflect.Type]bool{}
	var walkType func(t reflect.Type)
	walkType = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for name, f := range k8s.JSONFields(t) {
			names[name] = true
			walkType(f.T)
		}
	}
	for _, newType := range k8s.FitTypes {
		walkType(reflect.TypeOf(newType()))
	}
	l.fieldNames = names
	return names
}

// checkContextField checks that #Context has the field a lookup or a
// context kind fills: the engine gives a review context.<name>, and a
// name #Context has not makes every review fail on the user's object.
func (l *linter) checkContextField(st site, name, what string) {
	ctx := l.lookup(lpath{sels: []cue.Selector{contract.SelContextDef}, ok: true})
	if !ctx.Exists() || ctx.Allows(cue.Str(name)) {
		return
	}
	msg := fmt.Sprintf("%s under context.%s, which #Context has not, so every review would fail", what, name)
	if s := source.Suggest(name, source.FieldNames(ctx)); s != "" {
		msg += fmt.Sprintf(": did you mean %s?", s)
	} else {
		msg += fmt.Sprintf("; declare it: #Context: %s?: {...}", name)
	}
	l.problem(checks.ContextKind, st.pos, "%s", msg)
}

// servedKinds are the kinds of the groups that have CRDs (crds), by group,
// version and kind.
func (l *linter) servedKinds() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	var crds map[string]struct{ Group, Version string }
	if err := l.lookup(lpath{sels: []cue.Selector{contract.SelCRDs}, ok: true}).Decode(&crds); err != nil {
		return out
	}
	for kind, c := range crds {
		if out[c.Group] == nil {
			out[c.Group] = map[string][]string{}
		}
		out[c.Group][c.Version] = append(out[c.Group][c.Version], kind)
	}
	for _, versions := range out {
		for _, kinds := range versions {
			sort.Strings(kinds)
		}
	}
	return out
}

// checkAPIVersion checks an apiVersion key: a group that has CRDs serves
// only their versions.
func (l *linter) checkAPIVersion(st site, field string, served map[string]map[string][]string) {
	apiVersion := st.path[1].Unquoted()
	group, version := k8s.GroupOf(apiVersion), strings.TrimPrefix(apiVersion, k8s.GroupOf(apiVersion)+"/")
	versions, ok := served[group]
	if !ok {
		// A group a slip from one that has CRDs (Trainer.kubeflow.org,
		// trainer.kubeflow.com): no object of it comes to these rules.
		if meant := source.Suggest(group, value.SortedKeys(served)); meant != "" {
			l.problem(checks.UnservedAPIVersion, st.pos, "%s: %s is not a group the CRDs serve, so no object of it comes to these rules: did you mean %s?", field, group, meant)
		}
		return
	}
	if versions[version] != nil {
		return
	}
	var names []string
	for v := range versions {
		names = append(names, group+"/"+v)
	}
	sort.Strings(names)
	l.problem(checks.UnservedAPIVersion, st.pos, "%s: %s is not a version the CRDs serve, so no object of it exists: %s serves %s", field, apiVersion, group, strings.Join(names, ", "))
}

// computedKindSites are the apiVersions and kinds of the contract's
// fields keyed by them that an admin's file gives under a label computed
// at load (for kind in [...] {admission: v: (kind): ...}), which no site
// of the files' literal labels names: each at the admin's place of its
// value. checkContract checks them as the literal ones.
func (l *linter) computedKindSites() []site {
	literal := map[string]bool{}
	for _, st := range l.sites {
		if len(st.path) >= 2 {
			literal[cue.MakePath(st.path[:min(len(st.path), 3)]...).String()] = true
		}
	}
	var out []site
	for _, field := range value.SortedKeys(byKindFields) {
		root := l.in.Schemas.LookupPath(cue.MakePath(cue.Str(field)))
		versions, err := root.Fields()
		if err != nil {
			continue
		}
		for versions.Next() {
			kinds, err := versions.Value().Fields()
			if err != nil {
				continue
			}
			for kinds.Next() {
				path := []cue.Selector{cue.Str(field), versions.Selector(), kinds.Selector()}
				if literal[cue.MakePath(path...).String()] {
					continue
				}
				for _, pos := range source.ConjunctPositions(kinds.Value()) {
					if pos.IsValid() && l.in.Src.IsPolicyFile(pos.Filename()) {
						out = append(out, site{path: path, pos: pos})
						break
					}
				}
			}
		}
	}
	return out
}

// checkKind checks a kind key: a kind of a group that has CRDs must be one
// of them, and a kind's checks, lookups and render need its review.
func (l *linter) checkKind(st site, field string, served map[string]map[string][]string, reviews map[string]map[string]cue.Value, needsReview bool) {
	apiVersion, kind := st.path[1].Unquoted(), st.path[2].Unquoted()
	group, version := k8s.GroupOf(apiVersion), strings.TrimPrefix(apiVersion, k8s.GroupOf(apiVersion)+"/")
	if versions, ok := served[group]; ok {
		kinds, ok := versions[version]
		if !ok {
			return // the version's own problem
		}
		if !containsString(kinds, kind) {
			msg := fmt.Sprintf("%s: %s is not a kind of %s, so no object of it exists", field, kind, apiVersion)
			if s := source.Suggest(kind, kinds); s != "" {
				msg += fmt.Sprintf(": did you mean %s?", s)
			} else {
				msg += fmt.Sprintf("; its kinds are %s (a kind of your own belongs in a group of your own: groups, crds)", strings.Join(kinds, ", "))
			}
			l.problem(checks.UnservedKind, st.pos, "%s", msg)
			return
		}
	}
	if !needsReview {
		return
	}
	if _, ok := reviews[apiVersion][kind]; ok {
		if _, renders := l.in.Renders[apiVersion][kind]; renderFields[field] && !renders {
			kinds := value.SortedKeys(l.in.Renders[apiVersion])
			msg := fmt.Sprintf("%s: %s %s has no render, so nothing of this runs", field, apiVersion, kind)
			if len(kinds) > 0 {
				msg += fmt.Sprintf("; the kinds of %s with a render are %s", apiVersion, strings.Join(kinds, ", "))
			}
			l.problem(checks.UnservedKind, st.pos, "%s", msg)
		}
		return
	}
	kinds := value.SortedKeys(reviews[apiVersion])
	msg := fmt.Sprintf("%s: %s %s has no review (admission), so nothing of this runs", field, apiVersion, kind)
	if s := source.Suggest(kind, kinds); s != "" {
		msg += fmt.Sprintf(": did you mean %s?", s)
	} else if len(kinds) > 0 {
		msg += fmt.Sprintf("; the kinds of %s with a review are %s", apiVersion, strings.Join(kinds, ", "))
	}
	l.problem(checks.UnservedKind, st.pos, "%s", msg)
}

// frameworkPolicies are the fields of #MLPolicy that are frameworks'.
func (l *linter) frameworkPolicies() []string {
	var out []string
	for _, n := range source.FieldNames(l.lookup(lpath{sels: []cue.Selector{contract.SelMLPolicy}, ok: true})) {
		if n != "numNodes" {
			out = append(out, n)
		}
	}
	return out
}

// plannedParts are the render parts a kind's plan may choose (its parts'
// names), by apiVersion and kind.
func (l *linter) plannedParts(apiVersion, kind string) []string {
	return source.FieldNames(l.lookup(lpath{sels: []cue.Selector{contract.SelPlans, cue.Str(apiVersion), cue.Str(kind), contract.SelParts}, ok: true}))
}

// checkRenderPart checks that a plan may choose a render part of the
// admin's: the engine evaluates only the parts a runtime's plan names.
func (l *linter) checkRenderPart(st site) {
	apiVersion, kind, name := st.path[1].Unquoted(), st.path[2].Unquoted(), st.path[3].Unquoted()
	planned := l.plannedParts(apiVersion, kind)
	// A framework's part is chosen by its name.
	frameworks := source.FieldNames(l.in.Schemas.LookupPath(contract.PathFrameworks))
	if containsString(planned, name) || containsString(frameworks, name) {
		return
	}
	msg := fmt.Sprintf("renderParts: %s is neither a framework (frameworks: %s) nor a part a plan chooses, so it never renders", name, name)
	if s := source.Suggest(name, append(planned, frameworks...)); s != "" {
		msg += fmt.Sprintf(": did you mean %s?", s)
	} else {
		msg += fmt.Sprintf("; name it after its framework, or say when it applies: plans: %q: %s: parts: %s: <condition on the runtime>", apiVersion, kind, name)
	}
	l.problem(checks.RenderPart, st.pos, "%s", msg)
}

// checkPlannedParts checks that each part an admin's plan names exists.
func (l *linter) checkPlannedParts() {
	for _, st := range l.partSites {
		apiVersion, kind, name := st.path[1].Unquoted(), st.path[2].Unquoted(), st.path[4].Unquoted()
		parts := source.FieldNames(l.lookup(lpath{sels: []cue.Selector{contract.SelRenderParts, cue.Str(apiVersion), cue.Str(kind)}, ok: true}))
		if containsString(parts, name) {
			continue
		}
		msg := fmt.Sprintf("plans: the part %s has no renderParts entry, so choosing it renders nothing", name)
		if s := source.Suggest(name, parts); s != "" {
			msg += fmt.Sprintf(": did you mean %s?", s)
		}
		l.problem(checks.RenderPart, st.pos, "%s", msg)
	}
}

// checkUnread refuses an entry the engine would never read: one declared
// optional (rule?: [...]), hidden (_rule) or as a definition (#rule) in a
// map the engine reads by name (a struct whose schema is a pattern: rules,
// mutations, a render's edits, the runtimes), whose reader sees only
// regular fields; and such a map declared hidden or as a definition
// (_webhook: {...}). A hidden field or definition that some of the policy
// uses by name is a helper, and stays. In a definition of the admin's (a
// policy, #MLPolicy: paddle?:) an optional field is a schema's, and stays.
func (l *linter) checkUnread() {
	uses := l.identUses()
	for _, st := range l.unread {
		parentSels, last := st.path[:len(st.path)-1], st.path[len(st.path)-1]
		if slices.ContainsFunc(parentSels, cue.Selector.IsDefinition) {
			continue
		}
		parent := l.lookup(lpath{sels: parentSels, ok: true})
		name := strings.TrimLeft(strings.TrimSuffix(last.String(), "?"), "_#")
		where := cue.MakePath(st.path...).String()
		switch {
		case st.optional && isNamedMap(parent):
			l.problem(checks.UnusedField, st.pos, "%s is optional, so it is never evaluated and the engine never reads it: make it a regular field (%s: ...)", where, strings.TrimSuffix(last.String(), "?"))
		case st.optional:
		case uses[last.String()] > 1:
			// A helper: something refers to it.
		case isNamedMap(parent):
			l.problem(checks.UnusedField, st.pos, "%s is %s that nothing uses, so it is never evaluated and the engine never reads it: make it a regular field (%s: ...)", where, labelKind(last), name)
		case len(st.path) > 1 && isNamedMap(parent.LookupPath(cue.MakePath(cue.Str(name)))):
			l.problem(checks.UnusedField, st.pos, "%s is %s that nothing uses, so the engine never reads what it holds: did you mean %s?", where, labelKind(last), name)
		default:
			// A slip in a name a file sets for another to read (an
			// overlay's #enforceMaxnodes: true for #enforceMaxNodes): what
			// reads the one meant sees its default. A slip is one letter
			// (or its case) off; names further off are names of their own.
			meant := source.Suggest(last.String(), usedLike(uses, last.String()))
			if meant != "" && source.EditDistance(strings.ToLower(meant), strings.ToLower(last.String())) <= 1 {
				l.problem(checks.UnusedField, st.pos, "%s is %s that nothing uses: did you mean %s, which the policy reads? As written, %s keeps the value it has without it", where, labelKind(last), meant, meant)
			}
		}
	}
}

// usedLike are the identifiers of name's kind (a definition's #, a hidden
// field's _) that something refers to (uses, declarations included).
func usedLike(uses map[string]int, name string) []string {
	prefix := name[:1]
	if strings.HasPrefix(name, "_#") {
		prefix = "_#"
	}
	var out []string
	for id, n := range uses {
		if n > 1 && id != name && strings.HasPrefix(id, prefix) && (prefix == "_#" || !strings.HasPrefix(id, "_#")) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// labelKind says what kind of field a hidden or definition label makes.
func labelKind(sel cue.Selector) string {
	if sel.LabelType() == cue.HiddenLabel {
		return "a hidden field"
	}
	return "a definition"
}

// isNamedMap says whether v is a map the engine reads by name: a struct
// whose schema says what every field is (a pattern).
func isNamedMap(v cue.Value) bool {
	return v.LookupPath(cue.MakePath(cue.AnyString)).Exists()
}

// identUses counts each identifier's occurrences in the loaded files,
// cuetrainer's and the policy's, declarations' labels included (a
// render part sets #counts, which the render reads).
func (l *linter) identUses() map[string]int {
	uses := map[string]int{}
	for _, inst := range l.in.Instances {
		for _, f := range inst.Files {
			ast.Walk(f, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					uses[id.Name]++
				}
				return true
			}, nil)
		}
	}
	return uses
}

// checkListsOnce refuses an entry of a map the engine reads by name (a
// rule, a mutation) that two list literals declare, one of them with a
// comprehension, in the admin's files or in the admin's and cuetrainer's
// (two rules given one name): CUE unifies lists item by item, so the rule
// fails on every object where the two lists differ in length (one fires,
// the other does not). An open list ([...]) is a constraint, not a second
// rule; lists without comprehensions are equal, or the load fails.
func (l *linter) checkListsOnce() {
	seen := map[string]bool{}
	for _, st := range l.lists {
		where := cue.MakePath(st.path...).String()
		if seen[where] || !isNamedMap(l.lookup(lpath{sels: st.path[:len(st.path)-1], ok: true})) {
			continue
		}
		seen[where] = true
		op, args := l.in.Schemas.LookupPath(cue.MakePath(st.path...)).Expr()
		if op != cue.AndOp {
			continue
		}
		var at []string
		varies := false
		for _, a := range args {
			src := a.Source()
			if f, ok := src.(*ast.Field); ok {
				src = f.Value
			}
			if list, ok := src.(*ast.ListLit); ok && !slices.ContainsFunc(list.Elts, isEllipsis) {
				pos := a.Pos()
				at = append(at, fmt.Sprintf("%s:%d", l.in.Src.Display(pos.Filename()), pos.Line()))
				varies = varies || slices.ContainsFunc(list.Elts, isComprehension)
			}
		}
		if len(at) > 1 && varies {
			l.problem(checks.ListDeclaredTwice, st.pos, "%s is declared by %d lists (%s): CUE unifies them item by item, so it fails on every object where they differ in length; give each its own name", where, len(at), strings.Join(at, ", "))
		}
	}
}

// checkEditGroups checks that each edit group a policy declares has a
// name of its own: a render is unified with its parts (and a plan's
// groups join its own), so a group of the same name in another render,
// part or plan (a paddle part's edits.scheduler beside the shipped
// render's, made only for gang-scheduled runtimes) is one group to CUE,
// whose ops lists unify item by item and fail the render of a user's
// TrainJob where they differ, at cuetrainer's own line.
func (l *linter) checkEditGroups() {
	type decl struct {
		owner, file string
		pos         token.Pos
	}
	groups := map[string][]decl{}
	var walk func(decls []ast.Decl, labels []string)
	walk = func(decls []ast.Decl, labels []string) {
		for _, d := range decls {
			switch d := d.(type) {
			case *ast.Field:
				name, _, err := ast.LabelName(d.Label)
				if err != nil {
					name = "*" // (#APIVersion), a pattern
				}
				path := append(labels[:len(labels):len(labels)], name)
				if n := len(path); n >= 2 && path[n-2] == contract.SelEdits.Unquoted() && name != "*" {
					// A render's (render: v: K, or a definition it is), a
					// part's or a plan's: which kind's, the CUE decides.
					groups[name] = append(groups[name], decl{owner: strings.Join(path[:n-2], "."), file: d.Pos().Filename(), pos: d.Label.Pos()})
					continue
				}
				if s, ok := d.Value.(*ast.StructLit); ok && len(path) < 8 {
					walk(s.Elts, path)
				}
			case *ast.EmbedDecl:
				if s, ok := d.Expr.(*ast.StructLit); ok {
					walk(s.Elts, labels)
				}
			case *ast.Comprehension:
				if s, ok := d.Value.(*ast.StructLit); ok {
					walk(s.Elts, labels)
				}
			}
		}
	}
	for _, f := range cueFiles(l.in.Instances) {
		walk(f.Decls, nil)
	}
	for _, name := range value.SortedKeys(groups) {
		ds := groups[name]
		for _, d := range ds {
			if !l.in.Src.IsPolicyFile(d.file) {
				continue
			}
			for _, other := range ds {
				if other.owner != d.owner || other.file != d.file {
					at := fmt.Sprintf("%s:%d", l.in.Src.Display(other.pos.Filename()), other.pos.Line())
					l.problem(checks.ListDeclaredTwice, d.pos, "edits.%s is also a group of %s (%s): a render and its parts and plan are one to CUE, so the two groups' ops would unify item by item and fail a render where they differ; give this group a name of its own", name, other.owner, at)
					break
				}
			}
		}
	}
}

func isEllipsis(x ast.Expr) bool {
	_, ok := x.(*ast.Ellipsis)
	return ok
}

func isComprehension(x ast.Expr) bool {
	_, ok := x.(*ast.Comprehension)
	return ok
}

// checkEditOp checks an edit's literal op: the engine makes those of
// editOps alone, and says so only when the edit is made.
func (l *linter) checkEditOp(s *ast.StructLit) {
	op, lit, ok := stringField(s, "op")
	if ok && slices.Contains(edit.Ops, op) {
		// The other ops' field in place of the op's own does nothing, or
		// writes null.
		switch {
		case (op == "set" || op == "merge") && fieldOf(s, "value") == nil && fieldOf(s, "items") != nil:
			l.problem(checks.EditOp, fieldOf(s, "items").Pos(), "op %s takes a value, and this edit gives items (append's and upsert's): it would write null, or nothing", op)
		case (op == "append" || op == "upsert") && fieldOf(s, "items") == nil && fieldOf(s, "value") != nil:
			l.problem(checks.EditOp, fieldOf(s, "value").Pos(), "op %s takes items, and this edit gives a value (set's and merge's): it would add nothing", op)
		}
		return
	}
	if !ok {
		return
	}
	msg := fmt.Sprintf("op %q is not an op the engine makes (%s), so the edit would fail when made", op, strings.Join(edit.Ops, ", "))
	if sug := source.Suggest(op, edit.Ops); sug != "" {
		msg += fmt.Sprintf(": did you mean %s?", sug)
	}
	l.problem(checks.EditOp, lit.Pos(), "%s", msg)
}

// checkEditObject checks an edit's literal object: a mutation edits the
// object "input"; a render's edit one of the objects a render of some
// kind builds (an id under `objects:` in any file). A render skips an edit
// of an object it does not build (one it builds only once, such as the
// runtime's snapshot), so a misspelled id (`jobSet`) would be an edit
// silently not made; a mutation's fails when it is made.
func (l *linter) checkEditObject(s *ast.StructLit, mutation bool) {
	object, lit, ok := stringField(s, contract.FieldObject)
	if !ok {
		return
	}
	ids := []string{contract.FieldInput}
	what := "a mutation edits the object \"input\""
	if !mutation {
		ids = l.objectIDs()
		what = "no render builds an object of that id (" + strings.Join(ids, ", ") + ")"
	}
	if slices.Contains(ids, object) {
		return
	}
	msg := fmt.Sprintf("the edit's object %q: %s, so the edit would never be made", object, what)
	if mutation {
		msg = fmt.Sprintf("the edit's object %q: %s, so the mutation would fail when made", object, what)
	}
	if sug := source.Suggest(object, ids); sug != "" {
		msg += fmt.Sprintf(": did you mean %s?", sug)
	}
	l.problem(checks.EditObject, lit.Pos(), "%s", msg)
}

// checkEditSteps checks an edit's literal path for steps the engine does
// not take: a step is a field (a string), a list's item by its fields'
// values ({name: "node"}) or a path spliced in (a list), and a number,
// a bool or null is none of them, so the edit would fail whenever it is
// made. (Items go by key, as the API server merges Kubernetes lists: an
// item's place may differ from one object to the next.)
func (l *linter) checkEditSteps(s *ast.StructLit) {
	f := fieldOf(s, "path")
	if f == nil {
		return
	}
	path, ok := f.Value.(*ast.ListLit)
	if !ok {
		return
	}
	for _, x := range path.Elts {
		lit, ok := x.(*ast.BasicLit)
		if !ok || lit.Kind == token.STRING {
			continue
		}
		l.problem(checks.EditPath, lit.Pos(), "the edit's path takes %s as a step, and a step is a field (a string), a list's item by its fields' values ({name: \"node\"}) or a path spliced in (a list): an item is never edited by its index, so the edit would fail whenever it is made", lit.Value)
	}
}

// objectIDs are the ids of the objects the renders, their parts and plans
// of every file declare (`objects: jobset: ...`), sorted: the `objects` of
// any field but the lookups' (whose objects are what a lookup names).
func (l *linter) objectIDs() []string {
	if l.objects != nil {
		return l.objects
	}
	seen := map[string]bool{}
	l.objectGoTypes = map[string]reflect.Type{}
	add := func(d ast.Decl) { l.addObject(seen, d) }
	for _, f := range cueFiles(l.in.Instances) {
		ast.Walk(f, func(n ast.Node) bool {
			fd, ok := n.(*ast.Field)
			if !ok {
				return true
			}
			name, _, err := ast.LabelName(fd.Label)
			if err == nil && name == contract.FieldLookups && slices.Contains(f.Decls, ast.Decl(fd)) {
				return false
			}
			if err != nil || name != contract.SelObjects.Unquoted() {
				return true
			}
			body, ok := fd.Value.(*ast.StructLit)
			if !ok {
				l.objectsOpen = true
				return true
			}
			for _, d := range body.Elts {
				if c, ok := d.(*ast.Comprehension); ok {
					v, ok := c.Value.(*ast.StructLit)
					if !ok {
						l.objectsOpen = true
						continue
					}
					for _, e := range v.Elts {
						add(e)
					}
					continue
				}
				add(d)
			}
			return true
		}, nil)
	}
	l.objects = value.SortedKeys(seen)
	return l.objects
}

// addObject adds the label of a field declaration to ids, and its Go
// type (fitTypes) to the linter's objectGoTypes when it is declared with
// a literal apiVersion and kind: where a path into the object can be
// checked before any render.
func (l *linter) addObject(ids map[string]bool, d ast.Decl) {
	f, ok := d.(*ast.Field)
	if !ok {
		if _, ok := d.(*ast.EmbedDecl); ok {
			l.objectsOpen = true
		}
		return
	}
	if _, ok := f.Label.(*ast.ListLit); ok {
		return // a pattern ([id=string]: ...) declares no object
	}
	id, _, err := ast.LabelName(f.Label)
	if err != nil {
		l.objectsOpen = true
		return
	}
	ids[id] = true
	if s, ok := f.Value.(*ast.StructLit); ok {
		apiVersion, _, ok1 := stringField(s, "apiVersion")
		kind, _, ok2 := stringField(s, "kind")
		if newType, known := k8s.FitTypes[apiVersion+"\x00"+kind]; ok1 && ok2 && known {
			l.objectGoTypes[id] = reflect.TypeOf(newType()).Elem()
		}
	}
}

// dataFields are the maps of a ConfigMap's or a Secret's keys.
var dataFields = map[string][]string{"ConfigMap": {"data", "binaryData"}, "Secret": {"data", "stringData"}}

// checkObjectNames checks the objects a policy's renders and render parts
// build, as the load evaluates them before any TrainJob: a name it knows
// already (metadata: name: "paddle-master") is every TrainJob's, so that
// the TrainJobs of a namespace would apply one object, each over the
// others'; a ConfigMap's or a Secret's key must be one the API server
// takes (a file name: "paddle/hosts" is refused).
func (l *linter) checkObjectNames() {
	check := func(objects cue.Value) {
		for _, id := range source.FieldNames(objects) {
			obj := objects.LookupPath(cue.MakePath(cue.Str(id)))
			name := obj.LookupPath(contract.PathMetadataName)
			if s, err := name.String(); err == nil && l.in.Src.IsPolicyFile(name.Pos().Filename()) {
				l.problem(checks.ObjectName, name.Pos(), "the object %q is named %q whatever the TrainJob: the TrainJobs of a namespace would apply one object, each over the others'; name it after the TrainJob (\"\\(#name)-%s\")", id, s, s)
			}
			kind, _ := obj.LookupPath(contract.PathKind).String()
			for _, field := range dataFields[kind] {
				data := obj.LookupPath(cue.MakePath(cue.Str(field)))
				for _, key := range source.FieldNames(data) {
					at := data.LookupPath(cue.MakePath(cue.Str(key)))
					if errs := validation.IsConfigMapKey(key); len(errs) > 0 && l.in.Src.IsPolicyFile(at.Pos().Filename()) {
						l.problem(checks.ObjectKey, at.Pos(), "the %s %q has the %s key %q, which the API server refuses (a key is a file's name when the %s is mounted): %s", kind, id, field, key, kind, strings.Join(errs, "; "))
					}
				}
			}
		}
	}
	// The renders and their parts, as the compilation read them.
	for _, apiVersion := range value.SortedKeys(l.in.Renders) {
		for _, kind := range value.SortedKeys(l.in.Renders[apiVersion]) {
			check(l.in.Renders[apiVersion][kind].LookupPath(contract.PathObjects))
		}
	}
	for _, apiVersion := range value.SortedKeys(l.in.Parts) {
		for _, kind := range value.SortedKeys(l.in.Parts[apiVersion]) {
			for _, part := range value.SortedKeys(l.in.Parts[apiVersion][kind]) {
				check(l.in.Parts[apiVersion][kind][part].LookupPath(contract.PathObjects))
			}
		}
	}
}

// objectTypes are the Go types of the objects declared with a literal
// apiVersion and kind, by id (objectIDs finds them).
func (l *linter) objectTypes() map[string]reflect.Type {
	l.objectIDs()
	return l.objectGoTypes
}

// checkListItems checks the items an admin's lists write as struct
// literals, each alone or as a comprehension's value: an entry of a map
// the engine reads by name against the item's schema (#FieldError,
// #Warning: a field the item has not, detial:, a literal it refuses, type:
// "Invalid Value"); a mutation's path into the object; an edit's op (a
// mutation's, a render's edits.<group>.ops). CUE checks an item only when
// a rule makes it, which the probes may never do; a broken warning would
// reach users as a warning of its own.
func (l *linter) checkListItems() {
	for _, st := range l.lists {
		n := len(st.path)
		mutation := n == 5 && st.path[0] == contract.SelMutators && st.path[3] == contract.SelMutations
		edits := mutation || n >= 3 && st.path[n-1] == contract.SelOps && st.path[n-3] == contract.SelEdits
		item := l.lookup(lpath{sels: st.path[:n-1], ok: true}).LookupPath(cue.MakePath(cue.AnyString, cue.AnyIndex))
		typed := item.Exists() && item.IncompleteKind() == cue.StructKind
		for _, x := range st.list.Elts {
			if c, ok := x.(*ast.Comprehension); ok {
				x = c.Value
			}
			if typed {
				l.checkHelperItem(st.path, item, x)
			}
			s, ok := x.(*ast.StructLit)
			if !ok {
				continue
			}
			if mutation {
				l.checkMutationPath(st.path[1], st.path[2], s)
			}
			if edits {
				l.checkEditOp(s)
				l.checkEditObject(s, mutation)
				l.checkEditSteps(s)
			}
			if typed {
				l.checkItem(st.path, item, s)
			}
			if n == 5 && st.path[0] == contract.SelAdmission && st.path[1].IsString() && st.path[2].IsString() {
				l.checkFindingPath(st.path[1], st.path[2], s)
			}
		}
	}
}

// checkHelperItem checks an item a list makes of a definition
// (#TooLong & {#path: ...}, or the definition alone) against the item's
// schema: a field the definition always gives that the item has not (an
// error helper's type and detail in a warning, which has a message) makes
// the rule fail on every object it fires on, never on the probes if they
// do not make it fire.
func (l *linter) checkHelperItem(path []cue.Selector, item cue.Value, x ast.Expr) {
	var defs []ast.Expr
	if b, ok := x.(*ast.BinaryExpr); ok && b.Op == token.AND {
		defs = append(defs, b.X, b.Y)
	} else {
		defs = append(defs, x)
	}
	for _, d := range defs {
		id, ok := d.(*ast.Ident)
		if !ok || !strings.HasPrefix(id.Name, "#") {
			continue
		}
		p, ok := l.resolve(id)
		if !ok {
			continue
		}
		def := l.lookup(p)
		if def.IncompleteKind() != cue.StructKind {
			continue
		}
		it, err := def.Fields()
		for err == nil && it.Next() {
			name := it.Selector().Unquoted()
			if item.Allows(it.Selector()) {
				continue
			}
			msg := fmt.Sprintf("%s: an item made of %s, which gives %s: the item has no field %s, so the rule would fail on every object it fires on", cue.MakePath(path...), id.Name, name, name)
			if fields := source.FieldNames(item); len(fields) > 0 {
				msg += fmt.Sprintf(" (its fields are %s)", strings.Join(fields, ", "))
			}
			l.problem(checks.ContractItem, d.Pos(), "%s", msg)
			return
		}
	}
}

// checkFindingPath checks a finding's literal path (path:
// "spec.trainer.numNodes") against its kind's schema: a slip from a field
// the object has (numnodes), or an index into a list that is no number
// (env[i], an interpolation without its \( )), would point the user at
// a field that is not there.
func (l *linter) checkFindingPath(apiVersion, kind cue.Selector, s *ast.StructLit) {
	text, lit, ok := stringField(s, "path")
	if !ok || strings.Contains(lit.Value, "\\(") {
		return
	}
	v, cur := l.at([]cue.Selector{contract.SelAdmission, apiVersion, kind, contract.SelObject})
	name := kind.Unquoted()
	for _, st := range k8s.FieldPathSteps(text) {
		if !v.Exists() || v.Err() != nil {
			return
		}
		var sel cue.Selector
		switch k := v.IncompleteKind(); {
		case st.Bracket && k == cue.ListKind:
			i, err := strconv.Atoi(st.Name)
			if err != nil {
				l.problem(checks.FindingPath, lit.Pos(), "the finding's path %s: %s is a list, and [%s] is no index into it: did you mean [\\(%s)]?", lit.Value, name, st.Name, st.Name)
				return
			}
			sel = cue.Index(i)
		case st.Bracket:
			sel = cue.Str(st.Name) // a map's key
		case closedSchema(v, false) && !v.Allows(cue.Str(st.Name)):
			// A path may name what the object has not on purpose (as
			// Kubeflow's webhooks do: spec.templateSpec); a slip from
			// a field it has is a typo.
			if sug := source.Suggest(st.Name, source.FieldNames(v)); sug != "" {
				l.problem(checks.FindingPath, lit.Pos(), "the finding's path %s: %s has no field %s, so the user would be pointed at a field that is not there: did you mean %s?", lit.Value, name, st.Name, sug)
			}
			return
		default:
			sel = cue.Str(st.Name)
		}
		v, cur = l.at(append(cur[:len(cur):len(cur)], sel))
		if st.Bracket {
			name += "[" + st.Name + "]"
		} else {
			name += "." + st.Name
		}
	}
}

// checkItem checks an item's literal fields against its schema.
func (l *linter) checkItem(path []cue.Selector, item cue.Value, s *ast.StructLit) {
	for _, p := range l.literalProblems(item, s) {
		what := p.what
		if p.meant != "" {
			what += fmt.Sprintf(": did you mean %s?", p.meant)
		}
		l.problem(checks.ContractItem, fieldPos(s, p.field), "%s: an item's %s: %s", cue.MakePath(path...), p.field, what)
	}
}

// literalProblem is what a schema refuses of one literal field of a
// struct literal; meant the field meant, for a field the schema has not.
type literalProblem struct {
	field, what, meant string
}

// literalProblems are what schema refuses of a struct literal's literal
// fields (literalFields), one per field.
func (l *linter) literalProblems(schema cue.Value, s *ast.StructLit) []literalProblem {
	err := schema.Unify(l.in.Ctx.BuildExpr(literalFields(s))).Validate()
	if err == nil {
		return nil
	}
	var out []literalProblem
	for _, p := range l.in.Src.CUEProblemList(err) {
		// "<the item's path>.<field>: <what is wrong>", and the schema's
		// positions on the lines after.
		first, _, _ := strings.Cut(p.Message, "\n")
		at, what, ok := strings.Cut(first, ": ")
		if !ok {
			at, what = "", first
		}
		lp := literalProblem{field: at[strings.LastIndex(at, ".")+1:], what: what}
		if what == "field not allowed" {
			lp.meant = source.Suggest(lp.field, source.FieldNames(schema))
		}
		out = append(out, lp)
	}
	return out
}

// literalFields is a struct literal's fields with plain labels, their
// values kept where they are literals (a string, a number, null), an
// open list or struct where they are list or struct literals, and made _
// where they are not: what a schema can say of it before any data.
func literalFields(s *ast.StructLit) *ast.StructLit {
	out := &ast.StructLit{}
	for _, d := range s.Elts {
		f, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		switch lb := f.Label.(type) {
		case *ast.Ident:
			if strings.HasPrefix(lb.Name, "#") || strings.HasPrefix(lb.Name, "_") {
				continue
			}
		case *ast.BasicLit:
		default:
			continue
		}
		value := ast.Expr(ast.NewIdent("_"))
		switch v := f.Value.(type) {
		case *ast.BasicLit:
			value = v
		case *ast.ListLit:
			// A list of any items, a struct of any fields: their kind.
			value = &ast.ListLit{Elts: []ast.Expr{&ast.Ellipsis{}}}
		case *ast.StructLit:
			value = &ast.StructLit{Elts: []ast.Decl{&ast.Ellipsis{}}}
		}
		out.Elts = append(out.Elts, &ast.Field{Label: f.Label, Constraint: f.Constraint, Value: value})
	}
	return out
}

// fieldPos is where a struct literal sets a field: its value when that is
// a literal (what a schema refuses), else its label; the struct's opening
// brace when it has no such field.
func fieldPos(s *ast.StructLit, name string) token.Pos {
	f := fieldOf(s, name)
	if f == nil {
		return s.Pos()
	}
	if lit, ok := f.Value.(*ast.BasicLit); ok {
		return lit.Pos()
	}
	return f.Label.Pos()
}

// fieldOf is the field a struct literal writes under name; nil when it
// writes none.
func fieldOf(s *ast.StructLit, name string) *ast.Field {
	for _, d := range s.Elts {
		if f, ok := d.(*ast.Field); ok {
			if label, _, _ := ast.LabelName(f.Label); label == name {
				return f
			}
		}
	}
	return nil
}

// stringField is the string a struct literal writes under name as a
// literal, and the literal; false when it writes none.
func stringField(s *ast.StructLit, name string) (string, *ast.BasicLit, bool) {
	f := fieldOf(s, name)
	if f == nil {
		return "", nil, false
	}
	lit, ok := f.Value.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", nil, false
	}
	v, err := literal.Unquote(lit.Value)
	return v, lit, err == nil
}

// checkMutationPath checks a mutation's literal path into its object
// (object: "input") against the kind's schema: the API server prunes a
// field its CRD has not, so such a mutation would do nothing.
func (l *linter) checkMutationPath(apiVersion, kind cue.Selector, s *ast.StructLit) {
	object, _, _ := stringField(s, "object")
	pathField := fieldOf(s, "path")
	if object != contract.FieldInput || pathField == nil {
		return
	}
	path, ok := pathField.Value.(*ast.ListLit)
	if !ok {
		return
	}
	steps := literalSteps(path)
	base := []cue.Selector{contract.SelAdmission, apiVersion, kind, contract.SelObject}
	what := "the API server would prune what the mutation writes there"
	if pos, msg, found := l.stepsProblem(base, kind.Unquoted(), steps, what); found {
		l.problem(checks.MutationPath, pos, "%s", msg)
		return
	}
	if len(steps) > 0 && steps[0].name == "status" {
		// The status subresource: the API server drops what a create or
		// an update of the object writes to its status.
		if sub, err := l.in.Schemas.LookupPath(cue.MakePath(append([]cue.Selector{contract.SelCRDs, kind}, contract.PathCRDStatus.Selectors()...)...)).Bool(); err == nil && sub {
			l.problem(checks.MutationPath, steps[0].pos, "%s has a status subresource, so the API server drops the status a create or an update writes: the mutation would never be kept", kind.Unquoted())
			return
		}
	}
	if len(steps) == 0 || len(steps) != len(path.Elts) {
		return // a computed step: the schema says no more
	}
	at := slices.Clone(base)
	name := kind.Unquoted()
	for _, st := range steps {
		at, name = append(at, st.sel), name+"."+st.name
	}
	l.checkMutationValue(at, name, s)
}

// checkReadsPaths checks the paths a mutator, a lookup or a plan declares
// it reads (`reads: name: ["spec", "trainer"]`; a lookup's updateReads
// too) against the kind's schema:
// the evaluation is given the input's values at those paths alone, so a
// misspelt field (`trainr`) or a dotted path (`"metadata.labels"`) gives
// it nothing, and what reads there sees the field absent, in silence.
func (l *linter) checkReadsPaths() {
	for _, st := range l.lists {
		p := st.path
		if len(p) != 5 || p[3] != contract.PathReads.Selectors()[0] && p[3] != contract.SelUpdateReads || p[1].LabelType() != cue.StringLabel || p[2].LabelType() != cue.StringLabel {
			continue
		}
		var who string
		switch p[0] {
		case contract.SelMutators:
			who = "the mutations"
		case cue.Str(contract.FieldLookups):
			who = "the lookups"
		case contract.SelPlans:
			who = "the plan"
		default:
			continue
		}
		steps := literalSteps(st.list)
		kind := p[2].Unquoted()
		if i := slices.IndexFunc(steps, func(s step) bool { return s.name == "*" }); i >= 0 {
			// A path of reads names fields: the engine copies the value
			// at it, and finds no field "*".
			whole := make([]string, i)
			for j := range whole {
				whole[j] = steps[j].name
			}
			l.problem(checks.ReadsPath, steps[i].pos, "reads name fields, and \"*\" is none: %s would be given nothing there; read the list whole (%q)", who, whole)
			continue
		}
		base := []cue.Selector{contract.SelAdmission, p[1], p[2], contract.SelObject}
		pos, msg, found := l.stepsProblem(base, kind, steps, who+" would be given nothing there")
		if !found {
			continue
		}
		for _, step := range steps {
			if step.pos == pos && strings.Contains(step.name, ".") {
				msg = fmt.Sprintf("%q is a dotted path: reads name the fields one by one (%q), so %s would be given nothing there", step.name, strings.Split(step.name, "."), who)
			}
		}
		l.problem(checks.ReadsPath, pos, "%s", msg)
	}
}

// literalSteps are the fields a literal path (a list of strings) names,
// up to its first step that is no string literal (a list item, a field
// computed at load): the schema says no more past it.
func literalSteps(path *ast.ListLit) []step {
	var steps []step
	for _, x := range path.Elts {
		lit, ok := x.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			break
		}
		name, err := literal.Unquote(lit.Value)
		if err != nil {
			break
		}
		steps = append(steps, step{sel: cue.Str(name), ok: true, name: name, pos: lit.Pos()})
	}
	return steps
}

// checkMutationValue checks what a mutation with a literal path writes
// against the kind's schema there: items added to what is no list, a map
// merged into what is no object, a literal of another type, a field the
// schema has not. The API server refuses such an object (the user's, for
// the policy's slip) or prunes the field; CUE sees it only when the
// mutation fires, which the probes may never make it do.
func (l *linter) checkMutationValue(at []cue.Selector, name string, s *ast.StructLit) {
	schema, _ := l.at(at)
	if !schema.Exists() || schema.Err() != nil || schema.IncompleteKind() == cue.TopKind {
		return
	}
	op, opLit, _ := stringField(s, "op")
	kind := schema.IncompleteKind()
	refuse := func(pos token.Pos, format string, args ...any) {
		l.problem(checks.MutationValue, pos, "%s is %v, so the API server would refuse what the mutation writes there: %s", name, kind, fmt.Sprintf(format, args...))
	}
	switch op {
	case "upsert", "append":
		if kind&cue.ListKind == 0 {
			refuse(opLit.Pos(), "op %s adds items to a list", op)
			return
		}
		items, ok := fieldValue(s, "items").(*ast.ListLit)
		if !ok {
			return
		}
		item := schema.LookupPath(cue.MakePath(cue.AnyIndex))
		for _, x := range items.Elts {
			if v, ok := x.(*ast.StructLit); ok && item.Exists() {
				l.checkWritten(item, name+"[]", v)
			}
		}
	case "set", "merge":
		switch v := fieldValue(s, "value").(type) {
		case *ast.StructLit:
			if kind&cue.StructKind == 0 {
				refuse(v.Pos(), "the value is an object")
				return
			}
			l.checkWritten(schema, name, v)
		case *ast.ListLit:
			if kind&cue.ListKind == 0 {
				refuse(v.Pos(), "the value is a list")
			}
		case *ast.BasicLit:
			if op == "merge" {
				refuse(v.Pos(), "op merge adds an object's fields")
			} else if lit := l.in.Ctx.BuildExpr(v); lit.Err() == nil && schema.Unify(lit).Err() != nil {
				refuse(v.Pos(), "the value is %s", v.Value)
			}
		}
	}
}

// checkWritten checks the literal fields of what a mutation writes (an
// object, an item) against the schema there.
func (l *linter) checkWritten(schema cue.Value, name string, s *ast.StructLit) {
	for _, p := range l.literalProblems(schema, s) {
		what := ": " + p.what
		if p.what == "field not allowed" {
			what = ", a field the schema has not, so the API server would prune it"
		}
		if p.meant != "" {
			what += fmt.Sprintf(": did you mean %s?", p.meant)
		}
		l.problem(checks.MutationValue, fieldPos(s, p.field), "the mutation writes %s.%s%s", name, p.field, what)
	}
}

// fieldValue is the value a struct literal writes under name; nil when
// it writes none.
func fieldValue(s *ast.StructLit, name string) ast.Expr {
	if f := fieldOf(s, name); f != nil {
		return f.Value
	}
	return nil
}
