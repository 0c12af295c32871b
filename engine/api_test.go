package engine_test

import (
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFacadeAPI: the engine's exported API, what cmd/ and controller/ may
// use (every exported name of package engine, and the exported methods
// and fields of its exported types), is the list in testdata/api.txt, one
// declaration a line as go/types prints it. A change to the API fails
// here until the list is rewritten (UPDATE_GOLDEN=1 go test -run
// TestFacadeAPI ./engine), so that the change shows in review: a knob
// only tests need belongs in a test-support package, not here.
func TestFacadeAPI(t *testing.T) {
	got := facadeAPI(loadEngine(t).Types)
	golden := filepath.Join("testdata", "api.txt")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("new in the engine's API, not in testdata/api.txt: %s", l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("in testdata/api.txt, gone from the engine's API: %s", l)
		}
	}
	if t.Failed() {
		t.Log("if the change is meant, UPDATE_GOLDEN=1 go test -run TestFacadeAPI ./engine, and say why in the commit")
	}
}

// facadeAPI lists a package's exported declarations, sorted: each
// package-level object, and each exported method and field of its
// exported named types.
func facadeAPI(pkg *types.Package) []string {
	// Other packages by their name: engine's own internal ones read
	// best so (Finding).
	qual := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	}
	var out []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		tn, ok := obj.(*types.TypeName)
		if !ok {
			out = append(out, types.ObjectString(obj, qual))
			continue
		}
		if _, isStruct := tn.Type().Underlying().(*types.Struct); isStruct && !tn.IsAlias() {
			// Its exported fields follow; its unexported ones are no API.
			out = append(out, "type "+name+" struct")
		} else {
			out = append(out, types.ObjectString(obj, qual))
		}
		named, ok := tn.Type().(*types.Named)
		if !ok || tn.IsAlias() {
			continue
		}
		for m := range named.Methods() {
			if m.Exported() {
				out = append(out, types.ObjectString(m, qual))
			}
		}
		if st, ok := named.Underlying().(*types.Struct); ok {
			for f := range st.Fields() {
				if f.Exported() {
					out = append(out, name+"."+f.Name()+" "+types.TypeString(f.Type(), qual))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
