package engine

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
)

// TestContractInOneFile: the CUE fields the engine reads and writes are
// named in internal/contract/contract.go alone. No other engine file,
// in any of its packages, builds a CUE path from
// a string literal (cue.Str, cue.ParsePath, cue.Def, cue.Hid), spells a
// top-level field of the contract, or writes a context field as a map key.
func TestContractInOneFile(t *testing.T) {
	selector := regexp.MustCompile(`cue\.(Str|ParsePath|Def|Hid)\("`)
	var topLevel []string
	for _, f := range contract.TopLevelFields {
		topLevel = append(topLevel, regexp.QuoteMeta(`"`+f+`"`))
	}
	field := regexp.MustCompile(strings.Join(topLevel, "|"))
	// A context's fields, as map keys the engine writes.
	contextKey := regexp.MustCompile(`\[\s*"(merged|quantities|existing|release|operation|now|oldObject|runtime|plan|input|context)"\s*\]|[{,]\s*"(merged|quantities|existing|release|operation|now|oldObject|runtime|plan|input|context)"\s*:`)
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		if path != filepath.Join("internal", "contract", "contract.go") && !strings.Contains(path, "testdata") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for i, line := range strings.Split(string(data), "\n") {
			code, _, _ := strings.Cut(line, "//")
			if m := selector.FindString(code); m != "" {
				t.Errorf("%s:%d builds a CUE path from a literal (%s...): name it in contract.go: %s", f, i+1, m, strings.TrimSpace(line))
			}
			if m := contextKey.FindString(code); m != "" {
				t.Errorf("%s:%d spells a context field (%s): use its constant in contract.go: %s", f, i+1, m, strings.TrimSpace(line))
			}
			if m := field.FindString(code); m != "" {
				t.Errorf("%s:%d spells the contract's field %s: use its constant in contract.go: %s", f, i+1, m, strings.TrimSpace(line))
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d files", checked)
	}
}
