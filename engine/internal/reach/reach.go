// What an admin's files can change of the embedded CUE.
//
// An admin's file joins the package schemas, and changes a value only
// where it declares one: `admission: ...: policy: x: [...]` adds a rule,
// `#TrainJob: spec: x?: int` changes the TrainJob's schema. A value is
// made from its declarations and from every declaration they refer to,
// as CUE unifies them: `crds: TrainJob: schema: #TrainJob`, #TrainJob's
// fields, the definitions they name, and so on. So when no declaration of
// the admin's files is at a path a value's declarations reach, the value
// is the embedded CUE's, and so is what the engine made of it ahead: a
// kind's CRD schema (crd.Schemas), the outcome of a trial that evaluates
// only such values (the engine's trials).
//
// The reach is read from the syntax, and errs on the side of "reached":
// a reference is followed to the static path of the field it names (an
// identifier the file does not declare, to the package's field of that
// name); one whose target sits under a computed label or in a
// comprehension, to the path above it; a let, to its expression. A
// computed label that names a constant of the package (`(#APIVersion):`,
// with `#APIVersion: "trainer.kubeflow.org/v1alpha1"` declared once as a
// string) is that string; any other stands for every label. An admin's
// declaration under a pattern, such a computed label, an embedding or a
// comprehension stands for every path below where it is written.
// TestReach holds each way of referring and of declaring to this;
// TestEmbeddedSchemaKeptOnlyWhenUnreached and TestTrialsSkippedChangeNothing
// (engine) compare what is kept with what is made from the policy's CUE.
package reach

import (
	"path"
	"strconv"
	"sync"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// anyLabel stands for every label, in a path of declarations.
const anyLabel = "\x00*"

// Reach holds, for the embedded package's files, the paths each path's
// declarations reach (RootsOf).
type Reach struct {
	files []*ast.File
	// consts are the package's constants, which a computed label may name.
	consts constants

	mu    sync.Mutex
	roots map[string][][]string
	// at is the static path of each node of the files: the labels of the
	// fields above it, up to the first label that is not static.
	at map[ast.Node][]string
	// values are the paths of the fields whose value each node is.
	values map[ast.Node][]string
	// fields are the static paths (pathKey) the files declare a field at,
	// neither optional nor required; conjoined, the identifiers each
	// static path's value is a conjunction of (`#RuntimeCRDChecks`,
	// `#Review & {...}`), whose fields are the path's too (isField).
	fields    map[string]bool
	conjoined map[string][]*ast.Ident
}

// NewReach indexes the files of the package an admin's files join, as
// embedded (each parsed alone: a reference to another file's field is
// unresolved).
func NewReach(files []*ast.File) *Reach {
	r := &Reach{files: files, consts: constantsOf(files), roots: map[string][][]string{}, at: map[ast.Node][]string{}, values: map[ast.Node][]string{}, fields: map[string]bool{}, conjoined: map[string][]*ast.Ident{}}
	for _, f := range files {
		r.index(f.Decls, nil)
	}
	return r
}

// index records the static path of every node below decls, written at
// path: the labels above it, up to the first that is not static.
func (r *Reach) index(decls []ast.Decl, path []string) {
	for _, d := range decls {
		f, ok := d.(*ast.Field)
		if !ok {
			r.indexAll(d, path)
			continue
		}
		name, static := r.consts.labelName(f.Label)
		if !static {
			r.indexAll(d, path)
			continue
		}
		p := append(append([]string{}, path...), name)
		r.values[f] = p
		r.values[f.Value] = p
		if f.Constraint == token.ILLEGAL {
			r.fields[pathKey(p)] = true
		}
		ast.Walk(f.Label, func(n ast.Node) bool { r.at[n] = path; return true }, nil)
		for _, x := range conjuncts(f.Value) {
			if s, ok := x.(*ast.StructLit); ok {
				r.index(s.Elts, p)
				continue
			}
			if id, ok := x.(*ast.Ident); ok {
				r.conjoined[pathKey(p)] = append(r.conjoined[pathKey(p)], id)
			}
			r.indexAll(x, p)
		}
	}
}

// maxConjoined bounds the conjunctions isField follows, one within
// another (a definition that refers to itself ends there).
const maxConjoined = 8

// isField reports whether the files declare a field at p, neither
// optional nor required: written at p, or at the path under a value that
// p, or a path above it, is a conjunction of (`object` of a field whose
// value is `#RuntimeCRDChecks`, which declares `object`).
func (r *Reach) isField(p []string, depth int) bool {
	if r.fields[pathKey(p)] {
		return true
	}
	if depth >= maxConjoined {
		return false
	}
	for i := len(p) - 1; i >= 1; i-- {
		for _, id := range r.conjoined[pathKey(p[:i])] {
			target, ok := r.identPath(id)
			if ok && r.isField(append(target, p[i:]...), depth+1) {
				return true
			}
		}
	}
	return false
}

// identPath is the static path of the field an identifier refers to: one
// of the files', or the package's field of its name (declared in another
// file); false for another name (a let's, a comprehension's, top).
func (r *Reach) identPath(id *ast.Ident) ([]string, bool) {
	if id.Node == nil {
		return []string{id.Name}, id.Name != "_"
	}
	p, ok := r.values[id.Node]
	return append([]string{}, p...), ok
}

// conjuncts are the operands of x's conjunctions (`#Review & {...}`),
// each of which declares the value x declares: x itself when it is none.
func conjuncts(x ast.Expr) []ast.Expr {
	if b, ok := x.(*ast.BinaryExpr); ok && b.Op == token.AND {
		return append(conjuncts(b.X), conjuncts(b.Y)...)
	}
	return []ast.Expr{x}
}

// indexAll records path as the static path of n and of every node below it.
func (r *Reach) indexAll(n ast.Node, path []string) {
	ast.Walk(n, func(n ast.Node) bool {
		if _, ok := r.at[n]; !ok {
			r.at[n] = path
		}
		return true
	}, nil)
}

// Roots are the paths of the package the declarations at path reach: path
// itself, and the paths of what they refer to, and of what those refer
// to. A nil path among them (a reference the syntax cannot place) is the
// whole package.
func (r *Reach) Roots(path []string) [][]string {
	var roots [][]string
	seen := map[string]bool{}
	add := func(p []string) {
		k := pathKey(p)
		if !seen[k] {
			seen[k] = true
			roots = append(roots, p)
		}
	}
	add(path)
	walked := map[ast.Node]bool{}
	for i := 0; i < len(roots); i++ {
		for _, f := range r.files {
			for _, n := range r.consts.declsAt(f.Decls, roots[i]) {
				r.refs(n, walked, add)
			}
		}
	}
	return roots
}

// declsAt are the nodes of decls that declare path or a path below it, or
// may: a field of path's labels, and beside them every declaration that
// is not a field of a static label (a pattern, a computed label, an
// embedding, a comprehension, a let).
func (c constants) declsAt(decls []ast.Decl, path []string) []ast.Node {
	var out []ast.Node
	for _, d := range decls {
		switch x := d.(type) {
		case *ast.Field:
			name, static := c.labelName(x.Label)
			switch {
			case !static || len(path) == 0:
				out = append(out, x)
			case name != path[0]:
			default:
				for _, v := range conjuncts(x.Value) {
					if s, ok := v.(*ast.StructLit); ok {
						out = append(out, c.declsAt(s.Elts, path[1:])...)
					} else {
						out = append(out, v)
					}
				}
			}
		case *ast.Package, *ast.ImportDecl, *ast.CommentGroup, *ast.Attribute:
		default:
			out = append(out, d)
		}
	}
	return out
}

// refs passes to add the path of each reference below n.
func (r *Reach) refs(n ast.Node, walked map[ast.Node]bool, add func([]string)) {
	if walked[n] {
		return
	}
	walked[n] = true
	// The identifiers that are no references: labels, selectors, the
	// names a let, an alias or a comprehension binds.
	bound := map[*ast.Ident]bool{}
	ast.Walk(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Field:
			markLabel(x.Label, bound)
		case *ast.SelectorExpr:
			if id, ok := x.Sel.(*ast.Ident); ok {
				bound[id] = true
			}
			if id, sels := selectorChain(x); id != nil && !bound[id] {
				// a.b.c reaches a's field b's field c, not all of a.
				bound[id] = true
				r.ref(id, sels, walked, add)
			}
		case *ast.LetClause:
			bound[x.Ident] = true
		case *ast.ForClause:
			if x.Key != nil {
				bound[x.Key] = true
			}
			if x.Value != nil {
				bound[x.Value] = true
			}
		case *ast.Alias:
			bound[x.Ident] = true
		case *ast.Ident:
			if !bound[x] {
				r.ref(x, nil, walked, add)
			}
		}
		return true
	}, nil)
}

// selectorChain is the identifier a chain of selectors starts from
// (a.b.c), with the labels selected, while they are written out.
func selectorChain(x *ast.SelectorExpr) (*ast.Ident, []string) {
	var sels []string
	var e ast.Expr = x
	for {
		switch s := e.(type) {
		case *ast.SelectorExpr:
			name, ok := constants(nil).labelName(s.Sel)
			if !ok {
				sels = nil
			} else {
				sels = append([]string{name}, sels...)
			}
			e = s.X
		case *ast.Ident:
			return s, sels
		default:
			return nil, nil
		}
	}
}

// ref passes to add the path an identifier refers to, and below it the
// labels sels select.
func (r *Reach) ref(id *ast.Ident, sels []string, walked map[ast.Node]bool, add func([]string)) {
	if p, ok := r.values[id.Node]; ok && id.Node != nil {
		// A field's value (an identifier when it is one: `#ref: _`).
		add(append(append([]string{}, p...), sels...))
		return
	}
	switch n := id.Node.(type) {
	case nil:
		// The package's field of that name, declared in another file, or
		// a predeclared identifier (int, len), which a field of the
		// package of that name would hide; `_` (top) is no field.
		if id.Name != "_" {
			add(append([]string{id.Name}, sels...))
		}
	case *ast.ImportSpec:
		// Another package: no file of the admin's is of it.
	case *ast.LetClause:
		r.refs(n.Expr, walked, add)
	case *ast.Ident:
		switch scope := id.Scope.(type) {
		case *ast.ForClause:
			// A comprehension's key or value: of its source.
			r.refs(scope.Source, walked, add)
		case *ast.Field:
			if _, ok := scope.Label.(*ast.ListLit); ok {
				// A pattern's key: a text, made of no declaration.
				return
			}
			add(r.at[n])
		default:
			add(r.at[n])
		}
	default:
		if p, ok := r.values[n]; ok {
			add(append(append([]string{}, p...), sels...))
			return
		}
		// A field under a computed label: somewhere below the static
		// path it is written at (nil, the package, when not even that is
		// known).
		add(r.at[n])
	}
}

// markLabel marks the identifiers of a label as no references (an
// alias's and a pattern's binding included; a computed label's
// expression is one).
func markLabel(l ast.Label, bound map[*ast.Ident]bool) {
	switch x := l.(type) {
	case *ast.Ident:
		bound[x] = true
	case *ast.Alias:
		bound[x.Ident] = true
		if lab, ok := x.Expr.(ast.Label); ok {
			markLabel(lab, bound)
		}
	}
}

// Declared are the paths files declare, files that join the package of
// r's: each field's labels, a declaration that is not a field of a static
// label (a pattern, a computed label that names no constant, an
// embedding, a comprehension) ending in anyLabel. A field `x: _` at a
// path r's files declare as a field (not optional, not required) changes
// nothing, and is none: a review's `object: _`, `#runtime: _`, which
// declare the names a rule reads; so is one of the fields of a value the
// path is a conjunction of (a runtime's crdChecks entry, #RuntimeCRDChecks,
// has `object`).
func (r *Reach) Declared(files []*ast.File) [][]string {
	c := r.consts.with(constantsOf(files))
	var out [][]string
	for _, f := range files {
		out = r.appendDeclared(c, out, f.Decls, nil)
	}
	return out
}

func (r *Reach) appendDeclared(c constants, out [][]string, decls []ast.Decl, path []string) [][]string {
	for _, d := range decls {
		switch x := d.(type) {
		case *ast.Field:
			name, static := c.labelName(x.Label)
			if !static {
				out = append(out, append(append([]string{}, path...), anyLabel))
				continue
			}
			p := append(append([]string{}, path...), name)
			if s, ok := x.Value.(*ast.StructLit); ok && len(s.Elts) > 0 {
				out = r.appendDeclared(c, out, s.Elts, p)
				continue
			}
			if top, ok := x.Value.(*ast.Ident); ok && top.Name == "_" && x.Constraint == token.ILLEGAL && r.isField(p, 0) {
				continue
			}
			out = append(out, p)
		case *ast.Package, *ast.ImportDecl, *ast.CommentGroup, *ast.Attribute, *ast.LetClause:
			// A let binds a name; it declares no field.
		default:
			out = append(out, append(append([]string{}, path...), anyLabel))
		}
	}
	return out
}

// Declared are the paths files that join the embedded package declare
// (Reach.Declared): none for no file, and every path when the embedded
// package does not parse (TestEmbeddedReach fails then).
func Declared(files []*ast.File) [][]string {
	if len(files) == 0 {
		return nil
	}
	r := EmbeddedReach()
	if r == nil {
		return [][]string{{anyLabel}}
	}
	return r.Declared(files)
}

// Reaches reports whether a declared path (Declared) is at, above or
// below one of roots (Roots).
func Reaches(declared, roots [][]string) bool {
	for _, d := range declared {
		for _, root := range roots {
			if overlaps(d, root) {
				return true
			}
		}
	}
	return false
}

// overlaps reports whether one path is at or below the other.
func overlaps(d, root []string) bool {
	for i := 0; i < len(d) && i < len(root); i++ {
		if d[i] == anyLabel {
			return true
		}
		if d[i] != root[i] {
			return false
		}
	}
	return true
}

// labelName is a label's name when it is written out (an identifier, a
// string without interpolation, behind an alias or not) or names one of c
// (a computed label `(#APIVersion)`).
func (c constants) labelName(l ast.Label) (string, bool) {
	if a, ok := l.(*ast.Alias); ok {
		lab, ok := a.Expr.(ast.Label)
		if !ok {
			return "", false
		}
		l = lab
	}
	switch x := l.(type) {
	case *ast.Ident, *ast.BasicLit:
	case *ast.ParenExpr:
		return c.named(x.X)
	default:
		return "", false
	}
	name, _, err := ast.LabelName(l)
	return name, err == nil
}

// constants are the top-level fields of a package that every file
// declaring them gives one string, written out (`#APIVersion: "..."`),
// by name; "" for a name declared with two strings (CUE refuses the
// package: nothing is kept then).
type constants map[string]string

// constantsOf are the constants files declare.
func constantsOf(files []*ast.File) constants {
	c := constants{}
	for _, f := range files {
		for _, d := range f.Decls {
			x, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			name, static := constants(nil).labelName(x.Label)
			lit, ok := x.Value.(*ast.BasicLit)
			if !static || !ok || lit.Kind != token.STRING {
				continue
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				// A multi-line or raw string: not one this reads.
				continue
			}
			c.add(name, v)
		}
	}
	return c
}

func (c constants) add(name, v string) {
	if old, ok := c[name]; ok && old != v {
		v = ""
	}
	c[name] = v
}

// with is c and more, in a new map.
func (c constants) with(more constants) constants {
	out := constants{}
	for _, m := range []constants{c, more} {
		for name, v := range m {
			out.add(name, v)
		}
	}
	return out
}

// named is the constant x names: an identifier no file's scope declares
// otherwise (the package's field of that name).
func (c constants) named(x ast.Expr) (string, bool) {
	id, ok := x.(*ast.Ident)
	if !ok {
		return "", false
	}
	if id.Node != nil {
		// Declared in the file: the package's field only when at the
		// top (a field of the file, or its value).
		if _, top := id.Scope.(*ast.File); !top {
			return "", false
		}
	}
	v, ok := c[id.Name]
	return v, ok && v != ""
}

func pathKey(p []string) string {
	if p == nil {
		return "\x00nil"
	}
	k := ""
	for _, s := range p {
		k += s + "\x00"
	}
	return k
}

// EmbeddedReach is the Reach of the embedded files of the package an
// admin's files join (schemas), parsed once: nil if one does not parse,
// which TestEmbeddedReach fails on (no schema is then kept).
var EmbeddedReach = sync.OnceValue(func() *Reach {
	files := map[string][]byte{}
	if err := source.Embedded(files, source.NewFiles()); err != nil {
		return nil
	}
	var parsed []*ast.File
	for _, name := range value.SortedKeys(files) {
		data := files[name]
		if path.Dir(name) != path.Join(source.Root, schemasDir) || path.Ext(name) != ".cue" {
			continue
		}
		f, err := parser.ParseFile(name, data, parser.ParseComments)
		if err != nil {
			return nil
		}
		if f.PackageName() == schemasPackage {
			parsed = append(parsed, f)
		}
	}
	return NewReach(parsed)
})

// The package an admin's files join, and where it is embedded.
const (
	schemasPackage = "schemas"
	schemasDir     = "schemas"
)

// RootsOf are the Roots of path, worked out once.
func (r *Reach) RootsOf(path ...string) [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := pathKey(path)
	roots, ok := r.roots[k]
	if !ok {
		roots = r.Roots(path)
		r.roots[k] = roots
	}
	return roots
}
