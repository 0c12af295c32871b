// Package testcli serves the tests that run the cuetrainer binary over a
// corpus of txtar files (test/badinput, test/mistakes, test/correct): the binary, built
// once per test process, and golden sections compared or rewritten.
package testcli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// Update says whether to rewrite the golden sections (UPDATE_GOLDEN=1)
// rather than compare them.
var Update = os.Getenv("UPDATE_GOLDEN") != ""

var (
	binOnce sync.Once
	bin     string
	built   bool
	binErr  error
)

// Binary is the cuetrainer command to run: $CUETRAINER_BIN (an older build,
// to compare), or one built from cmd/cuetrainer once, into a directory
// Cleanup removes. root is the repository's root, relative to the test.
func Binary(t testing.TB, root string) string {
	t.Helper()
	binOnce.Do(func() {
		if bin = os.Getenv("CUETRAINER_BIN"); bin != "" {
			return
		}
		dir, err := os.MkdirTemp("", "cuetrainer-bin")
		if err != nil {
			binErr = err
			return
		}
		bin, built = filepath.Join(dir, "cuetrainer"), true
		out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "cuetrainer")).CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("building cuetrainer: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return bin
}

// Cleanup removes the binary Binary built; TestMain calls it.
func Cleanup() {
	if built {
		os.RemoveAll(filepath.Dir(bin))
	}
}

// Run runs the binary with args in dir, and gives its standard output,
// standard error and exit code; err when it could not run. The binary's
// cache directory (--cache-dir's default: kept policy trials) is one of
// the test's own, empty: a case tries its policy, and the user's cache
// directory stays as it was.
func Run(t testing.TB, root, dir string, args ...string) (stdout, stderr string, code int, err error) {
	t.Helper()
	cmd := exec.Command(Binary(t, root), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code, err = exit.ExitCode(), nil
	}
	return out.String(), errb.String(), code, err
}

// Compare checks the golden section name of ar against got, or with
// Update sets it, and reports whether it changed (the caller writes the
// archive back then).
func Compare(t testing.TB, ar *txtar.Archive, name, got string) bool {
	t.Helper()
	for i, f := range ar.Files {
		if f.Name != name {
			continue
		}
		if string(f.Data) == got {
			return false
		}
		if Update {
			ar.Files[i].Data = []byte(got)
			return true
		}
		t.Errorf("%s differs (UPDATE_GOLDEN=1 rewrites it):\n%s", name, Diff(string(f.Data), got))
		return false
	}
	if Update {
		ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(got)})
		return true
	}
	t.Errorf("no %s section; UPDATE_GOLDEN=1 writes it:\n%s", name, got)
	return false
}

// Diff lists the lines only one side has, in order.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// WriteFiles writes the files of ar into dir, each at its name as a
// slash-separated path, but those named in skip: the sections a case
// holds for the test (its golden, its arguments, its input).
func WriteFiles(t testing.TB, ar *txtar.Archive, dir string, skip ...string) {
	t.Helper()
	for _, f := range ar.Files {
		if slices.Contains(skip, f.Name) {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// RunCases runs each txtar case of files as a parallel subtest named
// after its file: run gives what the case's command printed, compared
// with its want section (Compare), which UPDATE_GOLDEN=1 rewrites in the
// file.
func RunCases(t *testing.T, files []string, run func(t *testing.T, ar *txtar.Archive) string) {
	t.Helper()
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if Compare(t, ar, "want", run(t, ar)) {
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
