package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
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
// warnings and errors blocks (#Errors & {...} too), in its comprehensions
// too; an interpolated label as written (`"x\(i)"` without its quotes).
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
			if b, ok := x.(*ast.BinaryExpr); ok && b.Op == token.AND {
				// #Errors & {...}
				fields(b.X)
				fields(b.Y)
				return
			}
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

// TestFrameworkChecklist: the checklist of what a framework file declares is
// worded the same in schemas/frameworks.cue and docs/frameworks.md, but for
// the examples and asides in parentheses each place gives its readers.
func TestFrameworkChecklist(t *testing.T) {
	cueSrc, err := os.ReadFile("../schemas/frameworks.cue")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile("../docs/frameworks.md")
	if err != nil {
		t.Fatal(err)
	}
	fromCUE := checklist(t, string(cueSrc), "//  1. ", "// An admin", "//")
	fromMD := checklist(t, string(md), "1. **its policy", "And a runtime", "")
	if len(fromCUE) != 4 || !slices.Equal(fromCUE, fromMD) {
		t.Errorf("the checklists differ:\nschemas/frameworks.cue:\n%s\ndocs/frameworks.md:\n%s", strings.Join(fromCUE, "\n"), strings.Join(fromMD, "\n"))
	}
}

// checklist is the numbered items of src between start and end, each as
// words without markup, comment prefix or parenthesized asides.
func checklist(t *testing.T, src, start, end, prefix string) []string {
	i := strings.Index(src, start)
	j := strings.Index(src[max(i, 0):], end)
	if i < 0 || j < 0 {
		t.Fatalf("no checklist from %q to %q", start, end)
	}
	var text strings.Builder
	for _, line := range strings.Split(src[i:i+j], "\n") {
		text.WriteString(strings.TrimPrefix(strings.TrimSpace(line), prefix) + " ")
	}
	plain := strings.NewReplacer("**", "", "`", "").Replace(text.String())
	plain = regexp.MustCompile(`\s*\([^()]*(\([^()]*\)[^()]*)*\)`).ReplaceAllString(plain, "")
	var items []string
	for _, item := range regexp.MustCompile(`\s[1-9]\. `).Split(" "+plain, -1)[1:] {
		items = append(items, strings.Join(strings.Fields(item), " "))
	}
	return items
}
