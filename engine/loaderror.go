package engine

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
)

// LoadError is CUE that does not load: an admin's policy with mistakes in
// it (or, for the embedded CUE, a defect of cuetrainer's). It lists every
// problem found, each at the admin's file, line and column where one is
// known, so that a report can show them all.
type LoadError struct {
	// Summary says what kind of problems these are.
	Summary string
	// Problems are sorted by file, line and column.
	Problems []Problem
	// Defect is the panic that stopped the load, when one did: not the
	// admin's mistake (defect.go).
	Defect *Defect
}

// Unwrap is the load's defect, when it had one.
func (e *LoadError) Unwrap() error {
	if e.Defect == nil {
		return nil
	}
	return e.Defect
}

// Problem is one mistake, at a position in a CUE file.
type Problem struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Message says what is wrong and what to do; it may hold more lines
	// (further positions, indented).
	Message string `json:"message"`
}

// Where prints the problem's position as FILE:LINE:COLUMN, or "" when none
// is known.
func (p Problem) Where() string {
	switch {
	case p.File == "":
		return ""
	case p.Line == 0:
		return p.File
	case p.Column == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

func (p Problem) String() string {
	switch w := p.Where(); {
	case w == "":
		return p.Message
	case p.Message == "":
		return w
	}
	return p.Where() + ": " + p.Message
}

func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString(e.Summary)
	b.WriteString(":")
	for _, p := range e.Problems {
		b.WriteString("\n    ")
		b.WriteString(strings.ReplaceAll(p.String(), "\n", "\n    "))
	}
	return b.String()
}

// loadError returns the problems as a LoadError, sorted and without
// repeats; nil for none.
func loadError(summary string, problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	sort.SliceStable(problems, func(i, j int) bool {
		a, b := problems[i], problems[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	out := problems[:0]
	for i, p := range problems {
		if i > 0 && p == problems[i-1] {
			continue
		}
		out = append(out, p)
	}
	return &LoadError{Summary: summary, Problems: out}
}

// problemAt is a problem at a CUE source position.
func (e *Engine) problemAt(pos token.Pos, format string, args ...any) Problem {
	p := Problem{Message: fmt.Sprintf(format, args...)}
	if pos.IsValid() {
		p.File, p.Line, p.Column = e.displayFile(pos.Filename()), pos.Line(), pos.Column()
	}
	return p
}

// sourceOf is where in the CUE a value was written, FILE:LINE:COLUMN, in
// an admin's file when one of its values is; "" when nothing says.
func (e *Engine) sourceOf(v cue.Value) string {
	p := e.writtenAt(v)
	if !p.IsValid() {
		return ""
	}
	return e.position(p.Filename(), p.Line(), p.Column())
}

// writtenAt is where in the CUE a value was written: in an admin's file
// when one of its values is, else its first position (none when nothing
// says).
func (e *Engine) writtenAt(v cue.Value) token.Pos {
	if !v.Exists() {
		return token.NoPos
	}
	var first token.Pos
	for _, p := range append(conjunctPositions(v), v.Pos()) {
		if !p.IsValid() {
			continue
		}
		if e.isPolicyFile(p.Filename()) {
			return p
		}
		if !first.IsValid() {
			first = p
		}
	}
	return first
}

// policySource is the first place in an admin's file among a CUE error's
// positions (FILE:LINE:COLUMN); "" when none is.
func (e *Engine) policySource(err error) string {
	for _, ce := range errors.Errors(err) {
		for _, p := range errors.Positions(ce) {
			if p.IsValid() && e.isPolicyFile(p.Filename()) {
				return e.position(p.Filename(), p.Line(), p.Column())
			}
		}
	}
	return ""
}

// isPolicyFile reports whether a loader file name is an admin's file.
func (e *Engine) isPolicyFile(name string) bool {
	_, ok := e.policyFiles[name]
	return ok
}

// cueProblems turns CUE errors into problems: each at its first position
// in an admin's file when it has one (the others follow in the message),
// else at its first position. The errors CUE gives for a value that
// matches no branch of a disjunction of literals (one "conflicting values"
// error per branch) become one problem that lists the values allowed.
func (e *Engine) cueProblems(err error) []Problem {
	return e.cueProblemsIn(err, cue.Value{})
}

// cueProblemsIn is cueProblems, where root is the value the errors' paths
// are in (when it is known): a field not allowed gets the field meant.
func (e *Engine) cueProblemsIn(err error, root cue.Value) []Problem {
	out := e.cueProblemList(err)
	if at, ok := e.policyPlaceOf(err, root); ok {
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
		for _, n := range fieldNames(root.LookupPath(errorPath(p[:len(p)-1]))) {
			if n != field {
				names = append(names, n)
			}
		}
		hint := ""
		if s := suggest(field, names); s != "" {
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
func (e *Engine) policyPlaceOf(err error, root cue.Value) (Problem, bool) {
	if len(e.policyFiles) == 0 || !root.Exists() {
		return Problem{}, false
	}
	errs := errors.Errors(err)
	for _, ce := range errs {
		for _, p := range errors.Positions(ce) {
			if p.IsValid() && e.isPolicyFile(p.Filename()) {
				return Problem{}, false
			}
		}
	}
	for _, ce := range errs {
		path := ce.Path()
		for k := len(path); k > 0; k-- {
			for _, p := range conjunctPositions(root.LookupPath(errorPath(path[:k]))) {
				if p.IsValid() && e.isPolicyFile(p.Filename()) {
					return e.problemAt(p, "%s: the value this file gives here breaks cuetrainer's own CUE (the errors below, at its files)", strings.Join(path[:k], ".")), true
				}
			}
		}
	}
	return Problem{}, false
}

// errorPath is the path of a CUE error's selectors.
func errorPath(sels []string) cue.Path {
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

// cueProblemList is the problems of CUE errors, one each.
func (e *Engine) cueProblemList(err error) []Problem {
	var out []Problem
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
			out = append(out, e.problemOf(ce, ""))
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
		p := e.problemOf(ce, "")
		msg := fmt.Sprintf("%s: %s is not one of the values allowed here: %s", path, given, strings.Join(allowed, ", "))
		if s := suggest(given, allowed); s != "" {
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
func (e *Engine) problemOf(ce errors.Error, what string) Problem {
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
		if !first.IsValid() && e.isPolicyFile(pos.Filename()) {
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
		return e.isPolicyFile(rest[i].Filename()) && !e.isPolicyFile(rest[j].Filename())
	})
	for _, pos := range rest {
		msg += "\n    " + e.position(pos.Filename(), pos.Line(), pos.Column())
	}
	return e.problemAt(first, "%s", msg)
}

// fieldNames are a struct's regular field names, optional ones included.
func fieldNames(v cue.Value) []string {
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

// conjunctPositions are the positions of the values a field was unified
// from.
func conjunctPositions(v cue.Value) []token.Pos {
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

// Defect is a panic recovered from an evaluation: a defect of cuetrainer
// or of CUE, not of the admin's CUE nor of the object.
type Defect struct {
	// What was being evaluated: "the review of TrainJob team-a/mnist".
	What string
	// Panic is the panic's value, as text; Stack the goroutine's stack
	// where it was recovered.
	Panic string
	Stack string

	// again makes the review that panicked again on a runtime, when a
	// review did, and reports whether it panics there too (culprits).
	again func(*compiled) bool
}

func (d *Defect) Error() string {
	return fmt.Sprintf("cuetrainer or CUE failed evaluating %s: panic: %s. A defect of cuetrainer's or of CUE's, not of the policy nor of the object: please report it, with the policy", d.What, d.Panic)
}

// defectFinding is the finding of an evaluation that panicked on the
// fallback too: it rejects the object, in words that say whose defect it
// is.
func defectFinding(d *Defect) Finding {
	return Finding{Phase: contract.PhaseDefect, Type: "Internal error", Detail: d.Error()}
}

// defectLoadError fails a load that panicked: cuetrainer's or CUE's
// defect, said as such, not as the admin's mistake.
func defectLoadError(summary string, d *Defect) error {
	return &LoadError{Summary: summary, Problems: []Problem{{Message: d.Error()}}, Defect: d}
}
