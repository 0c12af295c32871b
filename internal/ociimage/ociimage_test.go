package ociimage

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func write(t *testing.T, dir string, bin []byte) Descriptor {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := Write(dir, Spec{Binary: path, Name: "app", Tag: "v1.2.3", OS: "linux", Arch: "arm64",
		Created: time.Unix(1700000000, 0), Labels: map[string]string{"org.opencontainers.image.version": "v1.2.3"}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestWriteRead: the layout holds the binary as the entry point, run as
// the nonroot user, with its users and home, and reads back with every
// digest checked.
func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	bin := []byte("\x7fELF not really")
	write(t, dir, bin)
	img, err := Read(dir, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	c := img.Config
	if c.Config.User != "65532:65532" || !slices.Equal(c.Config.Entrypoint, []string{"/app"}) || c.OS != "linux" || c.Architecture != "arm64" {
		t.Errorf("config: user %q, entrypoint %q, platform %s/%s", c.Config.User, c.Config.Entrypoint, c.OS, c.Architecture)
	}
	if !c.Created.Equal(time.Unix(1700000000, 0)) || c.Config.Labels["org.opencontainers.image.version"] != "v1.2.3" {
		t.Errorf("created %v, labels %v", c.Created, c.Config.Labels)
	}
	if img.Manifest.Platform == nil || img.Manifest.Platform.Architecture != "arm64" {
		t.Errorf("index platform: %+v", img.Manifest.Platform)
	}
	app := img.Files["/app"]
	if !bytes.Equal(app.Data, bin) || app.Header.Mode != 0o555 || app.Header.Uid != 0 {
		t.Errorf("/app: mode %o, uid %d, %d bytes", app.Header.Mode, app.Header.Uid, len(app.Data))
	}
	if !bytes.Contains(img.Files["/etc/passwd"].Data, []byte("nonroot:x:65532:65532:")) {
		t.Errorf("/etc/passwd: %q", img.Files["/etc/passwd"].Data)
	}
	if h := img.Files["/home/nonroot/"].Header; h.Uid != NonRoot || h.Mode != 0o700 {
		t.Errorf("/home/nonroot: uid %d, mode %o", h.Uid, h.Mode)
	}
	if h := img.Files["/tmp/"].Header; h.Mode != 0o1777 {
		t.Errorf("/tmp: mode %o", h.Mode)
	}
	if _, err := Read(dir, "latest"); err == nil {
		t.Error("read a tag the index does not name")
	}
}

// TestWriteReproducible: the same inputs give the same bytes (the image's
// digest), written again over an earlier layout; another binary, another
// digest.
func TestWriteReproducible(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	da, db := write(t, a, []byte("one")), write(t, b, []byte("one"))
	if da.Digest != db.Digest {
		t.Errorf("two builds: %s, %s", da.Digest, db.Digest)
	}
	if dc := write(t, a, []byte("two")); dc.Digest == da.Digest {
		t.Error("another binary, the same digest")
	}
	blobs, _ := os.ReadDir(filepath.Join(a, "blobs", "sha256"))
	if len(blobs) != 3 {
		t.Errorf("the layout rewritten holds %d blobs, want the new image's 3", len(blobs))
	}
}

// TestReadChecksDigests: a blob changed after the write is refused.
func TestReadChecksDigests(t *testing.T) {
	dir := t.TempDir()
	d := write(t, dir, []byte("bin"))
	path := filepath.Join(dir, "blobs", "sha256", d.Digest[len("sha256:"):])
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(data, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir, "v1.2.3"); err == nil {
		t.Error("a changed manifest read without an error")
	}
}
