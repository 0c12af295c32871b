package crd_test

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/crd"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// TestSchemasMadeAhead: for the embedded CUE alone a kind's schema is the
// one made ahead, read without the CUE (given none, it is still there);
// for a policy's CUE it is made from the CUE (given none, there is none);
// and a kind's schema is made once, then kept.
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
		embedded := crd.NewSchemas(source.NewFiles(), true)
		got := embedded.Of(cue.Value{}, apiVersion, kind)
		if got == nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the embedded CUE's schema is not the one made ahead", key)
		}
		if again := embedded.Of(cue.Value{}, apiVersion, kind); reflect.ValueOf(again).UnsafePointer() != reflect.ValueOf(got).UnsafePointer() {
			t.Errorf("%s: read twice, the schema was made twice", key)
		}
		if s := crd.NewSchemas(source.NewFiles(), false).Of(cue.Value{}, apiVersion, kind); s != nil {
			t.Errorf("%s: a policy's CUE took the schema made ahead", key)
		}
	}
}
