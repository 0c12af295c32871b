package lint

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue/parser"
	"github.com/cuetrainer/cuetrainer/engine/internal/load"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// TestPolicyAllowedImports: a policy may import every package of CUE's
// standard library but tool/..., and the Kubernetes types cuetrainer
// carries; each import resolves, so none of the list is made up.
func TestPolicyAllowedImports(t *testing.T) {
	t.Parallel()
	var pkgs []string
	for p := range pureStdlib {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	pkgs = append(pkgs, "k8s.io/api/core/v1", "sigs.k8s.io/jobset/api/jobset/v1alpha2",
		source.GenPrefix+"k8s.io/api/core/v1", source.ModulePath+"/runtimes")
	var b strings.Builder
	b.WriteString("package schemas\n\nimport (\n")
	for i, p := range pkgs {
		fmt.Fprintf(&b, "\tp%d %q\n", i, p)
	}
	b.WriteString(")\n\n")
	for i := range pkgs {
		// Referring to each import keeps the loader from calling it unused.
		fmt.Fprintf(&b, "_p%d: p%d\n", i, i)
	}
	files, src := map[string][]byte{}, source.NewFiles()
	if err := source.Embedded(files, src); err != nil {
		t.Fatal(err)
	}
	// As the engine's load adds an admin's file to package schemas.
	name := source.Root + "/schemas/zz-policy0--imports.cue"
	files[name] = []byte(b.String())
	src.Add(name, "imports.cue", true)
	insts := source.Instances(files, "./schemas", "./runtimes")
	for _, inst := range insts {
		if inst.Err != nil {
			t.Fatalf("a policy importing %v:\n%v", pkgs, src.Details(inst.Err))
		}
	}
	if _, problems, err := load.Compile(src, insts); problems != nil || err != nil {
		t.Fatalf("a policy importing %v:\n%v %v", pkgs, problems, err)
	}
	f, err := parser.ParseFile("imports.cue", b.String())
	if err != nil {
		t.Fatal(err)
	}
	if refused := Refusals(f); refused != nil {
		t.Errorf("refused: %v", refused)
	}
}

// TestExamplePoliciesLoad: the policies the repository ships load, and
// what they add works.
