package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"github.com/cuetrainer/cuetrainer/internal/testing/benchinput"
	"github.com/rogpeppe/go-internal/txtar"
)

// memoOutcome is what a document comes to: its admissions (as vet, as a
// webhook's create, update to itself and update from an older object) and
// its renders (offline and a controller's) and its mutations (a create's,
// an update's from an older object).
type memoOutcome struct {
	Admitted []Result
	Rendered []Rendered
	Mutated  []mutation
}

// mutation is what a mutating webhook made of an object.
type mutation struct {
	Object map[string]any
	Err    string
}

// outcomes admits and renders docs in one engine's sessions, in order, as
// vet, the webhooks and the controller would, and says what each came to.
func outcomes(e *Engine, docs []Document) []memoOutcome {
	vet := e.NewSession(SessionOptions{})
	webhook := e.NewSession(SessionOptions{})
	controller := e.NewSession(SessionOptions{Controller: true})
	plain := func(r Result) Result {
		r.Doc, r.runtime, r.existing = Document{}, nil, nil
		return r
	}
	var out []memoOutcome
	for i, d := range docs {
		var o memoOutcome
		r := vet.Admit(d)
		o.Admitted = append(o.Admitted, plain(r))
		if !r.Rejected() && r.Object != nil {
			o.Rendered = append(o.Rendered, withoutRandomKeys(vet.Render(r, RenderOptions{})))
			// The controller's objects have identities, which its memos
			// key on.
			cr := controller.Admit(withIdentity(d, i))
			o.Admitted = append(o.Admitted, plain(cr))
			if !cr.Rejected() {
				o.Rendered = append(o.Rendered, withoutRandomKeys(controller.Render(cr, RenderOptions{Existing: []string{"snapshot"}})))
			}
		}
		if d.Err == nil && d.Object != nil {
			older := value.DeepCopy(d.Object).(map[string]any)
			if spec, ok := older["spec"].(map[string]any); ok {
				delete(spec, "runtimePatches")
			}
			for _, req := range []Request{
				{Operation: "CREATE", SchemaChecked: true, VerdictOnly: true},
				{Operation: "UPDATE", OldObject: d.Object, SchemaChecked: true},
				{Operation: "UPDATE", OldObject: older},
			} {
				o.Admitted = append(o.Admitted, plain(webhook.AdmitRequest(context.Background(), d, req)))
			}
			now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
			for _, req := range []Request{{Operation: "CREATE", Now: now}, {Operation: "UPDATE", OldObject: older, Now: now}} {
				var m mutation
				var err error
				if m.Object, err = webhook.Mutate(d, req); err != nil {
					m.Err = err.Error()
				}
				o.Mutated = append(o.Mutated, m)
			}
		}
		out = append(out, o)
	}
	return out
}

// withIdentity is the document with a uid and resourceVersion, as the API
// server stores it: the uid the same for the same file and index, the
// resourceVersion the same for the same content.
func withIdentity(d Document, i int) Document {
	d.Object = value.DeepCopy(d.Object).(map[string]any)
	m, ok := d.Object["metadata"].(map[string]any)
	if !ok {
		return d
	}
	// The API server's resourceVersion changes with the content.
	data, _ := json.Marshal(d.Object)
	sum := sha256.Sum256(data)
	m["uid"], m["resourceVersion"] = fmt.Sprintf("%s-%d", d.File, i), hex.EncodeToString(sum[:8])
	return d
}

// withoutRandomKeys stands a placeholder for the keys of the SSH Secrets a
// render generates: random, they differ between any two renders.
func withoutRandomKeys(out Rendered) Rendered {
	for _, obj := range out.Objects {
		if obj["kind"] == "Secret" && obj["type"] == "kubernetes.io/ssh-auth" {
			if data, ok := obj["data"].(map[string]any); ok {
				for k := range data {
					data[k] = "(generated)"
				}
			}
		}
	}
	return out
}

// memoCorpus is every document the tests use: the conformance cases and
// runtimes, OME's, the bad-input corpus and the CLI's testscript cases, by
// file.
func memoCorpus(t testing.TB) map[string][]Document {
	corpus := map[string][]Document{}
	for _, pattern := range []string{
		"../test/conformance/testdata/kubeflow/cases/*/input.yaml",
		"../test/conformance/testdata/kubeflow/runtimes/*.yaml",
		"../test/conformance/testdata/ome/*.yaml",
		"../test/conformance/testdata/ome-upstream/config/*/*/*.yaml",
		"../test/conformance/testdata/ome-upstream/config/*/*.yaml",
		"../examples/*/*.yaml",
		"../examples/policies/*/*.yaml",
	} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			corpus[f] = k8s.ReadYAML(f, data)
		}
	}
	for _, pattern := range []string{"../test/badinput/testdata/*.txtar", "../cmd/cuetrainer/testdata/script/*.txtar"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			a, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, file := range a.Files {
				if strings.HasSuffix(file.Name, ".yaml") || strings.HasSuffix(file.Name, ".yml") {
					name := f + ":" + file.Name
					corpus[name] = k8s.ReadYAML(name, file.Data)
				}
			}
		}
	}
	if len(corpus) < 100 {
		t.Fatalf("the corpus has %d files: a pattern is wrong", len(corpus))
	}
	return corpus
}

// TestMemoChangesNothing: every document of every corpus the tests use
// comes to the same with the memo as without it, with each policy the
// corpora are checked with. The memo's engine keeps its memo across all of
// them, so that an object meets what another looked up.
func TestMemoChangesNothing(t *testing.T) {
	t.Parallel()
	corpus := memoCorpus(t)
	// Each example policy with the files whose path or documents name
	// what it adds; the shipped CUE alone with every file.
	for _, policy := range []struct{ dir, files string }{{"", ""}, {"../examples/policies/ome", "ome"}, {"../examples/policies/tensorflow", "tensorflow"}} {
		var dirs []string
		if policy.dir != "" {
			dirs = []string{policy.dir}
		}
		memo, fresh := memoAndFresh(t, dirs...)
		var files []string
		docs, mutatedObjects := 0, 0
		for _, f := range value.SortedKeys(corpus) {
			if strings.Contains(f, policy.files) || names(corpus[f], policy.files) {
				files = append(files, f)
				docs += len(corpus[f])
			}
		}
		// Twice through, so that the second finds the first's memo.
		for _, pass := range []int{1, 2} {
			for _, f := range files {
				want, got := outcomes(fresh, corpus[f]), outcomes(memo, corpus[f])
				for _, o := range got {
					for _, m := range o.Mutated {
						if m.Object != nil {
							mutatedObjects++
						}
					}
				}
				for i := range want {
					if !reflect.DeepEqual(want[i], got[i]) {
						t.Errorf("policy %q, pass %d, %s, document %d: with the memo\n%+v\nwithout\n%+v", policy.dir, pass, f, i+1, got[i], want[i])
					}
				}
			}
		}
		if memo.lookupsMade.Load() >= fresh.lookupsMade.Load() || memo.rendersMade.Load() >= fresh.rendersMade.Load() || memo.mutationsMade.Load() >= fresh.mutationsMade.Load() {
			t.Errorf("policy %q: the memo's engine evaluated %d lookups, %d renders and %d mutations, the other %d, %d and %d: a memo is not used", policy.dir,
				memo.lookupsMade.Load(), memo.rendersMade.Load(), memo.mutationsMade.Load(), fresh.lookupsMade.Load(), fresh.rendersMade.Load(), fresh.mutationsMade.Load())
		}
		t.Logf("policy %q: %d documents in %d files, twice; lookups evaluated %d with the memo, %d without; renders %d and %d; mutations %d and %d (%d objects mutated)", policy.dir, docs, len(files),
			memo.lookupsMade.Load(), fresh.lookupsMade.Load(), memo.rendersMade.Load(), fresh.rendersMade.Load(), memo.mutationsMade.Load(), fresh.mutationsMade.Load(), mutatedObjects)
	}
}

// TestMemoChangesNothingOnBenchInputs: the benchmarks' inputs
// (benchinput) come to the same with the memos as without them. Both vet
// corpora whole, as the vet benchmarks admit them (AdmitAll on every CPU;
// the repeating corpus without the shipped runtimes); and through every
// path (outcomes: vet, the webhooks, the controller, renders, mutations)
// the vet corpora made smaller, the admission benchmark's mix and as many
// of its distinct objects, and the controller benchmark's TrainJobs, alike
// and differing. Every document must be admitted, as the benchmarks
// require.
func TestMemoChangesNothingOnBenchInputs(t *testing.T) {
	t.Parallel()
	runtimes, err := benchinput.ShippedRuntimes("..")
	if err != nil {
		t.Fatal(err)
	}
	memo, fresh := memoAndFresh(t)
	read := func(name string, texts ...[]string) []Document {
		var docs []Document
		for _, tt := range texts {
			docs = append(docs, k8s.ReadYAML(name, []byte(strings.Join(tt, "---\n")))...)
		}
		return docs
	}
	compare := func(what string, want, got []memoOutcome) {
		t.Helper()
		for i := range want {
			if !reflect.DeepEqual(want[i], got[i]) {
				t.Errorf("%s, document %d: with the memos\n%+v\nwithout\n%+v", what, i+1, got[i], want[i])
			}
		}
	}
	vets := []struct {
		name      string
		corpus    func([]map[string]any, benchinput.Size) ([]string, []string, error)
		noBuiltin bool
	}{{"vet, repeating", benchinput.VetMixed, true}, {"vet, distinct", benchinput.VetDistinct, false}}
	for _, c := range vets {
		rts, jobs, err := c.corpus(runtimes, benchinput.VetSize)
		if err != nil {
			t.Fatal(err)
		}
		docs := read(c.name, rts, jobs)
		vet := func(e *Engine) []memoOutcome {
			var out []memoOutcome
			for _, r := range e.NewSession(SessionOptions{NoBuiltinRuntimes: c.noBuiltin}).AdmitAll(context.Background(), docs, runtime.GOMAXPROCS(0)) {
				if r.Rejected() {
					t.Errorf("%s: %s refused: %v", c.name, r.Identity(), findingStrings(r.Errors))
				}
				r.Doc, r.runtime, r.existing = Document{}, nil, nil
				out = append(out, memoOutcome{Admitted: []Result{r}})
			}
			return out
		}
		compare(c.name+", whole", vet(fresh), vet(memo))
		rts, jobs, err = c.corpus(runtimes, benchinput.Size{Runtimes: 12, TrainJobs: 36})
		if err != nil {
			t.Fatal(err)
		}
		docs = read(c.name, rts, jobs)
		compare(c.name+", every path", outcomes(fresh, docs), outcomes(memo, docs))
	}

	mix := benchinput.AdmissionMix(runtimes, func(kind string) bool { return kind == "TrainJob" })
	var objects []map[string]any
	for k := range 2 * len(mix) {
		if k < len(mix) {
			objects = append(objects, mix[k].Object)
		} else {
			objects = append(objects, benchinput.DistinctObject(mix[k%len(mix)].Object, k))
		}
	}
	var admission []Document
	for _, obj := range objects {
		admission = append(admission, Document{File: "admission", Object: value.Numbers(value.DeepCopy(obj)).(map[string]any)})
	}
	compare("admission", outcomes(fresh, admission), outcomes(memo, admission))

	var jobs []string
	for i := range 8 {
		jobs = append(jobs, benchinput.ControllerTrainJob(fmt.Sprintf("job-%04d", i), "bench"), benchinput.ControllerDistinctTrainJob(i, "bench"))
	}
	controller := read("controller", jobs)
	compare("controller", outcomes(fresh, controller), outcomes(memo, controller))

	if memo.reviewsMade.Load()+memo.rendersMade.Load() >= fresh.reviewsMade.Load()+fresh.rendersMade.Load() {
		t.Errorf("the memos' engine evaluated %d reviews and %d renders, the other %d and %d: no memo was used",
			memo.reviewsMade.Load(), memo.rendersMade.Load(), fresh.reviewsMade.Load(), fresh.rendersMade.Load())
	}
	t.Logf("reviews evaluated %d with the memos, %d without; renders %d and %d; mutations %d and %d",
		memo.reviewsMade.Load(), fresh.reviewsMade.Load(), memo.rendersMade.Load(), fresh.rendersMade.Load(), memo.mutationsMade.Load(), fresh.mutationsMade.Load())
}

// names says whether one of the documents holds the word.
func names(docs []Document, word string) bool {
	for _, d := range docs {
		if data, err := json.Marshal(d.Object); err == nil && strings.Contains(string(data), word) {
			return true
		}
	}
	return false
}

// FuzzMemo: whatever the input, a document comes to the same with the memo
// as without it. Both engines live as long as the fuzzing, so the memo
// meets what earlier inputs looked up.
func FuzzMemo(f *testing.F) {
	addAdmitSeeds(f)
	memo := testEngine(f)
	fresh, err := New(Options{NoMemo: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs := k8s.ReadYAML("fuzz.yaml", data)
		want, got := outcomes(fresh, docs), outcomes(memo, docs)
		for i := range want {
			if !reflect.DeepEqual(want[i], got[i]) {
				t.Errorf("document %d: with the memo\n%+v\nwithout\n%+v", i+1, got[i], want[i])
			}
		}
	})
}

// TestEvaluations: Evaluations counts what the engine evaluated, not what
// its memos served: a TrainJob admitted and rendered again is neither
// reviewed nor rendered again, unless the memos are off (NoMemo).
func TestEvaluations(t *testing.T) {
	const job = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: j, namespace: team-a}\n" +
		"spec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {image: img:1, numNodes: 2}\n"
	for _, c := range []struct {
		noMemo bool
		want   int64 // the second time's reviews and renders
	}{{false, 0}, {true, 1}} {
		e, err := New(Options{NoMemo: c.noMemo})
		if err != nil {
			t.Fatal(err)
		}
		var before Evaluations
		for i := range 2 {
			if i == 1 {
				before = e.Evaluations()
			}
			s := e.NewSession(SessionOptions{})
			r := s.Admit(readOne(t, job))
			if r.Rejected() {
				t.Fatalf("rejected: %v", findingStrings(r.Errors))
			}
			if out := s.Render(r, RenderOptions{}); len(out.Errors) > 0 || len(out.Objects) == 0 {
				t.Fatalf("render: %v", findingStrings(out.Errors))
			}
		}
		got := e.Evaluations()
		if before.Reviews == 0 || before.Renders == 0 {
			t.Errorf("NoMemo %v: the first admission and render counted %+v", c.noMemo, before)
		}
		if n := got.Reviews - before.Reviews; n != c.want {
			t.Errorf("NoMemo %v: the second admission counted %d reviews, want %d", c.noMemo, n, c.want)
		}
		if n := got.Renders - before.Renders; n != c.want {
			t.Errorf("NoMemo %v: the second render counted %d renders, want %d", c.noMemo, n, c.want)
		}
		if got.Reviews != e.reviewsMade.Load() || got.Lookups != e.lookupsMade.Load() || got.CRDParts != e.crdPartsMade.Load() || got.Mutations != e.mutationsMade.Load() {
			t.Errorf("Evaluations %+v is not the engine's counts", got)
		}
	}
}
