package engine

import (
	"testing"

	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// TestRenderMemoKeys: a render is kept under its inputs' identities and
// given again only while each is the same: the TrainJob's uid and
// resourceVersion, its runtime's, the existing objects' and the ids the
// caller says exist. A render of a TrainJob without an identity is kept
// under its content instead; a hit is a copy, which the caller may change.
func TestRenderMemoKeys(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	job := func(rv string) string {
		tj := wrapper.TrainJob("memo-job").RuntimeRef("memo-rt").NumNodes(2)
		if rv != "" {
			tj = tj.UID("tj-uid").ResourceVersion(rv)
		}
		return tj.YAML()
	}
	render := func(runtime, job string, opts RenderOptions) (Rendered, bool) {
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Controller: true})
		var last Result
		for _, r := range admitAll(t, s, "in.yaml", runtime+"---\n"+job) {
			if r.Rejected() {
				t.Fatalf("%s rejected: %v", r.Identity(), findingStrings(r.Errors))
			}
			last = r
		}
		before := e.rendersMade.Load()
		out := s.Render(last, opts)
		return out, e.rendersMade.Load() != before
	}
	for i, step := range []struct {
		runtime, job string
		opts         RenderOptions
		rendered     bool
		image        string
	}{
		{planRuntime("memo-rt", "1", "img:1"), job("1"), RenderOptions{}, true, "img:1"},
		{planRuntime("memo-rt", "1", "img:1"), job("1"), RenderOptions{}, false, "img:1"},
		// The runtime changed: a new resourceVersion.
		{planRuntime("memo-rt", "2", "img:2"), job("1"), RenderOptions{}, true, "img:2"},
		// The TrainJob changed.
		{planRuntime("memo-rt", "2", "img:2"), job("2"), RenderOptions{}, true, "img:2"},
		// The caller says the snapshot exists.
		{planRuntime("memo-rt", "2", "img:2"), job("2"), RenderOptions{Existing: []string{"snapshot"}}, true, "img:2"},
		{planRuntime("memo-rt", "2", "img:2"), job("2"), RenderOptions{Existing: []string{"snapshot"}}, false, "img:2"},
		// A runtime without an identity, and a TrainJob without one: not
		// kept under identities, but under their content (renderAlike).
		{planRuntime("memo-rt", "", "img:3"), job("2"), RenderOptions{}, true, "img:3"},
		{planRuntime("memo-rt", "", "img:3"), job("2"), RenderOptions{}, false, "img:3"},
		{planRuntime("memo-rt", "2", "img:2"), job(""), RenderOptions{}, true, "img:2"},
		{planRuntime("memo-rt", "2", "img:2"), job(""), RenderOptions{}, false, "img:2"},
	} {
		out, rendered := render(step.runtime, step.job, step.opts)
		if rendered != step.rendered {
			t.Errorf("step %d: rendered %v, want %v", i, rendered, step.rendered)
		}
		if got := nodeImage(t, out); got != step.image {
			t.Errorf("step %d: image %s, want %s", i, got, step.image)
		}
		// The caller's changes do not reach the memo.
		for _, obj := range out.Objects {
			obj["kind"] = "Changed"
		}
	}
}
