package engine

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// stageRecorder is an observer that notes the stages it is shown, and
// the kinds of the objects it was shown, and stops the render at stop.
type stageRecorder struct {
	seen  []string
	kinds map[string]bool
	stop  string
}

func (r *stageRecorder) look(stage string, rn *rendering, objects map[string]map[string]any) bool {
	if r.kinds == nil {
		r.kinds = map[string]bool{}
	}
	for _, obj := range objects {
		r.kinds[fmt.Sprint(obj["kind"])] = true
	}
	r.seen = append(r.seen, stage)
	if stage == r.stop {
		rn.out.Errors = append(rn.out.Errors, Finding{Phase: contract.PhaseRuleError, Rule: "recorder", Detail: "stopped at " + stage})
		return false
	}
	return true
}

func (r *stageRecorder) edited(rn *rendering, objects map[string]map[string]any) bool {
	return r.look("edited", rn, objects)
}

func (r *stageRecorder) fitted(rn *rendering, objects map[string]map[string]any) bool {
	return r.look("fitted", rn, objects)
}

// TestRenderObserverStages: a render shows its objects to its observer
// (the load's trial renders have one) once the edits are made and once
// they fit their kinds, in that order, keeps the plan's parts for it, is
// not taken from the render memo, and stops where the observer says; a
// render without one builds the same objects and keeps no parts.
func TestRenderObserverStages(t *testing.T) {
	t.Parallel()
	e := testEngine(t)
	doc := e.NewSession(SessionOptions{}).Admit(readOne(t, wrapper.TrainJob("observed").Namespace("team-a").RuntimeRef("torch-distributed").YAML()))
	if doc.Rejected() {
		t.Fatalf("refused: %v", findingStrings(doc.Errors))
	}
	served := e.NewSession(SessionOptions{}).Render(doc, RenderOptions{})
	if len(served.Errors) > 0 || len(served.Objects) == 0 || served.parts != nil {
		t.Fatalf("a render without an observer: %d objects, parts %v, errors %v", len(served.Objects), served.parts, findingStrings(served.Errors))
	}

	rec := &stageRecorder{}
	s := e.NewSession(SessionOptions{})
	observed := s.Render(doc, RenderOptions{observer: rec})
	if len(observed.Errors) > 0 {
		t.Fatalf("an observed render: %v", findingStrings(observed.Errors))
	}
	if want := []string{"edited", "fitted"}; !reflect.DeepEqual(rec.seen, want) || !rec.kinds["JobSet"] {
		t.Errorf("the observer was shown the objects (of kinds %v) at %q, want the JobSet at %q", rec.kinds, rec.seen, want)
	}
	if !slices.Contains(observed.parts, "torch") {
		t.Errorf("an observed render keeps the plan's parts: %v, want torch among them", observed.parts)
	}
	if !reflect.DeepEqual(observed.Objects, served.Objects) {
		t.Errorf("an observed render built other objects than a render without an observer")
	}

	// Rendered again: not from the memo, which keeps no observed render.
	s.Render(doc, RenderOptions{observer: rec})
	if len(rec.seen) != 4 {
		t.Errorf("rendered twice, the observer was shown %q: an observed render came from the memo", rec.seen)
	}

	for _, stop := range []string{"edited", "fitted"} {
		rec := &stageRecorder{stop: stop}
		out := e.NewSession(SessionOptions{}).Render(doc, RenderOptions{observer: rec})
		if len(out.Objects) != 0 || len(out.Errors) != 1 || out.Errors[0].Detail != "stopped at "+stop {
			t.Errorf("stopped at %s: %d objects, errors %v", stop, len(out.Objects), findingStrings(out.Errors))
		}
		if last := rec.seen[len(rec.seen)-1]; last != stop {
			t.Errorf("stopped at %s, the observer was shown %q after", stop, rec.seen)
		}
	}
}
