package lint

import (
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
)

// Polarity. A rule is a list of findings, each given where its
// comprehension's conditions hold: `[if !strings.HasPrefix(image, "r/")
// {...}]` refuses what the test does not hold for (it names what is let
// through: an allowlist), `[if strings.HasPrefix(image, "k8s.gcr.io/")
// {...}]` what it holds for (it names what is refused: a denylist). A test
// that holds for more than meant lets more through in the first, and
// refuses more in the second, never less. The checks that judge a test by
// what it lets through (the image checks) read the test's polarity here:
// the conditions of a rule's comprehensions, through `!`, `&&`, `||`,
// parentheses, and the lets and fields a condition names.

// The polarities of a test: the rule fires where it holds, or where it
// does not; a test read by rules both ways has both.
const (
	firesWhenTrue  uint8 = 1 << iota
	firesWhenFalse uint8 = 1 << iota
)

// noteRulePolarity notes the polarity of the tests in the conditions of a
// rule's comprehensions (rule is a rule's value as written).
func (l *linter) noteRulePolarity(rule ast.Expr) {
	switch x := rule.(type) {
	case *ast.ParenExpr:
		l.noteRulePolarity(x.X)
	case *ast.BinaryExpr:
		// Lists joined (a + b): each one's findings.
		if x.Op == token.ADD {
			l.noteRulePolarity(x.X)
			l.noteRulePolarity(x.Y)
		}
	case *ast.ListLit:
		l.noteConditions(x, firesWhenTrue, 0)
	}
}

// noteConditions notes p, the polarity of "an item is given", of the if
// clauses of the comprehensions among list's items.
func (l *linter) noteConditions(list *ast.ListLit, p uint8, depth int) {
	for _, el := range list.Elts {
		if c, ok := el.(*ast.Comprehension); ok {
			for _, cl := range c.Clauses {
				if ifc, ok := cl.(*ast.IfClause); ok {
					l.notePolarity(ifc.Condition, p, depth)
				}
			}
		}
	}
}

// notePolarity notes that the rule fires where x is true (firesWhenTrue)
// or false (firesWhenFalse), and so of the tests x is made of.
func (l *linter) notePolarity(x ast.Expr, p uint8, depth int) {
	if depth > 20 {
		return
	}
	switch e := x.(type) {
	case *ast.ParenExpr:
		l.notePolarity(e.X, p, depth+1)
		return
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			l.notePolarity(e.X, flip(p), depth+1)
			return
		}
	case *ast.BinaryExpr:
		if e.Op == token.LAND || e.Op == token.LOR {
			l.notePolarity(e.X, p, depth+1)
			l.notePolarity(e.Y, p, depth+1)
			return
		}
		// A filter read through its length: len([for r in L if T {r}])
		// == 0 holds where T holds for no item, so the rule fires where
		// T does not hold (> 0, where it does).
		if list, empty, ok := lengthTest(e); ok {
			q := p
			if empty {
				q = flip(p)
			}
			l.noteFilterPolarity(list, q, depth+1)
			return
		}
		// A test compared with a bool: x == false is !x.
		if e.Op == token.EQL || e.Op == token.NEQ {
			for _, side := range [][2]ast.Expr{{e.X, e.Y}, {e.Y, e.X}} {
				if b, ok := boolLit(side[1]); ok {
					if b != (e.Op == token.EQL) {
						p = flip(p)
					}
					l.notePolarity(side[0], p, depth+1)
					return
				}
			}
		}
	case *ast.Ident:
		// A let or a field that holds a test: `let allowed = ...`, then
		// `if !allowed`. The parser resolves a field of the same file to
		// its value (a field's alias, to the field, is no test).
		switch n := e.Node.(type) {
		case *ast.LetClause:
			l.notePolarity(n.Expr, p, depth+1)
			return
		case *ast.CallExpr, *ast.BinaryExpr, *ast.UnaryExpr, *ast.ParenExpr:
			l.notePolarity(n.(ast.Expr), p, depth+1)
			return
		}
	}
	l.polarity[x] |= p
}

// lengthTest reads len(x) compared with 0 or 1 as whether x is empty
// (len(x) == 0, < 1, <= 0) or not (!= 0, > 0, >= 1); ok is false for
// any other comparison.
func lengthTest(e *ast.BinaryExpr) (x ast.Expr, empty, ok bool) {
	call, isCall := e.X.(*ast.CallExpr)
	lit, isLit := e.Y.(*ast.BasicLit)
	if !isCall || !isLit || lit.Kind != token.INT || len(call.Args) != 1 {
		return nil, false, false
	}
	if fn, ok := call.Fun.(*ast.Ident); !ok || fn.Name != "len" {
		return nil, false, false
	}
	switch op := e.Op; {
	case lit.Value == "0" && (op == token.EQL || op == token.LEQ):
		return call.Args[0], true, true
	case lit.Value == "1" && op == token.LSS:
		return call.Args[0], true, true
	case lit.Value == "0" && (op == token.NEQ || op == token.GTR):
		return call.Args[0], false, true
	case lit.Value == "1" && op == token.GEQ:
		return call.Args[0], false, true
	}
	return nil, false, false
}

// noteFilterPolarity notes p, the polarity of "an item passes", of the if
// clauses of the comprehensions x is a list of, written out or through
// the lets and fields that name it.
func (l *linter) noteFilterPolarity(x ast.Expr, p uint8, depth int) {
	if depth > 20 {
		return
	}
	switch e := x.(type) {
	case *ast.ParenExpr:
		l.noteFilterPolarity(e.X, p, depth+1)
	case *ast.Ident:
		switch n := e.Node.(type) {
		case *ast.LetClause:
			l.noteFilterPolarity(n.Expr, p, depth+1)
		case *ast.ListLit:
			// The parser resolves a field of the same file to its value.
			l.noteFilterPolarity(n, p, depth+1)
		}
	case *ast.ListLit:
		l.noteConditions(e, p, depth+1)
	}
}

// boolLit is the value of a literal true or false.
func boolLit(x ast.Expr) (value, ok bool) {
	switch e := x.(type) {
	case *ast.BasicLit:
		return e.Kind == token.TRUE, e.Kind == token.TRUE || e.Kind == token.FALSE
	case *ast.Ident:
		return e.Name == "true", e.Name == "true" || e.Name == "false"
	}
	return false, false
}

// flip is the polarity of a test's negation.
func flip(p uint8) uint8 {
	return (p&firesWhenTrue)<<1 | (p&firesWhenFalse)>>1
}

// testPolarity is how a rule fires on an image test: where it holds
// (firesWhenTrue), where it does not (firesWhenFalse), both ways, or 0
// when no rule's condition reads the test as written (a helper's output,
// a list's item filter).
func (l *linter) testPolarity(x ast.Expr) uint8 { return l.polarity[x] }
