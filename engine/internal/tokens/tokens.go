// Package tokens is the engine's one scheme of tokens: strings that stand
// in an evaluation for data the CUE must not see, or need not. Three kinds
// share it: an opaque map's key (k8s/aliases.go: label keys must not reach
// CUE's process-wide table of labels), a value a review only carries over
// (carried.go), and a CRD check part's own numbering of those values
// (crdparts.go).
//
// A token is "ct", this process's nonce, the kind's letter and four
// digits: lower-case letters and digits alone, so that it meets a name's
// pattern and a label key's, and no data holds it by chance. The engine
// puts back what each stands for in everything it decodes; text that
// still holds the nonce (Contains) is a token a rule changed.
package tokens

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Max bounds the tokens of a kind in one evaluation: the number is written
// in four digits. Past it the data is left as it is.
const Max = 10000

// digits is how many digits follow a token's prefix.
const digits = 4

// nonce makes this process's tokens unlike any data.
var nonce = func() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}()

// Kind is a kind of token, by the letter after the nonce.
type Kind byte

const (
	// Key is an opaque map's key (k8s.KeyAliases).
	Key Kind = 'k'
	// Value is a value a review only carries over.
	Value Kind = 'v'
	// Part is a CRD check part's own number for a value token it holds.
	Part Kind = 'p'
)

// Prefix starts every token of the kind.
func (k Kind) Prefix() string { return prefixes[k] }

var prefixes = map[Kind]string{Key: marker + "k", Value: marker + "v", Part: marker + "p"}

// Make is the kind's nth token, and false when n is not below Max.
func (k Kind) Make(n int) (string, bool) {
	if n < 0 || n >= Max {
		return "", false
	}
	b := make([]byte, 0, len(k.Prefix())+digits)
	b = append(b, k.Prefix()...)
	for d := Max / 10; d > 0; d /= 10 {
		b = append(b, byte('0'+n/d%10))
	}
	return string(b), true
}

// Replace replaces in s each of the kind's tokens by what by gives for its
// number, and leaves those it gives nothing for.
func (k Kind) Replace(s string, by func(n int) (string, bool)) string {
	prefix := k.Prefix()
	if !strings.Contains(s, prefix) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, prefix)
		end := i + len(prefix) + digits
		if i < 0 || end > len(s) {
			b.WriteString(s)
			return b.String()
		}
		n := 0
		for _, d := range s[i+len(prefix) : end] {
			if d < '0' || d > '9' {
				n = -1
				break
			}
			n = n*10 + int(d-'0')
		}
		b.WriteString(s[:i])
		v, ok := "", false
		if n >= 0 {
			v, ok = by(n)
		}
		if ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i:end])
		}
		s = s[end:]
	}
}

// marker is in every token of every kind; upper is it upper-cased.
var marker, upper = "ct" + nonce, strings.ToUpper("ct" + nonce)

// Contains reports whether s holds a token's nonce, in either case: a
// token of any kind, or one a rule changed (upper-cased, cut).
func Contains(s string) bool { return strings.Contains(s, marker) || strings.Contains(s, upper) }
