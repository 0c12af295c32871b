package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/crd"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
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
// the loader would leave out or put in another package. Its YAML and JSON
// files are kept for checkManifests. An empty directory loads (a mounted
// ConfigMap the admin has yet to fill).
func (e *Engine) addPolicyDir(files map[string][]byte, i int, dir string) error {
	var refused, leftOut, problems []Problem
	err := walkPolicyDir(dir, func(f dirFile) error {
		flat := strings.ReplaceAll(filepath.ToSlash(f.rel), "/", "--")
		name := path.Join(root, "schemas", fmt.Sprintf("zz-policy%d--%s", i, flat))
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
			leftOut = append(leftOut, Problem{File: display, Message: f.leftOut})
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
		if why := checkPolicy(pf); len(why) > 0 {
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
			if _, ok := c.checked[d.APIVersion()][d.Kind()]; !ok {
				continue
			}
			problems = append(problems, Problem{File: m.display, Line: d.Line,
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
			p := Problem{File: pf.display, Message: "CUE leaves the file out for its build attributes; cuetrainer sets no build tags: remove them"}
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

// policyCRDKinds are the kinds whose CRD checks (crdChecks' crd rules)
// or CRD check parts a policy file declares, by apiVersion and kind.
func (e *Engine) policyCRDKinds(checks, parts map[string]map[string]cue.Value) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	mark := func(apiVersion, kind string, v cue.Value) {
		it, err := v.Fields()
		if err != nil {
			return
		}
		for it.Next() {
			if e.fromPolicy(it.Value()) {
				if out[apiVersion] == nil {
					out[apiVersion] = map[string]bool{}
				}
				out[apiVersion][kind] = true
				return
			}
		}
	}
	for apiVersion, kinds := range checks {
		for kind, v := range kinds {
			mark(apiVersion, kind, v.LookupPath(cue.MakePath(cue.Str(string(contract.PhaseCRD)))))
		}
	}
	for apiVersion, kinds := range parts {
		for kind, v := range kinds {
			mark(apiVersion, kind, v)
		}
	}
	return out
}

// fromPolicy says whether a policy file writes (some of) v.
func (e *Engine) fromPolicy(v cue.Value) bool {
	op, args := v.Expr()
	if op != cue.AndOp {
		args = []cue.Value{v}
	}
	for _, a := range args {
		if e.src.IsPolicyFile(a.Pos().Filename()) {
			return true
		}
	}
	return false
}

// cueFiles are the syntax of every file the engine compiles: its own
// schemas and runtimes and the policy directories' files, which the
// loader parses into the same instances.
func (e *Engine) cueFiles() []*ast.File {
	var files []*ast.File
	for _, inst := range e.instances {
		files = append(files, inst.Files...)
	}
	return files
}

// policyLooks are the paths of the values an admin's files look at: read
// in a comparison, a pattern, a call (`strings.HasPrefix`, `len`), an
// index or a unification, not only copied (a field's value, an
// interpolation, a list's item) or tested for existence (`!= _|_`). A
// path is a read's labels, its root taken back through the fields, lets
// and comprehensions that define it, in any file (`#name:
// #tj.metadata.name`; `let env = *object.spec.trainer.env | []` and `for e
// in env` make `e.value` env.*.value); "*" stands for an item.
func (e *Engine) policyLooks() [][]string {
	if len(e.policyFiles) == 0 {
		return nil
	}
	a := readAliasesOf(e.cueFiles())
	var looks [][]string
	for _, name := range value.SortedKeys(e.policyFiles) {
		var stack []ast.Node
		ast.Walk(e.policyFiles[name].file, func(n ast.Node) bool {
			stack = append(stack, n)
			if x, ok := n.(ast.Expr); ok && len(stack) > 1 && !innerLink(stack[len(stack)-2], x) {
				if seq, ok := chainOf(x); ok && looksAtValue(stack) {
					looks = append(looks, a.resolve(seq)...)
				}
				if ip, ok := x.(*ast.Interpolation); ok && looksAtValue(stack) {
					// "\(ns)/\(name)" =~ ...: a look at the text is one at
					// each read it is made of.
					for _, r := range interpolated(ip) {
						if seq, ok := chainOf(readOf(r)); ok {
							looks = append(looks, a.resolve(seq)...)
						}
					}
				}
			}
			return true
		}, func(ast.Node) { stack = stack[:len(stack)-1] })
	}
	return looks
}

// readAliases are the names that stand for a read, with the reads they
// stand for (defs: their roots not yet resolved; expanded: resolved, each
// name once).
type readAliases struct {
	defs     map[string][][]string
	expanded map[string][][]string
	visiting map[string]bool
}

func readAliasesOf(files []*ast.File) *readAliases {
	a := &readAliases{defs: map[string][][]string{}, expanded: map[string][][]string{}, visiting: map[string]bool{}}
	for _, f := range files {
		ast.Walk(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.Field:
				if al, ok := x.Label.(*ast.Alias); ok {
					// O=object: O is the field.
					if l, ok := al.Expr.(ast.Label); ok {
						if name, _, err := ast.LabelName(l); err == nil {
							a.defs[al.Ident.Name] = append(a.defs[al.Ident.Name], []string{name})
						}
					}
				}
				if name, _, err := ast.LabelName(x.Label); err == nil {
					a.add(name, x.Value, false)
				}
			case *ast.LetClause:
				a.add(x.Ident.Name, x.Expr, false)
			case *ast.ForClause:
				if x.Value != nil {
					a.add(x.Value.Name, x.Source, true)
				}
			}
			return true
		}, nil)
	}
	return a
}

// add makes name stand for the read x passes on (readOf; its items when
// items), if it is one.
func (a *readAliases) add(name string, x ast.Expr, items bool) {
	if ip, ok := readOf(x).(*ast.Interpolation); ok && !items {
		// A text made of reads stands for each of them: what looks at
		// it (its length, a pattern) looks at their values.
		for _, r := range interpolated(ip) {
			a.add(name, r, false)
		}
		return
	}
	seq, ok := chainOf(readOf(x))
	if !ok || name == "_" || len(seq) == 1 && !isReadRoot(seq[0]) || seq[0] == name {
		return
	}
	if items {
		seq = append(seq, "*")
	}
	a.defs[name] = append(a.defs[name], seq)
}

// interpolated are the expressions an interpolation puts into its text,
// without its literal parts.
func interpolated(ip *ast.Interpolation) []ast.Expr {
	var out []ast.Expr
	for _, x := range ip.Elts {
		if lit, ok := x.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			continue
		}
		out = append(out, x)
	}
	return out
}

// resolve takes seq's root back through the aliases: seq and every read
// it may stand for.
func (a *readAliases) resolve(seq []string) [][]string {
	var out [][]string
	for _, r := range a.expand(seq[0]) {
		out = append(out, append(slices.Clip(r), seq[1:]...))
	}
	return out
}

// expand is every read a name may stand for, the name itself first, each
// once by its last two labels (all that a look is matched by, looksAt:
// the same names, e and x, stand for thousands of reads across the
// files, which differ mostly in their roots) and at most 256, worked out
// once per name, so that a walk need not take them again and again. A
// name met again inside its own expansion (a cycle) stands for itself
// there.
func (a *readAliases) expand(name string) [][]string {
	if out, ok := a.expanded[name]; ok {
		return out
	}
	if a.visiting[name] {
		return [][]string{{name}}
	}
	a.visiting[name] = true
	defer delete(a.visiting, name)
	out := [][]string{{name}}
	seen := map[string]bool{name: true}
	for _, d := range a.defs[name] {
		for _, r := range a.expand(d[0]) {
			full := append(slices.Clip(r), d[1:]...)
			if key := strings.Join(full[max(0, len(full)-2):], "\x00"); !seen[key] && len(out) < 256 {
				seen[key] = true
				out = append(out, full)
			}
		}
	}
	a.expanded[name] = out
	return out
}

// isReadRoot says a name alone may stand for a value read: not top (_)
// or a predeclared type (string).
func isReadRoot(name string) bool {
	return name != "_" && typeKinds[name] == nil
}

// chainOf is a read's root and labels: x.a["b"][i] is [x a b *]; ok false
// when x is no read.
func chainOf(x ast.Expr) ([]string, bool) {
	switch v := x.(type) {
	case *ast.Ident:
		return []string{v.Name}, true
	case *ast.ParenExpr:
		return chainOf(v.X)
	case *ast.SelectorExpr:
		seq, ok := chainOf(v.X)
		name, _, err := ast.LabelName(v.Sel)
		if !ok || err != nil {
			return nil, false
		}
		return append(seq, name), true
	case *ast.IndexExpr:
		seq, ok := chainOf(v.X)
		if !ok {
			return nil, false
		}
		if lit, isLit := v.Index.(*ast.BasicLit); isLit && lit.Kind == token.STRING {
			if s, err := literal.Unquote(lit.Value); err == nil {
				return append(seq, s), true
			}
		}
		return append(seq, "*"), true
	}
	return nil, false
}

// innerLink says x is a link of a longer read (parent's X).
func innerLink(parent ast.Node, x ast.Expr) bool {
	switch p := parent.(type) {
	case *ast.SelectorExpr:
		return p.X == x
	case *ast.IndexExpr:
		return p.X == x
	case *ast.ParenExpr:
		return true
	}
	return false
}

// looksAtValue says the read at the top of stack is looked at, not only
// passed on: its parents are climbed through parentheses, defaults and
// disjunctions.
func looksAtValue(stack []ast.Node) bool {
	child := stack[len(stack)-1]
	for i := len(stack) - 2; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.ParenExpr:
		case *ast.UnaryExpr:
			if p.Op != token.MUL {
				return true
			}
		case *ast.BinaryExpr:
			if p.Op == token.OR {
				break
			}
			other := p.X
			if other == child {
				other = p.Y
			}
			_, bottom := other.(*ast.BottomLit)
			return !bottom
		case *ast.CallExpr:
			return p.Fun != child
		case *ast.IndexExpr:
			return p.Index == child
		case *ast.IfClause:
			return true
		default:
			return false
		}
		child = stack[i]
	}
	return false
}
