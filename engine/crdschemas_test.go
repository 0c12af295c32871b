package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/crd"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// TestEmbeddedCRDSchemas makes every CRD schema of the embedded CUE and
// fails when internal/crd/crdschemas.json, which an engine of the embedded CUE reads
// instead, differs from them; UPDATE_GOLDEN=1 rewrites the file.
func TestEmbeddedCRDSchemas(t *testing.T) {
	t.Parallel()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	crds, err := e.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]map[string]any{}
	type kindOf struct{ apiVersion, kind string }
	byKey := map[string]kindOf{}
	for _, def := range crds {
		spec := def["spec"].(map[string]any)
		kind := k8s.Str(spec["names"].(map[string]any)["kind"])
		for _, ver := range spec["versions"].([]any) {
			apiVersion := k8s.Str(spec["group"]) + "/" + k8s.Str(ver.(map[string]any)["name"])
			made[crd.SchemaKey(apiVersion, kind)] = crd.Schema(e.src, e.cur.Load().Schemas, apiVersion, kind)
			byKey[crd.SchemaKey(apiVersion, kind)] = kindOf{apiVersion, kind}
		}
	}
	if len(made) < 3 {
		t.Fatalf("made %d schemas, want the TrainJob's and the two runtimes'", len(made))
	}
	if os.Getenv("UPDATE_GOLDEN") != "" {
		data, err := json.MarshalIndent(made, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("internal", "crd", "crdschemas.json"), append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	embedded := crd.EmbeddedSchemas()
	var keys []string
	for key := range made {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		got, ok := crd.SchemaFromJSON(embedded[key])
		if !ok {
			t.Errorf("crdschemas.json has no schema of %s: UPDATE_GOLDEN=1 go test -run TestEmbeddedCRDSchemas ./engine", key)
			continue
		}
		if !reflect.DeepEqual(got, made[key]) {
			t.Errorf("crdschemas.json's schema of %s differs from the CUE's: UPDATE_GOLDEN=1 go test -run TestEmbeddedCRDSchemas ./engine", key)
		}
	}
	if len(embedded) != len(made) {
		t.Errorf("crdschemas.json has %d schemas, the CUE makes %d", len(embedded), len(made))
	}
	// The engine reads them: a kind's schema is the file's.
	for _, key := range keys {
		if s := e.crdSchema(byKey[key].apiVersion, byKey[key].kind); !reflect.DeepEqual(s, made[key]) {
			t.Errorf("the engine's schema of %s is not the one made from the CUE", key)
		}
	}
}
