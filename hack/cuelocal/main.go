// Command cuelocal copies Go-generated CUE packages (schemas/gen) into the
// schemas package as hidden definitions, so that the types a runtime's
// template is checked against are read without an import.
//
// Why: in cuelang.org/go v0.17 a reference that goes through an import is
// dear. Each evaluation instantiates the imported package's root again, and
// a type of jobset's package reaches core/v1 through batch/v1's import, so
// checking one replicatedJob of a runtime cost about 4,700 allocations, of
// which the pod template's own fields were a small part. Copied into the
// schemas package, with their references to core/v1 and meta/v1 read
// through the `_corev1` and `_metav1` fields (schemas/k8s.cue), the same
// check costs about 2,000. See docs/engine.md.
//
// Each package's top-level definitions #Name (and hidden _#name) become
// _#<prefix>Name; references to them, within the package and from the
// other copied packages, follow; references to packages not copied are read
// through a hidden field of the schemas package named after the import. The
// output is deterministic; `make cue-gen` writes it, and a test checks that
// the committed file is what this command makes of schemas/gen.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/ast/astutil"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
)

// Package is a Go-generated CUE package to copy.
type Package struct {
	// ImportPath is the package's Go import path: its directory under
	// schemas/gen, imported as GenPrefix + ImportPath.
	ImportPath string
	// Prefix is put before the names of its definitions.
	Prefix string
}

// Packages are the packages the runtime template's types reach, and which
// must not be reached through an import.
var Packages = []Package{
	{ImportPath: "k8s.io/api/batch/v1", Prefix: "batchv1"},
	{ImportPath: "sigs.k8s.io/jobset/api/jobset/v1alpha2", Prefix: "jobset"},
}

// Fields are the schemas package's hidden fields that hold whole imported
// packages, by import path: references to them are read through these.
// Those not declared elsewhere in the schemas are declared by the output.
var Fields = map[string]string{
	"k8s.io/api/core/v1":                   "_corev1",
	"k8s.io/apimachinery/pkg/apis/meta/v1": "_metav1",
	"k8s.io/api/scheduling/v1alpha3":       "_schedulingv1alpha3",
	"k8s.io/apimachinery/pkg/types":        "_k8stypes",
}

// GenPrefix is what the module's import paths of the generated packages
// put before their Go import paths (they are packages of the module, so
// that it is whole for a CUE user who depends on it).
const GenPrefix = "cuetrainer.dev/cuetrainer/schemas/gen/"

// declaredElsewhere are the Fields schemas/k8s.cue declares.
var declaredElsewhere = map[string]bool{"_corev1": true, "_metav1": true}

func main() {
	root := flag.String("root", ".", "the module root (with schemas/gen)")
	out := flag.String("o", "", "the file to write (default: standard output)")
	flag.Parse()
	src, err := Generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cuelocal:", err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(src)
		return
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "cuelocal:", err)
		os.Exit(1)
	}
}

// Generate returns the schemas file that holds the copies of Packages.
func Generate(root string) ([]byte, error) {
	prefixes := map[string]string{}
	for _, p := range Packages {
		prefixes[p.ImportPath] = p.Prefix
	}
	used := map[string]bool{} // import paths read through Fields
	var decls []ast.Decl
	for _, p := range Packages {
		files, err := filepath.Glob(filepath.Join(root, "schemas", "gen", filepath.FromSlash(p.ImportPath), "*.cue"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no CUE files under schemas/gen", p.ImportPath)
		}
		sort.Strings(files)
		var parsed []*ast.File
		names := map[string]bool{} // the package's top-level definitions
		for _, f := range files {
			file, err := parser.ParseFile(f, nil, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			parsed = append(parsed, file)
			for _, d := range file.Decls {
				if name, ok := definitionName(d); ok {
					names[name] = true
				}
			}
		}
		for i, file := range parsed {
			imports := map[string]string{} // alias → import path
			for spec := range file.ImportSpecs() {
				path := strings.TrimPrefix(strings.Trim(spec.Path.Value, `"`), GenPrefix)
				alias := path[strings.LastIndex(path, "/")+1:]
				if spec.Name != nil {
					alias = spec.Name.Name
				}
				imports[alias] = path
			}
			var failed error
			var rewrite func(astutil.Cursor) bool
			rewrite = func(c astutil.Cursor) bool {
				switch n := c.Node().(type) {
				case *ast.SelectorExpr:
					x, ok := n.X.(*ast.Ident)
					path, imported := "", false
					if ok {
						path, imported = imports[x.Name]
					}
					if !imported {
						// A selection within the package: its selector
						// names a field, not one of the definitions.
						n.X = astutil.Apply(n.X, rewrite, nil).(ast.Expr)
						return false
					}
					sel, _, _ := ast.LabelName(n.Sel)
					if prefix, ok := prefixes[path]; ok {
						c.Replace(ast.NewIdent(localName(prefix, sel)))
						return false
					}
					field, ok := Fields[path]
					if !ok {
						failed = fmt.Errorf("%s: a reference to %s.%s: no field holds %q", files[i], x.Name, sel, path)
						return false
					}
					used[path] = true
					c.Replace(&ast.SelectorExpr{X: ast.NewIdent(field), Sel: n.Sel})
					return false
				case *ast.Ident:
					if names[n.Name] {
						// A label or a reference alike: the package's
						// definitions are renamed where they are declared
						// and wherever they are named.
						c.Replace(ast.NewIdent(localName(p.Prefix, n.Name)))
					}
				}
				return true
			}
			for _, d := range file.Decls {
				switch d.(type) {
				case *ast.Package, *ast.ImportDecl, *ast.Attribute:
					continue
				}
				d = astutil.Apply(d, rewrite, nil).(ast.Decl)
				if failed != nil {
					return nil, failed
				}
				decls = append(decls, d)
			}
		}
	}

	var header []ast.Decl
	header = append(header, &ast.Package{Name: ast.NewIdent("schemas")})
	var paths []string
	for path := range used {
		if !declaredElsewhere[Fields[path]] {
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	if len(paths) > 0 {
		imp := &ast.ImportDecl{Lparen: token.NoSpace.Pos(), Rparen: token.Newline.Pos()}
		for _, path := range paths {
			imp.Specs = append(imp.Specs, &ast.ImportSpec{
				Name: ast.NewIdent(strings.TrimPrefix(Fields[path], "_")),
				Path: &ast.BasicLit{Kind: token.STRING, Value: fmt.Sprintf("%q", GenPrefix+path)},
			})
		}
		header = append(header, imp)
		for _, path := range paths {
			name := Fields[path]
			header = append(header, &ast.Field{Label: ast.NewIdent(name), Value: ast.NewIdent(strings.TrimPrefix(name, "_"))})
		}
	}
	file := &ast.File{Decls: append(header, decls...)}
	src, err := format.Node(file)
	if err != nil {
		return nil, err
	}
	var what []string
	for _, p := range Packages {
		what = append(what, p.ImportPath)
	}
	return append([]byte(fmt.Sprintf("// Code generated by hack/cuelocal from schemas/gen (%s). DO NOT EDIT.\n\n", strings.Join(what, ", "))), src...), nil
}

// definitionName is the name a top-level declaration defines, when it is a
// definition (#Name or _#name).
func definitionName(d ast.Decl) (string, bool) {
	f, ok := d.(*ast.Field)
	if !ok {
		return "", false
	}
	id, ok := f.Label.(*ast.Ident)
	if !ok || !(strings.HasPrefix(id.Name, "#") || strings.HasPrefix(id.Name, "_#")) {
		return "", false
	}
	return id.Name, true
}

// localName is a copied definition's name: #Name → _#<prefix>Name,
// _#name → _#<prefix>_name.
func localName(prefix, name string) string {
	if rest, ok := strings.CutPrefix(name, "_#"); ok {
		return "_#" + prefix + "_" + rest
	}
	return "_#" + prefix + strings.TrimPrefix(name, "#")
}
