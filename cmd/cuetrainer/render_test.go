package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRenderCorpus runs `cuetrainer render -f CASE/input.yaml` on every
// case: the objects on standard output equal expected.yaml by the corpus's
// rules; a rejection exits 1 with its errors and prints no object.
func TestRenderCorpus(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(corpus, "cases", "*"))
	rendered := 0
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", "render", "-f", filepath.Join(dir, "input.yaml"))
			want, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
			if os.IsNotExist(err) {
				if code != 1 || stdout != "" || stderr == "" {
					t.Errorf("rejection: exit %d, stdout %q, stderr %q", code, stdout, stderr)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			for _, d := range diffYAML(t, want, []byte(stdout)) {
				t.Error(d)
			}
			if !t.Failed() {
				rendered++
			}
		})
	}
	if rendered < 31 {
		t.Errorf("%d rendered cases equal Kubeflow's objects, want 31", rendered)
	}
}

// TestRenderTwice: two renders of the same input give the same objects,
// but for the generated SSH keys.
func TestRenderTwice(t *testing.T) {
	input := filepath.Join(corpus, "cases", "28-deepspeed-shipped-minimal", "input.yaml")
	var outs []map[string]any
	for i := 0; i < 2; i++ {
		code, stdout, stderr := runCLI(t, "", "render", "-o", "json", "-f", input)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var list map[string]any
		if err := json.Unmarshal([]byte(stdout), &list); err != nil {
			t.Fatal(err)
		}
		if list["kind"] != "List" {
			t.Fatalf("-o json gives %v, want a List", list["kind"])
		}
		outs = append(outs, list)
	}
	keys := func(list map[string]any) map[string]any {
		for _, item := range list["items"].([]any) {
			obj := item.(map[string]any)
			if obj["kind"] == "Secret" {
				data := obj["data"].(map[string]any)
				for k := range data {
					if data[k] == "" {
						t.Errorf("generated %s is empty", k)
					}
				}
				delete(obj, "data")
				return data
			}
		}
		t.Fatal("no Secret rendered")
		return nil
	}
	k0, k1 := keys(outs[0]), keys(outs[1])
	if reflect.DeepEqual(k0, k1) {
		t.Error("two renders generated the same SSH keys")
	}
	if !reflect.DeepEqual(outs[0], outs[1]) {
		t.Error("two renders of the same input differ beyond the SSH keys")
	}
	priv := k0["ssh-privatekey"].(string)
	if !strings.HasPrefix(priv, "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t") { // base64 of "-----BEGIN EC PRIVATE KEY-----"
		t.Errorf("private key is not a PEM EC PRIVATE KEY: %.40s", priv)
	}
}

// TestRenderRuntimeShape: --runtime renders a runtime with a default TrainJob.
func TestRenderRuntimeShape(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "render", "--runtime", "deepspeed-distributed")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kind: JobSet", "name: example-mpi-hostfile", "example-node-0-0.example slots=1", "kind: Secret", "name: example-runtime-snapshot"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if code, _, stderr := runCLI(t, "", "render", "--runtime", "nope"); code != 1 || !strings.Contains(stderr, `clustertrainingruntimes.trainer.kubeflow.org "nope" not found`) {
		t.Errorf("unknown runtime: exit %d: %s", code, stderr)
	}
}
