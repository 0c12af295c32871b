package engine_test

import (
	"go/ast"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestStagesRunDown: a file of the engine uses what its own layer and the
// layers below declare (docs/engine.md, "Files by layer"). Every reference
// from one file to another (a package-level name, a method or a field,
// resolved by the type checker) that runs up a layer must be a row of the
// page's table of arrows up, with why it stays; a row no reference needs
// fails too, as does a file in no layer.
func TestStagesRunDown(t *testing.T) {
	doc, err := os.ReadFile("../docs/engine.md")
	if err != nil {
		t.Fatal(err)
	}
	layerOf, allowed := engineLayers(t, string(doc))

	p := loadEngine(t)
	up := map[string][]string{} // "from → to": the names it uses
	for _, f := range p.Syntax {
		from := filepath.Base(p.Fset.Position(f.Pos()).Filename)
		if _, ok := layerOf[from]; !ok {
			t.Errorf("%s is in no layer of docs/engine.md", from)
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := p.TypesInfo.Uses[id]
			if obj == nil || obj.Pkg() != p.Types || !declaredAtTop(obj, p.Types) {
				return true
			}
			to := filepath.Base(p.Fset.Position(obj.Pos()).Filename)
			if layerOf[to] > layerOf[from] {
				k := from + " → " + to
				up[k] = append(up[k], obj.Name())
			}
			return true
		})
	}
	if len(up) == 0 && len(allowed) == 0 {
		t.Fatal("found no arrow at all: the walk is broken")
	}
	for k, names := range up {
		if !allowed[k] {
			sort.Strings(names)
			t.Errorf("%s runs up a layer (%s): move what it uses down, or add a row saying why to docs/engine.md", k, strings.Join(slices.Compact(names), ", "))
		}
	}
	for k := range allowed {
		if _, ok := up[k]; !ok {
			t.Errorf("docs/engine.md lists %s, which no reference needs any more: remove its row", k)
		}
	}
}

// declaredAtTop: obj is the package's (a package-level name, or a method or
// field of one of its types), not a local.
func declaredAtTop(obj types.Object, pkg *types.Package) bool {
	switch o := obj.(type) {
	case *types.Func:
		return o.Parent() == nil || o.Parent() == pkg.Scope()
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	}
	return obj.Parent() == pkg.Scope()
}

// engineLayers reads docs/engine.md's layers (a numbered list of files) and
// its table of arrows up.
func engineLayers(t *testing.T, doc string) (map[string]int, map[string]bool) {
	_, section, ok := strings.Cut(doc, "### Files by layer, bottom up")
	if !ok {
		t.Fatal(`docs/engine.md has no "### Files by layer, bottom up"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	file := regexp.MustCompile("`([a-z_]+\\.go)`")
	layerOf := map[string]int{}
	allowed := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if m := regexp.MustCompile(`^([1-9])\. `).FindStringSubmatch(line); m != nil {
			for _, f := range file.FindAllStringSubmatch(line, -1) {
				layerOf[f[1]] = int(m[1][0] - '0')
			}
		}
		if cells := strings.Split(line, " | "); strings.HasPrefix(line, "| `") && len(cells) == 2 {
			fs := file.FindAllStringSubmatch(cells[0], -1)
			if len(fs) != 2 {
				t.Fatalf("docs/engine.md: a row of arrows up names two files: %s", line)
			}
			allowed[fs[0][1]+" → "+fs[1][1]] = true
		}
	}
	if len(layerOf) < 20 {
		t.Fatalf("docs/engine.md's layers name %d files", len(layerOf))
	}
	return layerOf, allowed
}

// engineLoad is package engine's syntax and types, type-checked once for
// the tests that read them (TestStagesRunDown, TestFacadeAPI).
var engineLoad = sync.OnceValues(func() ([]*packages.Package, error) {
	return packages.Load(&packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
	}, ".")
})

// loadEngine returns package engine, loaded once.
func loadEngine(t *testing.T) *packages.Package {
	t.Helper()
	pkgs, err := engineLoad()
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("loading the engine: %v", pkgs)
	}
	return pkgs[0]
}
