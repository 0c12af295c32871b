package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The CLI's behaviour is written down as testscript files in
// testdata/script: `exec cuetrainer ...`, `! exec ...` for a failure,
// `cmp stdout want` for the output. UPDATE_GOLDEN=1 rewrites the files'
// expected output from what the commands print.
func TestMain(m *testing.M) {
	// The commands the tests run in this process keep their policies'
	// trials (--cache-dir's default, the user's cache directory) in a
	// directory of the tests', not the user's. A script's cuetrainer (this
	// binary, run as cuetrainer) keeps its environment.
	if filepath.Base(os.Args[0]) != "cuetrainer" {
		os.Setenv("XDG_CACHE_HOME", filepath.Join(os.TempDir(), "cuetrainer-cmd-tests-cache"))
	}
	testscript.Main(m, map[string]func(){
		"cuetrainer": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: os.Getenv("UPDATE_GOLDEN") != "",
		Setup: func(env *testscript.Env) error {
			// Scripts may read the conformance corpus from the repository.
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			env.Setenv("CORPUS", wd+"/../../test/conformance/testdata/kubeflow")
			env.Setenv("REPO", wd+"/../..")
			return nil
		},
	})
}
