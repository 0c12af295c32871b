// Package release builds what a cuetrainer release ships from deploy/:
// install.yaml, the CRDs, namespace, RBAC, controller, webhooks and the
// Kubeflow SDK's ConfigMap of deploy/kustomization.yaml in its order, the
// images tagged as its `images:` say; and runtimes.yaml, the runtimes of
// deploy/runtimes. Kubeflow Trainer's releases ship the same two files, so
// that one `kubectl apply --server-side -f install.yaml` installs it
// without kustomize. The files are the kustomizations' resources as
// written: nothing reads a cluster or the network.
package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// kustomization is the part of a kustomization.yaml the tool reads; a
// field it does not know is an error, as it would be left out.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

// Build reads deploy (a directory with kustomization.yaml and
// runtimes/kustomization.yaml) and returns install.yaml and runtimes.yaml.
// version, when given, must be the tag the kustomization gives the image.
func Build(deploy, version string) (install, runtimes []byte, err error) {
	k, err := readKustomization(deploy)
	if err != nil {
		return nil, nil, err
	}
	if len(k.Images) == 0 {
		return nil, nil, fmt.Errorf("%s/kustomization.yaml names no image", deploy)
	}
	for _, im := range k.Images {
		if im.NewTag == "" || im.NewTag == "latest" {
			return nil, nil, fmt.Errorf("%s/kustomization.yaml: image %s: a release names a version, not %q", deploy, im.Name, im.NewTag)
		}
		if version != "" && im.NewTag != version {
			return nil, nil, fmt.Errorf("%s/kustomization.yaml tags image %s %s, not the release %s", deploy, im.Name, im.NewTag, version)
		}
		version = im.NewTag
	}
	if install, err = concat(deploy, k, "install.yaml: cuetrainer "+version+"; kubectl apply --server-side -f install.yaml"); err != nil {
		return nil, nil, err
	}
	rk, err := readKustomization(filepath.Join(deploy, "runtimes"))
	if err != nil {
		return nil, nil, err
	}
	runtimes, err = concat(filepath.Join(deploy, "runtimes"), rk, "runtimes.yaml: the runtimes cuetrainer "+version+" ships; apply once the controller is ready")
	return install, runtimes, err
}

// Documents counts a built file's documents.
func Documents(data []byte) int {
	return strings.Count(string(data), "\n# Source: ")
}

func readKustomization(dir string) (kustomization, error) {
	var k kustomization
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return k, err
	}
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return k, fmt.Errorf("%s/kustomization.yaml: %w", dir, err)
	}
	return k, nil
}

// imageLine is a container's image field.
var imageLine = regexp.MustCompile(`^(\s*(?:-\s+)?image:\s*)(\S+)(\s*#.*)?$`)

// documentStart is a YAML document separator line.
var documentStart = regexp.MustCompile(`(?m)^---\s*$`)

// concat joins the kustomization's resources, one document after another,
// each headed by the file it came from, with the images retagged.
func concat(dir string, k kustomization, header string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", header)
	for _, r := range k.Resources {
		data, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			return nil, err
		}
		for _, doc := range SplitDocuments(data) {
			b.WriteString("---\n# Source: " + r + "\n")
			for _, line := range strings.SplitAfter(doc, "\n") {
				if m := imageLine.FindStringSubmatch(strings.TrimRight(line, "\n")); m != nil {
					line = m[1] + retag(k, m[2]) + "\n"
				}
				b.WriteString(line)
			}
			if !strings.HasSuffix(doc, "\n") {
				b.WriteString("\n")
			}
		}
	}
	return b.Bytes(), nil
}

// retag gives an image the name and tag the kustomization's images say.
func retag(k kustomization, image string) string {
	name := image
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		name = image[:i]
	}
	for _, im := range k.Images {
		if im.Name == name {
			if im.NewName != "" {
				name = im.NewName
			}
			return name + ":" + im.NewTag
		}
	}
	return image
}

// SplitDocuments splits a YAML stream at its "---" lines, leaving out
// documents of only comments and blank lines.
func SplitDocuments(data []byte) []string {
	var docs []string
	for _, d := range documentStart.Split(string(data), -1) {
		content := false
		for _, line := range strings.Split(d, "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				content = true
			}
		}
		if content {
			docs = append(docs, strings.TrimLeft(d, "\n"))
		}
	}
	return docs
}

// chartValues is the chart's values.yaml: the controller's image, the one
// thing a Helm user sets; everything else is install.yaml's.
const chartValues = `# The controller's image: the release's, unless you mirror it.
image:
  repository: %s
  tag: %s
`

// Chart builds the Helm chart of the release from install.yaml, as Build
// made it from deploy, and the image deploy's kustomization names:
// Chart.yaml, values.yaml, the CRDs in crds/ (Helm installs them first and
// never templates them), and every other object in templates/, with the
// controller's image from .Values.image. It returns
// the chart's files by path inside the chart directory (named cuetrainer).
func Chart(deploy string, install []byte) (map[string][]byte, error) {
	k, err := readKustomization(deploy)
	if err != nil {
		return nil, err
	}
	if len(k.Images) == 0 {
		return nil, fmt.Errorf("%s/kustomization.yaml names no image", deploy)
	}
	version := k.Images[0].NewTag
	image := k.Images[0].Name
	if k.Images[0].NewName != "" {
		image = k.Images[0].NewName
	}
	files := map[string][]byte{
		"Chart.yaml": fmt.Appendf(nil, `apiVersion: v2
name: cuetrainer
description: Kubeflow Trainer's API (trainer.kubeflow.org/v1alpha1), admitted and reconciled by CUE rules
type: application
version: %s
appVersion: %s
`, strings.TrimPrefix(version, "v"), version),
		"values.yaml": fmt.Appendf(nil, chartValues, image, version),
	}
	docs := SplitDocuments(install)
	n := 0
	for _, doc := range docs {
		source := sourceLine.FindStringSubmatch(doc)
		if source == nil {
			continue // the header
		}
		if strings.Contains(doc, "{{") {
			return nil, fmt.Errorf("%s: a document with {{ cannot be a chart template", source[1])
		}
		n++
		name := fmt.Sprintf("templates/%02d-%s", n, strings.ReplaceAll(source[1], "/", "-"))
		if crd.MatchString(doc) {
			name = fmt.Sprintf("crds/%02d-%s", n, strings.ReplaceAll(source[1], "/", "-"))
		} else {
			doc = strings.ReplaceAll(doc, "image: "+image+":"+version, "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}")
		}
		files[name] = []byte(strings.TrimLeft(doc, "\n"))
	}
	return files, nil
}

var (
	sourceLine = regexp.MustCompile(`(?m)^# Source: (\S+)$`)
	crd        = regexp.MustCompile(`(?m)^kind: CustomResourceDefinition$`)
)

// ChartArchive packs the chart's files as Helm packages a chart: a gzipped
// tar of the directory cuetrainer/, in name order, with a fixed time, so
// that the same release gives the same bytes.
func ChartArchive(files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		h := &tar.Header{Name: "cuetrainer/" + name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[name]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
