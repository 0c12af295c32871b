package crd

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"sync"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/reach"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// The CRD schemas of the embedded CUE, made ahead.
//
// A kind's CRD schema (crdSchema) is the walk of its CUE definition that
// `cuetrainer export crds` writes: 45 ms for a TrainJob, 75 ms for a
// runtime, whose template holds a whole PodSpec. Every process that reads
// a kind paid it, before the first object of the kind could be reviewed:
// a third of a `cuetrainer vet` of 1,000 documents. An engine of the
// embedded CUE alone (no Options.PolicyDirs) makes the same schemas every
// time, so they are made once, at build time, into crdschemas.json, read
// here the first time a kind is. TestEmbeddedCRDSchemas makes them from
// the CUE and fails when they differ from the file (UPDATE_GOLDEN=1
// rewrites it; `make manifests` does). An admin's policy may change any
// kind's definition or markers: its engine makes its own.

//go:embed crdschemas.json
var embeddedCRDSchemasJSON []byte

// EmbeddedSchemas are the file's schemas, by apiVersion and kind (as
// crdSchemaKey), each as JSON, read once.
var EmbeddedSchemas = sync.OnceValue(func() map[string]json.RawMessage {
	var byKey map[string]json.RawMessage
	if err := json.Unmarshal(embeddedCRDSchemasJSON, &byKey); err != nil {
		return nil // TestEmbeddedCRDSchemas fails; the engine makes its own
	}
	return byKey
})

// SchemaKey names a kind's schema in crdschemas.json.
func SchemaKey(apiVersion, kind string) string {
	return apiVersion + ", Kind=" + kind
}

// SchemaFromJSON reads a schema as the engine holds every schema, made
// ahead or not: numbers as ReadObject reads them.
func SchemaFromJSON(data []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var s map[string]any
	if err := dec.Decode(&s); err != nil || s == nil {
		return nil, false
	}
	return value.Numbers(s).(map[string]any), true
}

// Schemas holds the structural schema of each kind with a CRD, by
// apiVersion and kind, made the first time the kind is read (Of): one
// kind's, not every kind's, so that a run that reads two kinds makes two.
// A kind whose schema is the embedded CUE's (the CUE is the embedded
// alone, or the admin's files reach nothing it is made of: package reach) has
// the one made ahead (EmbeddedSchemas). One is made at a time; safe for
// concurrent use.
type Schemas struct {
	src *source.Files
	// embedded says, of a kind, that its schema is the embedded CUE's.
	embedded func(kind string) bool

	mu    sync.Mutex
	byKey map[string]map[string]any
}

// NewSchemas holds the schemas of the CUE compiled from src's files: the
// embedded files and those of an admin's policy, which declare declared
// (reach.Reach.Declared; none: the embedded CUE alone).
func NewSchemas(src *source.Files, declared [][]string) *Schemas {
	s := &Schemas{src: src, byKey: map[string]map[string]any{}}
	if len(declared) == 0 {
		s.embedded = func(string) bool { return true }
		return s
	}
	r := reach.EmbeddedReach()
	s.embedded = func(kind string) bool {
		return r != nil && !reach.Reaches(declared, r.RootsOf(contract.PathCRDs.Selectors()[0].Unquoted(), kind))
	}
	return s
}

// Of is the openAPIV3Schema of the kind's CRD, nil when it has none,
// made from the compiled CUE (schemas: any runtime of it) the first time.
func (s *Schemas) Of(schemas cue.Value, apiVersion, kind string) map[string]any {
	key := SchemaKey(apiVersion, kind)
	s.mu.Lock()
	defer s.mu.Unlock()
	if schema, ok := s.byKey[key]; ok {
		return schema
	}
	schema, ok := map[string]any(nil), false
	if s.embedded(kind) {
		// Made ahead from the same CUE.
		if data, found := EmbeddedSchemas()[key]; found {
			schema, ok = SchemaFromJSON(data)
		}
	}
	if !ok {
		schema = Schema(s.src, schemas, apiVersion, kind)
	}
	s.byKey[key] = schema
	return schema
}
