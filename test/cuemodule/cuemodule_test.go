// Package cuemodule tests cuetrainer's CUE module as a CUE user consumes
// it: published to a registry (an in-process one, modregistrytest), added
// as a dependency of an admin's own module (examples/cue-module), and
// evaluated by the cue command, cue vet and cue export, with nothing
// copied in. Each testdata/*.txtar is a testscript run with $CUE_REGISTRY
// pointing at the registry, $REPO at the repository and `cue` the cue
// command at the version the Makefile uses.
package cuemodule

import (
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"testing"
	"testing/fstest"

	"cuelang.org/go/mod/modregistrytest"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cuetrainer/cuetrainer"
)

// cueVersion is the cue command the scripts run: the Makefile's.
const cueVersion = "v0.17.1"

// published is the version of cuetrainer's module the registry serves.
const published = "v0.1.0"

func TestCUEModule(t *testing.T) {
	bin := t.TempDir()
	install := exec.Command("go", "install", "cuelang.org/go/cmd/cue@"+cueVersion)
	install.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("installing the cue command: %v\n%s", err, out)
	}

	// The registry serves the module as the binary embeds it: what a
	// release publishes.
	module := fstest.MapFS{}
	err := fs.WalkDir(cuetrainer.CUE, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(cuetrainer.CUE, p)
		if err != nil {
			return err
		}
		module[path.Join("cuetrainer.dev_cuetrainer_"+published, p)] = &fstest.MapFile{Data: data}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := modregistrytest.New(module, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close) // after the scripts, which run in parallel

	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("CUE_REGISTRY", reg.Host()+"+insecure")
			env.Setenv("CUE_CACHE_DIR", filepath.Join(env.WorkDir, ".cache"))
			env.Setenv("REPO", repo)
			env.Setenv("HOME", env.WorkDir)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// cp-example copies the example admin module into $WORK.
			"cp-example": func(ts *testscript.TestScript, neg bool, args []string) {
				src := filepath.Join(repo, "examples", "cue-module")
				err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					rel, _ := filepath.Rel(src, p)
					data, err := os.ReadFile(p)
					if err != nil {
						return err
					}
					dst := ts.MkAbs(rel)
					if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
						return err
					}
					return os.WriteFile(dst, data, 0o644)
				})
				if err != nil {
					ts.Fatalf("cp-example: %v", err)
				}
			},
		},
	})
}
