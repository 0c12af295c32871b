package engine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
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

// markerFile is the loader's name of the file of the policies' markers.
const markerFile = root + "/schemas/zz-policy-markers.cue"

// markerBound is one marker's constraint at a field's path.
type markerBound struct {
	path       string // the path, as CUE labels: #MLPolicy: paddle?: port?
	constraint string
	at         token.Pos
}

// markerBounds collects the validation markers of a policy file's fields.
// A marker on a field whose path is not known before evaluation (under a
// comprehension, in a list element) cannot be placed: a problem.
func markerBounds(f *ast.File) ([]markerBound, []Problem) {
	var out []markerBound
	var problems []Problem
	var walk func(decls []ast.Decl, path []string, known bool)
	walk = func(decls []ast.Decl, path []string, known bool) {
		for _, d := range decls {
			switch d := d.(type) {
			case *ast.Field:
				label, ok := staticLabel(d.Label)
				p := append(append([]string(nil), path...), label)
				ok = ok && known
				for _, c := range fieldMarkers(d) {
					if !ok {
						problems = append(problems, Problem{File: d.Pos().Filename(), Line: d.Pos().Line(), Column: d.Pos().Column(),
							Message: fmt.Sprintf("the marker +kubebuilder:validation:%s goes to the CRD, but the field's place is not known before evaluation, so vet cannot check it: write the bound in CUE on the field (%s)", c.marker, c.constraint)})
						continue
					}
					out = append(out, markerBound{path: strings.Join(p, ": "), constraint: c.constraint, at: d.Pos()})
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
	return out, problems
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

// fieldMarkers are a field's validation markers that CUE can say, as CUE
// constraints.
func fieldMarkers(f *ast.Field) []fieldMarker {
	var out []fieldMarker
	for _, cg := range ast.Comments(f) {
		if !cg.Doc {
			continue
		}
		for _, c := range cg.List {
			line := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			m, ok := strings.CutPrefix(line, "+kubebuilder:validation:")
			if !ok {
				continue
			}
			name, value, ok := strings.Cut(m, "=")
			if !ok {
				continue
			}
			var constraint string
			switch name {
			case "Minimum", "Maximum", "MinLength", "MaxLength", "MinItems", "MaxItems":
				if _, err := strconv.ParseFloat(value, 64); err != nil {
					continue
				}
				constraint = map[string]string{
					"Minimum": ">=%s", "Maximum": "<=%s", "MinLength": "strings.MinRunes(%s)", "MaxLength": "strings.MaxRunes(%s)",
					"MinItems": "list.MinItems(%s)", "MaxItems": "list.MaxItems(%s)",
				}[name]
				constraint = fmt.Sprintf(constraint, value)
			case "Pattern":
				if uq, err := strconv.Unquote(value); err == nil {
					value = uq
				}
				constraint = "=~" + strconv.Quote(value)
			case "Enum":
				var alts []string
				for _, e := range strings.Split(value, ";") {
					if uq, err := strconv.Unquote(e); err == nil {
						e = uq
					}
					alts = append(alts, strconv.Quote(e))
				}
				constraint = strings.Join(alts, " | ")
			default:
				continue
			}
			out = append(out, fieldMarker{marker: m, constraint: constraint})
		}
	}
	return out
}

// markerSource is the CUE of the policies' marker bounds, one line each
// with the marker's place in a comment; nil when there are none.
func markerSource(bounds []markerBound) []byte {
	if len(bounds) == 0 {
		return nil
	}
	sort.SliceStable(bounds, func(i, j int) bool { return bounds[i].path < bounds[j].path })
	var b strings.Builder
	b.WriteString("package schemas\n\n")
	for _, pkg := range []string{"list", "strings"} {
		for _, m := range bounds {
			if strings.HasPrefix(m.constraint, pkg+".") {
				fmt.Fprintf(&b, "import %q\n\n", pkg)
				break
			}
		}
	}
	for _, m := range bounds {
		fmt.Fprintf(&b, "// %s:%d\n%s: %s\n", m.at.Filename(), m.at.Line(), m.path, m.constraint)
	}
	return []byte(b.String())
}
