package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/cache"
)

// limitedProbes is a policy whose trials fail the load: its probes of a
// ClusterTrainingRuntime cannot be made (probe.go's probesProblems).
var limitedProbes = map[string]string{"p.cue": `package schemas

probes: (#APIVersion): ClusterTrainingRuntime: #ref: name: =~"^org-"
`}

const limitedProbesWant = `p.cue:3:60: the probes of the ClusterTrainingRuntime deepspeed-distributed cannot be made: `

// loadErr loads a policy directory with opts, and says its load error
// (nil for none).
func loadErr(t *testing.T, opts Options) (*Engine, *LoadError) {
	t.Helper()
	e, err := New(opts)
	if err == nil {
		return e, nil
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("load: %v, want a LoadError", err)
	}
	return e, le
}

// TestTrialsKept: a load keeps its trials' outcome under a hash of all it
// depends on, and a load of the same files takes it from there rather than
// try again: the kept problems are its problems (an outcome put there by
// hand shows it is served, not tried). An engine without its memos tries
// afresh; other content, or the same content in another directory (its
// problems name other files), is another key.
func TestTrialsKept(t *testing.T) {
	dir := writePolicy(t, limitedProbes)
	_, first := loadErr(t, Options{PolicyDirs: []string{dir}})
	if first == nil || !strings.Contains(first.Error(), limitedProbesWant) {
		t.Fatalf("load: %v, want %q", first, limitedProbesWant)
	}
	_, again := loadErr(t, Options{PolicyDirs: []string{dir}})
	if again == nil || again.Error() != first.Error() {
		t.Fatalf("second load: %v\nwant the first's: %v", again, first)
	}

	// The outcome kept is the one served: replaced by hand, the next load
	// says the replacement.
	key := keyOfFailedLoad(t, Options{PolicyDirs: []string{dir}})
	kept, ok := keptTrials.Get(key)
	if !ok || len(kept) != len(first.Problems) || kept[0] != first.Problems[0] {
		t.Fatalf("kept %v, want the first load's problems %v", kept, first.Problems)
	}
	keptTrials.Put(key, []Problem{{File: "kept.cue", Line: 1, Message: "the outcome kept"}})
	if _, served := loadErr(t, Options{PolicyDirs: []string{dir}}); served == nil || !strings.Contains(served.Error(), "kept.cue:1: the outcome kept") {
		t.Errorf("a load of the same files: %v, want the outcome kept", served)
	}
	// Without memos the trials run afresh, and the kept outcome stays.
	if _, afresh := loadErr(t, Options{PolicyDirs: []string{dir}, NoMemo: true}); afresh == nil || afresh.Error() != first.Error() {
		t.Errorf("without memos: %v\nwant the trials' own: %v", afresh, first)
	}
	// A kept outcome of no problems lets the load through.
	keptTrials.Put(key, nil)
	if _, none := loadErr(t, Options{PolicyDirs: []string{dir}}); none != nil {
		t.Errorf("with no problems kept: %v, want a load", none)
	}

	// The same files elsewhere: another key, and problems at their files.
	other := writePolicy(t, limitedProbes)
	if keyOfFailedLoad(t, Options{PolicyDirs: []string{other}}) == key {
		t.Error("the same files in another directory have the same key: their problems would name the first's files")
	}
	// A byte more: another key.
	changed := writePolicy(t, map[string]string{"p.cue": limitedProbes["p.cue"] + "\n"})
	if keyOfFailedLoad(t, Options{PolicyDirs: []string{changed}}) == key {
		t.Error("other content has the same key")
	}
}

// keyOfFailedLoad is the trials key of a load of opts, which fails in its
// trials: the engine that failed to load is not returned, so its key is
// read off the kept outcomes, as the one the load used last (the engine's
// tests run one at a time).
func keyOfFailedLoad(t *testing.T, opts Options) string {
	t.Helper()
	if _, le := loadErr(t, opts); le == nil {
		t.Fatal("the load did not fail")
	}
	keys := keptTrials.Keys()
	if len(keys) == 0 {
		t.Fatal("the load kept no outcome")
	}
	return keys[0]
}

// TestTrialsKeptOnDisk: with a cache directory, a load's trials outcome is
// kept in a file named by its key, for another process: with the memory's
// entry gone, the next load reads the file (changed by hand, it says the
// change). A file that does not decode is a miss: the trials run again,
// and their outcome replaces it.
func TestTrialsKeptOnDisk(t *testing.T) {
	if cache.ExecutableID() == "" {
		t.Fatal("the test binary's build ID cannot be read: nothing would be kept on disk")
	}
	dir, cacheDir := writePolicy(t, limitedProbes), t.TempDir()
	opts := Options{PolicyDirs: []string{dir}, TrialCacheDir: cacheDir}
	key := keyOfFailedLoad(t, opts)
	file := filepath.Join(cacheDir, key)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no outcome kept on disk: %v", err)
	}
	if !strings.Contains(string(data), `"version":"`+trialsVersion+`"`) || !strings.Contains(string(data), "cannot be made") {
		t.Fatalf("kept on disk: %s, want the version and the problems", data)
	}

	replaced := strings.Replace(string(data), "cannot be made", "were kept on disk", 1)
	if err := os.WriteFile(file, []byte(replaced), 0o644); err != nil {
		t.Fatal(err)
	}
	keptTrials.Delete(key)
	if _, le := loadErr(t, opts); le == nil || !strings.Contains(le.Error(), "were kept on disk") {
		t.Errorf("a load with the memory's entry gone: %v, want the file's outcome", le)
	}

	if err := os.WriteFile(file, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	keptTrials.Delete(key)
	if _, le := loadErr(t, opts); le == nil || !strings.Contains(le.Error(), limitedProbesWant) {
		t.Errorf("a load with a file that does not decode: %v, want the trials' own %q", le, limitedProbesWant)
	}
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), "cannot be made") {
		t.Errorf("the file that did not decode is still %s, want the trials' outcome", data)
	}
}
