package source

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"
)

// Files names the files a load compiled: by the name the CUE loader gives
// each, the name to show (a path on disk, an embedded file's path), and
// which are an admin's. Positions in CUE errors and values are the
// loader's names; problems and findings are shown at the display names, at
// an admin's file first. A load fills it; after the load it is only read.
type Files struct {
	display map[string]string
	policy  map[string]bool
}

// NewFiles returns an empty Files.
func NewFiles() *Files {
	return &Files{display: map[string]string{}, policy: map[string]bool{}}
}

// Add names a loader file: display is the name to show, policy says
// whether the file is an admin's.
func (f *Files) Add(name, display string, policy bool) {
	f.display[name] = display
	if policy {
		f.policy[name] = true
	}
}

// Display is the name to show of a loader file: itself when it is not
// one of the load's.
func (f *Files) Display(name string) string {
	if r, ok := f.display[name]; ok {
		return r
	}
	return name
}

// Position is FILE:LINE:COLUMN, at the file's display name.
func (f *Files) Position(file string, line, col int) string {
	return fmt.Sprintf("%s:%d:%d", f.Display(file), line, col)
}

// Details prints a CUE error the way the cue command does, with the file
// names a user knows.
func (f *Files) Details(err error) string {
	var b strings.Builder
	var ce errors.Error
	if !errors.As(err, &ce) {
		return err.Error() // not the CUE's: a cluster's, say
	}
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
			fmt.Fprintf(&b, "\n    %s", f.Position(pos.Filename(), pos.Line(), pos.Column()))
		}
	}
	return b.String()
}

// ProblemAt is a problem at a CUE source position.
func (f *Files) ProblemAt(pos token.Pos, format string, args ...any) Problem {
	p := Problem{Message: fmt.Sprintf(format, args...)}
	if pos.IsValid() {
		p.File, p.Line, p.Column = f.Display(pos.Filename()), pos.Line(), pos.Column()
	}
	return p
}

// SourceOf is where in the CUE a value was written, FILE:LINE:COLUMN, in
// an admin's file when one of its values is; "" when nothing says.
func (f *Files) SourceOf(v cue.Value) string {
	p := f.WrittenAt(v)
	if !p.IsValid() {
		return ""
	}
	return f.Position(p.Filename(), p.Line(), p.Column())
}

// WrittenAt is where in the CUE a value was written: in an admin's file
// when one of its values is, else its first position (none when nothing
// says).
func (f *Files) WrittenAt(v cue.Value) token.Pos {
	if !v.Exists() {
		return token.NoPos
	}
	var first token.Pos
	for _, p := range append(ConjunctPositions(v), v.Pos()) {
		if !p.IsValid() {
			continue
		}
		if f.IsPolicyFile(p.Filename()) {
			return p
		}
		if !first.IsValid() {
			first = p
		}
	}
	return first
}

// PolicySource is the first place in an admin's file among a CUE error's
// positions (FILE:LINE:COLUMN); "" when none is.
func (f *Files) PolicySource(err error) string {
	for _, ce := range errors.Errors(err) {
		for _, p := range errors.Positions(ce) {
			if p.IsValid() && f.IsPolicyFile(p.Filename()) {
				return f.Position(p.Filename(), p.Line(), p.Column())
			}
		}
	}
	return ""
}

// IsPolicyFile reports whether a loader file name is an admin's file.
func (f *Files) IsPolicyFile(name string) bool {
	return f.policy[name]
}

// FromPolicy says whether an admin's file writes (some of) v: v itself,
// or one of the values it unifies.
func (f *Files) FromPolicy(v cue.Value) bool {
	op, args := v.Expr()
	if op != cue.AndOp {
		args = []cue.Value{v}
	}
	for _, a := range args {
		if f.IsPolicyFile(a.Pos().Filename()) {
			return true
		}
	}
	return false
}

// CUEProblems turns CUE errors into problems: each at its first position
// in an admin's file when it has one (the others follow in the message),
// else at its first position. The errors CUE gives for a value that
// matches no branch of a disjunction of literals (one "conflicting values"
// error per branch) become one problem that lists the values allowed.
func (f *Files) CUEProblems(err error) []Problem {
	return f.CUEProblemsIn(err, cue.Value{})
}

// CUEProblemsIn is CUEProblems, where root is the value the errors' paths
// are in (when it is known): a field not allowed gets the field meant.
func (f *Files) CUEProblemsIn(err error, root cue.Value) []Problem {
	out := f.CUEProblemList(err)
	if at, ok := f.policyPlaceOf(err, root); ok {
		out = append([]Problem{at}, out...)
	}
	for i, ce := range errors.Errors(err) {
		_ = i
		format, _ := ce.Msg()
		p := ce.Path()
		if format != "field not allowed" || len(p) == 0 || !root.Exists() {
			continue
		}
		field := p[len(p)-1]
		var names []string
		for _, n := range FieldNames(root.LookupPath(ErrorPath(p[:len(p)-1]))) {
			if n != field {
				names = append(names, n)
			}
		}
		hint := ""
		if s := Suggest(field, names); s != "" {
			hint = fmt.Sprintf(": did you mean %s?", s)
		} else if len(names) > 0 && len(names) <= 20 {
			hint = fmt.Sprintf(": the fields here are %s", strings.Join(names, ", "))
		}
		if hint == "" {
			continue
		}
		prefix := strings.Join(p, ".") + ": field not allowed"
		for j := range out {
			if strings.HasPrefix(out[j].Message, prefix) && !strings.HasPrefix(out[j].Message, prefix+":") {
				out[j].Message = prefix + hint + out[j].Message[len(prefix):]
				break
			}
		}
	}
	for j := range out {
		if strings.Contains(out[j].Message, "#FieldError] and {") || strings.Contains(out[j].Message, "#Warning] and {") {
			first, rest, _ := strings.Cut(out[j].Message, "\n")
			out[j].Message = first + "\n    (a rule is a list of findings: name: [if condition {path: ..., type: ..., detail: ...}])"
			if rest != "" {
				out[j].Message += "\n" + rest
			}
		}
	}
	return out
}

// policyPlaceOf is, for CUE errors none of which is in an admin's file
// (a policy's value that the shipped CUE refuses: a closed definition of
// the admin's own given as a review, say), the place in an admin's file
// of the value nearest each error's path; false when an error has a place
// there already, or no admin's file gives a value on the path.
func (f *Files) policyPlaceOf(err error, root cue.Value) (Problem, bool) {
	if len(f.policy) == 0 || !root.Exists() {
		return Problem{}, false
	}
	errs := errors.Errors(err)
	for _, ce := range errs {
		for _, p := range errors.Positions(ce) {
			if p.IsValid() && f.IsPolicyFile(p.Filename()) {
				return Problem{}, false
			}
		}
	}
	for _, ce := range errs {
		path := ce.Path()
		for k := len(path); k > 0; k-- {
			for _, p := range ConjunctPositions(root.LookupPath(ErrorPath(path[:k]))) {
				if p.IsValid() && f.IsPolicyFile(p.Filename()) {
					at := f.ProblemAt(p, "%s: the value this file gives here breaks cuetrainer's own CUE (the errors below, at its files)", strings.Join(path[:k], "."))
					at.Check = checks.CUE.Name
					return at, true
				}
			}
		}
	}
	return Problem{}, false
}

// ErrorPath is the path of a CUE error's selectors.
func ErrorPath(sels []string) cue.Path {
	var out []cue.Selector
	for _, s := range sels {
		switch {
		case strings.HasPrefix(s, `"`):
			u, err := strconv.Unquote(s)
			if err != nil {
				return cue.MakePath()
			}
			out = append(out, cue.Str(u))
		case strings.HasPrefix(s, "#"):
			out = append(out, cue.Def(s))
		default:
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, cue.Index(n))
			} else {
				out = append(out, cue.Str(s))
			}
		}
	}
	return cue.MakePath(out...)
}

// CUEProblemList is the problems of CUE errors, one each.
func (f *Files) CUEProblemList(err error) (out []Problem) {
	defer func() {
		for i := range out {
			out[i].Check = checks.CUE.Name
		}
	}()
	errs := errors.Errors(err)
	// The branches a value missed, by path: the value given is the one
	// every branch's conflict names.
	branches := map[string][][2]string{}
	for _, ce := range errs {
		format, args := ce.Msg()
		path := strings.Join(ce.Path(), ".")
		if strings.HasPrefix(format, "conflicting values %s and %s") && len(args) >= 2 && isDisjunctionBranch(errs, path) {
			branches[path] = append(branches[path], [2]string{fmt.Sprint(args[0]), fmt.Sprint(args[1])})
		}
	}
	done := map[string]bool{}
	for _, ce := range errs {
		format, _ := ce.Msg()
		path := strings.Join(ce.Path(), ".")
		if format == "%d errors in empty disjunction:" {
			continue
		}
		pairs := branches[path]
		given := commonValue(pairs)
		if given == "" {
			out = append(out, f.problemOf(ce, ""))
			continue
		}
		if done[path] {
			continue
		}
		done[path] = true
		var allowed []string
		for _, pair := range pairs {
			other := pair[0]
			if other == given {
				other = pair[1]
			}
			if other != "null" && !slices.Contains(allowed, other) {
				allowed = append(allowed, other)
			}
		}
		sort.Strings(allowed)
		p := f.problemOf(ce, "")
		msg := fmt.Sprintf("%s: %s is not one of the values allowed here: %s", path, given, strings.Join(allowed, ", "))
		if s := Suggest(given, allowed); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		if _, positions, ok := strings.Cut(p.Message, "\n"); ok {
			msg += "\n" + positions
		}
		p.Message = msg
		out = append(out, p)
	}
	return out
}

// commonValue is the value every pair holds, "" when there is none (or no
// more than one pair: a single conflict is reported as CUE words it).
func commonValue(pairs [][2]string) string {
	if len(pairs) < 2 {
		return ""
	}
	for _, c := range pairs[0] {
		all := true
		for _, p := range pairs[1:] {
			if p[0] != c && p[1] != c {
				all = false
				break
			}
		}
		if all {
			return c
		}
	}
	return ""
}

// isDisjunctionBranch reports whether CUE reported the path's errors as the
// branches of an empty disjunction.
func isDisjunctionBranch(errs []errors.Error, path string) bool {
	for _, ce := range errs {
		format, _ := ce.Msg()
		if format == "%d errors in empty disjunction:" && strings.Join(ce.Path(), ".") == path {
			return true
		}
	}
	return false
}

// problemOf is one CUE error as a problem, its message prefixed by what.
func (f *Files) problemOf(ce errors.Error, what string) Problem {
	format, args := ce.Msg()
	msg := fmt.Sprintf(format, args...)
	// A wrapped error ("import failed") keeps its reason inside.
	for inner := errors.Unwrap(ce); inner != nil; inner = errors.Unwrap(inner) {
		if ie, ok := inner.(errors.Error); ok {
			f, a := ie.Msg()
			if reason := fmt.Sprintf(f, a...); reason != "" && !strings.Contains(msg, reason) {
				msg += ": " + reason
			}
		}
	}
	if strings.Contains(msg, "import cycle") {
		msg += " (a policy file is in package schemas: it names the schemas' definitions, #APIVersion, without importing them)"
	}
	if p := ce.Path(); len(p) > 0 {
		msg = strings.Join(p, ".") + ": " + msg
	}
	if what != "" {
		msg = what + ": " + msg
	}
	positions := errors.Positions(ce)
	var first token.Pos
	var rest []token.Pos
	for _, pos := range positions {
		if !first.IsValid() && f.IsPolicyFile(pos.Filename()) {
			first = pos
			continue
		}
		rest = append(rest, pos)
	}
	if !first.IsValid() && len(rest) > 0 {
		first, rest = rest[0], rest[1:]
	}
	// The admin's other positions, then the embedded CUE's: the lines
	// that say where the constraint came from.
	sort.SliceStable(rest, func(i, j int) bool {
		return f.IsPolicyFile(rest[i].Filename()) && !f.IsPolicyFile(rest[j].Filename())
	})
	for _, pos := range rest {
		msg += "\n    " + f.Position(pos.Filename(), pos.Line(), pos.Column())
	}
	return f.ProblemAt(first, "%s", msg)
}

// FieldNames are a struct's regular field names, optional ones included.
func FieldNames(v cue.Value) []string {
	var out []string
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		return nil
	}
	for it.Next() {
		if err := it.Value().Err(); err != nil && strings.Contains(err.Error(), "field not allowed") {
			continue // a field of one conjunct that another closes out
		}
		if sel := it.Selector(); sel.IsString() {
			out = append(out, sel.Unquoted())
		}
	}
	sort.Strings(out)
	return out
}

// ConjunctPositions are the positions of the values a field was unified
// from.
func ConjunctPositions(v cue.Value) []token.Pos {
	var out []token.Pos
	var walk func(v cue.Value, depth int)
	walk = func(v cue.Value, depth int) {
		op, args := v.Expr()
		if depth > 4 || op != cue.AndOp && op != cue.OrOp {
			out = append(out, v.Pos())
			return
		}
		for _, a := range args {
			walk(a, depth+1)
		}
	}
	walk(v, 0)
	return out
}
