package engine

import (
	"encoding/json"

	"github.com/cuetrainer/cuetrainer/engine/internal/cache"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// Kept trials.
//
// The trials of an admin's policy (probe.go's tryPolicy) are most of a
// load's time: they evaluate every rule on the probes of every runtime.
// Their outcome, the problems that fail the load or none, depends on the
// load's files alone (the embedded CUE, the admin's CUE files and
// manifests, by name and as displayed) and on the code that evaluates
// them (the binary, and with it the CUE version). Kept under a hash of
// all of these, it is never stale: the process keeps the outcomes of its
// last loads in memory (a controller's reload of an unchanged policy),
// and with Options.TrialCacheDir a directory keeps them for other
// processes (an admin's `cuetrainer vet --policy-dir` in CI, run after
// run). An outcome whose trials met a defect (a panic, recovered: the
// runtime in force replaced, or a kind's evaluations sent to the
// fallback, defect.go) is not kept: the engine's state after it is more
// than the problems. Nor is one whose load the stall guard failed
// (stall.go), or would have: a kept outcome says the trials ended in
// time.

// keptTrialsSize is how many trial outcomes the process keeps in memory.
const keptTrialsSize = 32

// keptTrialsFiles is how many a cache directory keeps.
const keptTrialsFiles = 256

// keptTrials are the trial outcomes of this process's loads, by trialsKey.
var keptTrials = cache.NewLRU[[]Problem](keptTrialsSize)

// trialsVersion changes when what a kept outcome holds does.
const trialsVersion = "cuetrainer trials 2"

// keptOutcome is a trial outcome as a cache directory keeps it.
type keptOutcome struct {
	Version  string    `json:"version"`
	Problems []Problem `json:"problems"`
}

// triedPolicy is tryPolicy's outcome: kept, or tried and then kept. An
// engine without its memos (Options.NoMemo) tries afresh, and keeps
// nothing.
func (e *Engine) triedPolicy() []Problem {
	if !e.memos {
		return e.tryPolicy()
	}
	key := e.trialsKey()
	if problems, ok := keptTrials.Get(key); ok {
		return append([]Problem(nil), problems...)
	}
	dir := e.trialsDir()
	if dir != nil {
		if data, ok := dir.Get(key); ok {
			var kept keptOutcome
			if json.Unmarshal(data, &kept) == nil && kept.Version == trialsVersion {
				keptTrials.Put(key, kept.Problems)
				return append([]Problem(nil), kept.Problems...)
			}
		}
	}
	defects := e.defects.Load()
	problems := e.tryPolicy()
	if e.defects.Load() != defects || e.anyFellBack.Load() || !e.inTime() {
		return problems
	}
	keptTrials.Put(key, append([]Problem(nil), problems...))
	if dir != nil {
		if data, err := json.Marshal(keptOutcome{Version: trialsVersion, Problems: problems}); err == nil {
			dir.Put(key, data)
		}
	}
	return problems
}

// trialsDir is the directory that keeps trial outcomes across processes,
// when the options give one and the binary can be told apart from others.
func (e *Engine) trialsDir() *cache.Dir {
	if e.trialCacheDir == "" || cache.ExecutableID() == "" {
		return nil
	}
	return cache.NewDir(e.trialCacheDir, keptTrialsFiles)
}

// trialsKey is a hash of all a load's trials depend on.
func (e *Engine) trialsKey() string {
	h := value.NewContentHash()
	h.Str(trialsVersion)
	h.Str(cache.ExecutableID())
	h.Str(cueVersion())
	for _, name := range value.SortedKeys(e.sources) {
		h.Str(name)
		h.Str(e.src.Display(name))
		h.Str(string(e.sources[name]))
	}
	for _, m := range e.manifests {
		h.Str(m.display)
		h.Str(string(m.data))
	}
	return h.Sum()
}
