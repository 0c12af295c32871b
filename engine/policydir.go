package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
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
// refused (checkPolicy), all of a directory's at once, and so are files
// the loader would leave out or put in another package.
func (e *Engine) addPolicyDir(files map[string][]byte, i int, dir string) error {
	var refused, leftOut, problems []Problem
	err := walkPolicyDir(dir, func(p, rel string, data []byte) error {
		flat := strings.ReplaceAll(filepath.ToSlash(rel), "/", "--")
		name := path.Join(root, "schemas", fmt.Sprintf("zz-policy%d--%s", i, flat))
		display := p
		if r, err := filepath.Rel(mustGetwd(), p); err == nil && !strings.HasPrefix(r, "..") {
			display = r
		}
		// CUE's loader leaves these out of a package, as go does _test.go
		// files: say so rather than load the directory without them.
		if strings.HasSuffix(p, "_test.cue") || strings.HasSuffix(p, "_tool.cue") {
			leftOut = append(leftOut, Problem{File: display})
			return nil
		}
		f, err := parser.ParseFile(display, data, parser.ParseComments)
		if err != nil {
			problems = append(problems, e.cueProblems(err)...)
			return nil
		}
		if why := checkPolicy(f); len(why) > 0 {
			refused = append(refused, why...)
			return nil
		}
		problems = append(problems, packageProblems(display, f)...)
		bounds, unplaced := markerBounds(f)
		e.markerBounds = append(e.markerBounds, bounds...)
		problems = append(problems, unplaced...)
		files[name] = data
		e.files[name] = display
		e.policyFiles[name] = &policyFile{display: display, file: f}
		return nil
	})
	if err != nil {
		return err
	}
	if len(leftOut) > 0 {
		return loadError("policy refused: CUE leaves files named *_test.cue and *_tool.cue out of a package, so these would not be loaded; rename them (say, to .cue) or move them out of the policy directory", leftOut)
	}
	if len(refused) > 0 {
		return loadError("policy refused: a policy is pure CUE, with no access to files, commands, the environment or the network", refused)
	}
	return loadError("the policy does not load", problems)
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
		return []Problem{{File: display, Line: 1, Column: 1,
			Message: fmt.Sprintf("the file has no package clause, so CUE would leave it out of the policy: begin it with `package %s`", schemasPackage)}}
	}
	pos := f.Pos()
	for _, d := range f.Decls {
		if pkg, ok := d.(*ast.Package); ok {
			pos = pkg.Name.Pos()
		}
	}
	return []Problem{{File: display, Line: pos.Line(), Column: pos.Column(),
		Message: fmt.Sprintf("package %s: a policy file is in package %s, which it adds to: write `package %s`", name, schemasPackage, schemasPackage)}}
}

// walkPolicyDir calls fn for each CUE file of a policy directory, in lexical
// order. Hidden files and directories are skipped (a mounted ConfigMap keeps
// its files in ..<timestamp>/ and links them from the top), and files
// starting with _, as cue does.
func walkPolicyDir(dir string, fn func(p, rel string, data []byte) error) error {
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
		if filepath.Ext(p) != ".cue" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("policy file: %w", err)
		}
		rel, _ := filepath.Rel(abs, p)
		return fn(p, rel, data)
	})
}

// PolicyDigest identifies the content of policy directories: it changes
// when a file the engine would load changes, appears or goes.
func PolicyDigest(dirs []string) (string, error) {
	h := sha256.New()
	for i, dir := range dirs {
		err := walkPolicyDir(dir, func(_, rel string, data []byte) error {
			fmt.Fprintf(h, "%d\x00%s\x00%d\x00", i, rel, len(data))
			h.Write(data)
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
