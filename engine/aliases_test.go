package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/tokens"
)

// tokenSpy is a policy that reports, as a warning, every label key it sees
// as a token: the evaluation sees tokens, and the warning's text, put back,
// names the key.
const tokenSpy = `package schemas

import "strings"

admission: "trainer.kubeflow.org/v1alpha1": TrainJob: {
	input: _
	warnings: tokenSpy: [for k, _ in *input.metadata.labels | {} if strings.HasPrefix(k, "ct") {message: "a token for \(k)"}]
}
`

const opaqueJob = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: opaque
  namespace: team-a
  labels:
    never-seen.example.com/key-4711: job
    trainer.kubeflow.org/support: kept
  annotations:
    never-seen.example.com/note: "mentions never-seen.example.com/key-4711"
spec:
  runtimeRef:
    name: torch-distributed
  runtimePatches:
  - manager: acme.io/labels
    trainingRuntimeSpec:
      template:
        metadata:
          labels:
            never-seen.example.com/patch-4711: patched
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  metadata:
                    annotations:
                      never-seen.example.com/pod-4711: pod
`

// TestOpaqueKeys: label and annotation keys the CUE does not name reach the
// evaluation as tokens, those it names as themselves, and everything read
// back (the object, warnings, the rendered objects) has the keys again.
func TestOpaqueKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spy.cue"), []byte(tokenSpy), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	// The spy iterates label keys, which makes the engine hand labels over
	// with their keys (TestKeyReadingRuleSeesTheKeys): it looks here at
	// what the shipped rules get, opaque labels and annotations.
	if len(e.decl.Opaque.Suffixes) != 1 {
		t.Fatalf("opaque maps %v, want the annotations alone", e.decl.Opaque.Suffixes)
	}
	e.decl.Opaque.Suffixes = [][]string{{"metadata", "labels"}, {"metadata", "annotations"}}
	s := e.NewSession(SessionOptions{})
	r := s.Admit(readOne(t, opaqueJob))
	if r.Rejected() {
		t.Fatalf("rejected: %v", findingStrings(r.Errors))
	}
	var spied []string
	for _, w := range r.Warnings {
		if w.Rule == "tokenSpy" {
			spied = append(spied, w.Detail)
		}
	}
	// The support label is named by the CUE: no token.
	if want := []string{"a token for never-seen.example.com/key-4711"}; !reflect.DeepEqual(spied, want) {
		t.Errorf("the policy saw tokens %q, want %q", spied, want)
	}
	labels := r.Object["metadata"].(map[string]any)["labels"].(map[string]any)
	if labels["never-seen.example.com/key-4711"] != "job" || labels["trainer.kubeflow.org/support"] != "kept" || len(labels) != 2 {
		t.Errorf("admitted labels %v", labels)
	}
	note := r.Object["metadata"].(map[string]any)["annotations"].(map[string]any)["never-seen.example.com/note"]
	if note != "mentions never-seen.example.com/key-4711" {
		t.Errorf("an annotation value changed: %q", note)
	}

	out := s.Render(r, RenderOptions{})
	if len(out.Errors) > 0 {
		t.Fatalf("render: %v", findingStrings(out.Errors))
	}
	data, _ := json.Marshal(out.Objects)
	if strings.Contains(string(data), tokens.Key.Prefix()) {
		t.Errorf("a token left in the rendered objects: %s", data)
	}
	for _, o := range out.Objects {
		if o["kind"] != "JobSet" {
			continue
		}
		if got := o["metadata"].(map[string]any)["labels"].(map[string]any)["never-seen.example.com/patch-4711"]; got != "patched" {
			t.Errorf("JobSet labels %v lack the patch's", o["metadata"])
		}
		if !strings.Contains(string(data), `"never-seen.example.com/pod-4711":"pod"`) {
			t.Errorf("the pod template lacks the patch's annotation: %s", data)
		}
	}

	// A second render of a job with other new keys shares the plan (the
	// same patches) and its tokens, and gives each job its own keys.
	other := strings.ReplaceAll(opaqueJob, "key-4711", "key-4712")
	r2 := s.Admit(readOne(t, strings.Replace(other, "name: opaque", "name: opaque-2", 1)))
	out2 := s.Render(r2, RenderOptions{})
	data2, _ := json.Marshal(out2.Objects)
	if strings.Contains(string(data2), tokens.Key.Prefix()) || !strings.Contains(string(data2), "never-seen.example.com/patch-4711") {
		t.Errorf("second render: %s", data2)
	}
}

// TestOpaqueKeyInError: an error about an opaque key's value names the
// key. (The TrainJob's own labels decode into its ObjectMeta first, which
// fails the request without a key, TestMetadataThatDoesNotDecode; a
// runtime patch's template labels are the schema's to check.)
func TestOpaqueKeyInError(t *testing.T) {
	s := testEngine(t).NewSession(SessionOptions{})
	r := s.Admit(readOne(t, `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: bad
  namespace: team-a
spec:
  runtimeRef: {name: torch-distributed}
  runtimePatches:
  - manager: example.com/m
    trainingRuntimeSpec:
      template:
        metadata:
          labels: {never-seen.example.com/count-4711: 3}
`))
	got := strings.Join(findingStrings(r.Errors), "\n")
	if !strings.Contains(got, "template.metadata.labels.never-seen.example.com/count-4711: Invalid value: 3: ") || strings.Contains(got, tokens.Key.Prefix()) {
		t.Errorf("errors %q", got)
	}
}

// TestAliasRoundTrip: alias copies what it changes and leaves its input
// alone; restore puts keys back in keys and inside strings, and leaves a
// token it did not give as it is.
func TestAliasRoundTrip(t *testing.T) {
	o := &k8s.OpaqueKeys{Suffixes: [][]string{{"metadata", "labels"}}, Named: map[string]bool{"named": true}}
	a := o.Aliases(nil)
	in := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"named": "1", "x/y": "2"}},
		"spec":     []any{map[string]any{"metadata": map[string]any{"labels": map[string]any{"x/y": "3", "z": "4"}}}},
		"labels":   map[string]any{"not-opaque": "5"},
	}
	before, _ := json.Marshal(in)
	aliased := a.Alias(in).(map[string]any)
	after, _ := json.Marshal(in)
	if string(before) != string(after) {
		t.Fatalf("alias changed its input: %s", after)
	}
	// Tokens are numbered in the order the keys are met, which is a map's:
	// x/y's and z's are 0 and 1, either way round.
	labels := aliased["metadata"].(map[string]any)["labels"].(map[string]any)
	key := func(n int) string { t, _ := tokens.Key.Make(n); return t }
	tok, other := key(0), key(1)
	if labels[tok] == nil {
		tok, other = other, tok
	}
	if labels["named"] != "1" || labels[tok] != "2" || len(labels) != 2 {
		t.Errorf("aliased labels %v", labels)
	}
	inner := aliased["spec"].([]any)[0].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
	if inner[tok] != "3" || inner[other] != "4" {
		t.Errorf("the same key, another token, or a new key's: %v", inner)
	}
	if !reflect.DeepEqual(aliased["labels"], in["labels"]) {
		t.Errorf("a map not opaque was aliased: %v", aliased["labels"])
	}

	// A child (a render of a plan) keeps the parent's tokens.
	child := o.Aliases(a)
	if got := child.Alias(map[string]any{"metadata": map[string]any{"labels": map[string]any{"x/y": "", "w": ""}}}); !reflect.DeepEqual(got, map[string]any{"metadata": map[string]any{"labels": map[string]any{tok: "", key(2): ""}}}) {
		t.Errorf("child aliases %v", got)
	}
	if got := child.Restore(map[string]any{key(2): "in " + tok + " and " + key(9)}); !reflect.DeepEqual(got, map[string]any{"w": "in x/y and " + key(9)}) {
		t.Errorf("restore %v", got)
	}
	if !reflect.DeepEqual(a.Restore(aliased), in) {
		t.Errorf("round trip %v", a.Restore(aliased))
	}
}

// TestRewriteJSONStrings puts values back into a finding's value as its
// text holds them: the fields in the CUE's order, not sorted, and a value
// escaped as CUE escapes it.
func TestRewriteJSONStrings(t *testing.T) {
	values := &valueTokens{}
	name, _ := values.token("torch-distributed")
	odd, _ := values.token(`a "b" <c> & \d é`)
	raw := []byte(`{"name":"` + name + `","apiGroup":"trainer.kubeflow.org","env":[{"value":"x-` + odd + `","name":"A"}],"n":2}`)
	got := string(k8s.RewriteJSONStrings(raw, tokens.Value.Prefix(), values.restoreString))
	want := `{"name":"torch-distributed","apiGroup":"trainer.kubeflow.org","env":[{"value":"x-a \"b\" <c> & \\d é","name":"A"}],"n":2}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// What a CUE value with the values marshals to, byte for byte.
	v := cuecontext.New().CompileString(`{name: "torch-distributed", apiGroup: "trainer.kubeflow.org", env: [{value: "x-a \"b\" <c> & \\d é", name: "A"}], n: 2}`)
	if b, err := v.MarshalJSON(); err != nil || string(b) != want {
		t.Errorf("CUE marshals %s (%v), want %s", b, err, want)
	}
	// Text that is not JSON is left as it is.
	if bad := []byte(`{"a":"` + name); string(k8s.RewriteJSONStrings(bad, tokens.Value.Prefix(), values.restoreString)) != string(bad) {
		t.Errorf("an unterminated string was rewritten")
	}
}
