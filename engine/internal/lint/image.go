package lint

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"regexp"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
)

// The checks of this file find a rule that means to hold images to a
// registry and, as written, lets other registries' images through: the
// registry of an image is the text before its first "/", and a test of
// the text that does not end there, or that may match anywhere in it,
// passes an image of a registry whose name begins or ends alike. CUE
// accepts each; the rule then guards nothing against the image it was
// written for.

// registryHost is a registry's host as an image names it: dotted, or
// with a port (localhost:5000).
var registryHost = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?((\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+(:[0-9]+)?|:[0-9]+)$`)

// imageRead is the read's name when x reads a container's image (a field
// named image): "" when it does not.
func (l *linter) imageRead(x ast.Expr) string {
	sels, name, ok := l.readAt(x)
	if !ok || len(sels) == 0 || sels[len(sels)-1].String() != "image" {
		return ""
	}
	return name
}

// imageTest reports a test of an image that holds for another registry's
// images, by how the rules read it (polarity.go; holds is the polarity of
// "the test holds"): where a rule fires when it does not hold, the rule
// lets those images through, a refusal; where rules fire only when it
// holds, they refuse more images, never fewer, and nothing is said; where
// no rule's condition reads it as written (a helper's, a list's filter),
// a warning, since the check cannot tell which it is. It is made once
// every rule is walked.
func (l *linter) imageTest(pos token.Pos, holds func() uint8, format string, args ...any) {
	l.imageTests = append(l.imageTests, func() {
		switch p := holds(); {
		case p&firesWhenFalse != 0:
			l.problem(checks.ImageRegistryAllowlist, pos, format, args...)
		case p == 0:
			l.problem(checks.ImageRegistry, pos, format+" (if a rule refuses the images this test holds for, a denylist, it refuses those too, which may be meant)", args...)
		}
	})
}

// checkImageSearch checks strings.HasPrefix(image, "host") and
// strings.Contains(image, "host/..."): a host without the "/" that ends
// it is the beginning of other hosts' names too, and a text contained
// may follow another registry's host. The text is a literal, or each
// item of a list the load knows that a comprehension takes it from (`for
// r in #allowed`), said at the item.
func (l *linter) checkImageSearch(x *ast.CallExpr) {
	name, ok := stringsCall(x, 2)
	read := l.imageRead(x.Args[0])
	if !ok || read == "" {
		return
	}
	type candidate struct {
		lit  *ast.BasicLit
		text string
		// arg is the argument as written; of, for an item of a list,
		// where the list is.
		arg, of string
	}
	var candidates []candidate
	if lit, text, ok := stringLit(x.Args[1]); ok {
		candidates = append(candidates, candidate{lit: lit, text: text, arg: lit.Value})
	} else if id, ok := x.Args[1].(*ast.Ident); ok {
		for _, item := range l.forItems(id) {
			if lit, text, ok := stringLit(item.expr); ok {
				candidates = append(candidates, candidate{lit: lit, text: text, arg: id.Name, of: item.of})
			}
		}
	}
	holds := func() uint8 { return l.testPolarity(x) }
	for _, c := range candidates {
		host, _, hasSlash := strings.Cut(c.text, "/")
		if !registryHost.MatchString(host) {
			continue
		}
		var item string
		if c.of != "" {
			item = fmt.Sprintf(" (%s is %s, an item of %s)", c.arg, c.lit.Value, c.of)
		}
		switch {
		case name == "HasPrefix" && !hasSlash:
			other := c.text + ".attacker.example/image"
			if strings.Contains(host, ":") {
				other = c.text + "0/image" // another port
			}
			l.imageTest(c.lit.Pos(), holds, "strings.HasPrefix(%s, %s)%s also holds for %q, an image of another registry: a registry's name ends at the image's first \"/\"; write %q", read, c.arg, item, other, c.text+"/")
		case name == "Contains" && hasSlash:
			l.imageTest(c.lit.Pos(), holds, "strings.Contains(%s, %s)%s also holds for %q, an image of another registry: did you mean strings.HasPrefix(%s, %s)?", read, c.arg, item, "attacker.example/"+c.text, read, c.arg)
		}
	}
}

// listItem is an item of a list a comprehension takes a value from, as
// written, and where the list is (its path, or "the list").
type listItem struct {
	expr ast.Expr
	of   string
}

// forItems are the items id may be, when a for clause binds it to the
// items of a list the load knows: one written out there, or one a path
// names (`for r in #allowed`) whose items the admin's files write.
func (l *linter) forItems(id *ast.Ident) []listItem {
	fc, ok := id.Scope.(*ast.ForClause)
	if !ok || fc.Value == nil || id.Node != fc.Value {
		return nil
	}
	var out []listItem
	if list, ok := fc.Source.(*ast.ListLit); ok {
		for _, el := range list.Elts {
			out = append(out, listItem{expr: el, of: "the list"})
		}
		return out
	}
	base, ok := l.resolveRead(fc.Source)
	if !ok {
		return nil
	}
	v := l.lookup(base)
	it, err := v.List()
	if err != nil {
		return nil
	}
	for it.Next() {
		if x, ok := it.Value().Source().(ast.Expr); ok {
			out = append(out, listItem{expr: x, of: exprText(fc.Source)})
		}
	}
	return out
}

// checkImagePattern checks image =~ "re" and image !~ "re" where re names
// a registry's host: unanchored, it matches after another registry's
// host; with a dot not escaped, it matches a host with any character
// there.
func (l *linter) checkImagePattern(x *ast.BinaryExpr) {
	if x.Op != token.MAT && x.Op != token.NMAT {
		return
	}
	lit, ok := x.Y.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return
	}
	re, err := literal.Unquote(lit.Value)
	read := l.imageRead(x.X)
	if err != nil || read == "" {
		return
	}
	if _, err := regexp.Compile(re); err != nil {
		return // checkRegexp says so
	}
	anchored := strings.HasPrefix(re, "^")
	hostPattern, _, hasSlash := strings.Cut(strings.TrimPrefix(re, "^"), "/")
	host := strings.ReplaceAll(hostPattern, `\.`, ".")
	if !hasSlash || !registryHost.MatchString(host) {
		return
	}
	escaped := strings.ReplaceAll(host, ".", `\.`)
	// The test holds where the image matches (=~), or where it does not
	// (!~).
	holds := func() uint8 {
		if x.Op == token.NMAT {
			return flip(l.testPolarity(x))
		}
		return l.testPolarity(x)
	}
	switch {
	case !anchored:
		l.imageTest(lit.Pos(), holds, "%s %s %s matches anywhere in the image, so it also matches %q, an image of another registry: anchor it, %s", read, x.Op, lit.Value, "attacker.example/"+host+"/image", cueRegexp("^"+escaped+"/"))
	case hostPattern != escaped:
		// The first dot unescaped matches any character: a "-" there
		// names another host (registry-example.com).
		for i := 0; i < len(hostPattern); i++ {
			if hostPattern[i] == '\\' {
				i++
				continue
			}
			if hostPattern[i] == '.' {
				other := strings.ReplaceAll(hostPattern[:i], `\.`, ".") + "-" + strings.ReplaceAll(hostPattern[i+1:], `\.`, ".")
				l.imageTest(lit.Pos(), holds, "%s %s %s also matches %q, an image of another registry: a \".\" matches any character; escape the dots, %s", read, x.Op, lit.Value, other+"/image", cueRegexp("^"+escaped+"/"))
				return
			}
		}
	}
}

// cueRegexp writes a regular expression as a CUE string literal.
func cueRegexp(re string) string {
	return `"` + strings.ReplaceAll(re, `\`, `\\`) + `"`
}
