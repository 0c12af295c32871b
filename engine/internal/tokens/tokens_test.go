package tokens

import (
	"regexp"
	"strings"
	"testing"
)

// TestTokens: a token is lower-case letters and digits (a DNS label, a
// label key), of its kind alone; Replace finds each in text, leaves those
// it is given nothing for and every other byte; past Max there is none;
// Contains sees the nonce in either case.
func TestTokens(t *testing.T) {
	dnsLabel := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	for _, k := range []Kind{Key, Value, Part} {
		first, ok1 := k.Make(0)
		last, ok2 := k.Make(Max - 1)
		if !ok1 || !ok2 || !dnsLabel.MatchString(first) || !dnsLabel.MatchString(last) || len(first) != len(last) || len(last) > 63 {
			t.Errorf("%c: tokens %q, %q: want lower-case letters and digits, of one length, at most 63", k, first, last)
		}
		if _, ok := k.Make(Max); ok {
			t.Errorf("%c: a token past Max", k)
		}
		if !strings.HasPrefix(first, k.Prefix()) || !Contains(first) || !Contains(strings.ToUpper(last)) {
			t.Errorf("%c: %q: want it to begin with the prefix, and to hold the nonce in either case", k, first)
		}
	}
	if Contains("ct" + strings.Repeat("0", 12)) {
		t.Error("text without this process's nonce holds a token")
	}

	v7, _ := Value.Make(7)
	v12, _ := Value.Make(12)
	p7, _ := Part.Make(7)
	in := "a " + v7 + "-" + v12 + "9 " + p7 + " " + v7[:len(v7)-1]
	got := Value.Replace(in, func(n int) (string, bool) { return map[int]string{7: "seven"}[n], n == 7 })
	if want := "a seven-" + v12 + "9 " + p7 + " " + v7[:len(v7)-1]; got != want {
		t.Errorf("Replace:\n got %q\nwant %q (the 7th put back; the 12th left, the digit after it too; another kind's and a cut one left)", got, want)
	}
	if s := "no tokens"; Value.Replace(s, nil) != s {
		t.Error("text without tokens changed")
	}
}
