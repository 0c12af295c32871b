package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// TestKubeflowEdges: inputs at the edges of Kubeflow's webhooks, each
// judged as Kubeflow's source does (the file's comment cites it): every
// document before the last is admitted; the last, a TrainJob, is
// admitted ("# want: admitted") or refused with the words a "# want:"
// line gives.
func TestKubeflowEdges(t *testing.T) {
	files, err := filepath.Glob("testdata/kubeflow-edges/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	e := testEngine(t)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var want string
			for _, line := range strings.Split(string(data), "\n") {
				if w, ok := strings.CutPrefix(line, "# want: "); ok {
					want = w
				}
			}
			if want == "" {
				t.Fatal("no # want: line")
			}
			docs := k8s.ReadYAML(filepath.Base(file), data)
			s := e.NewSession(SessionOptions{})
			for i, d := range docs {
				r := s.Admit(d)
				got := strings.Join(findingStrings(r.Errors), "\n")
				switch {
				case i < len(docs)-1 && r.Rejected():
					t.Fatalf("%s: %s", r.Identity(), got)
				case i < len(docs)-1:
				case want == "admitted" && r.Rejected():
					t.Errorf("%s: refused: %s", r.Identity(), got)
				case want != "admitted" && !strings.Contains(got, want):
					t.Errorf("%s: %q, want %q", r.Identity(), got, want)
				}
			}
		})
	}
}
