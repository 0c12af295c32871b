package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// cuePanicJob is a TrainJob on deepspeed-distributed, whose review CUE
// v0.17.1 cannot make with structure sharing under testdata/cuepanic's
// policy; limits sets its nodes' limits.memory.
func cuePanicJob(t *testing.T, limits bool) Document {
	t.Helper()
	src := `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: mnist, namespace: team-a}
spec:
  runtimeRef: {name: deepspeed-distributed}
  trainer:
    numNodes: 2
    image: docker.io/deepspeed:1
`
	if limits {
		src += "    resourcesPerNode: {limits: {memory: 64Gi}}\n"
	}
	docs := k8s.ReadYAML("job.yaml", []byte(src))
	if len(docs) != 1 || docs[0].Err != nil {
		t.Fatalf("reading the job: %v", docs)
	}
	return docs[0]
}

// TestCUEPanicFallsBack: a correct policy on which CUE v0.17.1 panics
// (a nil dereference in adt.initArcs, in the review of the MPI runtimes'
// probes) loads, with one warning at the admin's file naming the rule, and
// its rule gives the right findings: the TrainJob's reviews go to the
// runtime without structure sharing.
func TestCUEPanicFallsBack(t *testing.T) {
	e, err := New(Options{PolicyDirs: []string{"testdata/cuepanic"}})
	if err != nil {
		t.Fatalf("the policy does not load: %v", err)
	}
	if e.Defects() == 0 {
		t.Error("no panic recovered: the policy no longer reaches CUE's defect, and this test no longer tests the fallback")
	}
	ws := e.Warnings()
	if len(ws) != 1 || !strings.HasSuffix(ws[0].File, "cuepanic/org.cue") || ws[0].Line == 0 ||
		!strings.Contains(ws[0].Message, "policy.requireLimits") || !strings.Contains(ws[0].Message, "panicked") ||
		!strings.Contains(ws[0].Message, "not of the policy") {
		t.Errorf("load warnings %v; want one at cuepanic/org.cue naming policy.requireLimits, a panic of CUE's", ws)
	}
	fbs := e.Fallbacks()
	if len(fbs) != 1 || fbs[0].Kind != (Kind{"trainer.kubeflow.org/v1alpha1", "TrainJob"}) || fbs[0].Sort != sortReview {
		t.Errorf("fallbacks %v; want the TrainJob's reviews", fbs)
	}
	// Trials that met a defect leave state their problems do not say (the
	// fallback): their outcome is not kept (keptrials.go).
	if _, kept := keptTrials.Get(e.trialsKey()); kept {
		t.Error("the outcome of trials that met a defect was kept: a load served it would not fall back, nor warn")
	}

	s := e.NewSession(SessionOptions{})
	r := s.Admit(cuePanicJob(t, false))
	if len(r.Errors) != 1 || r.Errors[0].Phase != contract.PhasePolicy || r.Errors[0].Rule != "requireLimits" ||
		r.Errors[0].String() != "spec.trainer.resourcesPerNode: Required value: set limits.memory" {
		t.Errorf("without limits.memory: errors %v; want requireLimits' alone", r.Errors)
	}
	r = s.Admit(cuePanicJob(t, true))
	if r.Rejected() || r.Object == nil {
		t.Fatalf("with limits.memory: errors %v; want admitted", r.Errors)
	}
	if out := s.Render(r, RenderOptions{}); len(out.Errors) > 0 || len(out.Objects) == 0 {
		t.Errorf("render: errors %v, %d objects", out.Errors, len(out.Objects))
	}
}

// TestDefectReplacesRuntime: after a recovered panic the runtime that
// panicked is not used again, and no memo keeps what was made before.
func TestDefectReplacesRuntime(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession(SessionOptions{})
	if r := s.Admit(cuePanicJob(t, true)); r.Rejected() {
		t.Fatalf("rejected: %v", r.Errors)
	}
	if e.reviewMemo.Len() == 0 || e.lookupMemo.Len() == 0 {
		t.Fatal("nothing in the memos to forget")
	}
	c := e.cur.Load()
	d := e.recovered("boom", "a test's evaluation", c)
	if d.Panic != "boom" || !strings.Contains(d.Error(), "a test's evaluation") || d.Stack == "" {
		t.Errorf("defect %+v", d)
	}
	if e.cur.Load() == c {
		t.Error("the runtime that panicked is still in force")
	}
	if n := e.reviewMemo.Len() + e.lookupMemo.Len() + e.renderMemo.Len() + e.mutateMemo.Len() + e.crdPartMemo.Len(); n != 0 {
		t.Errorf("%d memoised results survived the panic", n)
	}
	if e.Defects() != 1 {
		t.Errorf("defects %d, want 1", e.Defects())
	}
	if r := e.NewSession(SessionOptions{}).Admit(cuePanicJob(t, true)); r.Rejected() {
		t.Errorf("rejected on the fresh runtime: %v", r.Errors)
	}
}

// panickingCluster is a cluster whose reads panic: code the engine calls
// in the middle of an evaluation.
type panickingCluster struct{}

func (panickingCluster) Get(context.Context, string, string, string, string) (map[string]any, error) {
	panic("the cluster's defect")
}

func (panickingCluster) List(context.Context, string, string) ([]map[string]any, error) {
	panic("the cluster's defect")
}

// TestPanicThatRemainsIsADefect: a panic that the fallback meets too is a
// finding of PhaseDefect that rejects the object, says whose defect it
// is, and sends nothing to the fallback; the process goes on.
func TestPanicThatRemainsIsADefect(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true, Cluster: panickingCluster{}})
	r := s.AdmitRequest(context.Background(), cuePanicJob(t, true), Request{})
	if len(r.Errors) != 1 || r.Errors[0].Phase != contract.PhaseDefect || r.Errors[0].Type != "Internal error" ||
		!strings.Contains(r.Errors[0].Detail, "panic: the cluster's defect") || !strings.Contains(r.Errors[0].Detail, "not of the policy nor of the object") ||
		!strings.Contains(r.Errors[0].Detail, "TrainJob team-a/mnist") {
		t.Errorf("errors %v; want one defect naming the TrainJob and the panic", r.Errors)
	}
	if e.Defects() != 2 {
		t.Errorf("defects %d; want 2 (the review, then the fallback's)", e.Defects())
	}
	if fbs := e.Fallbacks(); len(fbs) != 0 {
		t.Errorf("fallbacks %v after a panic the fallback met too", fbs)
	}
}

// TestCUEPanicNamesTheRule: with a rule beside the one CUE panics on, the
// load's warning names that rule alone, at its line: each of the kind's
// rules is switched off in turn and the policy compiled again.
func TestCUEPanicNamesTheRule(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/cuepanic/org.cue")
	if err != nil {
		t.Fatal(err)
	}
	// CUE's defect is fragile: most rules added to the review of
	// requireLimits make it go; this one, in a block of its own, does not.
	policy := string(src) + `
admission: (#APIVersion): TrainJob: {
	#trainer: _
	warnings: bigJob: [if #trainer.numNodes != _|_ if #trainer.numNodes > 64 {
		path:    "spec.trainer.numNodes"
		message: "a big job"
	}]
}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "org.cue"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatalf("the policy does not load: %v", err)
	}
	line := 1 + strings.Count(policy[:strings.Index(policy, "policy: requireLimits:")], "\n")
	ws := e.Warnings()
	if len(ws) != 1 || ws[0].Line != line || !strings.Contains(ws[0].Message, "CUE panics on the policy's rule policy.requireLimits (without it, it does not)") ||
		strings.Contains(ws[0].Message, "bigJob") {
		t.Errorf("load warnings %v; want one at line %d naming policy.requireLimits alone", ws, line)
	}
	job := cuePanicJob(t, false)
	job.Object["spec"].(map[string]any)["trainer"].(map[string]any)["numNodes"] = int64(65)
	r := e.NewSession(SessionOptions{}).Admit(job)
	if len(r.Errors) != 1 || r.Errors[0].Rule != "requireLimits" || len(r.Warnings) != 1 || r.Warnings[0].Rule != "bigJob" {
		t.Errorf("errors %v, warnings %v; want requireLimits' and bigJob's", r.Errors, r.Warnings)
	}
}
