package lint

import (
	"slices"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// Looks are the paths of the values an admin's files (policy, by the
// loader's names) look at: read in a comparison, a pattern, a call
// (`strings.HasPrefix`, `len`), an index or a unification, not only copied
// (a field's value, an interpolation, a list's item) or tested for
// existence (`!= _|_`). A path is a read's labels, its root taken back
// through the fields, lets and comprehensions that define it, in any file
// of instances, the packages compiled (`#name: #tj.metadata.name`; `let env =
// *object.spec.trainer.env | []` and `for e in env` make `e.value`
// env.*.value); "*" stands for an item.
func Looks(instances []*build.Instance, policy map[string]*ast.File) [][]string {
	if len(policy) == 0 {
		return nil
	}
	a := readAliasesOf(cueFiles(instances))
	var looks [][]string
	for _, name := range value.SortedKeys(policy) {
		var stack []ast.Node
		ast.Walk(policy[name], func(n ast.Node) bool {
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
