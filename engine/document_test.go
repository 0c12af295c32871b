package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

func TestReadYAMLBadInput(t *testing.T) {
	deep := "a:\n"
	for i := 1; i < 150; i++ {
		deep += strings.Repeat("  ", i) + "a:\n"
	}
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("b%d", i)
		bomb += fmt.Sprintf("%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", name, name, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = name
	}
	for _, tc := range []struct {
		name, input string
		line        int
		want        string
	}{
		{"syntax", "apiVersion: v1\nkind: [\n", 2, "YAML:"},
		{"duplicate key", "apiVersion: v1\nkind: A\nkind: B\n", 3, `duplicate key "kind" in the document (first at line 2)`},
		{"scalar document", "hello\n", 1, "not a Kubernetes object: the document is a scalar"},
		{"list document", "- a\n- b\n", 1, "not a Kubernetes object: the document is a list"},
		{"invalid UTF-8", "kind: \xff\xfe\n", 1, "not valid UTF-8"},
		{"deep nesting", deep, 0, "nested deeper than 100 levels"},
		{"alias bomb", bomb, 0, "document too large"},
		{"non-string key", "{[a]: b}\n", 1, "a mapping key must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs := k8s.ReadYAML("x.yaml", []byte(tc.input))
			if len(docs) == 0 {
				t.Fatal("no document")
			}
			d := docs[len(docs)-1]
			if d.Err == nil {
				t.Fatalf("read without error: %v", d.Object)
			}
			if !strings.Contains(d.Err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", d.Err, tc.want)
			}
			if tc.line != 0 && d.Line != tc.line {
				t.Errorf("line %d, want %d", d.Line, tc.line)
			}
		})
	}
}

func TestReadYAMLKeepsGoodDocuments(t *testing.T) {
	docs := k8s.ReadYAML("x.yaml", []byte("kind: A\napiVersion: v1\n---\n7\n---\nkind: B\napiVersion: v1\n---\n---\n"))
	if len(docs) != 3 {
		t.Fatalf("got %d documents, want 3 (empty ones skipped)", len(docs))
	}
	if docs[0].Kind() != "A" || docs[1].Err == nil || docs[2].Kind() != "B" || docs[2].Line != 6 {
		t.Errorf("documents: %+v", docs)
	}
}

// TestReadYAMLAfterBadDocument: a document that cannot be read does not
// hide the ones after it, and every line, in errors too, is the stream's.
func TestReadYAMLAfterBadDocument(t *testing.T) {
	const after = "---\nkind: B\napiVersion: v1\n"
	for _, tc := range []struct {
		name, bad string
		line      int
		want      string
	}{
		{"syntax", "kind: A\napiVersion: v1\n---\nkind: [\n", 4, "YAML: line 4: did not find expected node content"},
		{"unclosed flow before the marker", "kind: A\napiVersion: v1\n---\na: [1,\n", 4, "YAML: line 4: did not find expected node content"},
		{"unclosed quote", "kind: A\napiVersion: v1\n---\na: \"x\n", 4, "YAML: line 4: found unexpected end of stream"},
		{"invalid UTF-8", "kind: A\napiVersion: v1\n---\nx: 1\nkind: \xff\n", 5, "not valid UTF-8"},
		{"control character", "kind: A\napiVersion: v1\n---\nx: 1\nkind: \x01\n", 5, "YAML: control characters are not allowed"},
		{"yaml.v3's depth limit", "kind: A\napiVersion: v1\n---\na: " + strings.Repeat("[", 10001) + "\n", 4, "YAML: line 4: exceeded max depth of 10000"},
		// yaml.v3 gives no line for an unknown anchor: the document's first.
		{"alias of another document", "kind: &k A\napiVersion: v1\n---\nkind: *k\n", 3, "YAML: unknown anchor 'k' referenced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs := k8s.ReadYAML("x.yaml", []byte(tc.bad+after))
			if len(docs) != 3 {
				t.Fatalf("got %d documents, want A, the bad one and B: %+v", len(docs), docs)
			}
			if docs[0].Kind() != "A" || docs[0].Err != nil {
				t.Errorf("first document: %+v", docs[0])
			}
			if d := docs[1]; d.Err == nil || d.Err.Error() != tc.want || d.Line != tc.line {
				t.Errorf("bad document: line %d, %v; want line %d, %s", d.Line, d.Err, tc.line, tc.want)
			}
			b := docs[2]
			if b.Err != nil || b.Kind() != "B" {
				t.Fatalf("the document after: %+v", b)
			}
			if want := strings.Count(tc.bad, "\n") + 2; b.Line != want || b.LineOf("apiVersion") != want+1 {
				t.Errorf("the document after: line %d, apiVersion at %d; want %d, %d", b.Line, b.LineOf("apiVersion"), want, want+1)
			}
		})
	}
}

// TestReadYAMLDocumentMarkers: where a stream is cut into documents.
func TestReadYAMLDocumentMarkers(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        []string // kind or error, and line, of each document
	}{
		{"directive before a marker", "kind: A\n%YAML 1.1\n---\nkind: B\n", []string{"A@1", "B@4"}},
		{"directive after an end marker", "kind: A\n...\n# c\n%YAML 1.1\n---\nkind: B\n", []string{"A@1", "B@6"}},
		{"content on the marker line", "--- {kind: A}\n--- {kind: B}\n", []string{"A@1", "B@2"}},
		{"not a marker", "kind: A\nx: ---\ny: |\n  ---\n----\n", []string{"error@5"}},
		{"CRLF", "kind: A\r\n---\r\nkind: B\r\n", []string{"A@1", "B@3"}},
		{"CR", "kind: A\r---\rkind: [\r---\rkind: B\r", []string{"A@1", "error@3", "B@5"}},
		{"NEL in a quoted scalar is a line", "kind: A\n---\nx: \"a\u0085b\"\nkind: [\n---\nkind: B\n", []string{"A@1", "error@5", "B@7"}},
		{"block scalar ended by a marker", "kind: A\nx: |\n  text\n---\nkind: B\n", []string{"A@1", "B@5"}},
		{"empty documents", "---\n# nothing\n---\n---\nkind: B\n", []string{"B@5"}},
		{"JSON", `{"kind": "A", "x": "---"}`, []string{"A@1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range k8s.ReadYAML("x.yaml", []byte(tc.input)) {
				what := d.Kind()
				if d.Err != nil {
					what = "error"
				}
				got = append(got, fmt.Sprintf("%s@%d", what, d.Line))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("documents %v, want %v", got, tc.want)
			}
		})
	}
}

func TestReadYAMLList(t *testing.T) {
	docs := k8s.ReadYAML("l.yaml", []byte("apiVersion: v1\nkind: List\nitems:\n- kind: A\n  apiVersion: v1\n  metadata:\n    name: a\n- 3\n"))
	if len(docs) != 2 || docs[0].Name() != "a" || docs[0].Line != 4 || docs[1].Err == nil {
		t.Fatalf("List items: %+v", docs)
	}
	if l := docs[0].LineOf("metadata.name"); l != 7 {
		t.Errorf("line of metadata.name in a List item: %d, want 7", l)
	}
}

func TestReadYAMLLargeDocument(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n")
	for i := 0; b.Len() < 10<<20; i++ {
		fmt.Fprintf(&b, "  key%d: %s\n", i, strings.Repeat("x", 1000))
	}
	docs := k8s.ReadYAML("big.yaml", []byte(b.String()))
	if len(docs) != 1 || docs[0].Err != nil {
		t.Fatalf("a 10 MiB document: %v", docs[0].Err)
	}
	r := testEngine(t).NewSession(SessionOptions{}).Admit(docs[0])
	if r.Rejected() || !r.Skipped {
		t.Errorf("a large ConfigMap is skipped, not rejected: %+v", r.Errors)
	}
}

func TestReadCUE(t *testing.T) {
	e := testEngine(t)
	one := `apiVersion: "trainer.kubeflow.org/v1alpha1"
kind: "TrainJob"
metadata: {name: "a", namespace: "n"}
spec: runtimeRef: name: "torch-distributed"
`
	many := `jobs: [for n in ["a", "b"] {
	apiVersion: "trainer.kubeflow.org/v1alpha1"
	kind: "TrainJob"
	metadata: {name: n, namespace: "n"}
	spec: runtimeRef: name: "torch-distributed"
}]
`
	for _, tc := range []struct {
		name, src string
		want      int
	}{
		{"one object", one, 1},
		{"struct of objects", "a: {" + one + "}\nb: {" + strings.Replace(one, `name: "a"`, `name: "b"`, 1) + "}\n", 2},
		{"list", "[{" + one + "}]", 1},
		{"comprehension", many, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs := e.ReadCUE("x.cue", []byte(tc.src))
			if len(docs) != tc.want {
				t.Fatalf("got %d documents, want %d: %+v", len(docs), tc.want, docs)
			}
			for _, d := range docs {
				if d.Err != nil && tc.name != "comprehension" {
					t.Errorf("document: %v", d.Err)
				}
			}
		})
	}
	if docs := e.ReadCUE("bad.cue", []byte("a: 1 +\n")); len(docs) != 1 || docs[0].Err == nil || !strings.Contains(docs[0].Err.Error(), "bad.cue:") {
		t.Errorf("broken CUE input: %+v", docs)
	}
}

// FuzzAdmit reads arbitrary input as YAML, admits every document and
// renders every admitted one: no input may panic the reader or the engine.
func FuzzAdmit(f *testing.F) {
	addAdmitSeeds(f)
	e := testEngine(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s := e.NewSession(SessionOptions{})
		for _, d := range k8s.ReadYAML("fuzz.yaml", data) {
			r := s.Admit(d)
			for _, e := range r.Errors {
				_ = e.String()
			}
			noInternal(t, "admitting", r.Errors)
			if !r.Rejected() {
				noInternal(t, "rendering", s.Render(r, RenderOptions{}).Errors)
			}
		}
	})
}

// addAdmitSeeds gives an admission fuzz target its seeds: the conformance
// cases' inputs, and the shapes that found faults before.
func addAdmitSeeds(f *testing.F) {
	files, _ := filepath.Glob("../test/conformance/testdata/kubeflow/cases/*/input.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: x}\nspec: {runtimeRef: {name: 3}}\n"))
	// A volcano runtime and a runtimePatch with template annotations
	// without the queue's (the queue rule could not range over them).
	f.Add([]byte(volcanoPatch(map[string]any{"example.com/x": "z"})))
	// The other shapes Kubeflow's behaviour was checked on (issue 20):
	// explicit nulls, YAML 1.1 scalars, both gang schedulers, Flux without
	// numNodes, resource claims, env rebuilt as Kubeflow writes it.
	f.Add([]byte(classSeedsYAML))
}

// noInternal fails the test on a finding the shipped CUE should never
// give, whatever the input: a rule that cannot be evaluated, or output the
// engine cannot carry out.
func noInternal(t *testing.T, what string, fs []Finding) {
	t.Helper()
	for _, f := range fs {
		if f.Phase == contract.PhaseRuleError || f.Type == "Internal error" {
			t.Errorf("%s: %s finding: %s", what, f.Phase, f)
		}
	}
}

// volcanoPatch is a volcano runtime (queue q1) and a TrainJob whose
// runtimePatch sets the template annotations given.
func volcanoPatch(annotations map[string]any) string {
	rt := torchRuntime("vol", 1, nodeJob("x")).PodGroupPolicy("volcano", nil).
		TemplateAnnotation("scheduling.volcano.sh/queue-name", "q1")
	tj := wrapper.TrainJob("tj").Namespace("a").RuntimeRef("vol").
		RuntimePatch("acme.io/x", map[string]any{"template": map[string]any{"metadata": map[string]any{"annotations": annotations}}})
	return rt.YAML() + "---\n" + tj.YAML()
}

// classSeedsYAML are documents of the shapes of Kubeflow's behaviour the
// engine had differed on, for FuzzAdmit to start from: two runtimes, and
// TrainJobs whose text is YAML's odd cases.
var classSeedsYAML = torchRuntime("both", 1, nodeJob("x")).
	PodGroupPolicy("coscheduling", map[string]any{"scheduleTimeoutSeconds": 60}).PodGroupPolicy("volcano", nil).YAML() +
	"---\n" +
	wrapper.ClusterTrainingRuntime("flux").Framework("flux").NumNodes(2).MLPolicy("flux", nil).ReplicatedJob(nodeJob("x")).YAML() +
	"---\n" + `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: nulls, labels: {a: yes}}
spec:
  runtimeRef: {name: both}
  trainer:
    numNodes: null
    numProcPerNode: null
    image: on
    env:
    - {name: A, value: no, valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.name}}}
    - {name: B, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}
    resourcesPerNode: {limits: {cpu: 1e3, memory: 1.5}, claims: [{name: gpu}]}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: flux-no-nodes}
spec: {runtimeRef: {name: flux}, trainer: {image: x}}
`

// TestReadYAMLBlockErrorLine: a block that does not go on is reported at
// the line that breaks it, not the line where the block began (yaml.v3
// said line 6 for a key indented wrong on line 11).
func TestReadYAMLBlockErrorLine(t *testing.T) {
	for _, c := range []struct {
		yaml string
		line int
	}{
		{"a: 1\nspec:\n  trainer:\n    numNodes: 2\n   image: x\n", 5},
		{"a: 1\nb: 2\ncommand: [python, train.py\n", 3},
		{"kind: X\nmetadata: {name: a\nspec: {}\n", 2},
		{"- a\nb: c\n", 2},
		// A multi-line quoted scalar cut short is not the break.
		{"a: \"one\n  two\"\nspec:\n  x: 1\n y: 2\n", 5},
	} {
		docs := k8s.ReadYAML("f.yaml", []byte(c.yaml))
		d := docs[len(docs)-1]
		if d.Err == nil || d.Line != c.line || !strings.Contains(d.Err.Error(), fmt.Sprintf("line %d:", c.line)) {
			t.Errorf("%q: line %d, %v; want line %d", c.yaml, d.Line, d.Err, c.line)
		}
	}
}

// TestReadObjectReadsAsReadYAML: a webhook's JSON object is read by
// ReadObject as ReadYAML reads it, corpus object by corpus object (the
// numbers' types included), and beyond the reader's bounds ReadYAML says
// what is wrong.
func TestReadObjectReadsAsReadYAML(t *testing.T) {
	files, _ := filepath.Glob("../test/conformance/testdata/kubeflow/cases/*/input.yaml")
	if len(files) < 40 {
		t.Fatalf("%d corpus files", len(files))
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range k8s.ReadYAML(f, data) {
			if d.Err != nil {
				continue
			}
			// As an API server sends it, with a float beside the ints.
			d.Object["x"] = map[string]any{"float": 1.5, "whole": float64(2), "big": 12345678901234}
			raw, err := json.Marshal(d.Object)
			if err != nil {
				t.Fatal(err)
			}
			want := k8s.ReadYAML("request", raw)[0]
			got := k8s.ReadObject("request", raw)
			if got.Err != nil || !reflect.DeepEqual(got.Object, want.Object) {
				t.Errorf("%s %s: ReadObject %v (%v), ReadYAML %v", f, d.Name(), got.Object, got.Err, want.Object)
			}
			n++
		}
	}
	t.Logf("%d objects", n)
	deep := strings.Repeat(`{"a":`, k8s.MaxDepth+2) + "1" + strings.Repeat("}", k8s.MaxDepth+2)
	if d := k8s.ReadObject("request", []byte(deep)); d.Err == nil || !strings.Contains(d.Err.Error(), "nested deeper") {
		t.Errorf("an object nested too deep: %v", d.Err)
	}
	if d := k8s.ReadObject("request", []byte(`{"a": 1} {"b": 2}`)); d.Err == nil {
		t.Errorf("two objects read as one")
	}
}
