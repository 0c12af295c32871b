// Package engine evaluates cuetrainer's CUE: it loads the embedded schemas and
// runtimes and an admin's policy directories once, then admits objects, one
// CUE unification per object. It knows no framework and no rule: the CUE
// declares the kinds it admits, the rules, and the lookups it needs.
package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"

	"github.com/cuetrainer/cuetrainer"
)

// root is where the embedded module is laid out for the CUE loader. It
// exists only in the loader's overlay.
const root = "/cuetrainer"

// Options say what to load besides the embedded CUE.
type Options struct {
	// PolicyDirs are directories of an admin's CUE files (package schemas),
	// added to the schemas package: new frameworks, rules and runtimes.
	PolicyDirs []string
}

// Engine is the compiled CUE. It is safe for concurrent use.
type Engine struct {
	ctx     *cue.Context
	schemas cue.Value

	// reviews holds the review of each admitted kind, by apiVersion and
	// kind; lookups what a review needs the engine to find first.
	reviews map[string]map[string]cue.Value
	lookups map[string]map[string]cue.Value
	// renders holds how each kind that renders is rendered, and merges the
	// strategic merges a render needs first.
	renders map[string]map[string]cue.Value
	merges  map[string]map[string]map[string]merge
	// groups are the API groups whose every kind must have a review.
	groups map[string]bool
	// contextKinds maps apiVersion and kind to the #Context field that holds
	// such objects, by name.
	contextKinds map[string]map[string]string
	// builtin are the shipped runtimes, as authored, in name order;
	// builtinByRelease the same admitted, per release vetted for.
	builtin          []Document
	builtinMu        sync.Mutex
	builtinByRelease map[string][]*stored

	// files maps the loader's file names back to the files on disk (policy
	// files) or in the repository (embedded files).
	files map[string]string
}

// New loads and compiles the CUE. A broken CUE file fails here, with its
// file, line and column.
func New(opts Options) (*Engine, error) {
	e := &Engine{ctx: cuecontext.New(), files: map[string]string{}}
	overlay := map[string]load.Source{}
	err := fs.WalkDir(cuetrainer.CUE, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(cuetrainer.CUE, p)
		if err != nil {
			return err
		}
		name := path.Join(root, p)
		overlay[name] = load.FromBytes(data)
		e.files[name] = p
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the embedded CUE: %w", err)
	}
	for i, dir := range opts.PolicyDirs {
		if err := e.addPolicyDir(overlay, i, dir); err != nil {
			return nil, err
		}
	}

	cfg := &load.Config{Dir: root, ModuleRoot: root, Overlay: overlay}
	insts := load.Instances([]string{"./schemas", "./runtimes"}, cfg)
	values := make([]cue.Value, len(insts))
	for i, inst := range insts {
		if inst.Err != nil {
			return nil, e.cueError("loading CUE", inst.Err)
		}
		values[i] = e.ctx.BuildInstance(inst)
		if err := values[i].Validate(); err != nil {
			return nil, e.cueError("compiling CUE", err)
		}
	}
	e.schemas = values[0]
	if err := e.index(); err != nil {
		return nil, err
	}
	if err := e.loadBuiltin(values[1]); err != nil {
		return nil, err
	}
	return e, nil
}

// addPolicyDir adds every .cue file below dir, in lexical order, to the
// schemas package.
func (e *Engine) addPolicyDir(overlay map[string]load.Source, i int, dir string) error {
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
		if d.IsDir() || filepath.Ext(p) != ".cue" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("policy file: %w", err)
		}
		rel, _ := filepath.Rel(abs, p)
		flat := strings.ReplaceAll(filepath.ToSlash(rel), "/", "--")
		name := path.Join(root, "schemas", fmt.Sprintf("zz-policy%d--%s", i, flat))
		overlay[name] = load.FromBytes(data)
		display := p
		if r, err := filepath.Rel(mustGetwd(), p); err == nil && !strings.HasPrefix(r, "..") {
			display = r
		}
		e.files[name] = display
		return nil
	})
}

func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}

// index reads what the CUE declares about kinds.
func (e *Engine) index() error {
	var err error
	if e.reviews, err = e.byKind("admission"); err != nil {
		return err
	}
	if e.lookups, err = e.byKind("lookups"); err != nil {
		return err
	}
	if e.renders, err = e.byKind("render"); err != nil {
		return err
	}
	if err := e.schemas.LookupPath(cue.ParsePath("merges")).Decode(&e.merges); err != nil {
		return e.cueError("reading merges", err)
	}
	if err := e.schemas.LookupPath(cue.ParsePath("groups")).Decode(&e.groups); err != nil {
		return e.cueError("reading groups", err)
	}
	if err := e.schemas.LookupPath(cue.ParsePath("contextKinds")).Decode(&e.contextKinds); err != nil {
		return e.cueError("reading contextKinds", err)
	}
	return nil
}

// byKind reads a struct of values by apiVersion and kind.
func (e *Engine) byKind(field string) (map[string]map[string]cue.Value, error) {
	out := map[string]map[string]cue.Value{}
	it, err := e.schemas.LookupPath(cue.ParsePath(field)).Fields()
	if err != nil {
		return nil, e.cueError("reading "+field, err)
	}
	for it.Next() {
		apiVersion := it.Selector().Unquoted()
		kinds, err := it.Value().Fields()
		if err != nil {
			return nil, e.cueError("reading "+field, err)
		}
		out[apiVersion] = map[string]cue.Value{}
		for kinds.Next() {
			out[apiVersion][kinds.Selector().Unquoted()] = kinds.Value()
		}
	}
	return out, nil
}

// loadBuiltin reads the shipped runtimes out of the runtimes package.
func (e *Engine) loadBuiltin(v cue.Value) error {
	it, err := v.LookupPath(cue.ParsePath("clusterTrainingRuntimes")).Fields()
	if err != nil {
		return e.cueError("reading runtimes", err)
	}
	for it.Next() {
		doc, err := e.documentFromValue(it.Value(), "")
		if err != nil {
			return err
		}
		e.builtin = append(e.builtin, doc)
	}
	sort.Slice(e.builtin, func(i, j int) bool { return e.builtin[i].Name() < e.builtin[j].Name() })
	return nil
}

// Builtin returns the shipped runtimes, as authored.
func (e *Engine) Builtin() []Document { return e.builtin }

// cueError words a CUE error with the positions of its CUE sources.
func (e *Engine) cueError(what string, err error) error {
	return fmt.Errorf("%s: %s", what, e.Details(err))
}

// Details prints a CUE error the way the cue command does, with the file
// names a user knows.
func (e *Engine) Details(err error) string {
	var b strings.Builder
	for i, ce := range errors.Errors(err) {
		if i > 0 {
			b.WriteString("\n")
		}
		format, args := ce.Msg()
		if p := ce.Path(); len(p) > 0 {
			fmt.Fprintf(&b, "%s: ", strings.Join(p, "."))
		}
		fmt.Fprintf(&b, format, args...)
		for _, pos := range errors.Positions(ce) {
			fmt.Fprintf(&b, "\n    %s", e.position(pos.Filename(), pos.Line(), pos.Column()))
		}
	}
	return b.String()
}

func (e *Engine) position(file string, line, col int) string {
	if f, ok := e.files[file]; ok {
		file = f
	}
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}
