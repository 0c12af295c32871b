package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCRDsUpToDate fails when deploy/crds differs from what `export crds`
// generates from the CUE (run `make manifests`).
func TestCRDsUpToDate(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, "", "export", "crds", "--dir", dir); code != 0 {
		t.Fatalf("export crds: exit %d: %s", code, stderr)
	}
	generated, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	checkedIn, _ := filepath.Glob("../../deploy/crds/*.yaml")
	if len(generated) != 3 || len(checkedIn) != len(generated) {
		t.Fatalf("generated %d CRDs, %d checked in; want 3 each (make manifests)", len(generated), len(checkedIn))
	}
	for _, g := range generated {
		want, err := os.ReadFile(filepath.Join("../../deploy/crds", filepath.Base(g)))
		if err != nil {
			t.Errorf("%s is not checked in (make manifests)", filepath.Base(g))
			continue
		}
		got, _ := os.ReadFile(g)
		if !bytes.Equal(got, want) {
			t.Errorf("deploy/crds/%s differs from what export crds generates (make manifests)", filepath.Base(g))
		}
	}
}
