package crd

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// A bound is written once. An admin's field may carry a kubebuilder
// validation marker (// +kubebuilder:validation:Minimum=1024), which the
// CRD takes and the API server checks; vet and the webhooks check the CUE.
// So the engine makes each such marker of a policy file a CUE constraint
// too, on the field's path, in a file of its own (markerFile): what the
// cluster refuses, vet refuses. The other way, a bound written in CUE
// reaches the CRD by itself (cueBounds).
//
// cuetrainer's own schemas write their markers' checks as crdChecks rules,
// in the API server's words; the engine leaves those alone.

// MarkerBound is one marker's constraint at a field's path.
type MarkerBound struct {
	path       string // the path, as CUE labels: #MLPolicy: paddle?: port?
	constraint string
	At         token.Pos
	// marker is the marker as written (MaxLength=5), kind the kind of
	// value it bounds (0 for any).
	Marker string
	Kind   cue.Kind
}

// markerKinds are the kinds of value the markers bound.
var markerKinds = map[string]cue.Kind{
	"MinLength": cue.StringKind, "MaxLength": cue.StringKind, "Pattern": cue.StringKind,
	"MinItems": cue.ListKind, "MaxItems": cue.ListKind, "MinProperties": cue.StructKind,
	"Minimum": cue.NumberKind, "Maximum": cue.NumberKind,
}

// markerKind is the kind of value a marker (Name=value) bounds; 0 for any.
func markerKind(m string) cue.Kind {
	name, _, _ := strings.Cut(strings.TrimPrefix(m, "items:"), "=")
	if strings.HasPrefix(m, "items:") {
		return cue.ListKind
	}
	return markerKinds[strings.TrimSuffix(name, ":")]
}

// selectorsOf is a bound's path as selectors.
func (b MarkerBound) Selectors() []cue.Selector {
	var sels []cue.Selector
	for _, label := range strings.Split(b.path, ": ") {
		switch {
		case label == "[string]":
			sels = append(sels, cue.AnyString)
		case strings.HasPrefix(label, "#"):
			sels = append(sels, cue.Def(label))
		case strings.HasPrefix(label, "_"):
			sels = append(sels, cue.Hid(label, "_"))
		default:
			name := strings.TrimSuffix(label, "?")
			if uq, err := strconv.Unquote(name); err == nil {
				name = uq
			}
			sels = append(sels, cue.Str(name).Optional())
		}
	}
	return sels
}

// MarkerBounds collects the validation markers of a policy file's fields.
// A marker on a field whose path is not known before evaluation (under a
// comprehension, in a list element) cannot be placed: a problem.
func MarkerBounds(f *ast.File) ([]MarkerBound, []source.Problem) {
	var out []MarkerBound
	var problems []source.Problem
	var walk func(decls []ast.Decl, path []string, known bool)
	walk = func(decls []ast.Decl, path []string, known bool) {
		for _, d := range decls {
			switch d := d.(type) {
			case *ast.Field:
				label, ok := staticLabel(d.Label)
				p := append(append([]string(nil), path...), label)
				ok = ok && known
				markers, bad := fieldMarkers(d)
				problems = append(problems, bad...)
				for _, c := range markers {
					if !ok {
						problems = append(problems, source.Problem{Check: checks.Marker.Name, File: d.Pos().Filename(), Line: d.Pos().Line(), Column: d.Pos().Column(),
							Message: fmt.Sprintf("the marker +kubebuilder:validation:%s goes to the CRD, but the field's place is not known before evaluation, so vet cannot check it: write the bound in CUE on the field (%s)", c.marker, c.constraint)})
						continue
					}
					out = append(out, MarkerBound{path: strings.Join(p, ": "), constraint: c.constraint, At: d.Pos(), Marker: c.marker, Kind: markerKind(c.marker)})
				}
				if s, isStruct := d.Value.(*ast.StructLit); isStruct {
					walk(s.Elts, p, ok)
				} else {
					walkValue(d.Value, p, ok, walk)
				}
			case *ast.EmbedDecl:
				walkValue(d.Expr, path, known, walk)
			case *ast.Comprehension:
				walkValue(d.Value, path, false, walk)
			}
		}
	}
	walk(f.Decls, nil, true)
	return out, append(problems, misplacedMarkers(f)...)
}

// markerLike matches a comment line that is meant as a kubebuilder marker,
// however written: `+kubebuilder:`, `+ kubebuilder:`, `+KubeBuilder:`.
var markerLike = regexp.MustCompile(`(?i)\+\s*kube_?builder\s*:`)

// misplacedMarkers are the kubebuilder markers of a file that no field
// reads. The CRD generator and vet read a marker from a line of its own,
// `// +kubebuilder:...`, in the doc comment right above the field; one
// parted from it by a blank line, written after it, or spelt `+
// kubebuilder` reaches neither, and the bound it means is not checked.
func misplacedMarkers(f *ast.File) []source.Problem {
	var problems []source.Problem
	ast.Walk(f, func(n ast.Node) bool {
		// A field's comments: its doc, one parted from it by a blank line
		// before it, one after it on its line. (A rule's comment may cite
		// a marker its check copies.)
		if _, isField := n.(*ast.Field); !isField {
			return true
		}
		for _, cg := range ast.Comments(n) {
			for _, c := range cg.List {
				line := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
				if !markerLike.MatchString(line) {
					continue
				}
				var why string
				switch {
				case cg.Doc && strings.HasPrefix(line, "+kubebuilder:"):
					continue // the field's: fieldMarkers reads it
				case cg.Doc:
					why = "a marker is written `// +kubebuilder:` (no space, lower case) at the start of its line"
				case cg.Line:
					why = "a marker after its field is not read: put it on a line of its own right above the field"
				default:
					why = "a marker parted from its field (by a blank line) is not read: put it right above the field"
				}
				problems = append(problems, source.Problem{Check: checks.Marker.Name, File: c.Pos().Filename(), Line: c.Pos().Line(), Column: c.Pos().Column(),
					Message: line + ": " + why + ": as written it would reach neither vet nor the CRD"})
			}
		}
		return true
	}, nil)
	return problems
}

// walkValue walks the struct literals of a field's value (a struct, or
// one conjunct of a conjunction) at the field's path.
func walkValue(x ast.Expr, path []string, known bool, walk func([]ast.Decl, []string, bool)) {
	switch x := x.(type) {
	case *ast.StructLit:
		walk(x.Elts, path, known)
	case *ast.BinaryExpr:
		known = known && x.Op == token.AND
		walkValue(x.X, path, known, walk)
		walkValue(x.Y, path, known, walk)
	case *ast.ParenExpr:
		walkValue(x.X, path, known, walk)
	case *ast.ListLit:
		for _, el := range x.Elts {
			if e, ok := el.(ast.Expr); ok {
				walkValue(e, path, false, walk)
			}
		}
	}
}

// staticLabel writes a field's label as CUE, optional (so that the bound
// adds no field), when it names the field itself.
func staticLabel(l ast.Label) (string, bool) {
	switch l := l.(type) {
	case *ast.Ident:
		if strings.HasPrefix(l.Name, "#") || strings.HasPrefix(l.Name, "_") {
			return l.Name, true
		}
		return l.Name + "?", true
	case *ast.BasicLit:
		if s, err := literal.Unquote(l.Value); err == nil && l.Kind == token.STRING {
			return strconv.Quote(s) + "?", true
		}
	case *ast.Alias:
		if e, ok := l.Expr.(ast.Label); ok {
			return staticLabel(e)
		}
	case *ast.ListLit:
		if len(l.Elts) == 1 {
			x := l.Elts[0]
			if a, ok := x.(*ast.Alias); ok {
				x = a.Expr
			}
			if id, ok := x.(*ast.Ident); ok && id.Name == "string" {
				return "[string]", true
			}
		}
	}
	return "", false
}

type fieldMarker struct{ marker, constraint string }

// markerConstraints are the validation markers CUE can say, as the CUE
// constraint of a value (%s: the marker's value).
var markerConstraints = map[string]string{
	"Minimum": ">=%s", "Maximum": "<=%s", "MinLength": "strings.MinRunes(%s)", "MaxLength": "strings.MaxRunes(%s)",
	"MinItems": "list.MinItems(%s)", "MaxItems": "list.MaxItems(%s)", "MinProperties": "struct.MinFields(%s)",
}

// fieldMarkers are a field's validation markers that CUE can say, as CUE
// constraints. A marker it cannot read is a problem: a misspelt one
// (Minimun, a value that is no number) would reach neither vet nor, as
// meant, the CRD; another +kubebuilder marker does nothing here.
func fieldMarkers(f *ast.Field) ([]fieldMarker, []source.Problem) {
	var out []fieldMarker
	var problems []source.Problem
	for _, cg := range ast.Comments(f) {
		if !cg.Doc {
			continue
		}
		for _, c := range cg.List {
			line := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			problem := func(format string, args ...any) {
				problems = append(problems, source.Problem{Check: checks.Marker.Name, File: c.Pos().Filename(), Line: c.Pos().Line(), Column: c.Pos().Column(),
					Message: line + ": " + fmt.Sprintf(format, args...)})
			}
			m, ok := strings.CutPrefix(line, "+kubebuilder:validation:")
			if !ok {
				if value, isDefault := strings.CutPrefix(line, "+kubebuilder:default="); isDefault {
					if why := defaultMarkerProblem(f, value); why != "" {
						problem("%s", why)
					}
				} else if strings.HasPrefix(line, "+kubebuilder:") {
					problem("cuetrainer reads only the +kubebuilder:validation: and default markers of a policy, so this one would do nothing")
				}
				continue
			}
			constraint, err := markerConstraint(m)
			if err != "" {
				problem("%s", err)
				continue
			}
			if constraint != "" {
				out = append(out, fieldMarker{marker: m, constraint: constraint})
			}
		}
	}
	return out, problems
}

// defaultMarkerProblem says what is wrong with a +kubebuilder:default
// marker: the CRD's defaults and vet's are the field's CUE default
// (*value | type), so a marker on a field without one would do nothing,
// and one that says another literal than it says two things.
func defaultMarkerProblem(f *ast.Field, marker string) string {
	var def ast.Expr
	for _, t := range Disjuncts(f.Value) {
		if u, ok := t.(*ast.UnaryExpr); ok && u.Op == token.MUL {
			def = u.X
		}
	}
	if def == nil {
		return fmt.Sprintf("the field has no CUE default, which is what the CRD and vet take, so the marker would do nothing: write %s: *%s | ...", fieldLabel(f), marker)
	}
	lit, ok := def.(*ast.BasicLit)
	if !ok {
		return "" // a default by reference (*#Group): the CUE's
	}
	want, err1 := literal.Unquote(lit.Value)
	got, err2 := literal.Unquote(marker)
	if err1 != nil || err2 != nil {
		want, got = lit.Value, marker
	}
	if want != got {
		return fmt.Sprintf("the field's CUE default is %s, which is what the CRD and vet take: the marker says another", lit.Value)
	}
	return ""
}

// fieldLabel is a field's label as written.
func fieldLabel(f *ast.Field) string {
	name, _, _ := ast.LabelName(f.Label)
	return name
}

// markerConstraint is a validation marker's CUE constraint ("" for one
// that says nothing vet checks: Optional, Required), or what is wrong.
func markerConstraint(m string) (constraint, problem string) {
	if im, ok := strings.CutPrefix(m, "items:"); ok {
		c, p := markerConstraint(im)
		if c == "" || p != "" {
			return "", p
		}
		return "[...(" + c + ")]", ""
	}
	name, arg, hasValue := strings.Cut(m, "=")
	name = strings.TrimSuffix(name, ":") // Enum:=a;b, as controller-gen takes it too
	if family, _, _ := strings.Cut(name, ":"); family == "XValidation" || family == "Format" {
		return "", "" // the CRD's alone: a crdChecks rule says it to vet (docs/frameworks.md)
	}
	switch name {
	case "Optional", "Required", "Type", "Schemaless", "EmbeddedResource", "XPreserveUnknownFields", "XIntOrString", "UniqueItems":
		return "", "" // the schema says these itself
	}
	if !hasValue {
		return "", "a validation marker is +kubebuilder:validation:Name=value"
	}
	switch name {
	case "Pattern":
		if uq, err := strconv.Unquote(arg); err == nil {
			arg = uq
		}
		// The API server compiles a CRD's pattern as Go does.
		if _, err := regexp.Compile(arg); err != nil {
			return "", fmt.Sprintf("the pattern does not compile (%v): the API server would refuse the CRD, and every value here", err)
		}
		return "=~" + strconv.Quote(arg), ""
	case "Enum":
		var alts []string
		for _, e := range strings.Split(arg, ";") {
			if uq, err := strconv.Unquote(e); err == nil {
				e = uq
			}
			alts = append(alts, strconv.Quote(e))
		}
		return strings.Join(alts, " | "), ""
	}
	format, ok := markerConstraints[name]
	if !ok {
		known := append(value.SortedKeys(markerConstraints), "Pattern", "Enum")
		msg := fmt.Sprintf("%s is not a validation marker cuetrainer reads (%s)", name, strings.Join(known, ", "))
		if s := source.Suggest(name, known); s != "" {
			msg += fmt.Sprintf(": did you mean %s?", s)
		}
		return "", msg
	}
	if _, err := strconv.ParseInt(arg, 10, 64); err != nil {
		return "", fmt.Sprintf("%s takes a whole number, not %q", name, arg)
	}
	return fmt.Sprintf(format, arg), ""
}

// MarkerSource is the CUE of the policies' marker bounds, one line each
// with the marker's place in a comment; nil when there are none.
func MarkerSource(bounds []MarkerBound) []byte {
	if len(bounds) == 0 {
		return nil
	}
	sort.SliceStable(bounds, func(i, j int) bool { return bounds[i].path < bounds[j].path })
	var b strings.Builder
	b.WriteString("package schemas\n\n")
	for _, pkg := range []string{"list", "strings", "struct"} {
		for _, m := range bounds {
			// A call, or the call a list's items meet ([...(list.X)]).
			if c := strings.TrimPrefix(m.constraint, "[...("); strings.HasPrefix(c, pkg+".") {
				fmt.Fprintf(&b, "import %q\n\n", pkg)
				break
			}
		}
	}
	for _, m := range bounds {
		fmt.Fprintf(&b, "// %s:%d\n%s: %s\n", m.At.Filename(), m.At.Line(), m.path, m.constraint)
	}
	return []byte(b.String())
}

// Disjuncts are the terms of a disjunction (a | b | c), parenthesized
// disjunctions flattened.
func Disjuncts(x ast.Expr) []ast.Expr {
	var terms []ast.Expr
	var flatten func(e ast.Expr)
	flatten = func(e ast.Expr) {
		if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.OR {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		if pe, ok := e.(*ast.ParenExpr); ok {
			if b, ok := pe.X.(*ast.BinaryExpr); ok && b.Op == token.OR {
				flatten(b)
				return
			}
		}
		terms = append(terms, e)
	}
	flatten(x)
	return terms
}

// MarkerValues are the only values a field's CRD lets it hold, as its
// markers say them: an Enum marker, or an XValidation rule `self in
// [...]` of string literals (for a string, when the rule says so); nil
// when they say no such list.
func MarkerValues(v cue.Value) []string {
	var values []string
	for _, cg := range v.Doc() {
		for _, c := range cg.List {
			line := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			m, ok := strings.CutPrefix(line, "+kubebuilder:validation:")
			if !ok {
				continue
			}
			if list, ok := strings.CutPrefix(m, "Enum="); ok {
				for _, e := range strings.Split(list, ";") {
					if uq, err := strconv.Unquote(e); err == nil {
						e = uq
					}
					values = append(values, e)
				}
				continue
			}
			if in := selfInRule.FindStringSubmatch(m); in != nil {
				for _, e := range strings.Split(in[1], ",") {
					e = strings.TrimSpace(e)
					if len(e) < 2 || e[0] != '\'' || e[len(e)-1] != '\'' {
						return nil // not a list of string literals
					}
					values = append(values, e[1:len(e)-1])
				}
			}
		}
	}
	return values
}

// AttrValues is the field attribute that names where a field's values
// are registered: @values(<registry>, <field>), the <field> of every entry
// of the top-level map <registry>. A TrainJob's runtimeRef.kind is marked
// @values(runtimeKinds, kind): its CRD lets it be any text, and the webhook
// refuses a kind that runtimeKinds does not register.
const AttrValues = "values"

// RegistryValues are the values a field marked @values(<registry>, <field>)
// holds on an object the webhooks admit, read from root (the schemas with
// the policy, whose entries count too), sorted; where is the attribute's
// registry and field, "runtimeKinds.kind". err says why the attribute
// names no such values; values and err are nil for a field without it.
func RegistryValues(root, v cue.Value) (values []string, where string, err error) {
	a := v.Attribute(AttrValues)
	if a.Err() != nil {
		return nil, "", nil
	}
	return ValuesAt(root, a.Contents())
}

// ValuesAt reads the values an @values attribute's contents name.
func ValuesAt(root cue.Value, contents string) (values []string, where string, err error) {
	args := strings.Split(contents, ",")
	if len(args) != 2 {
		return nil, "", fmt.Errorf("@%s(%s) takes a top-level map and the field of its entries that holds a value: @%s(runtimeKinds, kind)", AttrValues, contents, AttrValues)
	}
	registry, field := strings.TrimSpace(args[0]), strings.TrimSpace(args[1])
	where = registry + "." + field
	m := root.LookupPath(cue.ParsePath(registry))
	it, err := m.Fields()
	if !m.Exists() || err != nil {
		return nil, where, fmt.Errorf("@%s(%s): %s is no map of the schemas", AttrValues, contents, registry)
	}
	for it.Next() {
		s, err := it.Value().LookupPath(cue.ParsePath(field)).String()
		if err != nil {
			return nil, where, fmt.Errorf("@%s(%s): the entry %s has no text %s", AttrValues, contents, it.Selector(), field)
		}
		if !slices.Contains(values, s) {
			values = append(values, s)
		}
	}
	if len(values) == 0 {
		return nil, where, fmt.Errorf("@%s(%s): %s has no entries", AttrValues, contents, registry)
	}
	slices.Sort(values)
	return values, where, nil
}

// EnumValues are the values of the Go enum type v's schema refers to (a
// type with a `+enum` marker, which `cue get go` writes as `#T: string`
// with `#enumT` the disjunction of its constants), and the type's name;
// none for any other schema. Only the marker says the constants are all
// the values: PodConditionType, without it, takes a readiness gate's own.
func EnumValues(v cue.Value) ([]string, string) {
	refs := []cue.Value{v}
	if op, args := v.Expr(); op == cue.AndOp {
		refs = append(refs, args...)
	}
	for _, r := range refs {
		root, p := r.ReferencePath()
		sels := p.Selectors()
		if len(sels) != 1 || !sels[0].IsDefinition() || !hasMarker(root.LookupPath(p), "+enum") {
			continue
		}
		name := strings.TrimPrefix(sels[0].String(), "#")
		enum := root.LookupPath(cue.MakePath(cue.Def(contract.GoEnumPrefix + name)))
		terms := []cue.Value{enum}
		if op, args := enum.Expr(); op == cue.OrOp {
			terms = args
		}
		var values []string
		for _, t := range terms {
			s, err := t.String()
			if err != nil {
				return nil, ""
			}
			values = append(values, s)
		}
		return values, name
	}
	return nil, ""
}

// selfInRule is an XValidation marker whose rule is `self in [...]`, or
// `type(self) != string || self in [...]` (the strings an int-or-string
// may be: no int equals a string either).
var selfInRule = regexp.MustCompile(`^XValidation:rule="(?:type\(self\) != string \|\| )?self in \[([^\]]*)\]"`)

// QuoteEach is values quoted, comma-separated: "a", "b".
func QuoteEach(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = strconv.Quote(v)
	}
	return strings.Join(quoted, ", ")
}
