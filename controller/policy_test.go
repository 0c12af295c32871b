package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine"
)

const tfTrainJob = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tf, namespace: team}
spec:
  runtimeRef: {name: tensorflow-distributed}
  trainer: {numNodes: 2}
`

// admitsTF reports whether the engine admits a TrainJob on the TensorFlow
// example's runtime, and why not.
func admitsTF(t *testing.T, e *engine.Engine) (bool, string) {
	t.Helper()
	docs := engine.ReadYAML("tj.yaml", []byte(tfTrainJob))
	r := e.NewSession(engine.SessionOptions{}).Admit(docs[0])
	var msgs []string
	for _, f := range r.Errors {
		msgs = append(msgs, f.String())
	}
	return !r.Rejected(), strings.Join(msgs, "; ")
}

// TestPolicyReloader: a policy directory that gains a framework is loaded
// without a restart; a broken file is reported and the last good policy
// stays; fixing it loads again.
func TestPolicyReloader(t *testing.T) {
	dir := t.TempDir()
	p, err := NewPolicyReloader(engine.Options{PolicyDirs: []string{dir}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if ok, _ := admitsTF(t, p.Engine()); ok {
		t.Fatal("TensorFlow admitted before its policy was there")
	}
	if p.Check(ctx) {
		t.Error("reloaded with nothing changed")
	}

	src, err := os.ReadFile("../examples/policies/tensorflow/tensorflow.cue")
	if err != nil {
		t.Fatal(err)
	}
	// As a ConfigMap volume lays it out: the file in a hidden timestamped
	// directory, linked from the top.
	hidden := filepath.Join(dir, "..2026_11_23_10_00_00.1")
	if err := os.Mkdir(hidden, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hidden, "tensorflow.cue"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..2026_11_23_10_00_00.1", "tensorflow.cue"), filepath.Join(dir, "tensorflow.cue")); err != nil {
		t.Fatal(err)
	}
	if !p.Check(ctx) {
		t.Fatalf("the new policy was not loaded: %v", p.LastError())
	}
	good := p.Engine()
	if ok, why := admitsTF(t, good); !ok {
		t.Fatalf("TensorFlow rejected after the reload: %s", why)
	}

	broken := filepath.Join(dir, "broken.cue")
	if err := os.WriteFile(broken, []byte("package schemas\nfoo: {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p.Check(ctx) {
		t.Fatal("a broken policy was loaded")
	}
	if err := p.LastError(); err == nil || !strings.Contains(err.Error(), "broken.cue") {
		t.Errorf("the failure does not name the file: %v", err)
	}
	if p.Engine() != good {
		t.Error("the last good policy is no longer in force")
	}
	if p.Check(ctx) {
		t.Error("the same broken policy was tried again")
	}
	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	if !p.Check(ctx) || p.LastError() != nil {
		t.Errorf("fixed policy not loaded: %v", p.LastError())
	}
}

// TestPolicyReloaderSurvivesPanic: a reload whose load panics is a failed
// reload, said as a defect: the process goes on with the last good policy.
func TestPolicyReloaderSurvivesPanic(t *testing.T) {
	dir := t.TempDir()
	p, err := NewPolicyReloader(engine.Options{PolicyDirs: []string{dir}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	good := p.Engine()
	if good == nil {
		t.Fatalf("the first load failed: %v", p.LastError())
	}
	p.Load = func(engine.Options) (*engine.Engine, error) {
		var m map[string]int
		m["boom"]++ // a nil map: the load panics
		return nil, nil
	}
	if err := os.WriteFile(filepath.Join(dir, "org.cue"), []byte("package schemas\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p.Check(context.Background()) {
		t.Fatal("a load that panicked was put in force")
	}
	if err := p.LastError(); err == nil || !strings.Contains(err.Error(), "panicked") || !strings.Contains(err.Error(), "assignment to entry in nil map") {
		t.Errorf("last error %v; want the panic", err)
	}
	if p.Engine() != good || p.Closed() != nil || p.Ready(nil) != nil {
		t.Error("the last good policy is no longer in force")
	}
}

// TestPolicyReloaderClosedAtStart: a policy that does not load when the
// process starts leaves none in force: Closed and Ready say why, naming the
// file; the reloader tries again every tick, and opens once it loads.
func TestPolicyReloaderClosedAtStart(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.cue")
	if err := os.WriteFile(broken, []byte("package schemas\nfoo: {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicyReloader(engine.Options{PolicyDirs: []string{dir}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Engine() != nil {
		t.Fatal("a policy that does not load is in force")
	}
	for name, err := range map[string]error{"Closed": p.Closed(), "Ready": p.Ready(nil)} {
		if err == nil || !strings.Contains(err.Error(), "admission is closed") || !strings.Contains(err.Error(), "broken.cue") {
			t.Errorf("%s: %v; want closed, naming broken.cue", name, err)
		}
	}
	ctx := context.Background()
	if p.Check(ctx) || p.Engine() != nil {
		t.Fatal("the same broken policy loaded")
	}
	if err := os.WriteFile(broken, []byte("package schemas\n#foo: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !p.Check(ctx) || p.Engine() == nil || p.Closed() != nil || p.Ready(nil) != nil {
		t.Fatalf("the fixed policy did not open admission: %v", p.LastError())
	}
	if ok, why := admitsTF(t, p.Engine()); ok || !strings.Contains(why, "tensorflow-distributed") {
		t.Errorf("TensorFlow admitted without its policy (%s)", why)
	}
}
