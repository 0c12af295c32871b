package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestContractInOneFile: the CUE fields the engine reads and writes are
// named in contract.go alone. No other engine file builds a CUE path from
// a string literal (cue.Str, cue.ParsePath, cue.Def, cue.Hid), spells a
// top-level field of the contract, or writes a context field as a map key.
func TestContractInOneFile(t *testing.T) {
	selector := regexp.MustCompile(`cue\.(Str|ParsePath|Def|Hid)\("`)
	var topLevel []string
	for _, f := range contractFields {
		topLevel = append(topLevel, regexp.QuoteMeta(`"`+f+`"`))
	}
	field := regexp.MustCompile(strings.Join(topLevel, "|"))
	// A context's fields, as map keys the engine writes.
	contextKey := regexp.MustCompile(`\[\s*"(merged|quantities|existing|release|operation|now|oldObject|runtime|plan|input|context)"\s*\]|[{,]\s*"(merged|quantities|existing|release|operation|now|oldObject|runtime|plan|input|context)"\s*:`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if f == "contract.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
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
