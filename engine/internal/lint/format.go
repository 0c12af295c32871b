package lint

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"regexp"
	"strings"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The checks of this file find a rule that tests a value the API server
// holds to a format (a label's value, a namespace's name, the name of a
// runtime) against a text no such value can be: compared with it,
// matched by a pattern whose every match holds it, or searched for it.
// CUE types the value as a string and accepts the test, which then never
// holds on an object the cluster admits, and the rule under it is off.
// The slip behind it is most often a key taken for a value: `for k in
// labels` names each label's value (the key is the first of two names,
// for k, _ in labels).

// apiFormat is a format the API server holds the values of a field to.
type apiFormat struct {
	// at are the field names the path of such a value ends with;
	// mapValues says they are the values of the map at, under any key.
	at        []string
	mapValues bool
	// what names such a value, is says what it is made of: chars, at
	// most max of them, and valid says what else (the API server's own
	// test).
	what, is string
	chars    *regexp.Regexp
	max      int
	valid    func(string) []string
}

var (
	labelValue = apiFormat{
		at: []string{"metadata", "labels"}, mapValues: true, what: "a label's value",
		is:    "at most 63 letters, digits, '-', '_' and '.', beginning and ending with a letter or digit",
		chars: regexp.MustCompile(`^[-A-Za-z0-9_.]*$`), max: validation.LabelValueMaxLength, valid: validation.IsValidLabelValue,
	}
	// apiFormats are the formats checked: the values of an object's
	// labels (a template's too) and of a pod's node selector
	// (ValidateLabels); a namespace's name (ValidateNamespaceName); the
	// name a runtimeRef gives, which names an object of a custom
	// resource (NameIsDNSSubdomain) or none.
	apiFormats = []apiFormat{labelValue, withAt(labelValue, "nodeSelector"), {
		at: []string{"metadata", "namespace"}, what: "a namespace's name",
		is:    "at most 63 lower-case letters, digits and '-', beginning and ending with a letter or digit",
		chars: regexp.MustCompile(`^[-a-z0-9]*$`), max: validation.DNS1123LabelMaxLength, valid: validation.IsDNS1123Label,
	}, {
		at: []string{"runtimeRef", "name"}, what: "the name of a runtime",
		is:    "at most 253 lower-case letters, digits, '-' and '.', beginning and ending with a letter or digit",
		chars: regexp.MustCompile(`^[-a-z0-9.]*$`), max: validation.DNS1123SubdomainMaxLength, valid: validation.IsDNS1123Subdomain,
	}}
)

// withAt is f for the values of another map.
func withAt(f apiFormat, at ...string) apiFormat {
	f.at = at
	return f
}

// formatOf is the format of what x reads, and the read as written: ok
// false when it reads no value of a format (one key's, each key's
// through a for clause; with a default, *labels[k] | "").
func (l *linter) formatOf(x ast.Expr) (f apiFormat, read string, ok bool) {
	sels, _, ok := l.readAt(readOf(x))
	if !ok || len(sels) == 0 || sels[len(sels)-1].LabelType() != cue.StringLabel {
		return apiFormat{}, "", false
	}
	names, whole := selectorNames(sels[:len(sels)-1]), selectorNames(sels)
	for _, f := range apiFormats {
		if f.mapValues && k8s.EndsWith(names, f.at) || !f.mapValues && sels[len(sels)-1].IsString() && k8s.EndsWith(whole, f.at) {
			return f, exprText(readOf(x)), true
		}
	}
	return apiFormat{}, "", false
}

// holds reports whether a value of f may hold s.
func (f apiFormat) holds(s string) bool {
	return len(s) <= f.max && f.chars.MatchString(s)
}

// fault says why a value of f cannot be s, or hold it.
func (f apiFormat) fault(s string) string {
	if i := strings.IndexFunc(s, func(r rune) bool { return !f.chars.MatchString(string(r)) }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return fmt.Sprintf("with %q in it", r)
	}
	if len(s) > f.max {
		return fmt.Sprintf("of more than %d characters", f.max)
	}
	alnum := func(b byte) bool {
		return b < utf8.RuneSelf && (b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z')
	}
	switch {
	case s != "" && !alnum(s[0]):
		return fmt.Sprintf("that begins with %q", s[0])
	case s != "" && !alnum(s[len(s)-1]):
		return fmt.Sprintf("that ends with %q", s[len(s)-1])
	}
	return "like it"
}

// checkFormat checks a value of a format compared with a string literal
// (==, !=, =~, !~) that no such value can be or match. It says whether
// it reported one.
func (l *linter) checkFormat(x *ast.BinaryExpr) bool {
	read := x.X
	lit, text, ok := stringLit(x.Y)
	if !ok {
		if x.Op == token.MAT || x.Op == token.NMAT {
			return false
		}
		if lit, text, ok = stringLit(x.X); !ok {
			return false
		}
		read = x.Y
	}
	if x.Op != token.EQL && x.Op != token.NEQ && x.Op != token.MAT && x.Op != token.NMAT {
		return false
	}
	f, name, ok := l.formatOf(read)
	if !ok || isDefaultOf(read, lit) {
		return false
	}
	var never string
	if x.Op == token.EQL || x.Op == token.NEQ {
		if len(f.valid(text)) == 0 {
			return false
		}
		never = fmt.Sprintf("is never %s: the API server refuses one %s", lit.Value, f.fault(text))
	} else {
		// What every match begins with is in the value.
		re, err := regexp.Compile(text)
		prefix := ""
		if err == nil {
			prefix, _ = re.LiteralPrefix()
		}
		if err != nil || f.holds(prefix) {
			return false
		}
		never = fmt.Sprintf("never matches %s: a match holds %q, and the API server refuses one %s", lit.Value, prefix, f.fault(prefix))
	}
	outcome := map[token.Token]string{token.EQL: "false", token.MAT: "false", token.NEQ: "true", token.NMAT: "true"}[x.Op]
	l.problem(checks.ComparisonNever, lit.Pos(), "%s is %s, which %s (%s), so this comparison is always %s%s", name, f.what, never, f.is, outcome, keyHint(read, f))
	return true
}

// checkFormatSearch checks strings.HasPrefix(v, lit) (or HasSuffix,
// Contains) of a value of a format and a literal no such value holds.
func (l *linter) checkFormatSearch(x *ast.CallExpr) {
	fn, ok := stringsCall(x, 2)
	asks, search := searchFuncs[fn]
	if !ok || !search {
		return
	}
	lit, text, ok := stringLit(x.Args[1])
	if !ok {
		return
	}
	f, name, ok := l.formatOf(x.Args[0])
	if !ok || f.holds(text) {
		return
	}
	l.problem(checks.ComparisonNever, lit.Pos(), "%s is %s, which never %s %s: the API server refuses one %s (%s), so strings.%s is always false%s", name, f.what, asks, lit.Value, f.fault(text), f.is, fn, keyHint(x.Args[0], f))
}

// keyHint says, of a read that is the value of a for clause without a
// key over a map, where the keys are.
func keyHint(read ast.Expr, f apiFormat) string {
	id, ok := read.(*ast.Ident)
	if !ok || !isForValue(id) || !f.mapValues {
		return ""
	}
	if fc := id.Scope.(*ast.ForClause); fc.Key == nil {
		return fmt.Sprintf(": %s is each value of the map; its keys are the clause's first name (for %s, _ in %s)", id.Name, id.Name, exprText(fc.Source))
	}
	return ""
}
