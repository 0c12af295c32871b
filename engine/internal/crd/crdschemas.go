package crd

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"sync"

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
