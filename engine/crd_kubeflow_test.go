package engine

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The facts of Kubeflow Trainer's CRDs that decide what the API server
// takes, prunes, defaults and merges, path by path, recorded once from
// Kubeflow's manifests (descriptions left out):
//
//	go test ./engine -run TestCRDsAreKubeflows -kubeflow-crds=DIR
//
// where DIR holds manifests/base/crds of kubeflow/trainer at the commit
// the conformance corpus was made with (8c0f5059, the v2.3.0 line).
var recordKubeflowCRDs = flag.String("kubeflow-crds", "", "record the facts of the Kubeflow CRDs in this directory into testdata/kubeflow-crds")

const kubeflowCRDFacts = "testdata/kubeflow-crds"

// crdFacts is what the comparison reads of one CRD.
type crdFacts struct {
	Source   string                    `json:"source,omitempty"`
	Group    string                    `json:"group"`
	Names    map[string]any            `json:"names"`
	Scope    string                    `json:"scope"`
	Versions map[string]map[string]any `json:"versions"` // name: served, storage, subresources, additionalPrinterColumns
	// Paths maps a schema path (".spec.x", "[]" for items, "{}" for
	// additionalProperties, "" for the root) to its attributes.
	Paths map[string]map[string]any `json:"paths"`
}

// factsOf flattens a CRD (as JSON-decoded) into its facts.
func factsOf(crd map[string]any) (crdFacts, error) {
	data, err := json.Marshal(crd)
	if err != nil {
		return crdFacts{}, err
	}
	var c struct {
		Spec struct {
			Group    string         `json:"group"`
			Names    map[string]any `json:"names"`
			Scope    string         `json:"scope"`
			Versions []map[string]any
		} `json:"spec"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return crdFacts{}, err
	}
	f := crdFacts{Group: c.Spec.Group, Names: c.Spec.Names, Scope: c.Spec.Scope, Versions: map[string]map[string]any{}, Paths: map[string]map[string]any{}}
	for _, v := range c.Spec.Versions {
		name, _ := v["name"].(string)
		schema, _ := v["schema"].(map[string]any)
		root, _ := schema["openAPIV3Schema"].(map[string]any)
		rest := map[string]any{}
		for k, x := range v {
			if k != "name" && k != "schema" {
				rest[k] = x
			}
		}
		f.Versions[name] = rest
		flattenSchema(root, "", f.Paths)
	}
	return f, nil
}

func flattenSchema(s map[string]any, path string, out map[string]map[string]any) {
	if s == nil {
		return
	}
	attrs := map[string]any{}
	for k, v := range s {
		switch k {
		case "properties", "items", "additionalProperties", "description":
		default:
			attrs[k] = v
		}
	}
	out[path] = attrs
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		ps, _ := p.(map[string]any)
		flattenSchema(ps, path+"."+name, out)
	}
	if items, ok := s["items"].(map[string]any); ok {
		flattenSchema(items, path+"[]", out)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		flattenSchema(ap, path+"{}", out)
	}
}

// crdDifferences lists, one line each, where ours differs from Kubeflow's.
func crdDifferences(kind string, kf, ours crdFacts) []string {
	var out []string
	js := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	for _, f := range []struct {
		name     string
		kf, ours any
	}{{"group", kf.Group, ours.Group}, {"names", kf.Names, ours.Names}, {"scope", kf.Scope, ours.Scope}, {"versions", kf.Versions, ours.Versions}} {
		if js(f.kf) != js(f.ours) {
			out = append(out, fmt.Sprintf("%s %s: kubeflow %s, ours %s", kind, f.name, js(f.kf), js(f.ours)))
		}
	}
	for p, a := range kf.Paths {
		b, ok := ours.Paths[p]
		if !ok {
			out = append(out, fmt.Sprintf("%s %s: missing", kind, p))
			continue
		}
		keys := map[string]bool{}
		for k := range a {
			keys[k] = true
		}
		for k := range b {
			keys[k] = true
		}
		for k := range keys {
			if js(a[k]) != js(b[k]) {
				out = append(out, fmt.Sprintf("%s %s %s: kubeflow %s, ours %s", kind, p, k, js(a[k]), js(b[k])))
			}
		}
	}
	for p := range ours.Paths {
		if _, ok := kf.Paths[p]; !ok {
			out = append(out, fmt.Sprintf("%s %s: extra", kind, p))
		}
	}
	sort.Strings(out)
	return out
}

// TestCRDsAreKubeflows compares the generated CRDs with the recorded facts
// of Kubeflow's, path by path and attribute by attribute. Where they
// differ, the difference is listed in testdata/kubeflow-crds/differences.txt:
// a difference not listed fails the test, and so does a listed one that is
// gone (the list only shrinks, with the fixes).
func TestCRDsAreKubeflows(t *testing.T) {
	if *recordKubeflowCRDs != "" {
		recordKubeflowFacts(t, *recordKubeflowCRDs)
	}
	crds, err := testEngine(t).CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, crd := range crds {
		kind := crd["spec"].(map[string]any)["names"].(map[string]any)["kind"].(string)
		data, err := os.ReadFile(filepath.Join(kubeflowCRDFacts, strings.ToLower(kind)+".json"))
		if err != nil {
			t.Fatalf("%s: no recorded facts: %v", kind, err)
		}
		var kf crdFacts
		if err := json.Unmarshal(data, &kf); err != nil {
			t.Fatal(err)
		}
		ours, err := factsOf(crd)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, crdDifferences(kind, kf, ours)...)
	}
	listed := map[string]bool{}
	data, err := os.ReadFile(filepath.Join(kubeflowCRDFacts, "differences.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			listed[line] = true
		}
	}
	if os.Getenv("UPDATE_CRD_DIFFERENCES") != "" {
		writeDifferences(t, got)
		return
	}
	seen := map[string]bool{}
	var unlisted []string
	for _, d := range got {
		seen[d] = true
		if !listed[d] {
			unlisted = append(unlisted, d)
		}
	}
	var gone []string
	for d := range listed {
		if !seen[d] {
			gone = append(gone, d)
		}
	}
	sort.Strings(gone)
	if len(unlisted) > 0 {
		t.Errorf("%d differences from Kubeflow's CRDs that differences.txt does not list:\n  %s", len(unlisted), strings.Join(unlisted, "\n  "))
	}
	if len(gone) > 0 {
		t.Errorf("%d differences differences.txt lists are gone: take them out of it:\n  %s", len(gone), strings.Join(gone, "\n  "))
	}
	t.Logf("%d differences from Kubeflow's CRDs, all listed", len(got))
}

// writeDifferences rewrites differences.txt, keeping its header comment.
func writeDifferences(t *testing.T, diffs []string) {
	file := filepath.Join(kubeflowCRDFacts, "differences.txt")
	old, _ := os.ReadFile(file)
	var b bytes.Buffer
	for _, line := range strings.Split(string(old), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		b.WriteString(line + "\n")
	}
	for _, d := range diffs {
		b.WriteString(d + "\n")
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func recordKubeflowFacts(t *testing.T, dir string) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s: %v", dir, err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var crd map[string]any
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatal(err)
		}
		if crd["kind"] != "CustomResourceDefinition" {
			continue
		}
		f, err := factsOf(crd)
		if err != nil {
			t.Fatal(err)
		}
		f.Source = "kubeflow/trainer@8c0f5059bd51ec3ba6d6a6a7b2e1471de7bc13b3 " + filepath.Join("manifests/base/crds", filepath.Base(file))
		out, err := marshalFacts(f)
		if err != nil {
			t.Fatal(err)
		}
		kind, _ := f.Names["kind"].(string)
		if err := os.WriteFile(filepath.Join(kubeflowCRDFacts, strings.ToLower(kind)+".json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// marshalFacts writes the facts with one path per line, sorted, so that a
// change reads as a line of a diff.
func marshalFacts(f crdFacts) ([]byte, error) {
	paths := f.Paths
	f.Paths = nil
	head, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(head[:len(head)-2]) // up to the closing brace
	b.WriteString(",\n  \"paths\": {\n")
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		kj, _ := json.Marshal(k)
		vj, err := json.Marshal(paths[k])
		if err != nil {
			return nil, err
		}
		sep := ","
		if i == len(keys)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    %s: %s%s\n", kj, vj, sep)
	}
	b.WriteString("  }\n}\n")
	return b.Bytes(), nil
}
