// Package ociimage writes a container image as an OCI image layout (the
// directory format of the OCI image spec, v1.1): one layer holding a
// static binary and the files a non-root process expects, on no base
// image, as ko and distroless's static image do. It needs no registry, no
// daemon and no network, and the same inputs give the same bytes, so an
// image can be built and checked offline and pushed later (`skopeo copy
// oci:DIR:TAG docker://REPO:TAG`, `crane push DIR REPO:TAG`).
package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Media types of the OCI image spec.
const (
	MediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	MediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	MediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"

	// AnnotationRefName names a manifest of an index (its tag).
	AnnotationRefName = "org.opencontainers.image.ref.name"
)

// NonRoot is the user the image runs as: distroless's nonroot, 65532.
const NonRoot = 65532

// Spec is what goes into the image.
type Spec struct {
	// Binary is the path of the static executable; Name is its path in the
	// image (/NAME), and the entry point.
	Binary string
	Name   string
	// Tag names the image in the layout's index.
	Tag string
	// OS and Arch are the platform the binary is built for.
	OS, Arch string
	// Created is the time the image says it was made (SOURCE_DATE_EPOCH):
	// a fixed time makes the build reproducible.
	Created time.Time
	// Labels are the image's labels (org.opencontainers.image.*).
	Labels map[string]string
}

// Descriptor points at a blob.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *Platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Platform is a descriptor's os and architecture.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// Index is index.json.
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// Manifest is an image manifest.
type Manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// Config is the image configuration.
type Config struct {
	Created      time.Time `json:"created"`
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		WorkingDir string            `json:"WorkingDir"`
		Env        []string          `json:"Env"`
		Labels     map[string]string `json:"Labels,omitempty"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
	History []struct {
		Created   time.Time `json:"created"`
		CreatedBy string    `json:"created_by"`
	} `json:"history"`
}

// Write writes the image as an OCI image layout in dir (created, or
// emptied of an earlier layout's files) and returns the manifest's
// descriptor as the index lists it.
func Write(dir string, s Spec) (Descriptor, error) {
	bin, err := os.ReadFile(s.Binary)
	if err != nil {
		return Descriptor{}, err
	}
	if s.Name == "" || filepath.Base(s.Name) != s.Name {
		return Descriptor{}, fmt.Errorf("binary name %q: must be a plain file name", s.Name)
	}
	created := s.Created.UTC()
	layer, diffID, err := rootFS(s.Name, bin, created)
	if err != nil {
		return Descriptor{}, err
	}
	if err := os.RemoveAll(filepath.Join(dir, "blobs")); err != nil {
		return Descriptor{}, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755); err != nil {
		return Descriptor{}, err
	}
	layerDesc, err := writeBlob(dir, MediaTypeLayer, layer)
	if err != nil {
		return Descriptor{}, err
	}

	var cfg Config
	cfg.Created, cfg.Architecture, cfg.OS = created, s.Arch, s.OS
	cfg.Config.User = fmt.Sprintf("%d:%d", NonRoot, NonRoot)
	cfg.Config.Entrypoint = []string{"/" + s.Name}
	cfg.Config.WorkingDir = "/home/nonroot"
	cfg.Config.Env = []string{"HOME=/home/nonroot", "PATH=/"}
	cfg.Config.Labels = s.Labels
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{diffID}
	cfg.History = append(cfg.History, struct {
		Created   time.Time `json:"created"`
		CreatedBy string    `json:"created_by"`
	}{created, "ociimage: /" + s.Name + ", /etc/passwd, /etc/group, /home/nonroot, /tmp"})
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return Descriptor{}, err
	}
	cfgDesc, err := writeBlob(dir, MediaTypeConfig, cfgJSON)
	if err != nil {
		return Descriptor{}, err
	}

	manifest, err := json.Marshal(Manifest{SchemaVersion: 2, MediaType: MediaTypeManifest, Config: cfgDesc, Layers: []Descriptor{layerDesc}})
	if err != nil {
		return Descriptor{}, err
	}
	desc, err := writeBlob(dir, MediaTypeManifest, manifest)
	if err != nil {
		return Descriptor{}, err
	}
	desc.Platform = &Platform{Architecture: s.Arch, OS: s.OS}
	desc.Annotations = map[string]string{AnnotationRefName: s.Tag}
	index, err := json.Marshal(Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{desc}})
	if err != nil {
		return Descriptor{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), index, 0o644); err != nil {
		return Descriptor{}, err
	}
	return desc, os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644)
}

// rootFS is the image's one layer, gzipped, and the digest of the tar
// (its diff ID): the binary, and the users, home and /tmp a non-root
// process expects. Every entry has the same time and a fixed owner.
func rootFS(name string, bin []byte, created time.Time) (gz []byte, diffID string, err error) {
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	type entry struct {
		name     string
		mode     int64
		uid      int
		data     []byte
		typeflag byte
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRoot, NonRoot)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRoot)
	for _, e := range []entry{
		{name: "etc/", mode: 0o755, typeflag: tar.TypeDir},
		{name: "etc/group", mode: 0o644, data: []byte(group), typeflag: tar.TypeReg},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd), typeflag: tar.TypeReg},
		{name: "home/", mode: 0o755, typeflag: tar.TypeDir},
		{name: "home/nonroot/", mode: 0o700, uid: NonRoot, typeflag: tar.TypeDir},
		{name: "tmp/", mode: 0o1777, typeflag: tar.TypeDir},
		{name: name, mode: 0o555, data: bin, typeflag: tar.TypeReg},
	} {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, Size: int64(len(e.data)),
			Typeflag: e.typeflag, ModTime: created, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, "", err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(tarBuf.Bytes())
	var gzBuf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gzBuf, gzip.BestCompression)
	if err != nil {
		return nil, "", err
	}
	// No name and no time in the gzip header: the same tar, the same bytes.
	if _, err := zw.Write(tarBuf.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return gzBuf.Bytes(), "sha256:" + hex.EncodeToString(sum[:]), nil
}

// writeBlob stores data under blobs/sha256/ by its digest.
func writeBlob(dir, mediaType string, data []byte) (Descriptor, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	if err := os.WriteFile(filepath.Join(dir, "blobs", "sha256", h), data, 0o644); err != nil {
		return Descriptor{}, err
	}
	return Descriptor{MediaType: mediaType, Digest: "sha256:" + h, Size: int64(len(data))}, nil
}

// Image is an image read back from a layout: its config and the files of
// its layers, by path (a later layer's file wins).
type Image struct {
	Manifest Descriptor
	Config   Config
	Files    map[string]File
}

// File is one entry of a layer.
type File struct {
	Header tar.Header
	Data   []byte
}

// Read reads the image a layout's index names tag, checking what a
// registry or runtime would: the layout version, every blob's digest and
// size, the media types, and that the config's diff IDs are the digests of
// the uncompressed layers.
func Read(dir, tag string) (*Image, error) {
	layout, err := os.ReadFile(filepath.Join(dir, "oci-layout"))
	if err != nil {
		return nil, err
	}
	var l struct {
		Version string `json:"imageLayoutVersion"`
	}
	if err := json.Unmarshal(layout, &l); err != nil || l.Version != "1.0.0" {
		return nil, fmt.Errorf("oci-layout %s: not image layout 1.0.0 (%v)", layout, err)
	}
	var index Index
	if err := readJSON(filepath.Join(dir, "index.json"), &index); err != nil {
		return nil, err
	}
	if index.SchemaVersion != 2 || index.MediaType != MediaTypeIndex {
		return nil, fmt.Errorf("index.json: schemaVersion %d, mediaType %q", index.SchemaVersion, index.MediaType)
	}
	img := &Image{Files: map[string]File{}}
	found := false
	for _, d := range index.Manifests {
		if d.Annotations[AnnotationRefName] == tag {
			img.Manifest, found = d, true
		}
	}
	if !found {
		return nil, fmt.Errorf("index.json names no image %q", tag)
	}
	var m Manifest
	if err := readBlobJSON(dir, img.Manifest, MediaTypeManifest, &m); err != nil {
		return nil, err
	}
	if err := readBlobJSON(dir, m.Config, MediaTypeConfig, &img.Config); err != nil {
		return nil, err
	}
	if len(m.Layers) != len(img.Config.RootFS.DiffIDs) {
		return nil, fmt.Errorf("%d layers, %d diff IDs", len(m.Layers), len(img.Config.RootFS.DiffIDs))
	}
	for i, ld := range m.Layers {
		gz, err := readBlob(dir, ld, MediaTypeLayer)
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		var tarBytes bytes.Buffer
		if _, err := tarBytes.ReadFrom(zr); err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		sum := sha256.Sum256(tarBytes.Bytes())
		if id := "sha256:" + hex.EncodeToString(sum[:]); id != img.Config.RootFS.DiffIDs[i] {
			return nil, fmt.Errorf("layer %d: diff ID %s, the config says %s", i, id, img.Config.RootFS.DiffIDs[i])
		}
		tr := tar.NewReader(&tarBytes)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("layer %d: %w", i, err)
			}
			var data bytes.Buffer
			if _, err := data.ReadFrom(tr); err != nil {
				return nil, fmt.Errorf("layer %d: %s: %w", i, h.Name, err)
			}
			img.Files["/"+h.Name] = File{Header: *h, Data: data.Bytes()}
		}
	}
	return img, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// readBlob reads a descriptor's blob, checking its media type, size and
// digest.
func readBlob(dir string, d Descriptor, mediaType string) ([]byte, error) {
	if d.MediaType != mediaType {
		return nil, fmt.Errorf("blob %s: media type %q, want %q", d.Digest, d.MediaType, mediaType)
	}
	hexDigest, ok := strings.CutPrefix(d.Digest, "sha256:")
	if !ok || len(hexDigest) != 64 {
		return nil, fmt.Errorf("digest %q: not sha256", d.Digest)
	}
	data, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", hexDigest))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != hexDigest || int64(len(data)) != d.Size {
		return nil, fmt.Errorf("blob %s: %d bytes of digest sha256:%x, the descriptor says %d", d.Digest, len(data), sum, d.Size)
	}
	return data, nil
}

func readBlobJSON(dir string, d Descriptor, mediaType string, v any) error {
	data, err := readBlob(dir, d, mediaType)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
