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

// TestDeployUpToDate fails when deploy/webhooks.yaml or deploy/runtimes
// differ from what the commands generate (run `make manifests`).
func TestDeployUpToDate(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "export", "webhooks")
	if code != 0 {
		t.Fatalf("export webhooks: exit %d: %s", code, stderr)
	}
	if want, _ := os.ReadFile("../../deploy/webhooks.yaml"); stdout != string(want) {
		t.Errorf("deploy/webhooks.yaml differs from what export webhooks generates (make manifests)")
	}
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, "", "runtimes", "export", "--dir", dir); code != 0 {
		t.Fatalf("runtimes export: exit %d: %s", code, stderr)
	}
	generated, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	checkedIn, _ := filepath.Glob("../../deploy/runtimes/*.yaml")
	if len(generated) == 0 || len(checkedIn) != len(generated)+1 { // + kustomization.yaml
		t.Fatalf("generated %d runtimes, %d files checked in (make manifests)", len(generated), len(checkedIn))
	}
	for _, g := range generated {
		want, _ := os.ReadFile(filepath.Join("../../deploy/runtimes", filepath.Base(g)))
		if got, _ := os.ReadFile(g); !bytes.Equal(got, want) {
			t.Errorf("deploy/runtimes/%s differs from what runtimes export generates (make manifests)", filepath.Base(g))
		}
	}
}
