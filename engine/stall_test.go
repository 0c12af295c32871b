package engine

import (
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// TestLoadGivesUpOnAStall: an evaluation of the load's that takes longer
// than evalLimit fails the load, naming it, without waiting for it; the
// load's goroutine ends at the next evaluation it would begin. An error
// of the load's own is its caller's, a panic a defect that fails the load,
// and an engine that loaded evaluates unguarded.
func TestLoadGivesUpOnAStall(t *testing.T) {
	e := loadPolicyWant(t, "a policy", map[string]string{"p.cue": "package schemas\n"}, "")
	if e == nil || e.guard.Load() != nil {
		t.Fatal("a loaded engine keeps its load's guard")
	}
	e.evalLimit = 50 * time.Millisecond

	doc := Document{Object: map[string]any{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": map[string]any{"name": "probe", "namespace": "default"}}, File: k8s.ProbeFile + "torch-distributed"}
	ended := make(chan struct{})
	var continued atomic.Bool
	start := time.Now()
	err := e.guarded(func() error {
		defer close(ended)
		e.begin("the review", doc)
		burn(20 * e.evalLimit) // CUE that does not end in time
		e.begin("the render", doc)
		continued.Store(true)
		return nil
	})
	if took := time.Since(start); took > 10*e.evalLimit {
		t.Errorf("the load gave up after %s, want about %s", took, e.evalLimit)
	}
	want := "the review of TrainJob default/probe, a probe of the runtime torch-distributed (see probes) did not end in 50ms: a webhook has 50ms (its timeoutSeconds), so every request it evaluates would time out"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("load: %v\nwant %q", err, want)
	}
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the load's goroutine did not end")
	}
	if continued.Load() {
		t.Error("the load's goroutine went on after the load gave up")
	}
	if e.inTime() {
		t.Error("inTime after the guard gave up: the trials' outcome would be kept")
	}

	e.guard.Store(nil)
	if err := e.guarded(func() error { return errors.New("the load's own") }); err == nil || err.Error() != "the load's own" {
		t.Errorf("guarded: %v, want the load's own error", err)
	}
	// A panic of the load's fails it as a defect, not the process.
	err = e.guarded(func() error { panic("a defect") })
	if d := (*Defect)(nil); !errors.As(err, &d) || d.Panic != "a defect" || !strings.Contains(err.Error(), "not of the policy") {
		t.Errorf("guarded: %v, want the load's panic as a defect", err)
	}
}

// burn works (spins on the CPU) for d of wall time, as an evaluation does.
func burn(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// TestLoadGuardCountsWork: the guard counts the load's work, the CPU time
// of its thread, not the wall clock: an evaluation that waits (here, on a
// machine whose other work holds the CPU, as tests in parallel or a busy
// CI runner do) for longer than evalLimit, working less, is no stall;
// one that works as long is.
func TestLoadGuardCountsWork(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the thread's CPU clock is read on Linux; elsewhere the guard counts the wall clock")
	}
	e := loadPolicyWant(t, "a policy", map[string]string{"p.cue": "package schemas\n"}, "")
	if e == nil {
		t.FailNow()
	}
	e.evalLimit = 100 * time.Millisecond
	err := e.guarded(func() error {
		e.begin("the review", Document{})
		time.Sleep(5 * e.evalLimit) // waits, works not
		burn(e.evalLimit / 4)
		e.begin("the render", Document{})
		return nil
	})
	if err != nil {
		t.Errorf("an evaluation that waited %s and worked %s: %v, want no stall", 5*e.evalLimit, e.evalLimit/4, err)
	}
	e.guard.Store(nil)
	err = e.guarded(func() error {
		e.begin("the review", Document{})
		burn(20 * e.evalLimit)
		e.begin("the render", Document{})
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "the review did not end in 100ms") {
		t.Errorf("an evaluation that worked %s: %v, want the stall", 20*e.evalLimit, err)
	}
}
