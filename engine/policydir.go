package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"

	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"github.com/cuetrainer/cuetrainer/engine/internal/crd"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/lint"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// policyFile is one of an admin's CUE files, as loaded.
type policyFile struct {
	// display is the file's name as the admin knows it (relative to the
	// working directory when below it).
	display string
	file    *ast.File
}

// schemasPackage is the package an admin's files join.
const schemasPackage = "schemas"

// addPolicyDir adds every .cue file below dir, in lexical order, to the
// schemas package. Files that could read anything besides themselves are
// refused (lint.Refusals), all of a directory's at once, and so are files
// the loader would leave out or put in another package. Its YAML and JSON
// files are kept for checkManifests. An empty directory loads (a mounted
// ConfigMap the admin has yet to fill).
func (e *Engine) addPolicyDir(files map[string][]byte, i int, dir string) error {
	var refused, leftOut, problems []Problem
	err := walkPolicyDir(dir, func(f dirFile) error {
		name := source.PolicyFileName(i, filepath.ToSlash(f.rel))
		display := f.path
		if r, err := filepath.Rel(mustGetwd(), f.path); err == nil && !strings.HasPrefix(r, "..") {
			display = r
		}
		// A file given twice (a directory and its subdirectory, or one
		// directory twice) is loaded once.
		real, err := filepath.EvalSymlinks(f.path)
		if err != nil {
			real = f.path
		}
		if e.policyPaths[real] {
			return nil
		}
		e.policyPaths[real] = true
		switch {
		case f.leftOut != "":
			// Say so rather than load the directory without them.
			leftOut = append(leftOut, Problem{Check: checks.PolicyFile.Name, File: display, Message: f.leftOut})
			return nil
		case f.manifest:
			e.manifests = append(e.manifests, policyManifest{display: display, data: f.data})
			return nil
		}
		pf, err := parser.ParseFile(display, f.data, parser.ParseComments)
		if err != nil {
			problems = append(problems, e.src.CUEProblems(err)...)
			return nil
		}
		if why := lint.Refusals(pf); len(why) > 0 {
			refused = append(refused, why...)
			return nil
		}
		problems = append(problems, packageProblems(display, pf)...)
		bounds, unplaced := crd.MarkerBounds(pf)
		e.markerBounds = append(e.markerBounds, bounds...)
		problems = append(problems, unplaced...)
		files[name] = f.data
		e.src.Add(name, display, true)
		e.policyFiles[name] = &policyFile{display: display, file: pf}
		return nil
	})
	if err != nil {
		return err
	}
	if len(leftOut) > 0 {
		return loadError(leftOutSummary, leftOut)
	}
	if len(refused) > 0 {
		return loadError("policy refused: a policy is pure CUE, with no access to files, commands, the environment or the network", refused)
	}
	return loadError("the policy does not load", problems)
}

// leftOutSummary heads the files of a policy directory CUE would leave out.
const leftOutSummary = "policy refused: CUE would leave these files out of the policy, and every rule and runtime in them (to leave a file out, move it out of the policy directory)"

// leftOutBy says why CUE's loader would leave a file of a policy directory
// out of the package, by its name; "" when it would load it, or when the
// file is not CUE (a README).
func leftOutBy(name string) string {
	ext := filepath.Ext(name)
	switch {
	case ext != ".cue" && strings.EqualFold(ext, ".cue"):
		return "CUE reads only files whose names end in .cue, in lower case: rename the file"
	case ext != ".cue":
		return ""
	case strings.HasPrefix(name, "_") || strings.HasPrefix(name, "."):
		return `CUE leaves files whose names begin with "_" or "." out of a package: rename the file`
	case strings.HasSuffix(name, "_test.cue") || strings.HasSuffix(name, "_tool.cue"):
		return "CUE leaves files named *_test.cue and *_tool.cue out of a package, as go does _test.go files: rename the file"
	}
	return ""
}

// policyManifest is a YAML or JSON file of a policy directory, which CUE
// does not load (see checkManifests).
type policyManifest struct {
	display string
	data    []byte
}

// checkManifests refuses a policy directory's YAML or JSON file that holds
// an object of a kind the engine reviews (a ClusterTrainingRuntime put
// beside the policy): nothing would load it. Other YAML (a
// kustomization.yaml that makes the ConfigMap) is left alone.
func (e *Engine) checkManifests(c *compiled) error {
	var problems []Problem
	for _, m := range e.manifests {
		for _, d := range k8s.ReadYAML(m.display, m.data) {
			if d.Err != nil {
				continue
			}
			if _, ok := c.Checked[d.APIVersion()][d.Kind()]; !ok {
				continue
			}
			problems = append(problems, Problem{Check: checks.PolicyFile.Name, File: m.display, Line: d.Line,
				Message: fmt.Sprintf("%s %q (%s) would not be loaded: give the file to vet as an input or apply it to the cluster, or declare a runtime in CUE (docs/frameworks.md, \"A runtime in CUE\")", d.Kind(), d.Name(), d.APIVersion())})
		}
	}
	return loadError("policy refused: CUE loads only the .cue files of a policy directory", problems)
}

// checkBuildAttributes refuses a policy file the CUE loader left out for
// its build attributes (@if(tag), @ignore()): cuetrainer sets no tags.
func (e *Engine) checkBuildAttributes() error {
	var problems []Problem
	for _, inst := range e.instances {
		for _, f := range inst.IgnoredFiles {
			pf, ok := e.policyFiles[f.Filename]
			if !ok {
				continue
			}
			p := Problem{Check: checks.PolicyFile.Name, File: pf.display, Message: "CUE leaves the file out for its build attributes; cuetrainer sets no build tags: remove them"}
			for _, d := range pf.file.Decls {
				if attr, ok := d.(*ast.Attribute); ok && (strings.HasPrefix(attr.Text, "@if(") || strings.HasPrefix(attr.Text, "@ignore(")) {
					p.Line, p.Column = attr.Pos().Line(), attr.Pos().Column()
					p.Message = attr.Text + ": CUE leaves the file out: remove the attribute"
					if strings.HasPrefix(attr.Text, "@if(") {
						p.Message = attr.Text + ": cuetrainer sets no build tags, so CUE leaves the file out: remove the attribute"
					}
					break
				}
			}
			problems = append(problems, p)
		}
	}
	return loadError(leftOutSummary, problems)
}

// packageProblems says what is wrong with a policy file's package clause:
// a file without one is not part of any package (the loader would leave it
// out, and every rule in it), and one of another package would not join
// the schemas.
func packageProblems(display string, f *ast.File) []Problem {
	name := f.PackageName()
	switch name {
	case schemasPackage:
		return nil
	case "":
		return []Problem{{Check: checks.PolicyFile.Name, File: display, Line: 1, Column: 1,
			Message: fmt.Sprintf("the file has no package clause, so CUE would leave it out of the policy: begin it with `package %s`", schemasPackage)}}
	}
	pos := f.Pos()
	for _, d := range f.Decls {
		if pkg, ok := d.(*ast.Package); ok {
			pos = pkg.Name.Pos()
		}
	}
	return []Problem{{Check: checks.PolicyFile.Name, File: display, Line: pos.Line(), Column: pos.Column(),
		Message: fmt.Sprintf("package %s: a policy file is in package %s, which it adds to: write `package %s`", name, schemasPackage, schemasPackage)}}
}

// dirFile is a file of a policy directory: a CUE file to load, one CUE
// would leave out (leftOut says why), or a YAML or JSON file (manifest).
type dirFile struct {
	path, rel string
	data      []byte
	leftOut   string
	manifest  bool
}

// walkPolicyDir calls fn for each CUE, YAML and JSON file of a policy
// directory, in lexical order. Hidden directories are skipped (a mounted
// ConfigMap keeps its files in ..<timestamp>/ and links them from the
// top); a file CUE would leave out is reported as such (leftOutBy).
func walkPolicyDir(dir string, fn func(dirFile) error) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("policy directory: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("policy directory %s: not a directory", dir)
	}
	return filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("policy directory: %w", err)
		}
		if d.IsDir() {
			if p != abs && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".#") {
			return nil // Emacs locks a file being edited with a link named .#file
		}
		f := dirFile{path: p, leftOut: leftOutBy(d.Name())}
		switch filepath.Ext(p) {
		case ".yaml", ".yml", ".json":
			f.manifest = true
		case ".cue":
		default:
			if f.leftOut == "" {
				return nil
			}
		}
		if f.data, err = os.ReadFile(p); err != nil {
			return fmt.Errorf("policy file: %w", err)
		}
		f.rel, _ = filepath.Rel(abs, p)
		return fn(f)
	})
}

// PolicyDigest identifies the content of policy directories: it changes
// when a file the engine would load or refuse changes, appears or goes.
func PolicyDigest(dirs []string) (string, error) {
	h := sha256.New()
	for i, dir := range dirs {
		err := walkPolicyDir(dir, func(f dirFile) error {
			fmt.Fprintf(h, "%d\x00%s\x00%d\x00", i, f.rel, len(f.data))
			h.Write(f.data)
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}

// policyASTs are the admin's files, parsed, by the loader's names.
func (e *Engine) policyASTs() map[string]*ast.File {
	files := make(map[string]*ast.File, len(e.policyFiles))
	for name, f := range e.policyFiles {
		files[name] = f.file
	}
	return files
}

// lintPolicy checks the admin's files against the compiled CUE
// (internal/lint): the problems, the maps whose keys their rules read as
// data (see opaqueKeys) and the ids of the objects the renders declare
// (renderObjects).
func (e *Engine) lintPolicy(c *compiled) lint.Report {
	return lint.Run(&lint.Input{
		Program: c.Program,
		Src:     e.src, Instances: e.instances, Files: e.policyASTs(),
		MarkerFile: markerFile, MarkerBounds: e.markerBounds,
		Decl: &e.decl,
	})
}

// policyLooks are the paths of the values the admin's files look at
// (lint.Looks).
func (e *Engine) policyLooks() [][]string { return lint.Looks(e.instances, e.policyASTs()) }

// withoutPolicyReads drops from carried the entries whose values an
// admin's file looks at (policyLooks), so that its rules see the values,
// not tokens. The load's check of carried (checkCarried) reviews the
// probes with values and with tokens, and sees a rule that looks at a
// value only when a probe reaches it: `object.metadata.name =~ "^tmp-"`
// fires on no probe, and would have fired on no TrainJob, its name a
// token. A look matches an entry by its last two labels (metadata.name,
// env.*.value), so that `self.name == "BAD"` of an env item leaves the
// TrainJob's name carried; a look the syntax hides is left to
// checkCarried.
func (e *Engine) withoutPolicyReads(carried map[string]map[string][]carriedPath) {
	looks := e.policyLooks()
	if len(looks) == 0 {
		return
	}
	for apiVersion, kinds := range carried {
		for kind, paths := range kinds {
			kept := paths[:0]
			for _, p := range paths {
				if !slices.ContainsFunc(looks, func(look []string) bool { return looksAt(look, p.path) }) {
					kept = append(kept, p)
				}
			}
			carried[apiVersion][kind] = kept
		}
	}
}

// looksAt says a look's path ends as a carried path does, in its last
// two labels ("*" in the carried path stands for any).
func looksAt(look, path []string) bool {
	k := min(2, len(path))
	if len(look) < k {
		return false
	}
	for i := 1; i <= k; i++ {
		if want := path[len(path)-i]; want != "*" && look[len(look)-i] != want {
			return false
		}
	}
	return true
}
