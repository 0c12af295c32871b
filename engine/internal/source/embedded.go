package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/mod/modfile"
	"cuelang.org/go/mod/module"

	"github.com/cuetrainer/cuetrainer"
)

// Root is where the embedded module is laid out for the CUE loader. It
// exists only in the loader's overlay.
const Root = "/cuetrainer"

// ModulePath is the embedded module's path (cue.mod/module.cue).
const ModulePath = "cuetrainer.dev/cuetrainer"

// GenDir holds the generated Kubernetes and JobSet packages, by their Go
// import paths: packages of the module, imported as GenPrefix + path.
// The loader also serves each under its own path from the module's
// cue.mod/gen, so that a policy may import k8s.io/api/core/v1 as CUE's
// generated packages are usually imported.
const (
	GenDir    = "schemas/gen"
	GenPrefix = ModulePath + "/" + GenDir + "/"
)

// Embedded adds cuetrainer's own CUE to files, by the loader's names
// under Root, and names each in src (by its path in the repository; not
// an admin's): the generated packages twice, by the module's path and
// their own (GenDir).
func Embedded(files map[string][]byte, src *Files) error {
	err := fs.WalkDir(cuetrainer.CUE, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(cuetrainer.CUE, p)
		if err != nil {
			return err
		}
		name := path.Join(Root, p)
		files[name] = data
		src.Add(name, p, false)
		if rest, ok := strings.CutPrefix(p, GenDir+"/"); ok {
			// The same package by its own import path (GenDir).
			legacy := path.Join(Root, "cue.mod/gen", rest)
			files[legacy] = data
			src.Add(legacy, p, false)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the embedded CUE: %w", err)
	}
	return nil
}

// Instances loads packages from files, by absolute name under Root, with
// a registry that fetches no module (the embedded module has no
// dependencies; without it cue/load would go to $CUE_REGISTRY or
// registry.cue.works). cue/load's Overlay falls back to the host's files
// for names it does not hold; its FS option would not, but in v0.17.1 it
// cannot resolve cue.mod/gen imports (see GenDir).
func Instances(files map[string][]byte, pkgs ...string) []*build.Instance {
	overlay := map[string]load.Source{}
	for name, data := range files {
		overlay[name] = load.FromBytes(data)
	}
	return load.Instances(pkgs, &load.Config{Dir: Root, ModuleRoot: Root, Overlay: overlay, Registry: noRegistry{}})
}

// noRegistry is the module registry of the engine's loader: the embedded
// module has no dependencies, so nothing may be fetched.
type noRegistry struct{}

var errNoRegistry = errors.New("cuetrainer fetches no CUE modules")

func (noRegistry) ModFile(context.Context, module.Version) (*modfile.File, error) {
	return nil, errNoRegistry
}

func (noRegistry) Fetch(context.Context, module.Version) (module.SourceLoc, error) {
	return module.SourceLoc{}, errNoRegistry
}

func (noRegistry) ModuleVersions(context.Context, string) ([]string, error) {
	return nil, errNoRegistry
}

// PolicyFileName is the loader's name of a file of the i-th policy
// directory, at rel below it: the directory's files join the schemas
// package, after cuetrainer's own (zz sorts last), each directory's in
// its own range of names.
func PolicyFileName(i int, rel string) string {
	flat := strings.ReplaceAll(rel, "/", "--")
	return path.Join(Root, "schemas", fmt.Sprintf("zz-policy%d--%s", i, flat))
}

// PolicyDirOf is the index of the policy directory whose file the loader
// name is (PolicyFileName), false for a file of none.
func PolicyDirOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(path.Base(name), "zz-policy")
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "--")
	i, err := strconv.Atoi(digits)
	return i, ok && err == nil
}
