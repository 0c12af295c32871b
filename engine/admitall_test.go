package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// admitAllCorpus is a stream of documents whose results depend on the
// documents before them: TrainJobs right after their runtime, before it and
// far after it; a runtime defined twice and a TrainJob between the two; a
// volcano runtime's TrainJob with its PriorityClass given between; invalid
// documents, other groups' objects and a name given twice.
func admitAllCorpus(seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 1))
	volcano := func(name, class string) string {
		return strings.Replace(runtimeYAML(name, "trainer.kubeflow.org/framework: torch", "", "{torch: {}}", "priorityClassName: "+class),
			"  mlPolicy:", "  podGroupPolicy: {volcano: {}}\n  mlPolicy:", 1)
	}
	job := func(name, runtime string) string {
		return strings.Replace(jobYAML(runtime, "{numNodes: 2}"), "name: job,", "name: "+name+",", 1)
	}
	var docs []string
	for i := range 40 {
		rt := fmt.Sprintf("rt-%d", i)
		switch r.IntN(6) {
		case 0: // the TrainJob right after its runtime
			docs = append(docs, runtimeYAML(rt, "", "", "{torch: {}}", ""), job(fmt.Sprintf("j-%d", i), rt))
		case 1: // before it: not found
			docs = append(docs, job(fmt.Sprintf("j-%d", i), rt), runtimeYAML(rt, "", "", "{mpi: {}}", ""))
		case 2: // defined twice, a TrainJob between and after
			docs = append(docs, runtimeYAML(rt, "", "", "{torch: {}}", ""), job(fmt.Sprintf("j-%d", i), rt),
				runtimeYAML(rt, "", "", "{xgboost: {}}", ""), job(fmt.Sprintf("k-%d", i), rt))
		case 3: // a volcano runtime, its PriorityClass between its TrainJobs
			class := fmt.Sprintf("class-%d", i)
			docs = append(docs, volcano(rt, class), job(fmt.Sprintf("j-%d", i), rt),
				fmt.Sprintf("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\nvalue: 10\n", class),
				job(fmt.Sprintf("k-%d", i), rt))
		case 4: // invalid runtime, then its TrainJob; a shipped runtime's
			docs = append(docs, runtimeYAML(rt, "", "", "{torch: {numProcPerNode: 0}}", ""), job(fmt.Sprintf("j-%d", i), rt),
				job(fmt.Sprintf("s-%d", i), "torch-distributed"))
		case 5: // not objects, other groups, a name given twice
			docs = append(docs, "kind: TrainJob\n", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
				job(fmt.Sprintf("d-%d", i), "torch-distributed"), job(fmt.Sprintf("d-%d", i), "mpi-distributed"))
		}
	}
	// And TrainJobs far after their runtimes.
	for i := range 40 {
		docs = append(docs, job(fmt.Sprintf("late-%d", i), fmt.Sprintf("rt-%d", r.IntN(40))))
	}
	return strings.Join(docs, "---\n")
}

// comparable is what a caller sees of a result.
func comparable(r Result) map[string]any {
	return map[string]any{"doc": r.Doc.File + fmt.Sprint(r.Doc.Line), "object": r.Object, "summary": r.Summary,
		"errors": findingStrings(r.Errors), "warnings": findingStrings(r.Warnings), "context": r.Context, "skipped": r.Skipped}
}

// TestAdmitAllAsInOrder: AdmitAll gives every document the result Admit
// gives it one document after another, with any number of workers, and
// what the session keeps afterwards is the same.
func TestAdmitAllAsInOrder(t *testing.T) {
	e := testEngine(t)
	redone := 0
	for seed := range uint64(2) {
		docs := k8s.ReadYAML("in.yaml", []byte(admitAllCorpus(seed)))
		seq := e.NewSession(SessionOptions{})
		var want []map[string]any
		for _, d := range docs {
			want = append(want, comparable(seq.Admit(d)))
		}
		for _, workers := range []int{2, 8} {
			s := e.NewSession(SessionOptions{})
			got := s.AdmitAll(t.Context(), docs, workers)
			if len(got) != len(docs) {
				t.Fatalf("seed %d, %d workers: %d results for %d documents", seed, workers, len(got), len(docs))
			}
			for i := range docs {
				if g := comparable(got[i]); !reflect.DeepEqual(g, want[i]) {
					t.Errorf("seed %d, %d workers, document %d:\n got %v\nwant %v", seed, workers, i, g, want[i])
				}
			}
			if !reflect.DeepEqual(listedNames(s), listedNames(seq)) {
				t.Errorf("seed %d, %d workers: the session keeps %v, in order %v", seed, workers, listedNames(s), listedNames(seq))
			}
			redone += s.redone
		}
	}
	// The corpus puts documents right after what they read: some
	// evaluations ran ahead on a session that lacked it, and were redone.
	if redone == 0 {
		t.Error("no evaluation was made again: the corpus does not test what it is for")
	}
}

func listedNames(s *Session) []string {
	var out []string
	for _, l := range s.Listed() {
		out = append(out, fmt.Sprintf("%s:%d %v", l.File, l.Line, l.Object["spec"]))
	}
	return out
}
