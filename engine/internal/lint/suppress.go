package lint

import (
	"fmt"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"

	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// Suppression: an admin silences a heuristic check's finding where it is
// meant, as staticcheck's //lint:ignore does and with its rules. Three
// forms, each naming the checks and saying why:
//
//	// cuetrainer:ignore CHECK[,CHECK...] REASON
//	    a comment on a field (above it, or after it on its line): the
//	    field's lines, every line of its value;
//	// cuetrainer:file-ignore CHECK[,CHECK...] REASON
//	    anywhere in a file: the whole file;
//	lint: ignore: CHECK: REASON
//	    in a file of a policy directory: every file of that directory.
//
// Only a heuristic check's findings are silenced: a directive that names a
// sound check, a check no one has, or no reason refuses the load
// (checks.IgnoreDirective), and one that silences nothing is a warning
// (checks.UnusedIgnore): left in, it would silence a later finding that
// nothing meant.

// Directive prefixes, in a comment's text after its //.
const (
	ignoreLine = "cuetrainer:ignore"
	ignoreFile = "cuetrainer:file-ignore"
)

// directive is one place that silences checks.
type directive struct {
	// form names it in messages.
	form string
	// names are the checks it names, at pos; reason says why.
	names  []string
	reason string
	pos    token.Pos
	// file is the display name of the file it applies to, "" for a
	// policy directory's setting, which applies to the files of dir.
	file string
	dir  int
	// from and to are the lines it applies to, 0 for the whole file.
	from, to int
	// used says, by check name, that it silenced a finding.
	used map[string]bool
}

// covers says whether d silences a finding of check at file:line, where
// file is of the policy directory dir.
func (d *directive) covers(check, file string, line, dir int) bool {
	if !containsString(d.names, check) {
		return false
	}
	switch {
	case d.file == "":
		return d.dir == dir
	case d.file != file:
		return false
	case d.from == 0:
		return true
	}
	return d.from <= line && line <= d.to
}

// directives reads the suppressions of the admin's files.
func (l *linter) directives() []*directive {
	var out []*directive
	for _, name := range value.SortedKeys(l.in.Files) {
		f := l.in.Files[name]
		display := l.in.Src.Display(name)
		dir, _ := source.PolicyDirOf(name)
		ast.Walk(f, func(n ast.Node) bool {
			for _, cg := range ast.Comments(n) {
				for _, c := range cg.List {
					if d := l.commentDirective(c, n, display); d != nil {
						d.dir = dir
						out = append(out, d)
					}
				}
			}
			return true
		}, nil)
		for _, decl := range f.Decls {
			if field, ok := decl.(*ast.Field); ok && labelText(field.Label) == contract.FieldLint {
				out = append(out, l.settingDirectives(field.Value, dir)...)
			}
		}
	}
	return out
}

// commentDirective is the directive a comment attached to n holds, nil for
// none.
func (l *linter) commentDirective(c *ast.Comment, n ast.Node, display string) *directive {
	text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
	form, rest, ok := cutWord(text, ignoreLine)
	if !ok {
		if form, rest, ok = cutWord(text, ignoreFile); !ok {
			return nil
		}
	}
	namesText, reason, _ := strings.Cut(strings.TrimSpace(rest), " ")
	d := &directive{form: "// " + form, reason: strings.TrimSpace(reason), pos: c.Pos(), file: display}
	if namesText != "" {
		d.names = strings.Split(namesText, ",")
	}
	if form == ignoreLine {
		// The node the comment is attached to: a field, above it or after
		// it on its line. One attached to the file itself (before the
		// package clause) holds the line after it.
		d.from, d.to = n.Pos().Line(), n.End().Line()
		if _, isFile := n.(*ast.File); isFile || !n.Pos().IsValid() {
			d.from, d.to = c.Pos().Line()+1, c.Pos().Line()+1
		}
	}
	return d
}

// cutWord cuts word off the front of text when a space or nothing follows
// it.
func cutWord(text, word string) (string, string, bool) {
	rest, ok := strings.CutPrefix(text, word)
	if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", "", false
	}
	return word, rest, true
}

// settingDirectives are the entries of a file's lint: ignore:, each a
// directive of the policy directory dir.
func (l *linter) settingDirectives(x ast.Expr, dir int) []*directive {
	// Read as written, never evaluated: a value made otherwise (a
	// reference, a comprehension) would silence nothing, in silence.
	writtenOut := func(x ast.Expr, what string) bool {
		if _, ok := x.(*ast.StructLit); !ok {
			l.problem(checks.IgnoreDirective, x.Pos(), "%s: write it as a struct of fields, each a check's name and its reason: the engine reads it as written, and silences nothing otherwise", what)
			return false
		}
		return true
	}
	var out []*directive
	if !writtenOut(x, contract.FieldLint) {
		return nil
	}
	for _, ignore := range structFields(x) {
		if labelText(ignore.Label) != contract.FieldLintIgnore || !writtenOut(ignore.Value, contract.FieldLint+": "+contract.FieldLintIgnore) {
			continue
		}
		for _, entry := range structFields(ignore.Value) {
			name := labelText(entry.Label)
			d := &directive{form: contract.FieldLint + ": " + contract.FieldLintIgnore + ":", pos: entry.Label.Pos(), dir: dir}
			if name != "" {
				d.names = []string{name}
			}
			_, reason, ok := stringLit(entry.Value)
			if !ok {
				l.problem(checks.IgnoreDirective, entry.Value.Pos(), "%s %s: write the reason as a string literal: the engine reads it as written", d.form, name)
				continue
			}
			d.reason = strings.TrimSpace(reason)
			out = append(out, d)
		}
	}
	return out
}

// structFields are the fields of a struct literal x, or of the one field
// a label chain (a: b: c) is.
func structFields(x ast.Expr) []*ast.Field {
	s, ok := x.(*ast.StructLit)
	if !ok {
		return nil
	}
	var out []*ast.Field
	for _, d := range s.Elts {
		if f, ok := d.(*ast.Field); ok {
			out = append(out, f)
		}
	}
	return out
}

// labelText is a label's name when it is written out, "" otherwise.
func labelText(lb ast.Label) string {
	name, _, err := ast.LabelName(lb)
	if err != nil {
		return ""
	}
	return name
}

// checkDirective refuses a directive written wrong: a name no check has,
// a sound check's, or no reason. It reports whether d may silence.
func (l *linter) checkDirective(d *directive) bool {
	var all []string
	for _, c := range checks.All() {
		if c.Suppressible() {
			all = append(all, c.Name)
		}
	}
	if len(d.names) == 0 {
		l.problem(checks.IgnoreDirective, d.pos, "%s names no check: write %s CHECK REASON, with a heuristic check's name (%s)", d.form, d.form, strings.Join(all, ", "))
		return false
	}
	ok := true
	for _, name := range d.names {
		c, known := checks.Named(name)
		switch {
		case !known:
			hint := ""
			if s := source.Suggest(name, all); s != "" {
				hint = fmt.Sprintf(": did you mean %s?", s)
			} else {
				hint = fmt.Sprintf("; the checks a directive may name: %s", strings.Join(all, ", "))
			}
			l.problem(checks.IgnoreDirective, d.pos, "%s %s: no check is named %s%s", d.form, name, name, hint)
			ok = false
		case !c.Suppressible():
			l.problem(checks.IgnoreDirective, d.pos, "%s %s: %s is a sound check: what it finds is wrong whatever the policy means, so it is fixed, never silenced (docs/checks.md)", d.form, name, name)
			ok = false
		}
	}
	if d.reason == "" {
		l.problem(checks.IgnoreDirective, d.pos, "%s %s: say why the finding is meant, after the check's name: a reason is what a reader of the policy has to go on", d.form, strings.Join(d.names, ","))
		ok = false
	}
	return ok
}

// suppress drops the findings of heuristic checks the admin's directives
// silence, refuses the directives written wrong and warns of those that
// silence nothing.
func (l *linter) suppress() {
	var ds []*directive
	for _, d := range l.directives() {
		if l.checkDirective(d) {
			d.used = map[string]bool{}
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return
	}
	// The policy directory of each admin's file, by its display name.
	dirs := map[string]int{}
	for name := range l.in.Files {
		dirs[l.in.Src.Display(name)], _ = source.PolicyDirOf(name)
	}
	keep := func(ps []source.Problem) []source.Problem {
		out := ps[:0]
		for _, p := range ps {
			dir, ofPolicy := dirs[p.File]
			silenced := false
			if c, ok := checks.Named(p.Check); ok && c.Suppressible() && ofPolicy {
				for _, d := range ds {
					if d.covers(p.Check, p.File, p.Line, dir) {
						d.used[p.Check], silenced = true, true
					}
				}
			}
			if !silenced {
				out = append(out, p)
			}
		}
		return out
	}
	l.problems, l.warnings = keep(l.problems), keep(l.warnings)
	for _, d := range ds {
		for _, name := range d.names {
			if !d.used[name] {
				l.problem(checks.UnusedIgnore, d.pos, "%s %s silences nothing: %s finds nothing where it applies; remove it, or it would silence a later finding no one meant", d.form, name, name)
			}
		}
	}
}
