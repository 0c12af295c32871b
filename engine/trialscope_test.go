package engine

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// everyTrial is a policy file that has a policy tried in every way
// (trialScope): it declares the contract's lookups, which every trial is
// given, as they are, a struct unified with an empty one.
const everyTrial = "package schemas\n\nlookups: {}\n"

// TestEmbeddedTrialsFindNothing: the embedded CUE, tried in every way,
// fails nothing. tryPolicy leaves out the trials a policy's files cannot
// change (trialScope) on the strength of it: what they would find is
// what they find here.
func TestEmbeddedTrialsFindNothing(t *testing.T) {
	t.Parallel()
	e, err := New(Options{PolicyDirs: []string{writePolicy(t, map[string]string{"all.cue": everyTrial})}})
	if err != nil {
		t.Fatalf("the embedded CUE, tried in every way: %v", err)
	}
	if !beyond(e) {
		t.Fatal("a policy that declares lookups is tried on its reviews alone")
	}
	if ev := e.Evaluations(); ev.Renders == 0 || ev.Lookups == 0 || ev.Mutations == 0 {
		t.Errorf("the trials rendered %d times, looked up %d and mutated %d: not tried in every way", ev.Renders, ev.Lookups, ev.Mutations)
	}
	for _, w := range e.Warnings() {
		t.Errorf("warning: %s", w)
	}
}

// beyond says an engine's policy is tried beyond its reviews: on its
// renders, its mutators or its lookups (trialScope).
func beyond(e *Engine) bool {
	s := e.trialScope(e.cur.Load())
	return s.renders || s.mutators || s.lookups
}

// loadAdding writes a file of text into a policy directory, and loads
// the directory.
func loadAdding(t *testing.T, dir, file, text string) (*Engine, error) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return New(Options{PolicyDirs: []string{dir}})
}

// sameLoad fails the test unless two loads of one policy, tried in two
// ways, both load, or both fail with the same problems.
func sameLoad(t *testing.T, what string, err error, otherWhat string, otherErr error) {
	t.Helper()
	var le, other *LoadError
	errors.As(err, &le)
	errors.As(otherErr, &other)
	switch {
	case (le == nil) != (other == nil) || (err == nil) != (otherErr == nil):
		t.Errorf("%s: load: %v; %s: %v", what, err, otherWhat, otherErr)
	case le != nil && !reflect.DeepEqual(le.Problems, other.Problems):
		t.Errorf("%s: problems:\n%v\n%s:\n%v", what, le.Problems, otherWhat, other.Problems)
	}
}

// everyReview is a policy file that has the reviews of every kind tried
// (trialScope.reviewed), and nothing beyond them: it declares each kind's
// admission entry as it is.
const everyReview = "package schemas\n\nadmission: (#APIVersion): {TrainJob: {}, ClusterTrainingRuntime: {}, TrainingRuntime: {}}\n"

// TestTrialsSkippedChangeNothing: a policy whose files declare rules of
// reviews alone (with the names they read, `object: _`, under a computed
// label; CRD checks and parts) is tried on its reviews alone, and on the reviews of the kinds
// it declares rules of alone, and its load comes to the same, problems
// and all, as when the reviews of every kind are tried (everyReview
// beside it) and as when every trial is made (everyTrial beside both).
func TestTrialsSkippedChangeNothing(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 32)
	for i := range data {
		data[i] = byte(r.IntN(256))
	}
	// renders says the trials render when made in every way (a policy
	// that refuses every probe renders none); someKinds, that the policy
	// reaches the reviews of some kinds only.
	for _, tc := range []struct {
		name, src                 string
		fails, renders, someKinds bool
	}{
		// The generated policy, of this seed, has rules of some kinds.
		{"generated", (&policyGen{data: data}).policy(), false, false, true},
		{"a warning", `package schemas

import "strings"

admission: (#APIVersion): TrainJob: {
	object: _
	let image = *object.spec.trainer.image | ""
	warnings: latest: [if strings.HasSuffix(image, ":latest") {path: "spec.trainer.image", message: "pin the image"}]
}
`, false, true, true},
		{"a TrainJob's rule that fails on a probe", `package schemas

import "strings"

admission: (#APIVersion): TrainJob: {
	object: _
	policy: imageTagged: [if !strings.Contains(object.spec.trainer.image, ":") {path: "spec.trainer.image", detail: "tag the image"}]
}
`, true, false, true},
		{"a runtime's rule that fails on one", `package schemas

admission: (#APIVersion): ClusterTrainingRuntime: {
	object: _
	warnings: autoProcs: [if object.spec.mlPolicy.torch.numProcPerNode == "auto" {message: "say how many"}]
}
`, true, false, true},
		{"a TrainJob's rule that refuses its update", `package schemas

admission: (#APIVersion): TrainJob: {
	context: _
	policy: frozen: [if context.operation == "UPDATE" {detail: "a TrainJob is never updated"}]
}
`, true, false, true},
		{"a runtime's rule that refuses its update", `package schemas

admission: (#APIVersion): TrainingRuntime: {
	context: _
	policy: frozen: [if context.operation == "UPDATE" {detail: "a runtime is never updated"}]
}
`, true, true, true},
		// A kind's CRD checks and parts join its review: tried so too.
		{"a CRD check", `package schemas

crdChecks: (#APIVersion): ClusterTrainingRuntime: {
	object: _
	crd: nameLength: [if len(object.metadata.name) > 50 {path: "metadata.name", type: "Too long", detail: "50"}]
}
`, false, true, true},
		{"a CRD check that fails on a probe", `package schemas

import "strings"

crdChecks: (#APIVersion): ClusterTrainingRuntime: {
	object: _
	crd: autoProcs: [if strings.HasPrefix(object.spec.mlPolicy.torch.numProcPerNode, "a") {path: "spec.mlPolicy", type: "Invalid value", detail: "auto"}]
}
`, true, false, true},
		{"a CRD check part", partPolicy, false, true, true},
	} {
		dir := writePolicy(t, map[string]string{"org.cue": tc.src})
		only, errOnly := New(Options{PolicyDirs: []string{dir}})
		reviews, errReviews := loadAdding(t, dir, "reviews.cue", everyReview)
		all, errAll := loadAdding(t, dir, "all.cue", everyTrial)
		if (errOnly != nil) != tc.fails {
			t.Errorf("%s: load: %v, want it to fail: %v", tc.name, errOnly, tc.fails)
		}
		sameLoad(t, tc.name+", with the reviews tried", errOnly, "with every kind's reviews tried", errReviews)
		sameLoad(t, tc.name+", with the reviews tried", errOnly, "tried in every way", errAll)
		if only == nil || all == nil || reviews == nil {
			continue
		}
		// The reviews of the kinds the policy does not reach are left out.
		if n, m := only.Evaluations().Reviews, reviews.Evaluations().Reviews; (n < m) != tc.someKinds || n > m {
			t.Errorf("%s: the load reviewed %d times, and %d with every kind's reviews tried", tc.name, n, m)
		}
		if beyond(only) || !beyond(all) {
			t.Errorf("%s: tried beyond its reviews: %v, and with everyTrial: %v", tc.name, beyond(only), beyond(all))
		}
		if n, m := only.Evaluations().Renders, all.Evaluations().Renders; n != 0 || (m == 0) == tc.renders {
			t.Errorf("%s: the load rendered %d times, and %d with everyTrial", tc.name, n, m)
		}
		if !reflect.DeepEqual(only.Warnings(), all.Warnings()) {
			t.Errorf("%s: warnings with the reviews tried:\n%v\ntried in every way:\n%v", tc.name, only.Warnings(), all.Warnings())
		}
	}
}

// TestTrialGroupsSkippedChangeNothing: a policy whose files declare render
// parts alone is tried on its renders, and not on the reviews' own trials,
// the mutators' or the lookups'; one that declares a mutator alone, on its
// mutations, and not on the renders or the lookups. Each load comes to the
// same, problems, warnings and all, as when every trial is made
// (everyTrial beside it).
func TestTrialGroupsSkippedChangeNothing(t *testing.T) {
	t.Parallel()
	mutator := func(mutations string) string {
		return "package schemas\n\nmutators: (#APIVersion): TrainJob: {\n\tinput: _\n\treads: labels: [\"metadata\", \"labels\"]\n\tmutations: " + mutations + "\n}\n"
	}
	for _, tc := range []struct {
		name, src string
		fails     bool
		want      trialScope
	}{
		{"a render part", `package schemas

renderParts: (#APIVersion): TrainJob: torch: {
	#name: _
	#podLabels: "example.com/master": "\(#name)-master"
}
`, false, trialScope{renders: true}},
		{"a render part that takes the trainer for granted", `package schemas

renderParts: (#APIVersion): TrainJob: torch: {
	#plan: _
	edits: debug: {
		order: 60
		ops: [{object: "jobset", path: [#plan.trainerNode, "env"], op: "upsert", by: ["name"], items: [{name: "DEBUG", value: "1"}]}]
	}
}
`, true, trialScope{renders: true}},
		{"a mutator", mutator(`team: [if input.metadata.labels.team != _|_ {object: "input", path: ["metadata", "annotations"], op: "merge", value: {team: input.metadata.labels.team}}]`), false, trialScope{mutators: true}},
		{"a mutator the reviews refuse", mutator(`nodes: [{object: "input", path: ["spec", "trainer"], op: "set", value: {numNodes: -1}}]`), true, trialScope{mutators: true}},
	} {
		dir := writePolicy(t, map[string]string{"org.cue": tc.src})
		only, errOnly := New(Options{PolicyDirs: []string{dir}})
		all, errAll := loadAdding(t, dir, "all.cue", everyTrial)
		if (errOnly != nil) != tc.fails {
			t.Errorf("%s: load: %v, want it to fail: %v", tc.name, errOnly, tc.fails)
		}
		sameLoad(t, tc.name+", with its trials", errOnly, "tried in every way", errAll)
		if only == nil || all == nil {
			continue
		}
		got := only.trialScope(only.cur.Load())
		if got.renders != tc.want.renders || got.mutators != tc.want.mutators || got.lookups || slices.ContainsFunc(probeDocuments(t, only), got.reviewed) {
			t.Errorf("%s: tried: renders %v, mutators %v, lookups %v, reviews %v; want renders %v, mutators %v, nothing else", tc.name,
				got.renders, got.mutators, got.lookups, slices.ContainsFunc(probeDocuments(t, only), got.reviewed), tc.want.renders, tc.want.mutators)
		}
		o, a := only.Evaluations(), all.Evaluations()
		if o.Reviews >= a.Reviews || o.Lookups >= a.Lookups {
			t.Errorf("%s: reviewed %d times and looked up %d, and %d and %d tried in every way", tc.name, o.Reviews, o.Lookups, a.Reviews, a.Lookups)
		}
		if tc.want.renders && (o.Renders == 0 || o.Mutations >= a.Mutations) || tc.want.mutators && (o.Mutations == 0 || o.Renders != 0 || a.Renders == 0) {
			t.Errorf("%s: rendered %d times and mutated %d, and %d and %d tried in every way", tc.name, o.Renders, o.Mutations, a.Renders, a.Mutations)
		}
		if !reflect.DeepEqual(only.Warnings(), all.Warnings()) {
			t.Errorf("%s: warnings with its trials:\n%v\ntried in every way:\n%v", tc.name, only.Warnings(), all.Warnings())
		}
	}
}

// probeDocuments are a document of each kind the trials admit: the
// shipped runtimes, and their probes and variants.
func probeDocuments(t *testing.T, e *Engine) []Document {
	t.Helper()
	c := e.cur.Load()
	var docs []Document
	for _, st := range e.builtinRuntimes("") {
		docs = append(docs, st.doc)
		probes, variants, _, err := e.probes(c, st)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, probes...)
		for _, v := range variants {
			docs = append(docs, v.runtime)
			docs = append(docs, v.documents...)
		}
	}
	return docs
}
