package source

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
)

// TestLoaderFetchesNoModule: the engine's loader never asks a module
// registry, whatever $CUE_REGISTRY says; the same load with cue/load's
// default registry does ask it.
func TestLoaderFetchesNoModule(t *testing.T) {
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	t.Setenv("CUE_REGISTRY", strings.TrimPrefix(srv.URL, "http://")+"+insecure")
	t.Setenv("CUE_CACHE_DIR", t.TempDir())

	files := map[string][]byte{
		Root + "/cue.mod/module.cue": []byte("module: \"test.example/m@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"example.com/dep@v0\": v: \"v0.0.1\"\n"),
		Root + "/x/x.cue":            []byte("package x\n\nimport \"example.com/dep@v0\"\n\ny: dep.y\n"),
	}
	insts := Instances(files, "./x")
	if insts[0].Err == nil {
		t.Fatal("a package from a registry was loaded")
	}
	if !strings.Contains(errors.Details(insts[0].Err, nil), "cuetrainer fetches no CUE modules") {
		t.Errorf("the load failed otherwise: %v", errors.Details(insts[0].Err, nil))
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the registry was asked %d times", n)
	}

	// The control: the same files with cue/load's default registry.
	overlay := map[string]load.Source{}
	for name, data := range files {
		overlay[name] = load.FromBytes(data)
	}
	load.Instances([]string{"./x"}, &load.Config{Dir: Root, ModuleRoot: Root, Overlay: overlay})
	if asked.Load() == 0 {
		t.Error("the default registry was not asked either: this test shows nothing")
	}
}
