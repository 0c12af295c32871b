package engine

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// everyTrial is a policy file that has a policy tried in every way
// (beyondReviews): it declares the contract's renderChecks as they are,
// a struct unified with an empty one.
const everyTrial = "package schemas\n\nrenderChecks: {}\n"

// TestEmbeddedTrialsFindNothing: the embedded CUE, tried in every way,
// fails nothing. tryPolicy leaves out the trials a policy's files cannot
// change (beyondReviews) on the strength of it: what they would find is
// what they find here.
func TestEmbeddedTrialsFindNothing(t *testing.T) {
	t.Parallel()
	e, err := New(Options{PolicyDirs: []string{writePolicy(t, map[string]string{"all.cue": everyTrial})}})
	if err != nil {
		t.Fatalf("the embedded CUE, tried in every way: %v", err)
	}
	if !e.beyondReviews(e.cur.Load()) {
		t.Fatal("a policy that declares renderChecks is tried on its reviews alone")
	}
	if ev := e.Evaluations(); ev.Renders == 0 || ev.Lookups == 0 || ev.Mutations == 0 {
		t.Errorf("the trials rendered %d times, looked up %d and mutated %d: not tried in every way", ev.Renders, ev.Lookups, ev.Mutations)
	}
	for _, w := range e.Warnings() {
		t.Errorf("warning: %s", w)
	}
}

// TestTrialsSkippedChangeNothing: a policy whose files declare rules of
// reviews alone (with the names they read, `object: _`, under a computed
// label) is tried on its reviews alone, and its load comes to the same,
// problems and all, as when every trial is made (everyTrial beside it).
func TestTrialsSkippedChangeNothing(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 32)
	for i := range data {
		data[i] = byte(r.IntN(256))
	}
	// renders says the trials render when made in every way (a policy
	// that refuses every probe renders none).
	for _, tc := range []struct {
		name, src      string
		fails, renders bool
	}{
		{"generated", (&policyGen{data: data}).policy(), false, false},
		{"a warning", `package schemas

import "strings"

admission: (#APIVersion): TrainJob: {
	object: _
	let image = *object.spec.trainer.image | ""
	warnings: latest: [if strings.HasSuffix(image, ":latest") {path: "spec.trainer.image", message: "pin the image"}]
}
`, false, true},
		{"a TrainJob's rule that fails on a probe", `package schemas

import "strings"

admission: (#APIVersion): TrainJob: {
	object: _
	policy: imageTagged: [if !strings.Contains(object.spec.trainer.image, ":") {path: "spec.trainer.image", detail: "tag the image"}]
}
`, true, false},
		{"a runtime's rule that fails on one", `package schemas

admission: (#APIVersion): ClusterTrainingRuntime: {
	object: _
	warnings: autoProcs: [if object.spec.mlPolicy.torch.numProcPerNode == "auto" {message: "say how many"}]
}
`, true, false},
	} {
		dir := writePolicy(t, map[string]string{"org.cue": tc.src})
		only, errOnly := New(Options{PolicyDirs: []string{dir}})
		if err := os.WriteFile(filepath.Join(dir, "all.cue"), []byte(everyTrial), 0o644); err != nil {
			t.Fatal(err)
		}
		all, errAll := New(Options{PolicyDirs: []string{dir}})
		if (errOnly != nil) != tc.fails {
			t.Errorf("%s: load: %v, want it to fail: %v", tc.name, errOnly, tc.fails)
		}
		var leOnly, leAll *LoadError
		errors.As(errOnly, &leOnly)
		errors.As(errAll, &leAll)
		switch {
		case (leOnly == nil) != (leAll == nil) || (errOnly == nil) != (errAll == nil):
			t.Errorf("%s: load with the reviews tried: %v; tried in every way: %v", tc.name, errOnly, errAll)
		case leOnly != nil && !reflect.DeepEqual(leOnly.Problems, leAll.Problems):
			t.Errorf("%s: problems with the reviews tried:\n%v\ntried in every way:\n%v", tc.name, leOnly.Problems, leAll.Problems)
		}
		if only == nil || all == nil {
			continue
		}
		if only.beyondReviews(only.cur.Load()) || !all.beyondReviews(all.cur.Load()) {
			t.Errorf("%s: tried beyond its reviews: %v, and with everyTrial: %v", tc.name, only.beyondReviews(only.cur.Load()), all.beyondReviews(all.cur.Load()))
		}
		if n, m := only.Evaluations().Renders, all.Evaluations().Renders; n != 0 || (m == 0) == tc.renders {
			t.Errorf("%s: the load rendered %d times, and %d with everyTrial", tc.name, n, m)
		}
		if !reflect.DeepEqual(only.Warnings(), all.Warnings()) {
			t.Errorf("%s: warnings with the reviews tried:\n%v\ntried in every way:\n%v", tc.name, only.Warnings(), all.Warnings())
		}
	}
}
