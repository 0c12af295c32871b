package crd_test

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"github.com/cuetrainer/cuetrainer/engine/internal/crd"
	"github.com/cuetrainer/cuetrainer/engine/internal/reach"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// TestSchemasMadeAhead: for the embedded CUE alone a kind's schema is the
// one made ahead, read without the CUE (given none, it is still there);
// and a kind's schema is made once, then kept. For a policy whose files
// reach the kind's declarations it is made from the CUE (given none,
// there is none); for one whose files reach nothing of it, it is the one
// made ahead.
func TestSchemasMadeAhead(t *testing.T) {
	keys := make([]string, 0, len(crd.EmbeddedSchemas()))
	for key := range crd.EmbeddedSchemas() {
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		t.Fatal("no schemas made ahead")
	}
	sort.Strings(keys)
	for _, key := range keys {
		apiVersion, kind, ok := strings.Cut(key, ", Kind=")
		if !ok || crd.SchemaKey(apiVersion, kind) != key {
			t.Fatalf("key %q is not a SchemaKey", key)
		}
		want, _ := crd.SchemaFromJSON(crd.EmbeddedSchemas()[key])
		embedded := crd.NewSchemas(source.NewFiles(), nil)
		got := embedded.Of(cue.Value{}, apiVersion, kind)
		if got == nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the embedded CUE's schema is not the one made ahead", key)
		}
		if again := embedded.Of(cue.Value{}, apiVersion, kind); reflect.ValueOf(again).UnsafePointer() != reflect.ValueOf(got).UnsafePointer() {
			t.Errorf("%s: read twice, the schema was made twice", key)
		}
		if s := crd.NewSchemas(source.NewFiles(), declared(t, "package schemas\n\ncrds: "+kind+": plural: string\n")).Of(cue.Value{}, apiVersion, kind); s != nil {
			t.Errorf("%s: a policy's CUE that declares its crds entry took the schema made ahead", key)
		}
		if s := crd.NewSchemas(source.NewFiles(), declared(t, "package schemas\n\nadmission: x: policy: y: []\n")).Of(cue.Value{}, apiVersion, kind); !reflect.DeepEqual(s, want) {
			t.Errorf("%s: a policy's CUE that reaches nothing of the kind's schema did not take the one made ahead", key)
		}
	}
}

// declared are the paths one file of CUE declares (reach.Declared).
func declared(t *testing.T, src string) [][]string {
	t.Helper()
	f, err := parser.ParseFile("policy.cue", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return reach.Declared([]*ast.File{f})
}
