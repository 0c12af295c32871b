package cuetrainer

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoFrameworkInGo keeps the Go generic: no non-test Go file under cmd/,
// engine/ or controller/ names a framework or a TrainJob step. Those live in
// the CUE.
func TestNoFrameworkInGo(t *testing.T) {
	names := regexp.MustCompile(`(?i)\b(torch|torchrun|torchtune|mpi|openmpi|deepspeed|mlx|jax|xgboost|flux|plainml|dataset-initializer|model-initializer|launcher|ancestor)\b`)
	checked := 0
	for _, dir := range []string{"cmd", "engine", "controller"} {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if os.IsNotExist(err) {
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			checked++
			for i, line := range strings.Split(string(data), "\n") {
				if m := names.FindString(line); m != "" {
					t.Errorf("%s:%d names %q: %s", p, i+1, m, strings.TrimSpace(line))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 5 {
		t.Errorf("checked %d Go files, want the engine's and the CLI's", checked)
	}
}
