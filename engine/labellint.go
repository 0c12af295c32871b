package engine

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The checks of this file find a rule that tests a label's value against
// a text no label's value can hold: the API server refuses a label value
// of more than 63 characters, or with a character other than a letter, a
// digit, '-', '_' or '.' (ValidateLabels, on an object's labels, a
// template's, and a pod's node selector). CUE types the value as a
// string and accepts the test, which then never holds on an object the
// API server admits, and the rule under it is off. The slip behind it is
// most often a key taken for a value: `for k in labels` names each
// label's value (the key is the first of two names, for k, _ in labels).

// labelValueMaps are the maps whose values the API server checks as label
// values, by the field names their paths end with.
var labelValueMaps = [][]string{{"metadata", "labels"}, {"nodeSelector"}}

// labelValueChars are the characters a label's value is made of.
var labelValueChars = regexp.MustCompile(`^[-A-Za-z0-9_.]*$`)

// labelValueRead is the read as written when x reads a value of one of those
// maps (one key's, or each key's through a for clause; with a default,
// *labels[k] | ""): "" when it does not.
func (l *linter) labelValueRead(x ast.Expr) string {
	sels, _, ok := l.readAt(readOf(x))
	if !ok || len(sels) == 0 || sels[len(sels)-1].LabelType() != cue.StringLabel {
		return ""
	}
	names := selectorNames(sels[:len(sels)-1])
	for _, m := range labelValueMaps {
		if endsWith(names, m) {
			return exprText(readOf(x))
		}
	}
	return ""
}

// checkLabelValue checks a label's value compared with a string literal
// (==, !=, =~, !~) that no label's value can be or match. It says whether
// it reported one.
func (l *linter) checkLabelValue(x *ast.BinaryExpr) bool {
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
	var never string
	switch x.Op {
	case token.EQL, token.NEQ:
		if len(validation.IsValidLabelValue(text)) > 0 {
			never = fmt.Sprintf("is never %s: the API server refuses a label's value %s", lit.Value, labelValueFault(text))
		}
	case token.MAT, token.NMAT:
		// What every match begins with is in the value.
		re, err := regexp.Compile(text)
		if err != nil {
			return false
		}
		if prefix, _ := re.LiteralPrefix(); !holdsInLabelValue(prefix) {
			never = fmt.Sprintf("never matches %s: a match holds %q, and the API server refuses a label's value %s", lit.Value, prefix, labelValueFault(prefix))
		}
	default:
		return false
	}
	name := l.labelValueRead(read)
	if never == "" || name == "" {
		return false
	}
	outcome := map[token.Token]string{token.EQL: "false", token.MAT: "false", token.NEQ: "true", token.NMAT: "true"}[x.Op]
	l.problem(lit.Pos(), "%s is a label's value, which %s (%s), so this comparison is always %s%s", name, never, labelValueIs, outcome, keyHint(read))
	return true
}

// labelSearches are the strings functions that search a text for a
// literal, with what they ask.
var labelSearches = map[string]string{"HasPrefix": "begins with", "HasSuffix": "ends with", "Contains": "contains"}

// checkLabelValueSearch checks strings.HasPrefix(v, lit) (or HasSuffix,
// Contains) of a label's value v and a literal no label's value holds.
func (l *linter) checkLabelValueSearch(x *ast.CallExpr) {
	fn, ok := stringsCall(x)
	asks, search := labelSearches[fn]
	if !ok || !search {
		return
	}
	lit, text, ok := stringLit(x.Args[1])
	if !ok || holdsInLabelValue(text) {
		return
	}
	name := l.labelValueRead(x.Args[0])
	if name == "" {
		return
	}
	l.problem(lit.Pos(), "%s is a label's value, which never %s %s: the API server refuses a label's value %s (%s), so strings.%s is always false%s", name, asks, lit.Value, labelValueFault(text), labelValueIs, fn, keyHint(x.Args[0]))
}

// labelValueIs says what a label's value is made of.
const labelValueIs = "it is at most 63 letters, digits, '-', '_' and '.', and begins and ends with a letter or digit"

// holdsInLabelValue reports whether a label's value may hold s.
func holdsInLabelValue(s string) bool {
	return len(s) <= validation.LabelValueMaxLength && labelValueChars.MatchString(s)
}

// labelValueFault says why a label's value cannot be s, or hold it.
func labelValueFault(s string) string {
	if i := strings.IndexFunc(s, func(r rune) bool { return !labelValueChars.MatchString(string(r)) }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return fmt.Sprintf("with %q in it", r)
	}
	if len(s) > validation.LabelValueMaxLength {
		return fmt.Sprintf("of more than %d characters", validation.LabelValueMaxLength)
	}
	return "that begins or ends with '-', '_' or '.'"
}

// keyHint says, of a read that is the value of a for clause without a
// key, where the keys are.
func keyHint(read ast.Expr) string {
	id, ok := read.(*ast.Ident)
	if !ok || !isForValue(id) {
		return ""
	}
	if fc := id.Scope.(*ast.ForClause); fc.Key == nil {
		return fmt.Sprintf(": %s is each label's value; the keys are the clause's first name (for %s, _ in %s)", id.Name, id.Name, exprText(fc.Source))
	}
	return ""
}
