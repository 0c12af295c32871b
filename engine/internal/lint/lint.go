// Package lint holds the checks of an admin's CUE that run at load: the
// mistakes CUE itself accepts (a misspelled top-level field, whose rule
// never runs; a read of a field the object cannot have, always absent; two
// defaults for one field, which CUE drops both; a default of another type
// than the field), each found in the admin's files' syntax and its meaning
// looked up in the compiled schemas. Its input is the load's output
// (Input); it knows no session, render or trial.
package lint

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue/build"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/crd"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/load"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Input is what the checks read of a load: the compiled CUE, the files and
// the declarations the engine decoded from it.
type Input struct {
	// Program is the compiled CUE: the package schemas (the admin's
	// files in it), the kinds' reviews, renders and render parts.
	*load.Program
	// Src names the loader's files and says which are the admin's;
	// Instances are the compiled instances (schemas first), whose files
	// are every file compiled; Files the admin's files, parsed, by the
	// loader's names.
	Src       *source.Files
	Instances []*build.Instance
	Files     map[string]*ast.File
	// MarkerFile is the file the load makes of the admin's validation
	// markers (MarkerBounds, crd/markers.go).
	MarkerFile   string
	MarkerBounds []crd.MarkerBound
	// Decl are the declarations read before the checks
	// (Declarations.ReadKinds, ReadInputReads): the runtime kinds, and
	// the reads each kind's plan, lookups and mutator declare.
	Decl *load.Declarations
}

// runtimeKind is the kind a review's context.runtime is read as: the
// first runtimeKinds registers (the runtime kinds share their spec).
func (in *Input) runtimeKind() string {
	for _, key := range value.SortedKeys(in.Decl.RuntimeKinds) {
		return in.Decl.RuntimeKinds[key].Kind
	}
	return ""
}

// cueFiles are the syntax of every file the engine compiles: its own
// schemas and runtimes and the policy directories' files, which the
// loader parses into the same instances.
func cueFiles(instances []*build.Instance) []*ast.File {
	var files []*ast.File
	for _, inst := range instances {
		files = append(files, inst.Files...)
	}
	return files
}

// Report is what the checks found.
type Report struct {
	// Problems are the admin's mistakes, at their file and line.
	Problems []source.Problem
	// Warnings are what may be a mistake or may be meant, which the
	// check cannot tell apart from the CUE (an image test whose rule's
	// intent, allow or deny, it cannot read): the load goes on.
	Warnings []source.Problem
	// KeyReads are the paths of the maps whose keys the admin's rules read
	// as data (iterate, index by a computed key, constrain by a pattern):
	// such a map reaches them with its keys, not as tokens.
	KeyReads [][]string
	// ObjectIDs are the ids of the objects the renders declare, nil when
	// a render declares one under a computed label: a render then knows
	// which ids it may meet.
	ObjectIDs []string
}

// Run checks every one of the admin's files against the compiled CUE.
func Run(in *Input) (r Report) {
	// A check that meets CUE it does not expect is cuetrainer's defect:
	// the load says so, rather than the process dying.
	defer func() {
		if x := recover(); x != nil {
			r.Problems = append(r.Problems, source.Problem{Check: checks.Defect.Name, Message: fmt.Sprintf("cuetrainer's check of the policy failed (%v): please report it, with the policy", x)})
		}
	}()
	l := newLinter(in)
	for _, name := range value.SortedKeys(in.Files) {
		l.walkDecls(in.Files[name].Decls, lpath{ok: true}, true)
		l.checkRegexps(in.Files[name])
		l.checkKeyLiterals(in.Files[name])
		l.checkRuntimeOptionals(in.Files[name])
		l.checkAttributes(in.Files[name])
	}
	// A test's polarity is known once every rule that may use it is
	// walked (a let's test, before the rule that reads the let).
	for _, check := range l.imageTests {
		check()
	}
	for _, name := range value.SortedKeys(in.Files) {
		l.checkDefinitionArgs(in.Files[name])
	}
	l.checkHelperReads()
	l.checkContextReads()
	l.checkDeclared()
	l.checkDefaults()
	l.checkContract()
	l.checkUnread()
	l.checkOpenRuntimeLists()
	l.checkListsOnce()
	l.checkEditGroups()
	l.checkListItems()
	l.checkReadsPaths()
	l.checkClosedFields()
	l.checkGuardedFields()
	l.checkOpenRules()
	l.checkMarkerKinds()
	l.checkRenderRefs()
	l.checkObjectNames()
	// Last: what the admin's directives silence, of all the checks found.
	l.suppress()
	r = Report{Problems: l.problems, Warnings: l.warnings, KeyReads: l.keyReads}
	if ids := l.objectIDs(); !l.objectsOpen {
		r.ObjectIDs = ids
	}
	return r
}

func newLinter(in *Input) *linter {
	return &linter{in: in, pkg: in.Instances[0].ImportPath, paths: map[ast.Node]lpath{}, defaults: map[string]*defaultSite{}, numbers: map[string]int{}, polarity: map[ast.Expr]uint8{}}
}

// lpath is a field's path from the package's root (the root's: none, ok);
// ok false when it is not known before evaluation (a label computed from
// the data, a list element).
type lpath struct {
	sels []cue.Selector
	ok   bool
}

func (p lpath) child(sel cue.Selector, ok bool) lpath {
	if !p.ok || !ok {
		return lpath{}
	}
	sels := make([]cue.Selector, len(p.sels), len(p.sels)+1)
	copy(sels, p.sels)
	return lpath{sels: append(sels, sel), ok: true}
}

func (p lpath) String() string { return cue.MakePath(p.sels...).String() }

type linter struct {
	in  *Input
	pkg string
	// known are the keys with a meaning (knownKeys), as the compiled CUE
	// has them: the engine reads its own after the lint. knownRead says
	// they were read.
	known     k8s.KnownKeys
	knownRead bool
	// paths holds the path of each field's value node (what an
	// identifier that refers to the field resolves to).
	paths    map[ast.Node]lpath
	defaults map[string]*defaultSite
	problems []source.Problem
	// sites are the fields declared near the top level, where the
	// contract's names are (kinds, frameworks, render parts).
	sites []site
	// contextSites are the lookups' objects (lookups: v: K: objects: x),
	// which a review finds under context.x.
	contextSites []site
	// partSites are the render parts plans name (plans: v: K: parts: x).
	partSites []site
	// unread are the fields declared hidden, as definitions or optional,
	// which a named map's reader never sees (checkUnread).
	unread []site
	// lists are the fields whose value is a list literal (checkListsOnce,
	// checkListItems).
	lists []listSite
	// objects are the ids of the objects renders build (objectIDs), and
	// objectGoTypes the Go types of those declared with a literal kind.
	// objectsOpen says that one is declared under a computed label (or
	// in a value not a struct literal), so that objects may miss ids.
	objects       []string
	objectsOpen   bool
	objectGoTypes map[string]reflect.Type
	// fieldNames caches objectFieldNames.
	fieldNames map[string]bool
	// keyReads are the paths (field names) of the maps whose keys a rule
	// reads as data: it iterates them, indexes them by a computed key or
	// constrains every key by a pattern.
	keyReads [][]string
	// namedStrings are the strings the CUE's sources name (namedStrings).
	namedStrings map[string]bool
	// declared are the definitions declared `#x: _` under the contract's
	// fields: names a review or a render gives a value (checkDeclared).
	declared []site
	// rules are the rules (lists of findings) the files declare
	// (checkOpenRules).
	rules []ruleSite
	// renderRefs are the entries of a render's (a plan's, a part's)
	// generate, bases and sums, with their values (checkRenderRefs).
	renderRefs []renderRef
	// numbers counts, by their text, the values the comprehensions around
	// the walk have tested for a number ((x & int) != _|_).
	numbers map[string]int
	// chained are the && and || of a chain already checked from its top
	// (checkExclusive).
	chained map[*ast.BinaryExpr]bool
	// oneItem is a list of one item of any value (item).
	oneItem cue.Value
	// contextKinds are the policy's, as the engine reads them (filed).
	contextKinds map[string]map[string]string
	// guardedFields are the regular fields declared under a comprehension
	// (if, for), and underComprehension how deep the walk is in them
	// (checkGuardedFields).
	guardedFields      []site
	underComprehension int
	// inDefinitions are the regular fields declared inside a definition
	// (checkClosedFields).
	inDefinitions []site
	// partDefs are the other definitions a render part sets: its
	// render's (#counts), or helpers of the admin's own.
	partDefs []site
	// bindings are what callers give a helper definition's parameters
	// (#helper & {#t: object.spec.trainer}), by the parameter's path;
	// helperReads the reads of such parameters (checkHelperReads).
	bindings    map[string][]binding
	helperReads []helperRead
	// contextReads are the reads of a review's context.<name>
	// (checkContextReads).
	contextReads []contextRead
	// polarity says, of a test in a rule's conditions, whether the rule
	// fires where it holds or where it does not (polarity.go); imageTests
	// are the image checks, made once every rule's polarity is known.
	polarity   map[ast.Expr]uint8
	imageTests []func()
	// warnings are what the checks of a guess find (Report.Warnings).
	warnings []source.Problem
	// checked counts the selectors checked against a closed struct.
	checked int
	// depth bounds the resolution of lets that refer to lets.
	depth int
}

// site is a field's declaration: its path, where its label is, and
// whether it is optional (label?).
type site struct {
	path     []cue.Selector
	pos      token.Pos
	optional bool
}

// ruleSite is a rule's field, with its value as written.
type ruleSite struct {
	site
	value ast.Expr
}

// listSite is a field whose value is a list literal.
type listSite struct {
	site
	list *ast.ListLit
}

// defaultSite is where the admin's files mark a field's default.
type defaultSite struct {
	path    lpath
	markers []token.Pos
	values  []string
}

// problem notes what check c finds at pos: a refusal of the load, or a
// warning when the check warns.
func (l *linter) problem(c checks.Check, pos token.Pos, format string, args ...any) {
	p := l.in.Src.ProblemAt(pos, format, args...)
	p.Check = c.Name
	if c.Warns {
		// What may be a mistake or may be meant: the load goes on
		// (Report.Warnings).
		l.warnings = append(l.warnings, p)
		return
	}
	l.problems = append(l.problems, p)
}

// walkDecls walks a struct's declarations at path p; top says they are
// the package's top level.
func (l *linter) walkDecls(decls []ast.Decl, p lpath, top bool) {
	for _, d := range decls {
		switch d := d.(type) {
		case *ast.Field:
			if pattern, ok := d.Label.(*ast.ListLit); ok && p.ok && matchesKeys(pattern) {
				// A constraint on the keys of a map that match: it reads
				// their text.
				l.keyReads = append(l.keyReads, selectorNames(p.sels))
			}
			sel, ok := l.label(d.Label)
			if top {
				l.checkTopLevel(d)
			}
			if d.Constraint == token.OPTION {
				l.checkOptionalDefault(d)
			}
			fp := p.child(sel, ok)
			if fp.ok {
				l.paths[d.Value] = fp
				if len(fp.sels) <= 4 {
					l.sites = append(l.sites, site{path: fp.sels, pos: d.Label.Pos(), optional: d.Constraint == token.OPTION})
				}
				if len(fp.sels) == 5 && fp.sels[0].String() == contract.FieldPlans && fp.sels[3].String() == contract.FieldParts && fp.sels[4].IsString() {
					l.partSites = append(l.partSites, site{path: fp.sels, pos: d.Label.Pos()})
				}
				if len(fp.sels) == 5 && fp.sels[0].String() == contract.FieldLookups && fp.sels[3] == contract.SelObjects && fp.sels[4].IsString() {
					l.contextSites = append(l.contextSites, site{path: fp.sels, pos: d.Label.Pos()})
				}
				if last := fp.sels[len(fp.sels)-1]; (len(fp.sels) > 1 || d.Constraint != token.OPTION) && (last.LabelType()&(cue.DefinitionLabel|cue.HiddenLabel|cue.HiddenDefinitionLabel) != 0 || d.Constraint == token.OPTION) {
					l.unread = append(l.unread, site{path: fp.sels, pos: d.Label.Pos(), optional: d.Constraint == token.OPTION})
				}
				if isPlanInput(fp.sels) {
					// A plan's field written _ reads what the plan
					// computes (replacesPlainML): nothing computes a
					// misspelt one.
					if id, ok := d.Value.(*ast.Ident); ok && id.Name == "_" {
						l.declared = append(l.declared, site{path: fp.sels, pos: d.Label.Pos()})
					}
				}
				if last := fp.sels[len(fp.sels)-1]; len(fp.sels) > 1 && last.IsDefinition() && !fp.sels[0].IsDefinition() {
					if id, ok := d.Value.(*ast.Ident); ok && id.Name == "_" {
						l.declared = append(l.declared, site{path: fp.sels, pos: d.Label.Pos()})
					} else if len(fp.sels) == 5 && fp.sels[0].String() == contract.FieldRenderParts {
						l.partDefs = append(l.partDefs, site{path: fp.sels, pos: d.Label.Pos()})
					}
				}
				if n := len(fp.sels); n >= 5 && fp.sels[0] != contract.SelAdmission && fp.sels[n-1].IsString() && (fp.sels[n-2] == contract.SelGenerate || fp.sels[n-2] == contract.SelBases || fp.sels[n-2] == contract.SelSums) {
					l.renderRefs = append(l.renderRefs, renderRef{site: site{path: fp.sels, pos: d.Label.Pos()}, value: d.Value})
				}
				if isRulePath(fp.sels) {
					l.rules = append(l.rules, ruleSite{site: site{path: fp.sels, pos: d.Label.Pos()}, value: d.Value})
					l.noteRulePolarity(d.Value)
				}
				if last := fp.sels[len(fp.sels)-1]; last.LabelType() == cue.StringLabel && l.underComprehension > 0 {
					l.guardedFields = append(l.guardedFields, site{path: fp.sels, pos: d.Label.Pos(), optional: d.Constraint == token.OPTION})
				}
				if last := fp.sels[len(fp.sels)-1]; last.LabelType() == cue.StringLabel && slices.ContainsFunc(fp.sels[:len(fp.sels)-1], cue.Selector.IsDefinition) {
					l.inDefinitions = append(l.inDefinitions, site{path: fp.sels, pos: d.Label.Pos(), optional: d.Constraint == token.OPTION})
				}
				if list, ok := d.Value.(*ast.ListLit); ok && len(fp.sels) > 1 {
					l.lists = append(l.lists, listSite{site: site{path: fp.sels, pos: d.Label.Pos()}, list: list})
				}
			}
			l.walkExpr(d.Value, fp)
		case *ast.EmbedDecl:
			if s, ok := d.Expr.(*ast.StructLit); ok {
				l.walkDecls(s.Elts, p, top)
				continue
			}
			l.walkExpr(d.Expr, p)
		case *ast.Comprehension:
			end := l.walkClauses(d.Clauses)
			if s, ok := d.Value.(*ast.StructLit); ok {
				l.underComprehension++
				l.walkDecls(s.Elts, p, top)
				l.underComprehension--
			} else {
				l.walkExpr(d.Value, p)
			}
			end()
		case *ast.LetClause:
			l.walkExpr(d.Expr, lpath{})
		}
	}
}

// walkClauses walks a comprehension's clauses, and returns how to end
// the number guards its conditions set (numberGuards), once its value is
// walked.
func (l *linter) walkClauses(clauses []ast.Clause) (end func()) {
	var guarded []string
	for _, cl := range clauses {
		switch cl := cl.(type) {
		case *ast.ForClause:
			l.walkExpr(cl.Source, lpath{})
			if cl.Key != nil && cl.Key.Name != "_" {
				l.noteKeyRead(cl.Source)
			}
		case *ast.IfClause:
			l.walkExpr(cl.Condition, lpath{})
			for _, g := range numberGuards(cl.Condition) {
				l.numbers[g]++
				guarded = append(guarded, g)
			}
		case *ast.LetClause:
			l.walkExpr(cl.Expr, lpath{})
		}
	}
	return func() {
		for _, g := range guarded {
			l.numbers[g]--
		}
	}
}

// numberGuards are the values a condition tests for a number, as written:
// x in (x & int) != _|_ (or number, float).
func numberGuards(cond ast.Expr) []string {
	var out []string
	ast.Walk(cond, func(n ast.Node) bool {
		b, ok := n.(*ast.BinaryExpr)
		if !ok || b.Op != token.NEQ {
			return true
		}
		if _, bottom := b.Y.(*ast.BottomLit); !bottom {
			return true
		}
		x := b.X
		if p, ok := x.(*ast.ParenExpr); ok {
			x = p.X
		}
		and, ok := x.(*ast.BinaryExpr)
		if !ok || and.Op != token.AND {
			return true
		}
		if id, ok := and.Y.(*ast.Ident); ok && (id.Name == "int" || id.Name == "number" || id.Name == "float") {
			out = append(out, exprText(and.X))
		}
		return true
	}, nil)
	return out
}

// walkExpr walks an expression that is the value at p (unknown when p is
// not ok): its struct literals' fields, its reads and its defaults.
func (l *linter) walkExpr(x ast.Expr, p lpath) {
	switch x := x.(type) {
	case nil:
	case *ast.StructLit:
		l.walkDecls(x.Elts, p, false)
	case *ast.ListLit:
		for _, el := range x.Elts {
			switch el := el.(type) {
			case *ast.Comprehension:
				end := l.walkClauses(el.Clauses)
				l.walkExpr(el.Value, lpath{})
				end()
			case *ast.Ellipsis:
				l.walkExpr(el.Type, lpath{})
			default:
				l.walkExpr(el, lpath{})
			}
		}
	case *ast.Comprehension:
		end := l.walkClauses(x.Clauses)
		l.walkExpr(x.Value, p)
		end()
	case *ast.Ident, *ast.SelectorExpr, *ast.IndexExpr:
		if ix, ok := x.(*ast.IndexExpr); ok {
			if !l.namedKey(ix.Index) {
				l.noteKeyRead(ix.X) // a key computed from the data
			}
			l.checkQuantityKey(ix)
		}
		root, steps := chain(x)
		l.checkRead(root, steps)
		if root != x {
			l.walkExpr(root, lpath{})
		}
		for _, st := range steps {
			if st.index != nil {
				l.walkExpr(st.index, lpath{})
			}
		}
	case *ast.BinaryExpr:
		if x.Op == token.OR {
			terms := crd.Disjuncts(x)
			if !l.checkDefaultType(terms, p) {
				l.checkDefaultBounds(terms, p)
			}
			l.checkBoundAlone(terms)
			for _, t := range terms {
				l.walkExpr(t, p)
			}
			return
		}
		if x.Op == token.LOR || x.Op == token.LAND {
			l.checkExclusive(x)
		}
		l.checkNeverBottom(x)
		if x.Op == token.MAT || x.Op == token.NMAT {
			l.checkInterpolatedPattern(x.Y)
		}
		if !l.checkFormat(x) && !l.checkCaseComparison(x) && !l.checkCasePattern(x) {
			l.checkComparison(x)
		}
		l.checkImagePattern(x)
		if x.Op == token.AND {
			l.noteBindings(x.X, x.Y)
			l.noteBindings(x.Y, x.X)
		}
		l.walkExpr(x.X, p)
		l.walkExpr(x.Y, p)
	case *ast.UnaryExpr:
		if x.Op == token.MUL && p.ok && literalKind(x.X) != "" {
			l.markDefault(x, p)
		}
		l.walkExpr(x.X, lpath{})
	case *ast.ParenExpr:
		l.walkExpr(x.X, p)
	case *ast.CallExpr:
		l.checkContains(x)
		l.checkSearchArgs(x)
		l.checkPatternArgs(x)
		if _, ok := patternCall(x); ok {
			l.checkInterpolatedPattern(x.Args[0])
		}
		l.checkImageSearch(x)
		l.checkFormatSearch(x)
		l.walkExpr(x.Fun, lpath{})
		for _, a := range x.Args {
			l.walkExpr(a, lpath{})
		}
	case *ast.Interpolation:
		for _, el := range x.Elts {
			l.walkExpr(el, lpath{})
		}
	case *ast.SliceExpr:
		l.walkExpr(x.X, lpath{})
		l.walkExpr(x.Low, lpath{})
		l.walkExpr(x.High, lpath{})
	case *ast.Ellipsis:
		l.walkExpr(x.Type, lpath{})
	}
}

// label is the selector a field's label names, false when it is computed
// from the data. A label computed from a package-level name (such as
// (#APIVersion)) is that name's value.
func (l *linter) label(lb ast.Label) (cue.Selector, bool) {
	switch lb := lb.(type) {
	case *ast.Ident:
		return l.selector(lb.Name), true
	case *ast.BasicLit:
		if lb.Kind != token.STRING {
			return cue.Selector{}, false
		}
		s, err := literal.Unquote(lb.Value)
		if err != nil {
			return cue.Selector{}, false
		}
		return cue.Str(s), true
	case *ast.Alias:
		if e, ok := lb.Expr.(ast.Label); ok {
			return l.label(e)
		}
	case *ast.ParenExpr:
		root, steps := chain(lb.X)
		base, ok := l.resolve(root)
		if !ok {
			return cue.Selector{}, false
		}
		v := l.lookup(base)
		for _, st := range steps {
			if !st.ok {
				return cue.Selector{}, false
			}
			v = v.LookupPath(cue.MakePath(st.sel))
		}
		if s, err := v.String(); err == nil {
			return cue.Str(s), true
		}
	case *ast.ListLit:
		// A pattern constraint: what it says of every field.
		return cue.AnyString, true
	}
	return cue.Selector{}, false
}

// selector is the selector of an identifier label.
func (l *linter) selector(name string) cue.Selector {
	switch {
	case strings.HasPrefix(name, "#"):
		return cue.Def(name)
	case strings.HasPrefix(name, "_"):
		return cue.Hid(name, l.pkg)
	}
	return cue.Str(name)
}

// lookup is the compiled value at p; optional fields are looked up too.
// A field that refers to an optional field (#trainer: object.spec.trainer)
// does not evaluate before the object is given: it is looked up as the
// field it refers to.
func (l *linter) lookup(p lpath) cue.Value {
	v, _ := l.at(p.sels)
	return v
}

// at is the compiled value at sels, read as a schema: selector by
// selector from the root, each prefix read where its schema is
// (schemaPath), and a value that refers to another (#trainer:
// object.spec.trainer, #tj: input) read as what it refers to when it says
// nothing itself (an error before the object is given, or an open value).
func (l *linter) at(sels []cue.Selector) (cue.Value, []cue.Selector) {
	l.depth++
	defer func() { l.depth-- }()
	v := l.in.Schemas
	var cur []cue.Selector
	for _, s := range sels {
		cur = append(cur, s)
		if mapped := l.schemaPath(cur); !samePath(mapped, cur) {
			cur = mapped
			v = l.in.Schemas.LookupPath(optional(cur))
		} else if s.LabelType() == cue.IndexLabel {
			v = l.item(v, s)
		} else {
			v = v.LookupPath(optional([]cue.Selector{s}))
		}
		if name, ok := schemaAttr(v); ok {
			// A value computed from data the load does not have, which
			// says the schema it follows.
			cur = []cue.Selector{cue.Def(name)}
			v = l.in.Schemas.LookupPath(cue.MakePath(cur...))
			continue
		}
		for range 10 {
			if v.Err() == nil && !isOpen(v) {
				break
			}
			root, p := referenceOf(v)
			if len(p) == 0 || root != l.in.Schemas && !root.Equals(l.in.Schemas) {
				break
			}
			next := l.schemaPath(p)
			if samePath(next, cur) || l.depth > 20 {
				break
			}
			// What it refers to, read the same way (#tj.spec.trainer,
			// where #tj is input).
			v, cur = l.at(next)
		}
	}
	return v, cur
}

// item is the schema of a list's item at s, an index or [_]: the item a
// concrete list holds (#Known[0]), else what a list type ([...#T]) says of
// any item. CUE's lookup of [_] errs on a list type that is the
// conjunction of two ([...#ReplicatedJob] with the [...#T] of the type
// it embeds: "field not allowed"), so the item is then read from the
// list unified with a list of one item, which the item types constrain.
func (l *linter) item(list cue.Value, s cue.Selector) cue.Value {
	if v := list.LookupPath(cue.MakePath(s)); v.Exists() && v.Err() == nil {
		return v
	}
	if v := list.LookupPath(cue.MakePath(cue.AnyIndex)); v.Err() == nil {
		return v
	}
	if list.IncompleteKind() != cue.ListKind {
		return list.LookupPath(cue.MakePath(s))
	}
	if !l.oneItem.Exists() {
		l.oneItem = l.in.Ctx.CompileString("[_]")
	}
	return list.Unify(l.oneItem).LookupPath(cue.MakePath(cue.Index(0)))
}

// schemaAttr is the definition a field's @schema(#Name) attribute names.
func schemaAttr(v cue.Value) (string, bool) {
	a := v.Attribute("schema")
	if a.Err() != nil {
		return "", false
	}
	name, err := a.String(0)
	if err != nil || !strings.HasPrefix(name, "#") {
		return "", false
	}
	return name, true
}

// isOpen reports whether v says nothing of the fields it may have: top, or
// an open struct without fields ({...}).
func isOpen(v cue.Value) bool {
	switch v.IncompleteKind() {
	case cue.TopKind:
		return true
	case cue.StructKind:
		return v.Allows(cue.Str(openProbe)) && len(source.FieldNames(v)) == 0
	}
	return false
}

// referenceOf is the path v refers to: its own reference, or the one of
// its conjuncts when the others say nothing (#trainer: _ in a file,
// #trainer: object.spec.trainer in another). A value that is more than a
// reference (#TrainJobPlan & {...}) is read as it is.
func referenceOf(v cue.Value) (cue.Value, []cue.Selector) {
	if root, p := v.ReferencePath(); len(p.Selectors()) > 0 {
		return root, p.Selectors()
	}
	var root cue.Value
	var ref []cue.Selector
	for _, a := range conjunctRefs(v) {
		r, p := a.ReferencePath()
		switch {
		case len(p.Selectors()) > 0 && ref == nil:
			root, ref = r, p.Selectors()
		case len(p.Selectors()) > 0 || !isOpen(a):
			return cue.Value{}, nil
		}
	}
	return root, ref
}

// byKindRoots are the contract's fields whose values are keyed by
// apiVersion and kind, and given the kind's object as `input`.
var byKindRoots = map[string]bool{
	contract.FieldAdmission: true, contract.FieldCRDChecks: true, contract.FieldLookups: true, contract.FieldMutators: true,
	contract.FieldRender: true, contract.FieldPlans: true, contract.FieldControllers: true, contract.FieldRenderChecks: true,
}

// schemaPath is where to read the schema of what sels leads to. The engine
// fills some values as open structs (`input: {...}`), which say nothing of
// the fields a read may name; they are objects of known kinds all the same:
// a kind's input and its update's old object are the kind's object
// (admission.<v>.<K>.object, the object with its schema); a review's
// context.runtime is a runtime (the first kind runtimeKinds registers); a
// render part's names are its render's.
func (l *linter) schemaPath(sels []cue.Selector) []cue.Selector {
	str := func(i int) string {
		if i < len(sels) && sels[i].IsString() && !sels[i].IsConstraint() {
			return sels[i].Unquoted()
		}
		return ""
	}
	with := func(prefix []cue.Selector, from int) []cue.Selector {
		return append(append([]cue.Selector(nil), prefix...), sels[from:]...)
	}
	if len(sels) < 4 {
		return sels
	}
	if str(0) == contract.FieldRenderParts && len(sels) >= 5 {
		// A part is unified with its kind's render.
		return l.schemaPath(with([]cue.Selector{contract.SelRender, sels[1], sels[2]}, 4))
	}
	object := l.objectSchema(sels[1], sels[2])
	if str(0) == contract.FieldCRDCheckParts && len(sels) >= 5 && str(4) == contract.FieldSelf {
		// A part's self is the object's value at the part's path.
		if at, ok := l.partPath(sels[:4]); ok {
			return with(append(object, at...), 5)
		}
	}
	if !byKindRoots[str(0)] {
		return sels
	}
	switch {
	case str(3) == contract.FieldInput, str(0) == contract.FieldAdmission && str(3) == contract.FieldObject:
		return with(object, 4)
	case str(3) == contract.FieldContext && str(4) == contract.FieldOld:
		return with(object, 5)
	case str(0) == contract.FieldRender && str(3) == contract.FieldContext && str(4) == contract.FieldPlan:
		// A render's plan is its kind's plan.
		return with([]cue.Selector{contract.SelPlans, sels[1], sels[2]}, 5)
	case str(3) == contract.FieldContext && str(4) == contract.FieldRuntime:
		if kind := l.in.runtimeKind(); kind != "" {
			return with([]cue.Selector{contract.SelAdmission, sels[1], cue.Str(kind), contract.SelObject}, 5)
		}
	case str(0) == contract.FieldAdmission && str(3) == contract.FieldContext && str(4) != "":
		if at, ok := l.lookedUp(sels[1], sels[2], sels[4]); ok {
			return with(at, 5)
		}
		if at, ok := l.filed(str(4)); ok && len(sels) >= 6 {
			// context.<name>[<object's name>] (contextKinds).
			return with(at, 6)
		}
	}
	return sels
}

// filed is where the schema of the objects a review's context.<name>
// holds by their names is, when contextKinds files a kind the load knows
// under the name.
func (l *linter) filed(name string) ([]cue.Selector, bool) {
	if l.contextKinds == nil {
		// Read here: the load reads them for the engine after the lint.
		l.contextKinds = map[string]map[string]string{}
		_ = l.in.Schemas.LookupPath(contract.PathContextKinds).Decode(&l.contextKinds)
	}
	for _, apiVersion := range value.SortedKeys(l.contextKinds) {
		for _, kind := range value.SortedKeys(l.contextKinds[apiVersion]) {
			if l.contextKinds[apiVersion][kind] != name {
				continue
			}
			group, _, found := strings.Cut(apiVersion, "/")
			if !found {
				group = "" // core: v1
			}
			return l.kindSchema(group, kind)
		}
	}
	return nil, false
}

// lookedUp is where the schema of a review's context.<name> is, when the
// kind's lookups find it (lookups: v: K: objects: name) by a group and a
// kind the load knows (kindSchema); false when a
// condition the input decides (or anything else) hides the lookup.
func (l *linter) lookedUp(apiVersion, kind, name cue.Selector) ([]cue.Selector, bool) {
	found := l.in.Schemas.LookupPath(cue.MakePath(cue.Str(contract.FieldLookups), apiVersion, kind, contract.SelObjects, name))
	group, err1 := found.LookupPath(cue.MakePath(contract.SelLookupGroup)).String()
	k, err2 := found.LookupPath(cue.MakePath(contract.SelLookupKind)).String()
	if err1 != nil || err2 != nil {
		return nil, false
	}
	return l.kindSchema(group, k)
}

// kindSchema is where the schema of a kind of a group is: a CRD's of the
// CUE's, or core/v1's type of a kind of the core group ("").
func (l *linter) kindSchema(group, kind string) ([]cue.Selector, bool) {
	if group == "" && k8s.CoreKinds()[kind] {
		at := []cue.Selector{cue.Hid(contract.FieldCoreV1, l.pkg), cue.Def(kind)}
		return at, l.in.Schemas.LookupPath(cue.MakePath(at...)).Exists()
	}
	crd := l.in.Schemas.LookupPath(cue.MakePath(contract.SelCRDs, cue.Str(kind)))
	if g, err := crd.LookupPath(contract.PathCRDGroup).String(); err != nil || g != group {
		return nil, false
	}
	return append([]cue.Selector{contract.SelCRDs, cue.Str(kind)}, contract.PathCRDSchema.Selectors()...), true
}

// objectSchema is where the schema of a kind's object is: its CRD's
// schema (crds: Kind: schema, a definition, closed), when the CRD is of
// the apiVersion; else the kind's review's object, which the load cannot
// evaluate (it is the input unified with the schema, or not, as the API
// server checked it), so that the fields at its top are not checked.
func (l *linter) objectSchema(apiVersion, kind cue.Selector) []cue.Selector {
	review := []cue.Selector{contract.SelAdmission, apiVersion, kind, contract.SelObject}
	if !apiVersion.IsString() || !kind.IsString() {
		return review
	}
	crd := l.in.Schemas.LookupPath(cue.MakePath(contract.SelCRDs, kind))
	group, err1 := crd.LookupPath(contract.PathCRDGroup).String()
	version, err2 := crd.LookupPath(contract.PathCRDVersion).String()
	if err1 != nil || err2 != nil || group+"/"+version != apiVersion.Unquoted() {
		return review
	}
	return append([]cue.Selector{contract.SelCRDs, kind}, contract.PathCRDSchema.Selectors()...)
}

// partPath is the path of a CRD check part (crdCheckParts: v: K: name),
// its "*" items as any index of a list.
func (l *linter) partPath(part []cue.Selector) ([]cue.Selector, bool) {
	var path []string
	if l.in.Schemas.LookupPath(cue.MakePath(part...)).LookupPath(contract.PathCRDPartPath).Decode(&path) != nil {
		return nil, false
	}
	sels := make([]cue.Selector, len(path))
	for i, f := range path {
		sels[i] = cue.Str(f)
		if f == "*" {
			sels[i] = cue.AnyIndex
		}
	}
	return sels, true
}

// optional is the path of sels, whose fields may be optional ones.
func optional(sels []cue.Selector) cue.Path {
	out := make([]cue.Selector, len(sels))
	for i, s := range sels {
		if s.IsString() && !s.IsConstraint() {
			s = s.Optional()
		}
		out[i] = s
	}
	return cue.MakePath(out...)
}

// conjunctRefs are the values v is the conjunction of.
func conjunctRefs(v cue.Value) []cue.Value {
	if op, args := v.Expr(); op == cue.AndOp {
		return args
	}
	return nil
}

func samePath(a, b []cue.Selector) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].String() != b[i].String() {
			return false
		}
	}
	return true
}

// follow is v, or, when v is an error, what it refers to (v or one of the
// values it is the conjunction of).
func follow(v cue.Value) cue.Value {
	for range 10 {
		if v.Err() == nil {
			return v
		}
		refs := []cue.Value{v}
		if op, args := v.Expr(); op == cue.AndOp {
			refs = args
		}
		next := v
		for _, r := range refs {
			if root, p := r.ReferencePath(); len(p.Selectors()) > 0 {
				next = root.LookupPath(optional(p.Selectors()))
				break
			}
		}
		if next == v {
			return v
		}
		v = next
	}
	return v
}

// step is one selector of a read: a field name (sel) or an index
// expression the linter does not follow (ok false).
type step struct {
	sel   cue.Selector
	ok    bool
	name  string
	pos   token.Pos
	index ast.Expr
}

// suffix is the step as a read writes it after what it reads from: .name,
// or [i] for a list's item.
func (st step) suffix() string {
	if st.sel.LabelType() == cue.IndexLabel {
		return "[" + st.name + "]"
	}
	return "." + st.name
}

// isLet says an identifier names a let.
func isLet(id *ast.Ident) bool {
	_, ok := id.Node.(*ast.LetClause)
	return ok
}

// isForValue reports whether id is the value of a for clause.
func isForValue(id *ast.Ident) bool {
	fc, ok := id.Scope.(*ast.ForClause)
	return ok && fc.Value != nil && id.Node == fc.Value
}

// checkKeyComparison checks a comparison of a for clause's key with a
// literal: a list's key is an index (an int), a map's a string, so
// for e, _ in env if e == "ORG_TOKEN" is always false.
func (l *linter) checkKeyComparison(x *ast.BinaryExpr, fc *ast.ForClause, id *ast.Ident, lit *ast.BasicLit) {
	if x.Op != token.EQL && x.Op != token.NEQ {
		return
	}
	src, ok := l.resolveRead(fc.Source)
	if !ok {
		return
	}
	schema, _ := l.at(src.sels)
	if !schema.Exists() || schema.Err() != nil {
		return
	}
	var key string
	switch k := schema.IncompleteKind(); {
	case k == cue.ListKind && lit.Kind == token.STRING:
		key = "an index (int)"
	case k == cue.StructKind && lit.Kind != token.STRING:
		key = "a string"
	default:
		return
	}
	outcome := map[token.Token]string{token.EQL: "false", token.NEQ: "true"}[x.Op]
	l.problem(checks.ComparisonKind, lit.Pos(), "%s is the key of %s, %s, and never %s, so this comparison is always %s: the item is the clause's second name (for %s, item in ...)", id.Name, exprText(fc.Source), key, lit.Value, outcome, id.Name)
}

// readOf is the read an expression passes on, through parentheses, a
// default mark and a disjunction's first value: `*object.spec.trainer |
// {}` reads object.spec.trainer (a let that gives a default, a
// comprehension over a list or none).
func readOf(x ast.Expr) ast.Expr {
	for {
		switch v := x.(type) {
		case *ast.ParenExpr:
			x = v.X
		case *ast.UnaryExpr:
			if v.Op != token.MUL {
				return x
			}
			x = v.X
		case *ast.BinaryExpr:
			if v.Op != token.OR {
				return x
			}
			x = v.X
		default:
			return x
		}
	}
}

// chain splits a read such as object.spec.trainer["x"] into its root and
// selectors.
func chain(x ast.Expr) (ast.Expr, []step) {
	switch x := x.(type) {
	case *ast.SelectorExpr:
		root, steps := chain(x.X)
		st := step{pos: x.Sel.Pos()}
		switch s := x.Sel.(type) {
		case *ast.Ident:
			st.name, st.ok = s.Name, !strings.HasPrefix(s.Name, "#") && !strings.HasPrefix(s.Name, "_")
			if st.ok {
				st.sel = cue.Str(s.Name)
			} else if strings.HasPrefix(s.Name, "#") {
				st.sel, st.ok = cue.Def(s.Name), true
			}
		case *ast.BasicLit:
			if u, err := literal.Unquote(s.Value); err == nil {
				st.name, st.sel, st.ok = u, cue.Str(u), true
			}
		}
		return root, append(steps, st)
	case *ast.IndexExpr:
		root, steps := chain(x.X)
		st := step{pos: x.Index.Pos(), index: x.Index}
		if lit, ok := x.Index.(*ast.BasicLit); ok {
			switch lit.Kind {
			case token.STRING:
				if u, err := literal.Unquote(lit.Value); err == nil {
					st.name, st.sel, st.ok, st.index = u, cue.Str(u), true, nil
				}
			case token.INT:
				if n, err := strconv.Atoi(lit.Value); err == nil {
					st.name, st.sel, st.ok, st.index = lit.Value, cue.Index(n), true, nil
				}
			}
		}
		return root, append(steps, st)
	}
	return x, nil
}

// resolve is the path of the value an identifier (the root of a read)
// refers to, when it is known before evaluation.
func (l *linter) resolve(root ast.Expr) (lpath, bool) {
	id, ok := root.(*ast.Ident)
	if !ok || id.Name == "_" {
		return lpath{}, false
	}
	l.depth++
	defer func() { l.depth-- }()
	if l.depth > 20 {
		return lpath{}, false
	}
	switch n := id.Node.(type) {
	case nil:
		// A field of the package, declared in another file, or a
		// predeclared identifier (int, len).
		p := lpath{sels: []cue.Selector{l.selector(id.Name)}, ok: true}
		if id.Name == "" || !l.lookup(p).Exists() {
			return lpath{}, false
		}
		return p, true
	case *ast.LetClause:
		return l.resolveRead(n.Expr)
	case *ast.ImportSpec:
		return lpath{}, false
	case *ast.Field:
		// A field's alias (O=object: _) stands for the field's value; a
		// pattern's (a [N=string] label) for a key, which has no fields.
		if _, ok := n.Label.(*ast.Alias); ok {
			p, ok := l.paths[n.Value]
			return p, ok
		}
		return lpath{}, false
	}
	if p, ok := l.paths[id.Node]; ok {
		return p, true
	}
	// The value of a for clause: an element of its source. A source of
	// one item written out ([object.spec.trainer]) gives that item.
	if fc, ok := id.Scope.(*ast.ForClause); ok && fc.Value != nil && id.Node == fc.Value {
		if list, ok := fc.Source.(*ast.ListLit); ok {
			if len(list.Elts) == 1 && !isComprehensionLike(list.Elts[0]) {
				return l.resolveRead(list.Elts[0])
			}
			return lpath{}, false
		}
		base, ok := l.resolveRead(fc.Source)
		if !ok {
			return lpath{}, false
		}
		switch l.lookup(base).IncompleteKind() {
		case cue.ListKind:
			return base.child(cue.AnyIndex, true), true
		case cue.StructKind:
			// A map's value, whatever its key ([string]: string).
			if each := base.child(cue.AnyString, true); l.lookup(each).Exists() {
				return each, true
			}
		}
	}
	return lpath{}, false
}

// namedKey reports whether an index is a key the CUE's sources name: a
// string literal, or a reference to one (labels[#Labels.support]). Such
// a key reaches the rules as it is (see opaqueKeys).
func (l *linter) namedKey(x ast.Expr) bool {
	if lit, ok := x.(*ast.BasicLit); ok {
		return lit.Kind == token.STRING || lit.Kind == token.INT
	}
	s, ok := l.keyText(x)
	return ok && l.named(s)
}

// keyText is the text an expression that refers to one the load knows
// holds: a key (labels[#Labels.support]), an interpolated constant.
func (l *linter) keyText(x ast.Expr) (string, bool) {
	root, steps := chain(x)
	base, ok := l.resolve(root)
	if !ok {
		return "", false
	}
	v := l.lookup(base)
	for _, st := range steps {
		if !st.ok {
			return "", false
		}
		v = follow(v.LookupPath(optional([]cue.Selector{st.sel})))
	}
	s, err := v.String()
	return s, err == nil
}

// named reports whether the CUE's sources hold s as a literal or a label.
func (l *linter) named(s string) bool {
	if l.namedStrings == nil {
		l.namedStrings = k8s.NamedStrings(l.in.Instances)
	}
	return l.namedStrings[s]
}

// noteKeyRead records that a rule reads the keys of the map x as data.
// Its path is the one it resolves to, or as written when it does not
// resolve (a parameter's field).
func (l *linter) noteKeyRead(x ast.Expr) {
	l.depth++
	defer func() { l.depth-- }()
	if l.depth > 20 {
		return
	}
	// What the map is: each value of a disjunction or default, what a
	// let stands for.
	switch y := x.(type) {
	case *ast.ParenExpr:
		l.noteKeyRead(y.X)
		return
	case *ast.UnaryExpr:
		l.noteKeyRead(y.X)
		return
	case *ast.BinaryExpr:
		if y.Op == token.OR || y.Op == token.AND {
			l.noteKeyRead(y.X)
			l.noteKeyRead(y.Y)
		}
		return
	case *ast.Ident:
		if let, ok := y.Node.(*ast.LetClause); ok {
			l.noteKeyRead(let.Expr)
			return
		}
	}
	root, steps := chain(x)
	var names []string
	if base, ok := l.resolve(root); ok {
		names = selectorNames(base.sels)
	}
	for _, st := range steps {
		if st.ok && st.sel.IsString() {
			names = append(names, st.name)
		}
	}
	if len(names) > 0 {
		l.keyReads = append(l.keyReads, names)
	}
}

// matchesKeys reports whether a pattern constraint's label tells keys
// apart ([=~"^x/"]), rather than applying to every key ([string],
// [Name=string]).
func matchesKeys(pattern *ast.ListLit) bool {
	if len(pattern.Elts) != 1 {
		return true
	}
	x := pattern.Elts[0]
	if a, ok := x.(*ast.Alias); ok {
		x = a.Expr
	}
	id, ok := x.(*ast.Ident)
	return !ok || id.Name != "string" && id.Name != "_"
}

// selectorNames are the field names of a path, its indexes and patterns
// left out.
func selectorNames(sels []cue.Selector) []string {
	var out []string
	for _, s := range sels {
		if s.IsString() && !s.IsConstraint() {
			out = append(out, s.Unquoted())
		}
	}
	return out
}

// openProbe is a field name no schema declares: a struct that does not
// allow it is closed.
const openProbe = "\x00cuetrainer-probe"

// checkRead checks a read's selectors against the schema of what its root
// refers to: a closed struct (a definition: the objects' schemas) that
// does not allow a field means the read is always absent.
func (l *linter) checkRead(root ast.Expr, steps []step) {
	if len(steps) == 0 {
		return
	}
	base, ok := l.resolve(root)
	if !ok {
		return
	}
	l.checkReadsCover(base.sels, steps)
	l.noteContextRead(base.sels, steps, root.Pos())
	name := root.(*ast.Ident).Name
	if l.underParameter(base) {
		// A helper definition's parameter (#t: _), which says nothing
		// of its fields: checked against what its callers give it.
		l.helperReads = append(l.helperReads, helperRead{base: base, name: name, steps: steps})
		return
	}
	l.checkSteps(base.sels, name, steps, "this read is always absent")
	l.checkResourceNames(base.sels, name, steps)
}

// checkSteps checks each step from the schema at base, named name, while
// the schema says which fields there are: a step to a field it has not is
// a problem at the step (what says what the mistake does).
func (l *linter) checkSteps(base []cue.Selector, name string, steps []step, what string) {
	if pos, msg, found := l.stepsProblem(base, name, steps, what); found {
		l.problem(checks.AbsentRead, pos, "%s", msg)
	}
}

// stepsProblem is checkSteps' problem, where and what it is; found false
// when there is none.
func (l *linter) stepsProblem(base []cue.Selector, name string, steps []step, what string) (token.Pos, string, bool) {
	v, cur := l.at(base)
	for _, st := range steps {
		if !st.ok || !v.Exists() {
			return token.NoPos, "", false
		}
		// Under a definition of the package's top level, a struct is a
		// schema, however concrete its fields' defaults. A value with an
		// error (a plan, incomplete before its runtime) says nothing
		// here, but its fields may.
		closed := st.sel.LabelType() == cue.StringLabel && closedSchema(v, len(cur) > 0 && cur[0].IsDefinition())
		if closed {
			l.checked++
		}
		if closed && !v.Allows(st.sel) {
			fields := source.FieldNames(v)
			msg := fmt.Sprintf("%s has no field %s, so %s", name, st.name, what)
			if s := source.Suggest(st.name, fields); s != "" {
				msg += fmt.Sprintf(": did you mean %s?", s)
			} else {
				msg += fmt.Sprintf("; its fields are %s", strings.Join(fields, ", "))
			}
			return st.pos, msg, true
		}
		v, cur = l.at(append(cur[:len(cur):len(cur)], st.sel))
		name += st.suffix()
	}
	return token.NoPos, "", false
}

// closedSchema reports whether v is a struct that says which fields the
// object may have: a schema (isSchema, or any struct under a top-level
// definition, inDefinition), closed. A value with an error (a plan,
// incomplete before its runtime) says nothing.
func closedSchema(v cue.Value, inDefinition bool) bool {
	return v.Err() == nil && v.IncompleteKind() == cue.StructKind && (inDefinition || isSchema(v)) && !v.Allows(cue.Str(openProbe))
}

// isSchema reports whether a struct is a type rather than data: it has an
// optional field, or a field without a value yet. Only a schema's closed
// struct says which fields the object may have. Data computed at load
// from what is not there yet (the absent runtime's {} mlPolicy, closed
// because a definition computed it) says nothing of the data to come.
func isSchema(v cue.Value) bool {
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		return false
	}
	for it.Next() {
		if it.IsOptional() || !it.Value().IsConcrete() {
			return true
		}
	}
	return false
}

// checkTopLevel checks a top-level field of an admin's file against the
// contract.
func (l *linter) checkTopLevel(f *ast.Field) {
	lb := f.Label
	if a, ok := lb.(*ast.Alias); ok {
		if e, ok := a.Expr.(ast.Label); ok {
			lb = e
		}
	}
	var name string
	switch x := lb.(type) {
	case *ast.Ident:
		if strings.HasPrefix(x.Name, "#") || strings.HasPrefix(x.Name, "_") {
			return
		}
		name = x.Name
	case *ast.BasicLit:
		s, err := literal.Unquote(x.Value)
		if err != nil {
			return
		}
		name = s
	default:
		l.problem(checks.TopLevelField, f.Pos(), "a top-level field's name must be written out: the top level holds only %s, and definitions (#name) and hidden fields (_name) of your own", strings.Join(contract.TopLevelFields, ", "))
		return
	}
	if containsString(contract.TopLevelFields, name) {
		return
	}
	if s := source.Suggest(name, contract.TopLevelFields); s != "" {
		l.problem(checks.TopLevelField, f.Pos(), "unknown top-level field %s: did you mean %s?", name, s)
		return
	}
	l.problem(checks.TopLevelField, f.Pos(), "unknown top-level field %s: the top level holds only %s; a value of your own is a definition (#%s) or a hidden field (_%s)", name, strings.Join(contract.TopLevelFields, ", "), name, name)
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// markDefault records a default marker (*x) of the field at p.
func (l *linter) markDefault(x *ast.UnaryExpr, p lpath) {
	key := p.String()
	d := l.defaults[key]
	if d == nil {
		d = &defaultSite{path: p}
		l.defaults[key] = d
	}
	d.markers = append(d.markers, x.Pos())
	d.values = append(d.values, exprText(x.X))
}

// checkDefaults reports the fields whose defaults the admin marked but CUE
// dropped: two defaults that differ, or a default a bound rules out. CUE
// then leaves the field without a default, and what left it out fails.
func (l *linter) checkDefaults() {
	for _, key := range value.SortedKeys(l.defaults) {
		d := l.defaults[key]
		v := l.lookup(d.path)
		if !v.Exists() || v.IsConcrete() {
			continue
		}
		if _, ok := v.Default(); ok {
			continue
		}
		name := d.path.sels[len(d.path.sels)-1].String()
		var others []string
		for i, m := range d.markers[1:] {
			others = append(others, fmt.Sprintf("*%s at %s", d.values[i+1], l.in.Src.Position(m.Filename(), m.Line(), m.Column())))
		}
		var msg string
		if len(others) > 0 {
			msg = fmt.Sprintf("%s has defaults that disagree, *%s here and %s: CUE drops them all, so %s would be required wherever it is left out; give it one default", name, d.values[0], strings.Join(others, " and "), name)
		} else {
			msg = fmt.Sprintf("the default *%s of %s is dropped: it disagrees with another default or a bound of the field, so %s would be required wherever it is left out; keep one default, within the field's bounds", d.values[0], name, name)
		}
		var where []string
		for _, pos := range source.ConjunctPositions(v) {
			if pos.IsValid() && !l.in.Src.IsPolicyFile(pos.Filename()) {
				where = append(where, l.in.Src.Position(pos.Filename(), pos.Line(), pos.Column()))
			}
		}
		if len(where) > 0 {
			msg += "\n    " + strings.Join(where, "\n    ")
		}
		l.problem(checks.Defaults, d.markers[0], "%s", msg)
	}
}

// kindWords name the kinds of values a literal or a predeclared type
// admits.
var typeKinds = map[string][]string{
	"int": {"int"}, "int8": {"int"}, "int16": {"int"}, "int32": {"int"}, "int64": {"int"}, "int128": {"int"},
	"uint": {"int"}, "uint8": {"int"}, "uint16": {"int"}, "uint32": {"int"}, "uint64": {"int"}, "uint128": {"int"},
	"rune": {"int"}, "byte": {"int"}, "float": {"float"}, "float32": {"float"}, "float64": {"float"},
	"number": {"int", "float"}, "string": {"string"}, "bytes": {"bytes"}, "bool": {"bool"}, "null": {"null"},
}

// literalKind is the kind of a literal; "" for another expression.
func literalKind(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.BasicLit:
		switch x.Kind {
		case token.STRING:
			if strings.HasPrefix(x.Value, "'") {
				return "bytes"
			}
			return "string"
		case token.INT:
			return "int"
		case token.FLOAT:
			return "float"
		case token.TRUE, token.FALSE:
			return "bool"
		case token.NULL:
			return "null"
		}
	case *ast.Ident:
		if x.Name == "true" || x.Name == "false" {
			return "bool"
		}
		if x.Name == "null" {
			return "null"
		}
	}
	return ""
}

// checkDefaultType checks a disjunction whose default is a literal against
// its other values, when all of them are literals or predeclared types: a
// default of a kind none of them has (*"36000" | int32) makes the field
// one of two types, which the CRD turns into int-or-string. It says whether
// it reported one.
func (l *linter) checkDefaultType(terms []ast.Expr, p lpath) bool {
	var def *ast.UnaryExpr
	kinds := map[string]bool{}
	var others []string
	for _, t := range terms {
		if u, ok := t.(*ast.UnaryExpr); ok && u.Op == token.MUL {
			def = u
			continue
		}
		if k := literalKind(t); k != "" {
			kinds[k] = true
			others = append(others, exprText(t))
			continue
		}
		id, ok := t.(*ast.Ident)
		if !ok || id.Node != nil || typeKinds[id.Name] == nil {
			return false // a value the syntax does not tell
		}
		for _, k := range typeKinds[id.Name] {
			kinds[k] = true
		}
		others = append(others, id.Name)
	}
	if def == nil || len(others) == 0 {
		return false
	}
	k := literalKind(def.X)
	if k == "" || kinds[k] {
		return false
	}
	field := "the field"
	if p.ok && len(p.sels) > 0 {
		field = p.sels[len(p.sels)-1].String()
	}
	msg := fmt.Sprintf("the default %s is a %s, but %s's other values are %s: a default must be one of them", exprText(def.X), k, field, strings.Join(others, " | "))
	if lit, ok := def.X.(*ast.BasicLit); ok && k == "string" {
		if s, err := literal.Unquote(lit.Value); err == nil {
			if _, err := strconv.ParseFloat(s, 64); err == nil {
				msg += fmt.Sprintf(" (did you mean *%s?)", s)
			}
		}
	}
	l.problem(checks.Defaults, def.Pos(), "%s", msg)
	return true
}

// checkDefaultBounds checks a disjunction whose default is a literal
// against its other values, where the syntax alone says them and none is
// a literal (an enumeration's default is a member of its own: `*"CREATE" |
// "UPDATE"`): types and bounds, `int32 & >=1024 & <=65535`. CUE takes a marked
// default as a value of its own, so `*80 | int32 & >=1024` defaults to
// 80, which the field's bounds refuse: what the admin meant as the
// bounds of every value would not hold for the one most objects get, and
// the CRD made from it would lose its minimum.
// checkBoundAlone finds a disjunction's term that is a bound alone right
// after a term that bounds the other way (int32 & >=1024 | <=65535):
// | binds looser than &, so the field takes any value on the lone
// bound's side, where the range meant both.
func (l *linter) checkBoundAlone(terms []ast.Expr) {
	lower := map[token.Token]bool{token.GTR: true, token.GEQ: true}
	upper := map[token.Token]bool{token.LSS: true, token.LEQ: true}
	for i := 1; i < len(terms); i++ {
		alone, ok := terms[i].(*ast.UnaryExpr)
		if !ok || !lower[alone.Op] && !upper[alone.Op] {
			continue
		}
		prev, ok := terms[i-1].(*ast.BinaryExpr)
		if !ok || prev.Op != token.AND {
			continue
		}
		// The previous term's last bound, in the other direction.
		last, ok := prev.Y.(*ast.UnaryExpr)
		if !ok || !(lower[last.Op] && upper[alone.Op] || upper[last.Op] && lower[alone.Op]) {
			continue
		}
		l.problem(checks.BoundAlternative, alone.Pos(), "%s%s is an alternative of its own here (| binds looser than &), so the field takes any value %s%s, whatever the bound before it: if the range is meant whole, write & for |, which holds the field to both bounds; if %s%s is meant as an alternative, say so on the field: // cuetrainer:ignore bound-alternative REASON", alone.Op, exprText(alone.X), alone.Op, exprText(alone.X), alone.Op, exprText(alone.X))
	}
}

func (l *linter) checkDefaultBounds(terms []ast.Expr, p lpath) {
	var def *ast.UnaryExpr
	var others []ast.Expr
	for _, t := range terms {
		if u, ok := t.(*ast.UnaryExpr); ok && u.Op == token.MUL {
			def = u
			continue
		}
		if literalKind(t) != "" || !selfContained(t) {
			return // an enumeration's member, or a value the syntax does not tell
		}
		others = append(others, t)
	}
	if def == nil || len(others) == 0 || literalKind(def.X) == "" {
		return
	}
	value := l.in.Ctx.BuildExpr(def.X)
	var texts []string
	for _, t := range others {
		if value.Unify(l.in.Ctx.BuildExpr(t)).Validate() == nil {
			return
		}
		text, err := format.Node(t)
		if err != nil {
			text = []byte(exprText(t))
		}
		texts = append(texts, string(text))
	}
	field := "the field"
	if p.ok && len(p.sels) > 0 {
		field = p.sels[len(p.sels)-1].String()
	}
	l.problem(checks.Defaults, def.Pos(), "the default %s is none of %s's other values (%s): a default must be one of them, or the bounds hold for every value but the one most objects get", exprText(def.X), field, strings.Join(texts, " | "))
}

// selfContained says an expression's value needs no scope: literals, the
// built-in types, bounds of literals, and their conjunctions.
func selfContained(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.BasicLit:
		return true
	case *ast.Ident:
		return x.Node == nil && typeKinds[x.Name] != nil
	case *ast.ParenExpr:
		return selfContained(x.X)
	case *ast.UnaryExpr:
		switch x.Op {
		case token.GEQ, token.LEQ, token.GTR, token.LSS, token.NEQ, token.MAT, token.NMAT, token.SUB:
			_, lit := x.X.(*ast.BasicLit)
			return lit
		}
	case *ast.BinaryExpr:
		return x.Op == token.AND && selfContained(x.X) && selfContained(x.Y)
	}
	return false
}

// exprText prints a short expression as written.
func exprText(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.BasicLit:
		return x.Value
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprText(x.X) + "." + fmt.Sprint(x.Sel)
	case *ast.IndexExpr:
		return exprText(x.X) + "[" + exprText(x.Index) + "]"
	}
	return "…"
}

// readsRoots are the contract's fields whose entries may say with `reads`
// (and a lookup with `updateReads`) the paths of the input they are given,
// by name: the engine gives them those alone.
var readsRoots = map[string]bool{contract.FieldMutators: true, contract.FieldLookups: true, contract.FieldPlans: true}

// checkReadsCover finds a read of an admin's rule, under a mutator, a
// lookup or a plan that names its reads, of a path of the input (or of the old
// object) the reads do not name: the rule is given the named paths
// alone, so the read is absent (or partial) whatever the object holds,
// and the rule silently does otherwise than it says. The load's trial on
// the probes (checkMutatorReads, checkLookupReads) sees only what the
// probes hold; this sees the read itself.
func (l *linter) checkReadsCover(base []cue.Selector, steps []step) {
	if len(base) < 4 || !readsRoots[base[0].String()] || base[1].LabelType() != cue.StringLabel || base[2].LabelType() != cue.StringLabel {
		return
	}
	field, apiVersion, kind := base[0].String(), base[1].Unquoted(), base[2].Unquoted()
	var rest []cue.Selector
	root := contract.FieldInput
	switch {
	case base[3].String() == contract.FieldInput:
		rest = base[4:]
	case len(base) >= 5 && base[3].String() == contract.FieldContext && base[4].String() == contract.FieldOld:
		rest, root = base[5:], contract.FieldContext+"."+contract.FieldOld
	default:
		return
	}
	declared, ok := l.declaredReads(field, apiVersion, kind)
	if !ok {
		return
	}
	var read []string
	pos := token.NoPos
	for _, sel := range rest {
		if sel.LabelType() != cue.StringLabel {
			break
		}
		read = append(read, sel.Unquoted())
	}
	if len(read) == len(rest) {
		for _, st := range steps {
			if !st.ok || st.sel.LabelType() != cue.StringLabel {
				break
			}
			read, pos = append(read, st.sel.Unquoted()), st.pos
		}
	}
	if len(read) == 0 || pos == token.NoPos {
		return
	}
	for _, d := range declared {
		if len(d) <= len(read) && slices.Equal(d, read[:len(d)]) {
			return
		}
	}
	var names []string
	for _, d := range declared {
		names = append(names, strings.Join(d, "."))
	}
	msg := fmt.Sprintf("this rule reads %s.%s, which the reads of %s: %q: %s do not name: the rule is given %s alone, so the read is absent (or partial) whatever the object holds; name the path under %s: %q: %s: reads",
		root, strings.Join(read, "."), field, apiVersion, kind, strings.Join(names, ", "), field, apiVersion, kind)
	if field == contract.FieldPlans {
		msg += " (the plan is then evaluated for each value of it), or read it in a render part"
	}
	l.problem(checks.ReadsUndeclared, pos, "%s", msg)
}

// declaredReads are the paths a mutator's, a lookup's or a plan's `reads`
// (and a lookup's `updateReads`) name, as the load read them
// (load.Declarations.ReadInputReads); false when it names none (a mutator
// without reads is given the whole object).
func (l *linter) declaredReads(field, apiVersion, kind string) ([][]string, bool) {
	switch field {
	case contract.FieldLookups:
		byOp, ok := l.in.Decl.LookupReads[apiVersion][kind]
		return byOp[contract.OpUpdate], ok
	case contract.FieldPlans:
		paths, ok := l.in.Decl.PlanReads[apiVersion][kind]
		return paths, ok
	}
	paths, ok := l.in.Decl.MutatorReads[apiVersion][kind]
	return paths, ok
}

// checkRegexps compiles each regular expression an admin's file writes as
// a literal (x =~ "re", x !~ "re", =~"re" as a constraint or a pattern,
// regexp.Match("re", x) and its kin): CUE compiles one only when its rule
// evaluates, so a rule that does not fire on the probes would fail first
// on a user's object. CUE's regular expressions are Go's (RE2).
func (l *linter) checkRegexps(f *ast.File) {
	ast.Walk(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BinaryExpr:
			if x.Op == token.MAT || x.Op == token.NMAT {
				l.checkRegexp(x.Y, true)
			}
		case *ast.UnaryExpr:
			if x.Op == token.MAT || x.Op == token.NMAT {
				l.checkRegexp(x.X, true)
			}
		case *ast.CallExpr:
			if name, ok := patternCall(x); ok {
				l.checkRegexp(x.Args[0], name == "Match")
			}
		}
		return true
	}, nil)
}

// checkDefinitionArgs checks the arguments given to a definition used as
// a helper (#ReservedEnv & {#trainer: ..., #reserved: [...]}): a
// definition the helper does not declare (#reserve) is a field CUE
// allows and nothing reads, and an argument that names itself
// (#trainer: #trainer, the field it is in rather than the #trainer
// around it) is no value; either way the helper works on nothing, and the
// rule is silently off.
func (l *linter) checkDefinitionArgs(f *ast.File) {
	ast.Walk(f, func(n ast.Node) bool {
		x, ok := n.(*ast.BinaryExpr)
		if !ok || x.Op != token.AND {
			return true
		}
		for _, pair := range [][2]ast.Expr{{x.X, x.Y}, {x.Y, x.X}} {
			id, ok := pair[0].(*ast.Ident)
			args, isStruct := pair[1].(*ast.StructLit)
			if !ok || !isStruct || !strings.HasPrefix(id.Name, "#") {
				continue
			}
			p, ok := l.resolve(id)
			if !ok {
				continue
			}
			def := l.in.Schemas.LookupPath(cue.MakePath(p.sels...))
			if !def.Exists() || def.IncompleteKind() != cue.StructKind {
				continue
			}
			var params []string
			for it, _ := def.Fields(cue.Definitions(true), cue.Optional(true)); it != nil && it.Next(); {
				if it.Selector().IsDefinition() {
					params = append(params, it.Selector().String())
				}
			}
			for _, d := range args.Elts {
				field, ok := d.(*ast.Field)
				if !ok {
					continue
				}
				name, _, err := ast.LabelName(field.Label)
				if err != nil || !strings.HasPrefix(name, "#") {
					continue
				}
				if v, ok := field.Value.(*ast.Ident); ok && v.Name == name {
					l.problem(checks.HelperArgument, field.Pos(), "%s: %s refers to the field it is in, not to the %s around it, so %s is given no value: name the outer one (T=%s: _, then %s: T) or give its path", name, v.Name, name, id.Name, name, name)
					continue
				}
				// Read inside the argument's value ("\(#name)-master"):
				// the same field, which then never has a value, and the
				// rule fails on the first object it fires on.
				if self := selfRead(field); self != nil {
					written, _ := format.Node(field.Value)
					l.problem(checks.HelperArgument, self.Pos(), "%s: %s reads %s, which refers to the field it is in, not to the %s around it, so %s is given no value and the rule fails where it fires: name the outer one (T=%s: _, then read T) or give its path", name, written, name, name, id.Name, name)
					continue
				}
				if !slices.Contains(params, name) {
					msg := fmt.Sprintf("%s has no parameter %s (it has %s), so the argument is read by nothing", id.Name, name, strings.Join(params, ", "))
					if near := source.Suggest(name, params); near != "" {
						msg += fmt.Sprintf(": did you mean %s?", near)
					}
					l.problem(checks.HelperArgument, field.Pos(), "%s", msg)
					continue
				}
				// A literal argument the parameter refuses (#max: "40"
				// for an int) fails the helper when the rule fires.
				if lit, ok := field.Value.(*ast.BasicLit); ok {
					param := def.LookupPath(cue.MakePath(cue.Def(name)))
					if v := l.in.Ctx.BuildExpr(lit); v.Err() == nil && param.Exists() && param.Unify(v).Err() != nil {
						l.problem(checks.HelperArgument, lit.Pos(), "%s's parameter %s is %v, and this argument is %s: the helper would fail when the rule fires", id.Name, name, param.IncompleteKind(), lit.Value)
					}
				}
			}
		}
		return true
	}, nil)
}

// checkRuntimeOptionals finds optional fields (image?: "...") in the
// runtimes a file declares (clusterTrainingRuntimes): a runtime is an
// object, as in YAML, and CUE leaves an optional field out of it, so the
// runtime has no such field, in silence (no image, one node).
func (l *linter) checkRuntimeOptionals(f *ast.File) {
	for _, d := range f.Decls {
		field, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		if name, _, err := ast.LabelName(field.Label); err != nil || name != contract.FieldClusterTrainingRuntimes {
			continue
		}
		ast.Walk(field.Value, func(n ast.Node) bool {
			if fd, ok := n.(*ast.Field); ok && fd.Constraint == token.OPTION {
				name, _, _ := ast.LabelName(fd.Label)
				l.problem(checks.RuntimeOptional, fd.Pos(), "%s?: a runtime declared in CUE is an object, and CUE leaves an optional field out of it: the runtime would have no %s; write %s: ...", name, name, name)
			}
			return true
		}, nil)
	}
}

// checkKeyLiterals finds the string literals of a policy file that are
// a slip from a label or annotation key with a meaning (knownKeys) and
// are none themselves: a render part's pod label
// trainer.kubeflow.org/suport, a rule reading
// labels["trainer.kubeflow.com/support"], means nothing to any rule, and
// neither Kubeflow nor the API server says so. A key of the policy's own
// listed in knownKeys is one.
func (l *linter) checkKeyLiterals(f *ast.File) {
	// The keys alone: an entry's other mistakes are checkContract's.
	known := map[string]bool{}
	var entries map[string]struct {
		Keys map[string]bool `json:"keys"`
	}
	_ = l.in.Schemas.LookupPath(contract.PathKnownKeys).Decode(&entries)
	for _, m := range entries {
		for k := range m.Keys {
			known[k] = true
		}
	}
	sorted := value.SortedKeys(known)
	ast.Walk(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := literal.Unquote(lit.Value)
		if err != nil || known[s] || !strings.Contains(s, "/") {
			return true
		}
		if meant := k8s.NearKey(s, sorted); meant != "" {
			l.problem(checks.KnownKeySlip, lit.Pos(), "%s is no label or annotation key with a meaning (knownKeys), but a slip from %q: a key spelt so means nothing to any rule; list a key of the policy's own under knownKeys", lit.Value, meant)
		}
		return true
	}, nil)
}

// checkRegexp compiles a regular expression written as a string literal;
// matchOnly says that only whether it matches is read (=~, !~, regexp.Match).
func (l *linter) checkRegexp(x ast.Expr, matchOnly bool) {
	lit, ok := x.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return
	}
	s, err := literal.Unquote(lit.Value)
	if err != nil {
		return
	}
	if _, err := regexp.Compile(s); err != nil {
		l.problem(checks.RegexpInvalid, lit.Pos(), "%s is not a regular expression CUE can compile (%v): a rule using it would fail on the first object it meets", lit.Value, err)
		return
	}
	if strings.HasPrefix(lit.Value, "#") {
		if m := escapedTwice.FindString(s); m != "" {
			l.problem(checks.RegexpGlob, lit.Pos(), "%s: \\\\ matches a backslash, which the text would have to hold (in a #\"...\"# string each backslash stays as written): if \\%s was meant, write it so, which matches what that sign of a pattern does and no backslash; if a backslash is meant (a Windows path), say so on the field: // cuetrainer:ignore regexp-glob REASON", lit.Value, m[2:])
			return
		}
	}
	if alts := anchorsSomeAlternatives(s); alts != nil {
		// A guess: "^kube-|-system$" means what it matches; "^team-a|team-b$"
		// is "^(team-a|team-b)$" mistyped. A warning, which says both.
		l.problem(checks.RegexpAnchors, lit.Pos(), "%s: | binds loosest, so ^ and $ anchor only the alternatives they are written in: it matches any text with %s. If each alternative is meant whole, group them, %s, which matches those texts alone; if it is meant as written, group each alternative, %s, which matches the same and says so",
			lit.Value, strings.Join(alts, " or "), groupedAlternatives(strings.Split(s, "|")), eachGrouped(strings.Split(s, "|")))
		return
	}
	if tail, before := trailingOptional(s); matchOnly && tail != "" {
		l.problem(checks.RegexpGlob, lit.Pos(), "%s: a match may stop before the trailing %s, which nothing after it anchors, so the pattern matches every text %q matches, whatever follows it: a glob's * is .* in a pattern; to hold the whole text to the pattern, end it with $", lit.Value, tail, before)
	}
}

// escapedTwice is a backslash escaped, then a character a regular
// expression escapes (\\. where \. was meant).
var escapedTwice = regexp.MustCompile(`\\\\[.dDsSwWbB()\[\]{}+*?^$|]`)

// anchorsSomeAlternatives says what a regular expression of alternatives
// matches, alternative by alternative ("team-a" at its start, "team-b" at
// its end), when the first begins with ^ or the last ends with $ while
// another does not: "^team-a|team-b$" for "^(team-a|team-b)$", which
// matches "team-a-contractors". nil when it is no such expression.
func anchorsSomeAlternatives(re string) []string {
	parsed, err := syntax.Parse(re, syntax.Perl)
	written := strings.Split(re, "|")
	if err != nil || parsed.Op != syntax.OpAlternate || len(written) != len(parsed.Sub) {
		return nil
	}
	begins := func(r *syntax.Regexp) bool {
		for r.Op == syntax.OpConcat && len(r.Sub) > 0 {
			r = r.Sub[0]
		}
		return r.Op == syntax.OpBeginText || r.Op == syntax.OpBeginLine
	}
	ends := func(r *syntax.Regexp) bool {
		for r.Op == syntax.OpConcat && len(r.Sub) > 0 {
			r = r.Sub[len(r.Sub)-1]
		}
		return r.Op == syntax.OpEndText || r.Op == syntax.OpEndLine
	}
	subs := parsed.Sub
	if !(begins(subs[0]) && !all(subs, begins)) && !(ends(subs[len(subs)-1]) && !all(subs, ends)) {
		return nil
	}
	var out []string
	for i, sub := range subs {
		text := fmt.Sprintf("%q", strings.TrimSuffix(strings.TrimPrefix(written[i], "^"), "$"))
		switch {
		case begins(sub) && ends(sub):
			out = append(out, text+" whole")
		case begins(sub):
			out = append(out, text+" at its start")
		case ends(sub):
			out = append(out, text+" at its end")
		default:
			out = append(out, text+" anywhere")
		}
	}
	return out
}

// all says whether every item meets f.
func all[T any](items []T, f func(T) bool) bool {
	return !slices.ContainsFunc(items, func(x T) bool { return !f(x) })
}

// groupedAlternatives is the regular expression of alternatives with the
// anchors around them all.
func groupedAlternatives(alts []string) string {
	inner := make([]string, len(alts))
	for i, a := range alts {
		inner[i] = strings.TrimSuffix(strings.TrimPrefix(a, "^"), "$")
	}
	return fmt.Sprintf("%q (or anchor each: %q)", "^("+strings.Join(inner, "|")+")$", "^"+strings.Join(inner, "$|^")+"$")
}

// eachGrouped is the regular expression of alternatives with each in a
// group of its own: what it matches, written so (anchorsSomeAlternatives
// finds no alternative anchored alone in it).
func eachGrouped(alts []string) string {
	groups := make([]string, len(alts))
	for i, a := range alts {
		groups[i] = "(" + a + ")"
	}
	return fmt.Sprintf("%q", strings.Join(groups, "|"))
}

// selfRead is a read in a field's value of the whole field itself, by
// its own name (`#name: "\(#name)-master"`), nil when there is none: the
// parser resolves the name to the value it is in, which then depends on
// itself. A path from it (`#cfg: {x: 1, y: #cfg.x}`) reads a part, which
// CUE allows, and is no such read.
func selfRead(field *ast.Field) *ast.Ident {
	name, _, err := ast.LabelName(field.Label)
	if err != nil {
		return nil
	}
	var self *ast.Ident
	var stack []ast.Node
	ast.Walk(field.Value, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if ok && self == nil && id.Name == name && id.Node == field.Value {
			var parent ast.Node
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			switch p := parent.(type) {
			case *ast.SelectorExpr:
				ok = p.X != id
			case *ast.IndexExpr:
				ok = p.X != id
			}
			if ok {
				self = id
			}
		}
		stack = append(stack, n)
		return self == nil
	}, func(ast.Node) { stack = stack[:len(stack)-1] })
	return self
}

// checkComparison checks a comparison of a read with a literal against
// the read's schema: a literal the field can never hold makes == always
// false (the rule silently off) and != always true, and a literal of
// another kind makes <, <=, > and >= fail when the rule runs.
func (l *linter) checkComparison(x *ast.BinaryExpr) {
	switch x.Op {
	case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
	default:
		return
	}
	read, other := x.X, x.Y
	if s, ok := other.(*ast.StructLit); ok {
		l.checkStructComparison(x, read, s)
		return
	}
	if s, ok := read.(*ast.StructLit); ok {
		l.checkStructComparison(x, other, s)
		return
	}
	lit, ok := other.(*ast.BasicLit)
	if !ok {
		read, other = x.Y, x.X
		if lit, ok = other.(*ast.BasicLit); !ok {
			return
		}
	}
	if lit.Kind == token.NULL {
		return
	}
	if (x.Op == token.EQL || x.Op == token.NEQ) && lit.Kind == token.STRING {
		if s, err := literal.Unquote(lit.Value); err == nil && looksLikeRegexp.MatchString(s) {
			if _, _, ok := l.readAt(read); ok {
				op := map[token.Token]string{token.EQL: "=~", token.NEQ: "!~"}[x.Op]
				l.problem(checks.RegexpAsText, lit.Pos(), "%s looks like a regular expression, but %s compares text, which would have to be it letter for letter: if a pattern is meant, write %s, which matches every text the pattern does; if this text is meant, say so on the field: // cuetrainer:ignore regexp-as-text REASON", lit.Value, x.Op, op)
				return
			}
		}
	}
	if id, ok := read.(*ast.Ident); ok {
		if fc, ok := id.Scope.(*ast.ForClause); ok && fc.Key != nil && id.Node == fc.Key {
			l.checkKeyComparison(x, fc, id, lit)
			return
		}
	}
	if (x.Op == token.EQL || x.Op == token.NEQ) && lit.Kind == token.STRING && l.checkKnownValue(read, lit) {
		return
	}
	sels, name, ok := l.readAt(read)
	if !ok {
		return
	}
	schema, where := l.at(sels)
	if (x.Op == token.EQL || x.Op == token.NEQ) && lit.Kind == token.STRING {
		// The CRD's own list of values (an Enum marker, a rule `self in
		// [...]`), which the CUE type (a string) does not say.
		marked := crd.MarkerValues(schema)
		if l.checkOneOf(x.Op, lit, marked, func(never, outcome string) string {
			if schema.IncompleteKind()&cue.IntKind == 0 {
				return fmt.Sprintf("%s can only be one of %s (its CRD's validation), never %s, so this comparison is always %s", name, crd.QuoteEach(marked), never, outcome)
			}
			msg := fmt.Sprintf("%s is a number or one of %s (its CRD's validation), never %s, so this comparison is always %s", name, crd.QuoteEach(marked), never, outcome)
			if s, err := literal.Unquote(never); err == nil {
				if _, err := strconv.Atoi(s); err == nil {
					msg += fmt.Sprintf(": compare the number, %s", s)
				}
			}
			return msg
		}) {
			return
		}
		// A Kubernetes enum's values (imagePullPolicy: Always, Never,
		// IfNotPresent), which the API server holds it to.
		if values, typ := crd.EnumValues(schema); l.checkOneOf(x.Op, lit, values, func(never, outcome string) string {
			return fmt.Sprintf("%s is one of %s (its Kubernetes type, %s, is an enum: the API server refuses any other value), never %s, so this comparison is always %s", name, crd.QuoteEach(values), typ, never, outcome)
		}) {
			return
		}
		// A registry's entries (@values): any other value is refused by
		// the webhook that reads the registry.
		if allowed, registered, err := crd.RegistryValues(l.in.Schemas, schema); err == nil && l.checkOneOf(x.Op, lit, allowed, func(never, outcome string) string {
			return fmt.Sprintf("%s is one of %s on every object the webhooks admit (the values of %s: they refuse any other), never %s, so this comparison is always %s", name, crd.QuoteEach(allowed), registered, never, outcome)
		}) {
			return
		}
	}
	// Only a schema says what a field may hold: a value computed at load
	// says what the probes held; a constant of the object's (its apiVersion
	// and kind), which the load has not, is its schema's.
	fixed := schema.IsConcrete() && !underObject(where)
	if !schema.Exists() || schema.Err() != nil || fixed || schema.IncompleteKind() == cue.TopKind {
		return
	}
	value := l.in.Ctx.BuildExpr(lit)
	ordering := x.Op != token.EQL && x.Op != token.NEQ
	if ordering && lit.Kind == token.STRING && schema.IncompleteKind()&cue.StringKind != 0 {
		// Versions ordered as text: "v2.10" < "v2.3".
		if v, err := literal.Unquote(lit.Value); err == nil && versionText.MatchString(v) {
			l.problem(checks.TextOrder, lit.Pos(), "%s %s %s orders versions as text (\"v2.10\" < \"v2.3\"): compare their numbers, (#Release & {#text: %s}).minor and .major", name, x.Op, lit.Value, name)
			return
		}
	}
	if ordering && schema.IncompleteKind()&(cue.IntKind|cue.StringKind) == cue.IntKind|cue.StringKind {
		switch lit.Kind {
		case token.STRING:
			// A quantity (or an int-or-string) ordered against a string
			// literal is ordered as text: "16" > "8" is false.
			l.problem(checks.TextOrder, lit.Pos(), "%s is a quantity or a number written as a string, and %s %s %s orders it as text (\"16\" < \"8\"): compare numbers, such as context.quantities[q].value for the quantity q", name, name, x.Op, lit.Value)
			return
		case token.INT, token.FLOAT:
			// ... and against a number, fails on the string ("16", "500m"),
			// unless a condition has asked for a number.
			if l.numbers[exprText(read)] > 0 {
				break
			}
			l.problem(checks.ComparisonType, lit.Pos(), "%s is a quantity or a number written as a string, and %s %s %s fails when it is a string (\"16\", \"500m\"): compare numbers, such as context.quantities[q].value for the quantity q", name, name, x.Op, lit.Value)
			return
		}
	}
	if value.Err() != nil || schema.Unify(value).Err() == nil {
		return
	}
	kind := schema.IncompleteKind()
	what := fmt.Sprintf("%s (%v)", name, kind)
	if schema.IsConcrete() && kind&(cue.StructKind|cue.ListKind) == 0 {
		what = fmt.Sprintf("%s (always %v: its schema's)", name, schema)
	}
	switch {
	case x.Op == token.EQL || x.Op == token.NEQ:
		outcome := map[token.Token]string{token.EQL: "false", token.NEQ: "true"}[x.Op]
		hint := ""
		if kind == cue.StructKind {
			hint = ": compare one of its fields"
		}
		l.problem(neverCheck(kind, value.IncompleteKind()), lit.Pos(), "%s can never be %s, so this comparison is always %s%s", what, lit.Value, outcome, hint)
	case value.IncompleteKind()&kind == 0:
		l.problem(checks.ComparisonType, lit.Pos(), "%s (%v) cannot be ordered against %s (%v): the rule would fail when it runs", name, kind, lit.Value, value.IncompleteKind())
	}
}

// neverCheck is the check of a comparison that never holds between a read
// of schema kind and a literal of kind lit: comparison-kind, a fact of
// CUE, when no value is of both kinds; comparison-never, a guess at what
// was meant (a guard kept for defense in depth), when the schema's values
// of the literal's kind exclude it.
func neverCheck(schema, lit cue.Kind) checks.Check {
	if schema&lit == 0 {
		return checks.ComparisonKind
	}
	return checks.ComparisonNever
}

// checkOneOf reports a string literal compared (op, == or !=) with a read
// that holds one of allowed alone: says words it, given the literal as
// written and what the comparison always is; a value near the literal is
// suggested after. It says whether it reported one.
func (l *linter) checkOneOf(op token.Token, lit *ast.BasicLit, allowed []string, says func(never, outcome string) string) bool {
	s, err := literal.Unquote(lit.Value)
	if err != nil || len(allowed) == 0 || slices.Contains(allowed, s) {
		return false
	}
	msg := says(lit.Value, map[token.Token]string{token.EQL: "false", token.NEQ: "true"}[op])
	if near := source.Suggest(s, allowed); near != "" {
		msg += fmt.Sprintf(": did you mean %q?", near)
	}
	l.problem(checks.ComparisonNever, lit.Pos(), "%s", msg)
	return true
}

// checkKnownValue checks a label's or an annotation's value compared with
// a literal that is a slip from one of the values its key has a meaning
// with (knownKeys values): the rule never sees the objects it means (those
// with the value it slips from), and an object with the slip draws a
// warning. The read may have a default (*labels[k] | ""), which is not the
// literal. It says whether it reported one.
func (l *linter) checkKnownValue(read ast.Expr, lit *ast.BasicLit) bool {
	s, err := literal.Unquote(lit.Value)
	if err != nil || isDefaultOf(read, lit) {
		return false
	}
	sels, _, ok := l.readAt(readOf(read))
	if !ok {
		return false
	}
	allowed, key, ok := l.knownKeys().ValuesOf(selectorNames(sels))
	near := source.Suggest(s, allowed)
	if !ok || near == "" || slices.Contains(allowed, s) {
		return false
	}
	l.problem(checks.KnownKeySlip, lit.Pos(), "%s is a slip from %q, the value of %s with a meaning (knownKeys): the rule never sees the objects it means, and an object with %s draws a warning: did you mean %q?", lit.Value, near, key, lit.Value, near)
	return true
}

// isDefaultOf reports whether lit is one of the values a read gives
// besides what it reads (*labels[k] | "none"): a value it may be.
func isDefaultOf(read ast.Expr, lit *ast.BasicLit) bool {
	for r := read; r != readOf(r); {
		if b, ok := r.(*ast.BinaryExpr); ok && b.Op == token.OR && exprText(b.Y) == lit.Value {
			return true
		}
		switch v := r.(type) {
		case *ast.ParenExpr:
			r = v.X
		case *ast.UnaryExpr:
			r = v.X
		case *ast.BinaryExpr:
			r = v.X
		}
	}
	return false
}

// knownKeys are the keys with a meaning the compiled CUE lists; none when
// it cannot be read (the contract's checks say why).
func (l *linter) knownKeys() k8s.KnownKeys {
	if !l.knownRead {
		l.knownRead = true
		l.known, _ = k8s.ReadKnownKeys(l.in.Schemas)
	}
	return l.known
}

// searchFuncs are the strings functions that search their first argument
// for their second, with what they ask.
var searchFuncs = map[string]string{"HasPrefix": "begins with", "HasSuffix": "ends with", "Contains": "contains"}

// checkSearchArgs checks a strings search written the other way round
// (strings.HasPrefix("registry.example.com/", object.spec.trainer.image)):
// the text searched comes first, so with a literal there and a read
// second it asks whether the literal begins with the object's value, and
// the rule fires on every object but the one it means.
func (l *linter) checkSearchArgs(x *ast.CallExpr) {
	name, ok := stringsCall(x, 2)
	asks, known := searchFuncs[name]
	if !ok || !known {
		return
	}
	lit, text, ok := stringLit(x.Args[0])
	// strings.Contains("cpu gpu", x) is an idiom of its own: a text that
	// holds the values allowed, apart.
	if !ok || name == "Contains" && strings.ContainsAny(text, " ,;|") {
		return
	}
	read, ok := l.objectRead(x.Args[1])
	if !ok {
		return
	}
	l.problem(checks.ArgumentOrder, lit.Pos(), "strings.%s(%s, %s) asks whether the text %s %s %s: the text searched comes first: if the other way is meant, write strings.%s(%s, %s), which asks whether %s %s %s; if this is meant, say so on the field: // cuetrainer:ignore argument-order REASON", name, lit.Value, read, lit.Value, asks, read, name, read, lit.Value, read, asks, lit.Value)
}

// objectRead is a read of the object, as the linter names it, that x is
// (not a literal): the argument a call's other, literal, argument is
// compared with.
func (l *linter) objectRead(x ast.Expr) (string, bool) {
	if _, isLit := x.(*ast.BasicLit); isLit {
		return "", false
	}
	_, read, ok := l.readAt(x)
	return read, ok
}

// patternCall is the name of the regexp function x calls, when its first
// argument is a pattern (all but Valid and QuoteMeta).
func patternCall(x *ast.CallExpr) (string, bool) {
	fn, ok := x.Fun.(*ast.SelectorExpr)
	if !ok || len(x.Args) == 0 || !isImportOf(fn.X, "regexp") {
		return "", false
	}
	name, _, err := ast.LabelName(fn.Sel)
	return name, err == nil && name != "Valid" && name != "QuoteMeta"
}

// checkPatternArgs checks a regexp call written the other way round
// (regexp.Match(object.spec.trainer.image, "^docker\\.io/")): the pattern
// comes first, so it matches the pattern against the object's value taken
// as a pattern, and the rule means nothing it says.
func (l *linter) checkPatternArgs(x *ast.CallExpr) {
	name, ok := patternCall(x)
	if !ok || len(x.Args) < 2 {
		return
	}
	lit, s, ok := stringLit(x.Args[1])
	if !ok || !looksLikeRegexp.MatchString(s) {
		return
	}
	read, ok := l.objectRead(x.Args[0])
	if !ok {
		return
	}
	l.problem(checks.ArgumentOrder, lit.Pos(), "regexp.%s takes the pattern first: regexp.%s(%s, %s) reads %s as the pattern and %s as the text: did you mean regexp.%s(%s, %s)?", name, name, read, lit.Value, read, lit.Value, name, lit.Value, read)
}

// checkInterpolatedPattern checks a regular expression that interpolates
// a text the load knows (^\(#registry)/, #registry "registry.example.com"):
// the text is read as a pattern, so its . matches any character, and the
// rule lets through what it means to stop (registryXexample.com, a domain
// anyone may own). regexp.QuoteMeta puts it in as it is written.
func (l *linter) checkInterpolatedPattern(x ast.Expr) {
	in, ok := x.(*ast.Interpolation)
	if !ok {
		return
	}
	for _, el := range interpolated(in) {
		text, known := l.keyText(el)
		if !known || regexp.QuoteMeta(text) == text {
			continue
		}
		meta := metaOf(text)
		what := fmt.Sprintf("%s is more than itself", strconv.QuoteRune(meta))
		if meta == '.' {
			what = fmt.Sprintf("'.' matches any character (%q matches too)", strings.Replace(text, ".", "X", 1))
		}
		l.problem(checks.PatternInterpolation, el.Pos(), "\\(%s) puts %q into the pattern as a regular expression, where %s: if the text is meant as written, write \\(regexp.QuoteMeta(%s)), which matches it alone; if it is a pattern itself, say so on the field: // cuetrainer:ignore pattern-interpolation REASON", exprText(el), text, what, exprText(el))
	}
}

// metaOf is the first character of s that a regular expression reads as
// more than itself.
func metaOf(s string) rune {
	for _, r := range s {
		if regexp.QuoteMeta(string(r)) != string(r) {
			return r
		}
	}
	return 0
}

// stringsCall is the name of the strings function x calls with args
// arguments (strings.HasPrefix(a, b), args 2); ok false for any other
// call.
func stringsCall(x *ast.CallExpr, args int) (string, bool) {
	fn, ok := x.Fun.(*ast.SelectorExpr)
	if !ok || len(x.Args) != args || !isImportOf(fn.X, "strings") {
		return "", false
	}
	name, _, err := ast.LabelName(fn.Sel)
	return name, err == nil
}

// checkExclusive checks a chain of || whose terms each say that one read
// is not something (name != "a", !strings.HasPrefix(image, "a/"),
// ns !~ "^team-"), of two things no value is at once (textTest): the chain
// is always true, and a rule under it fires on every object. A chain of &&
// whose terms say the read is each of them is always false the same way,
// and its rule is off. What was meant is the other operator.
func (l *linter) checkExclusive(x *ast.BinaryExpr) {
	if l.chained[x] {
		return
	}
	if l.chained == nil {
		l.chained = map[*ast.BinaryExpr]bool{}
	}
	negated, outcome, other, holds := true, "true", "&&", ", so one of the two holds"
	if x.Op == token.LAND {
		negated, outcome, other, holds = false, "false", "||", ""
	}
	first := map[string]textTest{}
	var walk func(ast.Expr) bool
	walk = func(t ast.Expr) bool {
		t = unparen(t)
		if b, ok := t.(*ast.BinaryExpr); ok && b.Op == x.Op {
			l.chained[b] = true
			return walk(b.X) || walk(b.Y)
		}
		tt, ok := textTestOf(t)
		if !ok || tt.negated != negated || strings.Contains(tt.read, "…") {
			return false
		}
		prev, seen := first[tt.read]
		if !seen {
			first[tt.read] = tt
			return false
		}
		if !prev.excludes(tt) {
			return false
		}
		if prev.kind == testEquals && tt.kind == testEquals {
			cmp := map[bool]token.Token{true: token.NEQ, false: token.EQL}[negated]
			l.problem(checks.ComparisonNever, tt.lit.Pos(), "%s %s %s %s %s %s %s is always %s: %s is never both %s and %s%s: did you mean %s?",
				tt.read, cmp, prev.lit.Value, x.Op, tt.read, cmp, tt.lit.Value, outcome, tt.read, prev.lit.Value, tt.lit.Value, holds, other)
			return true
		}
		l.problem(checks.ComparisonNever, tt.lit.Pos(), "%s %s %s is always %s: no value of %s both %s and %s%s: did you mean %s?",
			termText(prev.term), x.Op, termText(tt.term), outcome, tt.read, prev.says(), tt.says(), holds, other)
		return true
	}
	walk(x)
}

// checkNeverBottom checks a test of a disjunction with a literal among its
// values against _|_ ((*labels.team | "") == _|_, or through a let that
// holds one): the literal is a value whatever the object holds, so the
// disjunction is never _|_, == _|_ is always false (the rule off) and
// != _|_ always true. The read itself was meant.
func (l *linter) checkNeverBottom(x *ast.BinaryExpr) {
	if x.Op != token.EQL && x.Op != token.NEQ {
		return
	}
	written, other := x.X, unparen(x.Y)
	if _, ok := unparen(written).(*ast.BottomLit); ok {
		written, other = x.Y, unparen(x.X)
	}
	tested := unparen(written)
	if _, ok := other.(*ast.BottomLit); !ok {
		return
	}
	disj := tested
	for range 5 {
		id, ok := disj.(*ast.Ident)
		if !ok {
			break
		}
		let, ok := id.Node.(*ast.LetClause)
		if !ok {
			break
		}
		disj = unparen(let.Expr)
	}
	var terms []ast.Expr
	var flatten func(ast.Expr)
	flatten = func(t ast.Expr) {
		t = unparen(t)
		if b, ok := t.(*ast.BinaryExpr); ok && b.Op == token.OR {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		terms = append(terms, t)
	}
	flatten(disj)
	if len(terms) < 2 {
		return
	}
	read := ""
	for _, t := range terms {
		if u, ok := t.(*ast.UnaryExpr); ok && u.Op == token.MUL {
			t = unparen(u.X)
		}
		if literalKind(t) == "" && !emptyLit(t) {
			if read == "" {
				read = termText(t)
			}
			continue
		}
		outcome := map[token.Token]string{token.EQL: "false", token.NEQ: "true"}[x.Op]
		l.problem(checks.ComparisonNever, x.OpPos, "%s is never _|_: %s is one of its values whatever the object holds, so this test is always %s: test the read itself (%s %s _|_)", termText(written), termText(t), outcome, read, x.Op)
		return
	}
}

// emptyLit says whether x is {} or [].
func emptyLit(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.StructLit:
		return len(x.Elts) == 0
	case *ast.ListLit:
		return len(x.Elts) == 0
	}
	return false
}

// checkCaseComparison checks == and != of a text a case call made
// (strings.ToLower(v) == "Gold") with a literal that holds a letter the
// call never gives: the comparison is always false (or true). It says
// whether it found one.
func (l *linter) checkCaseComparison(x *ast.BinaryExpr) bool {
	if x.Op != token.EQL && x.Op != token.NEQ {
		return false
	}
	for _, pair := range [][2]ast.Expr{{x.X, x.Y}, {x.Y, x.X}} {
		call, ok := pair[0].(*ast.CallExpr)
		lit, text, isLit := stringLit(pair[1])
		if !ok || !isLit {
			continue
		}
		name, _ := stringsCall(call, 1)
		var cased string
		switch name {
		case "ToLower":
			cased = strings.ToLower(text)
		case "ToUpper":
			cased = strings.ToUpper(text)
		default:
			continue
		}
		if cased == text {
			continue
		}
		outcome := map[token.Token]string{token.EQL: "false", token.NEQ: "true"}[x.Op]
		l.problem(checks.ComparisonNever, lit.Pos(), "strings.%s never gives %s, which holds letters of the other case, so this comparison is always %s: compare with %q", name, lit.Value, outcome, cased)
		return true
	}
	return false
}

// checkQuantityKey checks a literal key of context.quantities, which is
// keyed by a quantity's text ("16", "500m"): a resource's name
// (context.quantities["nvidia.com/gpu"]) is never one, so the entry is
// never there and the rule it guards silently off.
func (l *linter) checkQuantityKey(ix *ast.IndexExpr) {
	seq, ok := chainOf(ix.X)
	if !ok || len(seq) < 2 || seq[len(seq)-2] != contract.FieldContext || seq[len(seq)-1] != contract.FieldQuantities {
		return
	}
	lit, text, ok := stringLit(ix.Index)
	if !ok {
		return
	}
	if _, err := resource.ParseQuantity(text); err == nil {
		return
	}
	l.problem(checks.QuantityKey, lit.Pos(), "context.quantities is keyed by a quantity's text (\"16\", \"500m\"), and %s is none, so it never has that entry: index it by the quantity the object holds (context.quantities[limits[%s]])", lit.Value, lit.Value)
}

// stringLit is x and its text when x is a string literal.
func stringLit(x ast.Expr) (*ast.BasicLit, string, bool) {
	lit, ok := x.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return nil, "", false
	}
	s, err := literal.Unquote(lit.Value)
	return lit, s, err == nil
}

// looksLikeRegexp is a text that reads as a regular expression rather
// than as a value: anchored (^..., ...$) or with a wildcard (.*, .+).
var looksLikeRegexp = regexp.MustCompile(`^\^|[^\\]\$$|\.[*+]`)

// checkStructComparison checks a read compared with a struct literal
// (object.spec.runtimeRef == {name: "x"}): == compares every field, and
// the object always has the fields its schema gives a default or
// requires, so a literal without them is never equal.
func (l *linter) checkStructComparison(x *ast.BinaryExpr, read ast.Expr, lit *ast.StructLit) {
	if x.Op != token.EQL && x.Op != token.NEQ {
		return
	}
	sels, name, ok := l.readAt(read)
	if !ok {
		return
	}
	schema, _ := l.at(sels)
	if !schema.Exists() || schema.Err() != nil || schema.IncompleteKind() != cue.StructKind {
		return
	}
	given := map[string]bool{}
	for _, d := range lit.Elts {
		if f, ok := d.(*ast.Field); ok {
			if n, _, err := ast.LabelName(f.Label); err == nil {
				given[n] = true
			}
		}
	}
	var missing []string
	it, err := schema.Fields()
	if err != nil {
		return
	}
	for it.Next() {
		if n := it.Selector().Unquoted(); !given[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return
	}
	outcome := map[token.Token]string{token.EQL: "false", token.NEQ: "true"}[x.Op]
	l.problem(checks.ComparisonNever, lit.Pos(), "%s always has %s (its schema's defaults or required fields), which this literal has not, so the comparison is always %s: compare the fields meant (%s.%s == ...)", name, strings.Join(missing, ", "), outcome, name, firstField(lit))
}

// firstField names a struct literal's first field, "field" without one.
func firstField(s *ast.StructLit) string {
	for _, d := range s.Elts {
		if f, ok := d.(*ast.Field); ok {
			if n, _, err := ast.LabelName(f.Label); err == nil {
				return n
			}
		}
	}
	return "field"
}

// readAt resolves a read (object.spec.x, a let, a for clause's item and
// the fields under them) to its schema's path, with its text; false for a
// field read alone, or no read.
func (l *linter) readAt(read ast.Expr) (sels []cue.Selector, name string, ok bool) {
	root, steps := chain(read)
	id, isIdent := root.(*ast.Ident)
	if !isIdent || len(steps) == 0 && !isLet(id) && !isForValue(id) {
		return nil, "", false
	}
	base, ok := l.resolve(root)
	if !ok {
		return nil, "", false
	}
	sels, name = base.sels, id.Name
	for _, st := range steps {
		if !st.ok && st.index != nil {
			// A key the load knows (labels[#Labels.support]).
			if text, known := l.keyText(st.index); known {
				st.sel, st.name, st.ok = cue.Str(text), text, true
			}
		}
		if !st.ok {
			return nil, "", false
		}
		sels = append(sels[:len(sels):len(sels)], st.sel)
		name += st.suffix()
	}
	return sels, name, true
}

// checkContains checks list.Contains(read, literal), which compares each
// item of the list with the literal as == does: a literal no item can be
// (a name among env's entries, which are structs) makes it always false,
// and the rule under it off.
func (l *linter) checkContains(x *ast.CallExpr) {
	fn, ok := x.Fun.(*ast.SelectorExpr)
	if !ok || len(x.Args) != 2 || !isImportOf(fn.X, "list") {
		return
	}
	if name, _, err := ast.LabelName(fn.Sel); err != nil || name != "Contains" {
		return
	}
	if among, ok := x.Args[0].(*ast.ListLit); ok {
		l.checkContainsRead(among, x.Args[1])
		return
	}
	lit, ok := x.Args[1].(*ast.BasicLit)
	if !ok || lit.Kind == token.NULL {
		return
	}
	sels, name, ok := l.readAt(x.Args[0])
	if !ok {
		return
	}
	item, _ := l.at(append(sels[:len(sels):len(sels)], cue.AnyIndex))
	if !item.Exists() || item.Err() != nil || item.IncompleteKind() == cue.TopKind {
		return
	}
	value := l.in.Ctx.BuildExpr(lit)
	if value.Err() != nil || item.Unify(value).Err() == nil {
		return
	}
	hint := ""
	if item.IncompleteKind() == cue.StructKind {
		hint = fmt.Sprintf(": compare a field of each, list.Contains([for e in %s {e.name}], %s)", name, lit.Value)
	}
	l.problem(neverCheck(item.IncompleteKind(), value.IncompleteKind()), lit.Pos(), "list.Contains compares each item of %s (%v) with %s, which none can be, so it is always false%s", name, item.IncompleteKind(), lit.Value, hint)
}

// checkContainsRead checks list.Contains of a literal list and a read
// (list.Contains(["1", "2", "4"], numNodes)): an item the read's schema
// refuses (a text for a number) is never it, and when none can be the
// test is always false.
func (l *linter) checkContainsRead(among *ast.ListLit, read ast.Expr) {
	sels, name, ok := l.readAt(read)
	if !ok {
		return
	}
	schema, _ := l.at(sels)
	if !schema.Exists() || schema.Err() != nil || schema.IncompleteKind() == cue.TopKind {
		return
	}
	var never []*ast.BasicLit
	for _, x := range among.Elts {
		lit, ok := x.(*ast.BasicLit)
		if !ok || lit.Kind == token.NULL {
			continue
		}
		if value := l.in.Ctx.BuildExpr(lit); value.Err() == nil && schema.Unify(value).Err() != nil {
			never = append(never, lit)
		}
	}
	if len(never) > 0 && len(never) == len(among.Elts) {
		texts := make([]string, len(never))
		c := checks.ComparisonKind
		for i, lit := range never {
			texts[i] = lit.Value
			if neverCheck(schema.IncompleteKind(), l.in.Ctx.BuildExpr(lit).IncompleteKind()) != checks.ComparisonKind {
				c = checks.ComparisonNever
			}
		}
		l.problem(c, among.Lbrack, "list.Contains looks for %s (%v) among items it can never be (%s), so it is always false", name, schema.IncompleteKind(), strings.Join(texts, ", "))
		return
	}
	for _, lit := range never {
		l.problem(neverCheck(schema.IncompleteKind(), l.in.Ctx.BuildExpr(lit).IncompleteKind()), lit.Pos(), "list.Contains looks for %s (%v) among these items, and it can never be %s, so that item never matches", name, schema.IncompleteKind(), lit.Value)
	}
}

// versionText is a release or version written as text (v2.3, 1.2.0).
var versionText = regexp.MustCompile(`^v?[0-9]+\.[0-9]+(\.[0-9]+)?$`)

// underObject reports whether a path leads into the object a kind's
// entry is given (kind: input, object: ...): what the load knows there is
// the kind's schema.
func underObject(p []cue.Selector) bool {
	if len(p) >= 3 && p[0] == contract.SelCRDs && p[2] == contract.PathCRDSchema.Selectors()[0] {
		return true // a kind's CRD schema (objectSchema)
	}
	if len(p) < 4 || p[3].LabelType() != cue.StringLabel {
		return false
	}
	switch p[3].Unquoted() {
	case contract.FieldInput, contract.FieldObject:
		return true
	}
	return false
}

// resolveRead is the path of the value a read such as
// object.spec.trainer leads to, when it is known before evaluation.
func (l *linter) resolveRead(x ast.Expr) (lpath, bool) {
	r, steps := chain(readOf(x))
	base, ok := l.resolve(r)
	for _, st := range steps {
		base = base.child(st.sel, ok && st.ok)
		ok = base.ok
	}
	return base, ok
}

// isComprehensionLike reports whether a list element is not one value
// (a comprehension or an ellipsis).
func isComprehensionLike(x ast.Expr) bool {
	switch x.(type) {
	case *ast.Comprehension, *ast.Ellipsis:
		return true
	}
	return false
}

// underParameter reports whether a path leads into a parameter of a helper
// definition: a field of the definition that says nothing of its value
// (#t: _).
func (l *linter) underParameter(p lpath) bool {
	if len(p.sels) < 2 || !p.sels[0].IsDefinition() {
		return false
	}
	for i := 2; i <= len(p.sels); i++ {
		if isOpen(l.lookup(lpath{sels: p.sels[:i], ok: true})) {
			return true
		}
	}
	return false
}

// binding is what a caller gives a helper's parameter: the path of a read,
// and the read as written.
type binding struct {
	given lpath
	text  string
}

// helperRead is a read of a helper definition's parameter.
// contextRead is a read of context.<name> in a review of kind.
type contextRead struct {
	kind, name string
	pos        token.Pos
}

// noteContextRead records a read of a review's context.<name> (base the
// path its root resolves to, pos the root's place).
func (l *linter) noteContextRead(base []cue.Selector, steps []step, pos token.Pos) {
	if len(base) < 4 || base[0].String() != contract.FieldAdmission || !base[2].IsString() || base[3].String() != contract.FieldContext {
		return
	}
	var name cue.Selector
	switch {
	case len(base) > 4:
		name = base[4]
	case len(steps) > 0 && steps[0].ok:
		name, pos = steps[0].sel, steps[0].pos
	default:
		return
	}
	if name.IsString() && !name.IsConstraint() {
		l.contextReads = append(l.contextReads, contextRead{kind: base[2].Unquoted(), name: name.Unquoted(), pos: pos})
	}
}

// checkContextReads checks each read of a review's context.<name> that a
// policy's lookups give to reviews of other kinds alone (lookups:
// (#APIVersion): TrainingRuntime: objects: teamRuntime, read in a
// TrainJob's review): the review is never given it, so the read is always
// absent and the rule is silently off.
func (l *linter) checkContextReads() {
	lookedUpFor := map[string][]string{}
	for _, st := range l.contextSites {
		name := st.path[4].Unquoted()
		lookedUpFor[name] = append(lookedUpFor[name], st.path[2].Unquoted())
	}
	filed := map[string]bool{}
	kinds := l.in.Schemas.LookupPath(contract.PathContextKinds)
	for _, apiVersion := range source.FieldNames(kinds) {
		byKind := kinds.LookupPath(cue.MakePath(cue.Str(apiVersion)))
		for _, kind := range source.FieldNames(byKind) {
			if name, err := byKind.LookupPath(cue.MakePath(cue.Str(kind))).String(); err == nil {
				filed[name] = true
			}
		}
	}
	said := map[string]bool{}
	for _, r := range l.contextReads {
		kinds := lookedUpFor[r.name]
		if len(kinds) == 0 || slices.Contains(kinds, r.kind) || filed[r.name] || said[r.kind+"\x00"+r.name] {
			continue
		}
		said[r.kind+"\x00"+r.name] = true
		slices.Sort(kinds)
		kinds = slices.Compact(kinds)
		l.problem(checks.ContextRead, r.pos, "context.%s is looked up for the reviews of %s alone (lookups: (#APIVersion): %s: objects: %s), never for a %s's, so this read is always absent: file the lookup under %s too", r.name, strings.Join(kinds, " and "), kinds[0], r.name, r.kind, r.kind)
	}
}

type helperRead struct {
	base  lpath
	name  string
	steps []step
}

// noteBindings records, for a helper definition unified with a struct of
// arguments (#nodesOf & {#t: object.spec.trainer}), what each argument
// that is a read gives the parameter of its name.
func (l *linter) noteBindings(def, args ast.Expr) {
	s, ok := args.(*ast.StructLit)
	if !ok {
		return
	}
	p, ok := l.resolveRead(def)
	if !ok || len(p.sels) == 0 || !p.sels[0].IsDefinition() {
		return
	}
	for _, d := range s.Elts {
		f, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		sel, ok := l.label(f.Label)
		if !ok {
			continue
		}
		if given, ok := l.resolveRead(f.Value); ok {
			if l.bindings == nil {
				l.bindings = map[string][]binding{}
			}
			text, _ := format.Node(readOf(f.Value))
			param := p.child(sel, true).String()
			l.bindings[param] = append(l.bindings[param], binding{given: given, text: fmt.Sprintf("%s, at line %d", text, f.Value.Pos().Line())})
		}
	}
}

// checkHelperReads checks each read of a helper's parameter against what
// the callers give the parameter: a field none of them has is a problem
// at the read. A parameter no caller gives a read stays unchecked.
func (l *linter) checkHelperReads() {
	for _, hr := range l.helperReads {
		// The parameter, or a field of it a let in the helper names.
		for i := len(hr.base.sels); i > 1; i-- {
			given := l.bindings[lpath{sels: hr.base.sels[:i], ok: true}.String()]
			if len(given) == 0 {
				continue
			}
			extra := hr.base.sels[i:]
			var pos token.Pos
			var msg string
			absent := true
			for _, g := range given {
				base := append(slices.Clip(g.given.sels), extra...)
				p, m, found := l.stepsProblem(base, hr.name, hr.steps, "this read is always absent")
				if !found {
					absent = false
					break
				}
				if msg == "" {
					pos, msg = p, m
				}
			}
			if absent {
				l.problem(checks.AbsentRead, pos, "%s (the helper is given %s)", msg, given[0].text)
			}
			break
		}
	}
}

// ruleBlocks are the fields whose fields are rules: lists of findings,
// by rule name.
var ruleBlocks = map[string]bool{string(contract.PhaseCRD): true, string(contract.PhaseWebhook): true, string(contract.PhasePolicy): true, "warnings": true, "errors": true}

// isRulePath reports whether a path is a rule's: a field of a block of
// rules of a kind's entry (admission: v: K: policy: rule), or of a part's
// (renderParts: v: K: part: errors: rule).
func isRulePath(sels []cue.Selector) bool {
	n := len(sels)
	if n < 5 || !sels[0].IsString() || !sels[n-2].IsString() || !sels[n-1].IsString() || !ruleBlocks[sels[n-2].Unquoted()] {
		return false
	}
	switch root := sels[0].Unquoted(); {
	case byKindRoots[root]:
		return n == 5
	case root == contract.FieldRenderParts || root == contract.FieldCRDCheckParts:
		return n == 6
	}
	return false
}

// checkOpenRules finds rules whose value is an open list ([...], or _):
// a type of findings rather than a list of them, which finds nothing,
// whatever the object. A rule written out as a list of items (a list
// literal with an item and no `...`) somewhere is none: its comprehensions
// may wait on the object (`[if (*object.metadata.labels | {}).team ==
// _|_ {...}]` is incomplete in the schema, which then shows the rule as
// the contract's open list of findings).
func (l *linter) checkOpenRules() {
	writtenOut := map[string]bool{}
	for _, st := range l.rules {
		if list, ok := st.value.(*ast.ListLit); ok && len(list.Elts) > 0 && !slices.ContainsFunc(list.Elts, func(x ast.Expr) bool { _, open := x.(*ast.Ellipsis); return open }) {
			writtenOut[cue.MakePath(st.path...).String()] = true
		}
	}
	for _, st := range l.rules {
		if writtenOut[cue.MakePath(st.path...).String()] {
			continue
		}
		v := l.in.Schemas.LookupPath(cue.MakePath(st.path...))
		if v.Err() != nil || v.IncompleteKind() != cue.ListKind || !v.Allows(cue.AnyIndex) {
			continue
		}
		l.problem(checks.OpenRule, st.pos, "rule %s is an open list (a type, [...]), which finds nothing whatever the object: a rule is a list of findings written out, such as [if cond {path: ..., detail: ...}]", st.path[len(st.path)-2].Unquoted()+"."+st.path[len(st.path)-1].Unquoted())
	}
}

// checkOpenRuntimeLists finds open lists ([...{...}], a type) in the
// runtimes a policy declares: CUE takes one as an empty list, so a
// runtime's replicatedJobs or a container's env written so has none, and
// the runtime renders without them, in silence.
func (l *linter) checkOpenRuntimeLists() {
	it, err := l.in.Schemas.LookupPath(contract.PathClusterTrainingRuntimes).Fields()
	for err == nil && it.Next() {
		if p := l.in.Src.WrittenAt(it.Value()); !p.IsValid() || !l.in.Src.IsPolicyFile(p.Filename()) {
			continue
		}
		it.Value().Walk(func(v cue.Value) bool {
			if v.IncompleteKind() != cue.ListKind || !v.Allows(cue.AnyIndex) {
				return true
			}
			where := l.in.Src.WrittenAt(v)
			if !where.IsValid() || !l.in.Src.IsPolicyFile(where.Filename()) {
				return true
			}
			l.problem(checks.OpenRule, where, "clusterTrainingRuntimes: %q: %s is an open list (a type, [...]), which holds no item: the runtime has none there; write the items out ([{...}])", it.Selector().Unquoted(), strings.TrimPrefix(v.Path().String(), cue.MakePath(contract.PathClusterTrainingRuntimes.Selectors()[0], it.Selector()).String()+"."))
			return false
		}, nil)
	}
}

// checkMarkerKinds checks that each validation marker of the policy
// bounds a field of its kind: MaxLength on an int (or Minimum on a
// string) goes to the CRD, which the API server then checks against
// every runtime's value, refusing each as of the wrong type.
func (l *linter) checkMarkerKinds() {
	for _, b := range l.in.MarkerBounds {
		if b.Kind == 0 {
			continue
		}
		v := l.in.Schemas.LookupPath(cue.MakePath(b.Selectors()...))
		if !v.Exists() {
			continue
		}
		switch err := v.Err(); {
		case err == nil && v.IncompleteKind()&b.Kind != 0:
			continue
		case err != nil && strings.Contains(err.Error(), "does not satisfy"):
			// The bound fails the field's value at load ({} has fewer
			// fields than MinProperties asks): its kind is the field's.
			continue
		}
		l.problem(checks.Marker, b.At, "+kubebuilder:validation:%s bounds a %v, and this field holds none: the bound would refuse every value of the field, in vet and in the cluster", b.Marker, b.Kind)
	}
}

// renderRef is an entry of a render's generate, bases or sums.
type renderRef struct {
	site
	value ast.Expr
}

// checkRenderRefs checks the objects a render's generate, bases and sums
// name, as checkEditObject an edit's: generate and bases by their keys,
// sums by their object; and a base's literal path from the runtime
// against the runtime's schema. A generator or a base of an object no
// render builds, or a sum written into none, does nothing, in silence;
// a base from a field the runtime has not copies null.
func (l *linter) checkRenderRefs() {
	ids := l.objectIDs()
	named := func(pos token.Pos, what, id string) {
		if slices.Contains(ids, id) {
			return
		}
		msg := fmt.Sprintf("%s %q: no render builds an object of that id (%s), so it would do nothing", what, id, strings.Join(ids, ", "))
		if sug := source.Suggest(id, ids); sug != "" {
			msg += fmt.Sprintf(": did you mean %s?", sug)
		}
		l.problem(checks.RenderReference, pos, "%s", msg)
	}
	types := l.objectTypes()
	// intoObject checks a literal path into the object id against its
	// kind's Go type.
	intoObject := func(id string, path ast.Expr) {
		t, ok := types[id]
		list, isList := path.(*ast.ListLit)
		if !ok || !isList {
			return
		}
		var steps []k8s.PathStep
		for _, st := range literalSteps(list) {
			steps = append(steps, k8s.PathStep{Name: st.name})
			if k8s.TypeAt(t, steps) == nil {
				msg := fmt.Sprintf("the object %q (a %s) has no field %s here, so the API server would prune what is written there", id, t.Name(), st.name)
				var fields []string
				if parent := k8s.TypeAt(t, steps[:len(steps)-1]); parent != nil && parent.Kind() == reflect.Struct {
					fields = value.SortedKeys(k8s.JSONFields(parent))
				}
				if sug := source.Suggest(st.name, fields); sug != "" {
					msg += fmt.Sprintf(": did you mean %s?", sug)
				}
				l.problem(checks.RenderReference, st.pos, "%s", msg)
				return
			}
		}
	}
	for _, r := range l.renderRefs {
		n := len(r.path)
		block, name := r.path[n-2], r.path[n-1].Unquoted()
		if block != contract.SelSums {
			named(r.pos, block.Unquoted()+" of the object", name)
		}
		if gens, ok := r.value.(*ast.ListLit); ok && block == contract.SelGenerate {
			for _, x := range gens.Elts {
				if g, ok := x.(*ast.StructLit); ok {
					intoObject(name, fieldValue(g, "path"))
				}
			}
		}
		s, ok := r.value.(*ast.StructLit)
		if !ok {
			continue
		}
		if object, lit, ok := stringField(s, contract.FieldObject); ok && block == contract.SelSums {
			named(lit.Pos(), "the sum's object", object)
			intoObject(object, fieldValue(s, "path"))
		}
		from, ok := fieldValue(s, "from").(*ast.ListLit)
		if block != contract.SelBases || !ok {
			continue
		}
		steps := literalSteps(from)
		if len(steps) >= 2 && steps[0].name == contract.FieldMerged {
			// A merge of the render's kind, by name.
			names := source.FieldNames(l.in.Schemas.LookupPath(cue.MakePath(append(contract.PathMerges.Selectors(), r.path[1], r.path[2])...)))
			if !slices.Contains(names, steps[1].name) {
				msg := fmt.Sprintf("merged has no %s (the merges of %s are %s), so the base would copy nothing", steps[1].name, r.path[2].Unquoted(), strings.Join(names, ", "))
				if sug := source.Suggest(steps[1].name, names); sug != "" {
					msg += fmt.Sprintf(": did you mean %s?", sug)
				}
				l.problem(checks.RenderReference, steps[1].pos, "%s", msg)
			}
			continue
		}
		if len(steps) < 2 || steps[0].name != contract.FieldRuntime || l.in.runtimeKind() == "" {
			continue
		}
		base := []cue.Selector{contract.SelAdmission, r.path[1], cue.Str(l.in.runtimeKind()), contract.SelObject}
		if pos, msg, found := l.stepsProblem(base, contract.FieldRuntime, steps[1:], "the base would copy nothing"); found {
			l.problem(checks.RenderReference, pos, "%s", msg)
		}
	}
}

// fieldAttributes are the field attributes cuetrainer reads: an
// attribute a slip from one (@shema) would be one of the admin's own,
// which nothing reads.
var fieldAttributes = []string{"schema", "crd", crd.AttrValues}

// checkAttributes checks a file's field attributes: a slip from one
// cuetrainer reads, @schema naming no definition (the lint then reads the
// field as the value it is, and says nothing of its reads), and @tag,
// which CUE fills only from tags given to the cue command, and cuetrainer
// gives none, so the field keeps its default in silence.
func (l *linter) checkAttributes(f *ast.File) {
	ast.Walk(f, func(n ast.Node) bool {
		fd, ok := n.(*ast.Field)
		if !ok {
			return true
		}
		for _, a := range fd.Attrs {
			key, body := a.Split()
			switch {
			case key == "tag":
				l.problem(checks.Attribute, a.Pos(), "%s: cuetrainer sets no tags, so the field would keep its value as written: write the value", a.Text)
			case key == "schema":
				name := strings.TrimSpace(strings.SplitN(body, ",", 2)[0])
				if !strings.HasPrefix(name, "#") || !l.in.Schemas.LookupPath(cue.MakePath(cue.Def(name))).Exists() {
					msg := fmt.Sprintf("%s names %q, which is no definition of the schemas: the field's reads would not be checked against a schema", a.Text, name)
					if sug := source.Suggest(name, l.definitionNames()); sug != "" {
						msg += fmt.Sprintf(": did you mean %s?", sug)
					}
					l.problem(checks.Attribute, a.Pos(), "%s", msg)
				}
			case key == crd.AttrValues:
				if _, _, err := crd.ValuesAt(l.in.Schemas, body); err != nil {
					l.problem(checks.Attribute, a.Pos(), "%v: the comparisons of the field would not be checked against its values", err)
				}
			case !slices.Contains(fieldAttributes, key):
				if sug := source.Suggest(key, fieldAttributes); sug != "" {
					l.problem(checks.Attribute, a.Pos(), "%s: no attribute of that name is read: did you mean @%s?", a.Text, sug)
				}
			}
		}
		return true
	}, nil)
}

// definitionNames are the names of the schemas' top-level definitions.
func (l *linter) definitionNames() []string {
	var names []string
	it, err := l.in.Schemas.Fields(cue.Definitions(true))
	if err != nil {
		return nil
	}
	for it.Next() {
		if it.Selector().IsDefinition() {
			names = append(names, it.Selector().String())
		}
	}
	return names
}

// checkOptionalDefault checks an optional field for a default
// (`mode?: *"collective" | "ps"`): CUE never applies one to an optional
// field, absent stays absent, while the CRD made from the schema gives
// it and the API server applies it. vet, renders and the cluster would
// differ.
func (l *linter) checkOptionalDefault(f *ast.Field) {
	name, _, err := ast.LabelName(f.Label)
	if err != nil {
		return
	}
	for _, t := range crd.Disjuncts(f.Value) {
		if u, ok := t.(*ast.UnaryExpr); ok && u.Op == token.MUL {
			value, _ := format.Node(f.Value)
			l.problem(checks.Defaults, u.Pos(), "%s?: has a default, which CUE never applies to an optional field, though the CRD made from it does (the API server defaults it): vet, renders and the cluster would differ; make it a regular field (%s: %s) or drop the default", name, name, value)
			return
		}
	}
}

// checkGuardedFields checks each field declared under a comprehension
// against the closed struct it goes into: CUE checks a field's name only
// when the comprehension makes it, which at load (the input unknown) and
// on the probes it may never do, so a misspelt field of the contract
// (`object:` for a lookup's `objects:`) would be dropped in silence, or
// fail on a user's object.
func (l *linter) checkGuardedFields() {
	for _, st := range l.guardedFields {
		n := len(st.path)
		parent := l.in.Schemas.LookupPath(optional(st.path[:n-1]))
		name := st.path[n-1]
		if !parent.Exists() || parent.Err() != nil || parent.IncompleteKind() != cue.StructKind || parent.Allows(name) {
			continue
		}
		msg := fmt.Sprintf("%s does not allow %s, which CUE checks only when the comprehension around it makes it: it would be refused then, or never read", cue.MakePath(st.path[:n-1]...), name.Unquoted())
		if sug := source.Suggest(name.Unquoted(), source.FieldNames(parent)); sug != "" {
			msg += fmt.Sprintf(": did you mean %s?", sug)
		}
		l.problem(checks.ClosedField, st.pos, "%s", msg)
	}
}

// checkClosedFields checks that each field an admin's file declares
// inside a definition is one the definition allows once loaded: a field
// added through a reference to another, closed, definition
// (#MLPolicy: x?: queue?: string, where x is a framework's #XPolicy) loads,
// but no object may set it, and a runtime that does is refused as if
// the policy were not there. Added to that definition itself, it is
// allowed.
func (l *linter) checkClosedFields() {
	for _, st := range l.inDefinitions {
		parent := l.in.Schemas.LookupPath(optional(st.path[:len(st.path)-1]))
		name := st.path[len(st.path)-1]
		// (A site of an admin's file: TestLintFindsNothingInTheSchemas walks
		// the shipped ones, whose types have such fields.)
		if !st.optional && !strings.HasPrefix(st.pos.Filename(), source.Root+"/") && l.shipped(parent) {
			// A field every object must give, added to a type cuetrainer
			// ships: its runtimes (and every object made before) have
			// none, and each would be refused.
			v := parent.LookupPath(optional(st.path[len(st.path)-1:]))
			// (A field cuetrainer's files declare as a regular field too,
			// `object: _` in #RuntimeCRDChecks as every framework file
			// has it, is not added: the admin's declaration changes
			// nothing.)
			if _, hasDefault := v.Default(); v.Err() == nil && !v.IsConcrete() && !hasDefault && !l.shippedRegular(st.path) {
				label := strings.TrimRight(name.String(), "?!")
				l.problem(checks.ClosedField, st.pos, "%s: a field with no default that every object must give, added to %s, which cuetrainer ships: its runtimes and every object written before have none, and would each be refused; give it a default (%s: *x | ...) or make it optional (%s?:)",
					label, cue.MakePath(st.path[:len(st.path)-1]...), label, label)
				continue
			}
		}
		field := parent.LookupPath(optional(st.path[len(st.path)-1:]))
		// An optional field is kept in a closed struct, with the error
		// (CUE's own words) it would be if set.
		if parent.Err() != nil || field.Err() == nil || !strings.Contains(field.Err().Error(), "field not allowed") {
			continue
		}
		where := cue.MakePath(st.path[:len(st.path)-1]...).String()
		msg := fmt.Sprintf("%s does not allow %s, declared in it here: an object that sets it is refused, as if the policy did not declare it", where, name.Unquoted())
		var defs []string
		for _, c := range conjunctRefs(parent) {
			if _, ref := c.ReferencePath(); len(ref.Selectors()) > 0 && ref.Selectors()[len(ref.Selectors())-1].IsDefinition() {
				defs = append(defs, ref.String())
			}
		}
		if len(defs) == 1 {
			label := name.Unquoted()
			if st.optional {
				label += "?"
			}
			msg += fmt.Sprintf(": it is %s, which is closed; declare the field there (%s: %s: ...)", defs[0], defs[0], label)
		}
		l.problem(checks.ClosedField, st.pos, "%s", msg)
	}
}

// shipped reports whether a value has a conjunct in cuetrainer's own
// files (a type it ships, which a policy extends).
func (l *linter) shipped(v cue.Value) bool {
	for _, p := range source.ConjunctPositions(v) {
		if p.IsValid() && !l.in.Src.IsPolicyFile(p.Filename()) && p.Filename() != l.in.MarkerFile {
			return true
		}
	}
	return false
}

// shippedRegular reports whether cuetrainer's own files declare the field
// at path as a regular field (not optional, `x?:`), in their syntax.
func (l *linter) shippedRegular(path []cue.Selector) bool {
	for _, f := range cueFiles(l.in.Instances) {
		if !l.in.Src.IsPolicyFile(f.Filename) && f.Filename != l.in.MarkerFile && l.declaresRegular(f.Decls, path) {
			return true
		}
	}
	return false
}

// declaresRegular reports whether decls declare the field at path, below
// them, as a regular field: through struct literals, embedded or a
// field's value (`a: b: c` too).
func (l *linter) declaresRegular(decls []ast.Decl, path []cue.Selector) bool {
	for _, d := range decls {
		switch d := d.(type) {
		case *ast.Field:
			if sel, ok := l.fileLabel(d.Label); !ok || sel != path[0] {
				continue
			}
			if len(path) == 1 {
				if d.Constraint != token.OPTION {
					return true
				}
				continue
			}
			if s, ok := d.Value.(*ast.StructLit); ok && l.declaresRegular(s.Elts, path[1:]) {
				return true
			}
		case *ast.EmbedDecl:
			if s, ok := d.Expr.(*ast.StructLit); ok && l.declaresRegular(s.Elts, path) {
				return true
			}
		}
	}
	return false
}

// fileLabel is label's selector in any file of the package: a label
// `(#name)` is the package's #name, which the parser resolves to its
// value in the file that declares it and to nothing in the others.
func (l *linter) fileLabel(lb ast.Label) (cue.Selector, bool) {
	if p, ok := lb.(*ast.ParenExpr); ok {
		if id, ok := p.X.(*ast.Ident); ok {
			if s, err := l.in.Schemas.LookupPath(cue.MakePath(l.selector(id.Name))).String(); err == nil {
				return cue.Str(s), true
			}
		}
	}
	return l.label(lb)
}

// checkDeclared checks each definition an admin's file declares as `#x: _`
// under the contract's fields, to read what the engine's CUE gives it (a
// review's #runtime, a render part's #plan): one that nothing gives a
// value (a misspelt name, #runtim) stays `_`, and every read of it is
// absent. A render part's is its render's: the render must have it.
func (l *linter) checkDeclared() {
	for _, st := range l.declared {
		parent, last := st.path[:len(st.path)-1], st.path[len(st.path)-1]
		scope := lpath{sels: parent, ok: true}
		if render, ok := renderScope(parent); ok {
			// A part of a render is unified with the kind's render.
			scope = render
			if l.lookup(scope.child(last, true)).Exists() {
				continue
			}
		} else if isPlanInput(st.path) {
			if givenByAnother(l.lookup(lpath{sels: st.path, ok: true})) {
				continue
			}
		} else if !isOpen(l.lookup(lpath{sels: st.path, ok: true})) {
			continue
		}
		where := cue.MakePath(st.path...).String()
		msg := fmt.Sprintf("%s is declared _ and nothing gives it a value, so every read of it is absent", where)
		var names []string
		if last.IsDefinition() {
			names = definitionNames(l.lookup(scope), last)
		} else {
			names = fieldNames(l.lookup(scope), last)
		}
		if s := source.Suggest(last.String(), names); s != "" {
			msg += fmt.Sprintf(": did you mean %s?", s)
		}
		l.problem(checks.DeclaredUnset, st.pos, "%s", msg)
	}
	// A definition a render part sets that its render has not, and that
	// no admin's file reads, reaches nothing (#count for #counts).
	var uses map[string]int
	for _, st := range l.partDefs {
		last := st.path[len(st.path)-1]
		render := lpath{sels: []cue.Selector{contract.SelRender, st.path[1], st.path[2]}, ok: true}
		// The render may declare it optional (#wrapCommand?: a framework
		// that wraps the trainer's program sets it): it reads it all the
		// same.
		if l.lookup(render.child(last, true)).Exists() || l.lookup(render.child(last.Optional(), true)).Exists() {
			continue
		}
		if uses == nil {
			uses = l.policyIdentUses()
		}
		if uses[last.String()] > 1 {
			continue // a helper of the admin's own
		}
		msg := fmt.Sprintf("%s is no definition of the %s render, and nothing reads it, so what it holds reaches nothing", cue.MakePath(st.path...).String(), st.path[2].Unquoted())
		if s := source.Suggest(last.String(), definitionNames(l.lookup(render), last)); s != "" {
			msg += fmt.Sprintf(": did you mean %s?", s)
		}
		l.problem(checks.PartDefinition, st.pos, "%s", msg)
	}
}

// policyIdentUses counts each identifier's occurrences in the admin's
// files, declarations' labels included.
func (l *linter) policyIdentUses() map[string]int {
	uses := map[string]int{}
	for _, name := range value.SortedKeys(l.in.Files) {
		ast.Walk(l.in.Files[name], func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				uses[id.Name]++
			}
			return true
		}, nil)
	}
	return uses
}

// renderScope is the kind's render a part of it at path is unified with
// (a render part, a controller's part, the load's render checks): false
// for what is not such a part.
func renderScope(path []cue.Selector) (lpath, bool) {
	switch {
	case len(path) == 4 && path[0].String() == contract.FieldRenderParts,
		len(path) == 3 && (path[0].String() == contract.FieldControllers || path[0].String() == contract.FieldRenderChecks):
		return lpath{sels: []cue.Selector{contract.SelRender, path[1], path[2]}, ok: true}, true
	}
	return lpath{}, false
}

// definitionNames are the definitions of v but skip, sorted.
// givenByAnother says whether a conjunct of v says more than _: a plan's
// field another file computes (podSet: {for ps in podSets {...}}) may
// evaluate to _ before the plan has its runtime, and is given all the
// same.
func givenByAnother(v cue.Value) bool {
	op, args := v.Expr()
	if op != cue.AndOp {
		return v.IncompleteKind() != cue.TopKind
	}
	for _, a := range args {
		if a.IncompleteKind() != cue.TopKind {
			return true
		}
	}
	return false
}

// fieldNames are the regular fields of v but skip, sorted.
func fieldNames(v cue.Value, skip cue.Selector) []string {
	var out []string
	for _, name := range source.FieldNames(v) {
		if name != skip.String() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// isPlanInput says whether sels is a regular field of a kind's plan
// (plans: (apiVersion): (kind): name) but those the engine gives it, the
// input and the context.
func isPlanInput(sels []cue.Selector) bool {
	if len(sels) != 4 || sels[0].String() != contract.FieldPlans || sels[3].LabelType() != cue.StringLabel {
		return false
	}
	name := sels[3].Unquoted()
	return name != contract.FieldInput && name != contract.FieldContext
}

func definitionNames(v cue.Value, skip cue.Selector) []string {
	var out []string
	it, err := v.Fields(cue.Definitions(true))
	if err != nil {
		return nil
	}
	for it.Next() {
		if sel := it.Selector(); sel.IsDefinition() && sel != skip {
			out = append(out, sel.String())
		}
	}
	sort.Strings(out)
	return out
}

// isImportOf reports whether x names the file's import of the package at
// path (under any name).
func isImportOf(x ast.Expr, path string) bool {
	id, ok := x.(*ast.Ident)
	if !ok {
		return false
	}
	spec, ok := id.Node.(*ast.ImportSpec)
	if !ok {
		return false
	}
	p, err := literal.Unquote(spec.Path.Value)
	return err == nil && p == path
}
