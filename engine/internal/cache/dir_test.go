package cache

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDir: what is put is got, from a file of its own; a key never put is
// a miss; past max the oldest files go, and half-written ones are never
// seen.
func TestDir(t *testing.T) {
	d := NewDir(filepath.Join(t.TempDir(), "kept"), 3)
	if _, ok := d.Get("absent"); ok {
		t.Error("a key never put is got")
	}
	old := time.Now().Add(-time.Hour)
	for i := range 5 {
		key := fmt.Sprintf("k%d", i)
		d.Put(key, []byte(key+" data"))
		// Older first: k0 an hour ago, k1 a minute later, …
		at := old.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(d.Path(), key), at, at); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		key := fmt.Sprintf("k%d", i)
		data, ok := d.Get(key)
		switch want := i >= 2; {
		case ok != want:
			t.Errorf("%s kept %v, want %v (3 kept, the oldest dropped: k0 when k3 came, k1 when k4 did)", key, ok, want)
		case ok && string(data) != key+" data":
			t.Errorf("%s: %q", key, data)
		}
	}
	// Trimmed at each Put, to max: k0 at k3's, k1 at k4's.
	entries, _ := os.ReadDir(d.Path())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "k2 k3 k4" {
		t.Errorf("files %v, want k2 k3 k4", names)
	}
}

// TestExecutableID: the running binary's build ID is what `go tool
// buildid` reads; a binary that is not ELF has it at the start of its
// text, in the linker's marker.
func TestExecutableID(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Fatalf("go tool buildid: %v", err)
	}
	if got, want := ExecutableID(), strings.TrimSpace(string(out)); got != want || got == "" {
		t.Errorf("ExecutableID() = %q, want %q", got, want)
	}
	other := filepath.Join(t.TempDir(), "macho")
	if err := os.WriteFile(other, []byte("\xcf\xfa\xed\xfe some header \xff Go build ID: \"abc/def\"\n \xff rest"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readBuildID(other); got != "abc/def" {
		t.Errorf("readBuildID of a non-ELF binary: %q, want abc/def", got)
	}
	if err := os.WriteFile(other, []byte("no marker"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readBuildID(other); got != "" {
		t.Errorf("readBuildID of a file without one: %q, want none", got)
	}
}
