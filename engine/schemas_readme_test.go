package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"
)

// TestSchemasReadmeListsEveryRule: schemas/README.md's table names, in
// the row of its file, every rule a schema file writes (the fields of its
// crd, webhook, policy, warnings and errors blocks: the names vet reports).
func TestSchemasReadmeListsEveryRule(t *testing.T) {
	readme, err := os.ReadFile("../schemas/README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(readme), "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) == 3 {
			for _, f := range strings.Split(cells[1], ", ") {
				rows[strings.TrimSpace(f)] = cells[2]
			}
		}
	}
	files, err := filepath.Glob("../schemas/*.cue")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(f, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, rule := range ruleNames(file) {
			total++
			row, ok := rows[filepath.Base(f)]
			if !ok {
				t.Errorf("%s writes rule %s but has no row in schemas/README.md", filepath.Base(f), rule)
				continue
			}
			if !strings.Contains(row, rule) {
				t.Errorf("schemas/README.md's row for %s lacks its rule %s", filepath.Base(f), rule)
			}
		}
	}
	if total < 50 {
		t.Errorf("found %d rules in the schemas; the walk is broken", total)
	}
}

// ruleNames are the labels of the fields of a file's crd, webhook, policy,
// warnings and errors blocks, in its comprehensions too; an interpolated
// label as written (`"x\(i)"` without its quotes).
func ruleNames(file *ast.File) []string {
	var out []string
	ast.Walk(file, func(n ast.Node) bool {
		f, ok := n.(*ast.Field)
		if !ok {
			return true
		}
		switch name, _, _ := ast.LabelName(f.Label); name {
		case "crd", "webhook", "policy", "warnings", "errors":
		default:
			return true
		}
		var fields func(x ast.Expr)
		fields = func(x ast.Expr) {
			s, ok := x.(*ast.StructLit)
			if !ok {
				return
			}
			for _, d := range s.Elts {
				switch e := d.(type) {
				case *ast.Field:
					name, _, err := ast.LabelName(e.Label)
					if err != nil {
						b, _ := format.Node(e.Label)
						name = strings.Trim(string(b), `"`)
					}
					out = append(out, name)
				case *ast.Comprehension:
					if v, ok := e.Value.(ast.Expr); ok {
						fields(v)
					}
				case *ast.EmbedDecl:
					fields(e.Expr)
				}
			}
		}
		fields(f.Value)
		return true
	}, nil)
	return out
}
