package engine_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestImportsRunDown: every engine package imports, in its code and its
// tests, only engine packages of a lower layer of docs/engine.md's list
// ("The engine's packages, bottom up"): never one of its own layer or
// above. Every engine package is in the list, and every package the list
// names exists. There is no table of exceptions.
func TestImportsRunDown(t *testing.T) {
	doc, err := os.ReadFile("../docs/engine.md")
	if err != nil {
		t.Fatal(err)
	}
	layerOf := packageLayers(t, string(doc))

	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
	cmd.Dir = "."
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const root = "github.com/cuetrainer/cuetrainer/engine"
	name := func(path string) (string, bool) {
		if path == root {
			return "engine", true
		}
		rest, ok := strings.CutPrefix(path, root+"/internal/")
		return rest, ok
	}
	listed := map[string]bool{}
	arrows := 0
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		from, ok := name(p.ImportPath)
		if !ok {
			continue // a test-data or tool package outside internal/
		}
		listed[from] = true
		level, ok := layerOf[from]
		if !ok {
			t.Errorf("%s is in no layer of docs/engine.md's list of packages", p.ImportPath)
			continue
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			to, ok := name(imp)
			if !ok || to == from {
				continue
			}
			arrows++
			if l, ok := layerOf[to]; !ok || l >= level {
				t.Errorf("%s (layer %d) imports %s (layer %d): an engine package imports only the layers before its own", from, level, to, l)
			}
		}
	}
	for p := range layerOf {
		if !listed[p] {
			t.Errorf("docs/engine.md lists the package %s, which does not exist", p)
		}
	}
	if arrows == 0 {
		t.Fatal("no engine package imports another: the walk is broken")
	}
}

// packageLayers reads docs/engine.md's numbered list of packages: each
// item a layer, the packages it names in backquotes side by side.
func packageLayers(t *testing.T, doc string) map[string]int {
	_, section, ok := strings.Cut(doc, "## The engine's packages, bottom up")
	if !ok {
		t.Fatal(`docs/engine.md has no "## The engine's packages, bottom up"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	paren := regexp.MustCompile(`\([^()]*\)`)
	pkg := regexp.MustCompile("`([a-z][a-z0-9/]*)`")
	item := regexp.MustCompile(`^[0-9]+\. `)
	layerOf := map[string]int{}
	var items []string
	for _, line := range strings.Split(section, "\n") {
		if item.MatchString(line) {
			items = append(items, item.ReplaceAllString(line, ""))
			continue
		}
		if len(items) == 0 {
			continue
		}
		if !strings.HasPrefix(line, "   ") {
			break // the list ends
		}
		items[len(items)-1] += " " + strings.TrimSpace(line)
	}
	for i, text := range items {
		// A package's description is in parentheses after its name.
		for _, f := range pkg.FindAllStringSubmatch(paren.ReplaceAllString(text, ""), -1) {
			layerOf[f[1]] = i + 1
		}
	}
	if layerOf["engine"] == 0 || len(layerOf) < 2 {
		t.Fatalf("docs/engine.md's list of packages reads as %v", layerOf)
	}
	return layerOf
}
