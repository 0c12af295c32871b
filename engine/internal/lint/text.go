package lint

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// What the load reads of a rule's tests of a text: what a term says of
// the text it reads (equal to a literal, beginning or ending with one), so
// that two terms no text meets at once are seen (checkExclusive); and what
// a pattern can match at all, so that one no text of the kind tested can
// match is seen (checkCasePattern, checkTrailingOptional).

// testKind is what a textTest says of its read.
type testKind int

const (
	testEquals testKind = iota
	testPrefix
	testSuffix
)

// textTest is a term of a chain read as what it says of one read: that it
// equals text (read == "a", any literal), begins with it
// (strings.HasPrefix(read, "a/"), read =~ "^a/...") or ends with it;
// negated when the term says the opposite (!=, !strings.HasPrefix, !~).
type textTest struct {
	term    ast.Expr
	read    string
	kind    testKind
	lit     *ast.BasicLit
	text    string
	negated bool
}

// textTestOf reads term as a textTest; false when it is none.
func textTestOf(term ast.Expr) (textTest, bool) {
	t := textTest{term: term}
	x := unparen(term)
	if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.NOT {
		t.negated, x = true, unparen(u.X)
	}
	var read ast.Expr
	switch x := x.(type) {
	case *ast.BinaryExpr:
		switch x.Op {
		case token.EQL, token.NEQ:
			if t.negated {
				return t, false
			}
			read = x.X
			lit, ok := x.Y.(*ast.BasicLit)
			if l, isLit := x.X.(*ast.BasicLit); isLit {
				read, lit, ok = x.Y, l, true
			}
			if !ok {
				return t, false
			}
			t.kind, t.negated, t.lit, t.text = testEquals, x.Op == token.NEQ, lit, lit.Value
		case token.MAT, token.NMAT:
			if t.negated {
				return t, false
			}
			read, t.negated = x.X, x.Op == token.NMAT
			if !t.fromPattern(x.Y) {
				return t, false
			}
		default:
			return t, false
		}
	case *ast.CallExpr:
		if name, ok := stringsCall(x, 2); ok && (name == "HasPrefix" || name == "HasSuffix") {
			lit, text, isLit := stringLit(x.Args[1])
			if !isLit {
				return t, false
			}
			read, t.lit, t.text, t.kind = x.Args[0], lit, text, testPrefix
			if name == "HasSuffix" {
				t.kind = testSuffix
			}
		} else if name, ok := patternCall(x); ok && name == "Match" && len(x.Args) == 2 {
			read = x.Args[1]
			if !t.fromPattern(x.Args[0]) {
				return t, false
			}
		} else {
			return t, false
		}
	default:
		return t, false
	}
	if _, isLit := read.(*ast.BasicLit); isLit {
		return t, false
	}
	t.read = exprText(read)
	return t, true
}

// fromPattern makes t the prefix (or, else, the suffix) every match of the
// pattern literal x has: a text it matches begins (ends) with it.
func (t *textTest) fromPattern(x ast.Expr) bool {
	lit, s, ok := stringLit(x)
	if !ok {
		return false
	}
	re, err := syntax.Parse(s, syntax.Perl)
	if err != nil {
		return false
	}
	t.lit = lit
	if prefix := anchoredLiteral(re, true); prefix != "" {
		t.kind, t.text = testPrefix, prefix
		return true
	}
	if suffix := anchoredLiteral(re, false); suffix != "" {
		t.kind, t.text = testSuffix, suffix
		return true
	}
	return false
}

// anchoredLiteral is the literal a pattern's every match begins with
// (atStart) or ends with, as it is written after ^ (before $); "" when
// there is none, or when it is matched without regard to case.
func anchoredLiteral(re *syntax.Regexp, atStart bool) string {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return ""
	}
	anchor, next := re.Sub[0], re.Sub[1]
	if !atStart {
		anchor, next = re.Sub[len(re.Sub)-1], re.Sub[len(re.Sub)-2]
	}
	want := map[bool]syntax.Op{true: syntax.OpBeginText, false: syntax.OpEndText}[atStart]
	if anchor.Op != want || next.Op != syntax.OpLiteral || next.Flags&syntax.FoldCase != 0 {
		return ""
	}
	return string(next.Rune)
}

// excludes says whether no value meets both t and u (their reads the
// same): two different equals, prefixes neither of which begins the
// other, suffixes neither of which ends the other, a value equal to a
// text that does not begin (end) with the other's.
func (t textTest) excludes(u textTest) bool {
	if t.kind > u.kind {
		t, u = u, t
	}
	text := func(x textTest) string {
		if x.kind == testEquals {
			s, err := literal.Unquote(x.lit.Value)
			if err != nil || x.lit.Kind != token.STRING {
				return "\x00" // not a text: no prefix or suffix test holds
			}
			return s
		}
		return x.text
	}
	a, b := text(t), text(u)
	switch {
	case t.kind == testEquals && u.kind == testEquals:
		return t.lit.Value != u.lit.Value
	case t.kind == testEquals && u.kind == testPrefix:
		return !strings.HasPrefix(a, b)
	case t.kind == testEquals && u.kind == testSuffix:
		return !strings.HasSuffix(a, b)
	case t.kind == testPrefix && u.kind == testPrefix:
		return !strings.HasPrefix(a, b) && !strings.HasPrefix(b, a)
	case t.kind == testSuffix && u.kind == testSuffix:
		return !strings.HasSuffix(a, b) && !strings.HasSuffix(b, a)
	}
	return false
}

// says is what t, not negated, says of its read.
func (t textTest) says() string {
	switch t.kind {
	case testPrefix:
		return fmt.Sprintf("begins with %q", t.text)
	case testSuffix:
		return fmt.Sprintf("ends with %q", t.text)
	}
	return "equals " + t.lit.Value
}

// unparen is x without the parentheses around it.
func unparen(x ast.Expr) ast.Expr {
	for {
		p, ok := x.(*ast.ParenExpr)
		if !ok {
			return x
		}
		x = p.X
	}
}

// termText is x as written, for a message.
func termText(x ast.Expr) string {
	b, err := format.Node(x)
	if err != nil {
		return exprText(x)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// matchesOnlyCased says whether every text re matches holds a letter of
// upper case (upper) or of lower case: no text that strings.ToLower (or
// ToUpper) gave can match it then.
func matchesOnlyCased(re *syntax.Regexp, upper bool) bool {
	other := unicode.IsLower
	if upper {
		other = unicode.IsUpper
	}
	// can says whether re matches some text without a letter of the case.
	var can func(re *syntax.Regexp) bool
	can = func(re *syntax.Regexp) bool {
		switch re.Op {
		case syntax.OpNoMatch:
			return false
		case syntax.OpLiteral:
			if re.Flags&syntax.FoldCase != 0 {
				return true
			}
			for _, r := range re.Rune {
				if other(r) {
					return false
				}
			}
			return true
		case syntax.OpCharClass:
			for i := 0; i+1 < len(re.Rune); i += 2 {
				for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
					if !other(r) {
						return true
					}
					if r-re.Rune[i] > 256 {
						return true // a wide range: it has others
					}
				}
			}
			return false
		case syntax.OpConcat:
			for _, sub := range re.Sub {
				if !can(sub) {
					return false
				}
			}
			return true
		case syntax.OpAlternate:
			for _, sub := range re.Sub {
				if can(sub) {
					return true
				}
			}
			return false
		case syntax.OpCapture, syntax.OpPlus:
			return can(re.Sub[0])
		case syntax.OpRepeat:
			return re.Min == 0 || can(re.Sub[0])
		}
		// Empty matches, anchors, any character, and *, ? (which may
		// match nothing).
		return true
	}
	return !can(re)
}

// checkCasePattern checks a pattern matched against a text a case call
// made (strings.ToLower(image) =~ ":Latest$"), when every text the pattern
// matches holds a letter the call never gives: it never matches, so =~ is
// always false (and !~ always true). It says whether it found one.
func (l *linter) checkCasePattern(x *ast.BinaryExpr) bool {
	if x.Op != token.MAT && x.Op != token.NMAT {
		return false
	}
	call, ok := unparen(x.X).(*ast.CallExpr)
	lit, text, isLit := stringLit(x.Y)
	if !ok || !isLit {
		return false
	}
	name, _ := stringsCall(call, 1)
	if name != "ToLower" && name != "ToUpper" {
		return false
	}
	re, err := syntax.Parse(text, syntax.Perl)
	if err != nil || !matchesOnlyCased(re, name == "ToLower") {
		return false
	}
	outcome := map[token.Token]string{token.MAT: "false", token.NMAT: "true"}[x.Op]
	gives, never := "lower", "upper"
	if name == "ToUpper" {
		gives, never = never, gives
	}
	l.problem(checks.ComparisonNever, lit.Pos(), "strings.%s gives no %s-case letter, and every text %s matches holds one, so this match is always %s: write the pattern in %s case, or match without regard to case ((?i))", name, never, lit.Value, outcome, gives)
	return true
}

// trailingOptional is the end of a pattern that repeats a literal
// character or a class zero times or more, or once at most ("-*" in
// "^team-*"), when nothing anchors the pattern's end, and the pattern
// before it: a match may stop before it, so it changes nothing the
// pattern matches (as =~ and regexp.Match read it), and reads as a glob's
// "*", which a pattern writes ".*". "" when there is none.
func trailingOptional(s string) (tail, before string) {
	re, err := syntax.Parse(s, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return "", ""
	}
	last := re.Sub[len(re.Sub)-1]
	if last.Op != syntax.OpStar && last.Op != syntax.OpQuest {
		return "", ""
	}
	if sub := last.Sub[0]; sub.Op != syntax.OpLiteral && sub.Op != syntax.OpCharClass || len(sub.Rune) == 0 {
		return "", ""
	}
	tail = writtenOptional.FindString(s)
	if tail == "" {
		return "", ""
	}
	return tail, s[:len(s)-len(tail)]
}

// writtenOptional is a pattern's last character, escaped character or
// class, then * or ?, as written.
var writtenOptional = regexp.MustCompile(`(\\.|[^\\\[\]()|*?+]|\[\^?\]?[^\]]*\])[*?]$`)

// checkResourceNames checks a literal key read from the limits or the
// requests of a container's resources or of a TrainJob's resourcesPerNode
// (limits.gpu): a container asks only for cpu, memory, ephemeral-storage,
// hugepages-<size> or a name qualified by a domain (nvidia.com/gpu), and
// the Job API refuses a pod that asks for any other. So the read never
// sees a TrainJob that can run, and the rule it guards is off for those
// that ask for what was meant.
func (l *linter) checkResourceNames(base []cue.Selector, name string, steps []step) {
	path := selectorNames(base)
	if len(path) != len(base) {
		return // an index or a pattern on the way: the names do not line up
	}
	for _, st := range steps {
		if !st.ok || st.sel.LabelType() != cue.StringLabel {
			return
		}
		n := len(path)
		if n >= 2 && resourceRequirements[path[n-2]] && resourceLists[path[n-1]] && !containerResource(st.name) {
			msg := fmt.Sprintf("%s has no resource %q on a TrainJob that can run: a container asks only for cpu, memory, ephemeral-storage, hugepages-<size> or a name qualified by a domain (nvidia.com/gpu), and the Job API refuses a pod that asks for %q, so this read never sees what it means", name, st.name, st.name)
			if s := source.Suggest(st.name, []string{"cpu", "memory", "ephemeral-storage"}); s != "" {
				msg += fmt.Sprintf(": did you mean %s?", s)
			}
			l.problem(checks.ResourceName, st.pos, "%s", msg)
			return
		}
		name += st.suffix()
		path = append(path, st.name)
	}
}

// resourceRequirements and resourceLists name, by the fields that hold
// them, core/v1's ResourceRequirements (a container's, a pod's, a
// TrainJob's per node) and its lists.
var (
	resourceRequirements = map[string]bool{"resources": true, "resourcesPerNode": true}
	resourceLists        = map[string]bool{"limits": true, "requests": true}
)

// containerResource says whether a container may ask for the resource
// (k8s.io/kubernetes pkg/apis/core/validation,
// validateContainerResourceName).
func containerResource(name string) bool {
	switch name {
	case "cpu", "memory", "ephemeral-storage":
		return true
	}
	return strings.HasPrefix(name, "hugepages-") || strings.Contains(name, "/")
}
