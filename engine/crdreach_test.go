package engine

import (
	"reflect"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"github.com/cuetrainer/cuetrainer/engine/internal/crd"
	"github.com/cuetrainer/cuetrainer/engine/internal/reach"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// TestEmbeddedSchemaKeptOnlyWhenUnreached: with a policy, each kind's CRD
// schema the engine holds (the one made ahead when the policy's files
// reach nothing it is made of, reach.Reach) is the one made from the
// policy's CUE, for every example policy and for policies that change a
// kind's schema through a definition it names and through a marker; and
// the examples, which change no TrainJob's definition, keep its schema
// made ahead, while a policy that changes it does not.
func TestEmbeddedSchemaKeptOnlyWhenUnreached(t *testing.T) {
	t.Parallel()
	const trainJob = "TrainJob"
	for _, tc := range []struct {
		name string
		dir  string
		// files, when dir is "": a policy of these.
		files map[string]string
		// kept says the TrainJob's schema is the one made ahead.
		kept bool
	}{
		{name: "ome", dir: "../examples/policies/ome", kept: true},
		{name: "tensorflow", dir: "../examples/policies/tensorflow", kept: true},
		{name: "a field of a definition the TrainJob names", files: map[string]string{
			"p.cue": "package schemas\n\n#Trainer: priority?: int & >=0 & <=10\n"}},
		{name: "a marker on a field of the TrainJob", files: map[string]string{
			"p.cue": "package schemas\n\n#Trainer: {\n\t// +kubebuilder:validation:Maximum=64\n\tnumNodes?: _\n}\n"}},
	} {
		dir := tc.dir
		if dir == "" {
			dir = writePolicy(t, tc.files)
		}
		e, err := New(Options{PolicyDirs: []string{dir}})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var added []*ast.File
		for _, inst := range e.instances {
			for _, f := range inst.Files {
				if e.src.IsPolicyFile(f.Filename) || f.Filename == markerFile {
					added = append(added, f)
				}
			}
		}
		if len(added) == 0 {
			t.Fatalf("%s: no file of the policy's", tc.name)
		}
		r := reach.EmbeddedReach()
		for _, key := range value.SortedKeys(crd.EmbeddedSchemas()) {
			apiVersion, kind, _ := strings.Cut(key, ", Kind=")
			made := crd.Schema(e.src, e.compiled().Schemas, apiVersion, kind)
			if got := e.crdSchema(apiVersion, kind); !reflect.DeepEqual(got, made) {
				t.Errorf("%s: %s: the engine's schema is not the one made from the policy's CUE", tc.name, key)
			}
			if kind != trainJob {
				continue
			}
			if kept := !reach.Reaches(reach.Declared(added), r.RootsOf("crds", kind)); kept != tc.kept {
				t.Errorf("%s: the TrainJob's schema made ahead kept: %v, want %v", tc.name, kept, tc.kept)
			}
			ahead, _ := crd.SchemaFromJSON(crd.EmbeddedSchemas()[key])
			if changed := !reflect.DeepEqual(made, ahead); changed == tc.kept {
				t.Errorf("%s: the policy changes the TrainJob's schema: %v, want %v", tc.name, changed, !tc.kept)
			}
		}
	}
}
