// Package release_test builds what a release ships the way a maintainer
// does, `make image release`, offline, and checks it: the image's layout,
// entry point, user and binary, and install.yaml and runtimes.yaml.
package release_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/internal/ociimage"
	"github.com/cuetrainer/cuetrainer/internal/release"
)

const repo = "../.."

// version is the release deploy/kustomization.yaml tags the image with.
func version(t *testing.T) string {
	data, err := os.ReadFile(filepath.Join(repo, "deploy", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*newTag:\s*(v\d+\.\d+\.\d+)\s*$`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("deploy/kustomization.yaml tags no image with a release vX.Y.Z:\n%s", data)
	}
	return string(m[1])
}

// TestMakeImageAndRelease runs `make image release` into a temporary
// directory and checks both.
func TestMakeImageAndRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a static binary")
	}
	out := t.TempDir()
	cmd := exec.Command("make", "-s", "image", "release", "IMAGE_DIR="+out+"/image", "RELEASE_DIR="+out+"/release")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1700000000")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make image release: %v\n%s", err, b)
	}
	v := version(t)
	t.Run("image", func(t *testing.T) { checkImage(t, filepath.Join(out, "image"), v) })
	t.Run("release", func(t *testing.T) { checkRelease(t, filepath.Join(out, "release"), v) })
	t.Run("chart", func(t *testing.T) { checkChart(t, filepath.Join(out, "release"), v) })
}

func checkImage(t *testing.T, dir, v string) {
	img, err := ociimage.Read(dir, v)
	if err != nil {
		t.Fatal(err)
	}
	c := img.Config
	if c.Config.User != "65532:65532" || !slices.Equal(c.Config.Entrypoint, []string{"/cuetrainer"}) {
		t.Errorf("user %q, entry point %q; want 65532:65532, [/cuetrainer]", c.Config.User, c.Config.Entrypoint)
	}
	if c.OS != "linux" || c.Architecture != runtime.GOARCH || c.Config.Labels["org.opencontainers.image.version"] != v {
		t.Errorf("platform %s/%s, labels %v", c.OS, c.Architecture, c.Config.Labels)
	}
	if c.Created.Unix() != 1700000000 {
		t.Errorf("created %v, want SOURCE_DATE_EPOCH", c.Created)
	}
	bin := img.Files["/cuetrainer"]
	if bin.Header.Mode != 0o555 || len(bin.Data) == 0 {
		t.Fatalf("/cuetrainer: mode %o, %d bytes", bin.Header.Mode, len(bin.Data))
	}
	// Static: no program interpreter, so it runs on no base image.
	f, err := elf.NewFile(bytes.NewReader(bin.Data))
	if err != nil {
		t.Fatalf("/cuetrainer is no ELF binary: %v", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("/cuetrainer is dynamically linked (it has a PT_INTERP)")
		}
	}
	if runtime.GOOS != "linux" {
		return
	}
	path := filepath.Join(t.TempDir(), "cuetrainer")
	if err := os.WriteFile(path, bin.Data, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(path, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(got), "cuetrainer "+v+"\n") {
		t.Errorf("/cuetrainer version: %v\n%s", err, got)
	}
	// deploy/Dockerfile builds the same shape for a container builder.
	docker, err := os.ReadFile(filepath.Join(repo, "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"FROM gcr.io/distroless/static-debian12:nonroot", "USER 65532:65532", `ENTRYPOINT ["/cuetrainer"]`, "CGO_ENABLED=0"} {
		if !bytes.Contains(docker, []byte(line)) {
			t.Errorf("deploy/Dockerfile lacks %q", line)
		}
	}
}

// objects reads a release file's documents.
func objects(t *testing.T, path string) []*unstructured.Unstructured {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range release.SplitDocuments(data) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
			t.Errorf("%s: a document that is no object: %v", path, u.Object)
		}
		objs = append(objs, u)
	}
	return objs
}

func checkRelease(t *testing.T, dir, v string) {
	install := objects(t, filepath.Join(dir, "install.yaml"))
	var names []string
	for _, o := range install {
		names = append(names, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	for _, want := range []string{
		"Namespace /cuetrainer-system",
		"CustomResourceDefinition /clustertrainingruntimes.trainer.kubeflow.org",
		"CustomResourceDefinition /trainingruntimes.trainer.kubeflow.org",
		"CustomResourceDefinition /trainjobs.trainer.kubeflow.org",
		"ServiceAccount cuetrainer-system/cuetrainer-controller",
		"Deployment cuetrainer-system/cuetrainer-controller",
		"Service cuetrainer-system/cuetrainer-webhook",
		"ValidatingWebhookConfiguration /cuetrainer-validator",
		"MutatingWebhookConfiguration /cuetrainer-defaulter",
		// What the Kubeflow SDK reads on every TrainerClient().
		"ConfigMap kubeflow-system/kubeflow-trainer-public",
		"RoleBinding kubeflow-system/kubeflow-trainer-public",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("install.yaml lacks %s; it has:\n%s", want, strings.Join(names, "\n"))
		}
	}
	for _, o := range install {
		switch o.GetKind() {
		case "Deployment":
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				if image := c.(map[string]any)["image"]; image != "ghcr.io/cuetrainer/cuetrainer:"+v {
					t.Errorf("the controller's image is %v, want the release's ghcr.io/cuetrainer/cuetrainer:%s", image, v)
				}
			}
		case "ConfigMap":
			if got, _, _ := unstructured.NestedString(o.Object, "data", "kubeflow_trainer_version"); got != "v2.3.0" {
				t.Errorf("kubeflow-trainer-public says version %q, want the Kubeflow Trainer API served, v2.3.0", got)
			}
		}
	}

	// deploy/manager.yaml applied alone names the release too, not a tag
	// nothing builds.
	manager, err := os.ReadFile(filepath.Join(repo, "deploy", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(manager, []byte("image: ghcr.io/cuetrainer/cuetrainer:"+v+" ")) {
		t.Errorf("deploy/manager.yaml does not name the image ghcr.io/cuetrainer/cuetrainer:%s", v)
	}

	runtimes := objects(t, filepath.Join(dir, "runtimes.yaml"))
	shipped, _ := filepath.Glob(filepath.Join(repo, "deploy", "runtimes", "*-*.yaml"))
	if len(runtimes) != len(shipped) || len(runtimes) != 9 {
		t.Errorf("runtimes.yaml holds %d objects, deploy/runtimes %d files; want 9", len(runtimes), len(shipped))
	}
	for _, o := range runtimes {
		if o.GetKind() != "ClusterTrainingRuntime" {
			t.Errorf("runtimes.yaml holds a %s", o.GetKind())
		}
	}
}

// checkChart renders the Helm chart of the release with text/template, the
// engine Helm renders templates with, and Helm's built-in objects (the
// templates use no other function): with its default values it is
// install.yaml, the CRDs in crds/; with another image tag, that image.
func checkChart(t *testing.T, dir, v string) {
	f, err := os.Open(filepath.Join(dir, "cuetrainer-chart.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		name, ok := strings.CutPrefix(h.Name, "cuetrainer/")
		if !ok {
			t.Fatalf("%s is outside the chart's directory cuetrainer/", h.Name)
		}
		files[name] = data
	}
	var chart struct {
		APIVersion, Name, Version, AppVersion string
	}
	if err := yaml.Unmarshal(files["Chart.yaml"], &chart); err != nil {
		t.Fatal(err)
	}
	if chart.APIVersion != "v2" || chart.Name != "cuetrainer" || chart.AppVersion != v || "v"+chart.Version != v {
		t.Errorf("Chart.yaml: %+v", chart)
	}
	var values map[string]any
	if err := yaml.Unmarshal(files["values.yaml"], &values); err != nil {
		t.Fatal(err)
	}
	render := func(values map[string]any) string {
		var out strings.Builder
		names := make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if strings.HasPrefix(name, "crds/") {
				out.WriteString("---\n" + string(files[name]))
				continue
			}
			if !strings.HasPrefix(name, "templates/") {
				continue
			}
			tmpl, err := template.New(name).Option("missingkey=error").Parse(string(files[name]))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out.WriteString("---\n")
			if err := tmpl.Execute(&out, map[string]any{
				"Values": values, "Chart": chart,
				"Release": map[string]any{"Name": "cuetrainer", "Namespace": "default", "Service": "Helm"},
			}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		return out.String()
	}
	key := func(objs []*unstructured.Unstructured) map[string]string {
		m := map[string]string{}
		for _, o := range objs {
			b, _ := json.Marshal(o.Object)
			m[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = string(b)
		}
		return m
	}
	rendered := filepath.Join(t.TempDir(), "rendered.yaml")
	if err := os.WriteFile(rendered, []byte(render(values)), 0o644); err != nil {
		t.Fatal(err)
	}
	got, want := key(objects(t, rendered)), key(objects(t, filepath.Join(dir, "install.yaml")))
	if len(got) != len(want) {
		t.Errorf("the chart renders %d objects, install.yaml has %d", len(got), len(want))
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("the chart renders %s otherwise than install.yaml", id)
		}
	}
	values["image"].(map[string]any)["tag"] = "v9.9.9"
	if !strings.Contains(render(values), "image: ghcr.io/cuetrainer/cuetrainer:v9.9.9\n") {
		t.Error("--set image.tag=v9.9.9 does not reach the controller's image")
	}
}
