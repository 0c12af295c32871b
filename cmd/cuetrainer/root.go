package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/cuetrainer/cuetrainer/engine"
)

// Exit codes, the highest of a run wins.
const (
	exitOK       = 0
	exitRejected = 1
	exitUsage    = 2
)

// exitError carries an exit code out of a command.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is a mistake in the command line.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

func (e usageError) Unwrap() error { return e.err }

// globals are the flags every command that loads the engine takes.
type globals struct {
	policyDirs        []string
	noBuiltinRuntimes bool
	noMemo            bool
	// cacheDir is --cache-dir; nil for a command that keeps nothing on
	// disk (the controller: its root filesystem is read-only).
	cacheDir *string
	// policyWarnings is --policy-warnings: "error" makes the load's
	// warnings fatal (exit 2), for an admin's CI; the controller has no
	// such flag, and serves with them, logged and counted.
	policyWarnings string
}

// addFlags adds the engine's flags and --cache-dir.
func (g *globals) addFlags(cmd *cobra.Command) {
	g.addEngineFlags(cmd)
	g.cacheDir = new(string)
	cmd.Flags().StringVar(&g.policyWarnings, "policy-warnings", "warn", `what the load's warnings about the policy's CUE do: "warn" prints them, "error" also fails the command (exit 2), as an admin's CI may want`)
	cmd.Flags().StringVar(g.cacheDir, "cache-dir", defaultCacheDir(), `where loads with --policy-dir keep their policies' trials, for the next load of the same files (one file each, named by a hash of the files, the binary and the CUE version); "off" keeps none`)
}

// addEngineFlags adds the flags of the engine's load.
func (g *globals) addEngineFlags(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&g.policyDirs, "policy-dir", nil, "a directory of CUE policy files (package schemas) to load besides the embedded ones; repeatable")
	cmd.Flags().BoolVar(&g.noBuiltinRuntimes, "no-builtin-runtimes", false, "leave out the runtimes cuetrainer ships")
	cmd.Flags().BoolVar(&g.noMemo, "no-memo", false, "evaluate every review, lookup, render and mutation afresh, not from the engine's memos, and try the policies afresh: the results are the same, only slower (a debugging switch)")
}

// defaultCacheDir is cuetrainer's directory in the user's cache directory
// ($XDG_CACHE_HOME, ~/Library/Caches, %LocalAppData%), "" when there is none.
func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "cuetrainer")
}

// options are the engine's options the flags give.
func (g *globals) options() engine.Options {
	opts := engine.Options{PolicyDirs: g.policyDirs, NoMemo: g.noMemo}
	if g.cacheDir != nil && *g.cacheDir != "" && *g.cacheDir != "off" {
		opts.TrialCacheDir = filepath.Join(*g.cacheDir, "trials")
	}
	return opts
}

// engines holds the engines loaded in this process, by policy
// directories and --no-memo: an engine is safe for concurrent use and keeps no state
// between sessions, so commands run in one process (tests) share it.
var engines = struct {
	sync.Mutex
	byDirs map[string]*engine.Engine
}{byDirs: map[string]*engine.Engine{}}

// engine loads the engine for the policy directories, and prints the
// load's warnings to stderr.
func (g *globals) engine(stderr io.Writer) (*engine.Engine, error) {
	if g.policyWarnings != "" && g.policyWarnings != "warn" && g.policyWarnings != "error" {
		return nil, usageError{fmt.Errorf("--policy-warnings %q: must be warn or error", g.policyWarnings)}
	}
	key := fmt.Sprint(g.noMemo, "\x00", strings.Join(g.policyDirs, "\x00"))
	engines.Lock()
	defer engines.Unlock()
	e, ok := engines.byDirs[key]
	if !ok || len(g.policyDirs) > 0 {
		var err error
		if e, err = engine.New(g.options()); err != nil {
			return nil, usageError{err}
		}
		engines.byDirs[key] = e
	}
	if ws := e.Warnings(); g.policyWarnings == "error" && len(ws) > 0 {
		// Fatal: said as a load error is, so that reports list them.
		return nil, usageError{&engine.LoadError{Summary: "the policy loads with warnings, which --policy-warnings=error makes fatal", Problems: ws}}
	}
	for _, w := range e.Warnings() {
		fmt.Fprintf(stderr, "Warning: %s\n", strings.ReplaceAll(w.String(), "\n", "\n    "))
	}
	return e, nil
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "cuetrainer",
		Short: "Check and render Kubeflow Trainer runtimes and TrainJobs with rules written in CUE",
		Long: `cuetrainer checks Kubeflow Trainer (trainer.kubeflow.org/v1alpha1) TrainingRuntimes,
ClusterTrainingRuntimes and TrainJobs the way the API server and Kubeflow's admission
webhooks do, with every default and rule written in CUE.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newVetCmd(), newRenderCmd(), newRuntimesCmd(), newExportCmd(), newControllerCmd(), newVersionCmd())
	return root
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var exit exitError
	if errors.As(err, &exit) {
		return exit.code
	}
	fmt.Fprintln(stderr, "Error:", err)
	return exitUsage
}
