package lint

import (
	"regexp/syntax"
	"testing"
)

// TestTrailingOptional: a pattern whose unanchored end repeats a literal
// or a class zero times or more (or once at most) is found, with the
// pattern before it as written; one anchored at its end, one ending in
// any character or a group, and one of a single item are not.
func TestTrailingOptional(t *testing.T) {
	for re, want := range map[string][2]string{
		"^team-*":       {"-*", "^team"},
		`^v1\.[0-9]*`:   {"[0-9]*", `^v1\.`},
		"^ab?":          {"b?", "^a"},
		`^a\-*`:         {`\-*`, "^a"},
		"^[^/]+/[a-z]?": {"[a-z]?", "^[^/]+/"},
		"^team-*$":      {},
		"^team-.*":      {},
		"^(ab)*":        {},
		"a*":            {},
		"^team-+":       {},
	} {
		tail, before := trailingOptional(re)
		if [2]string{tail, before} != want {
			t.Errorf("%s: %q, %q, want %q", re, tail, before, want)
		}
	}
}

// TestMatchesOnlyCased: a pattern every match of which holds an upper-case
// letter is found (nothing strings.ToLower gives matches it); one with a
// match without (a lower-case alternative, a class with others, what may
// be empty, (?i)) is not.
func TestMatchesOnlyCased(t *testing.T) {
	for re, want := range map[string]bool{
		":Latest$":        true,
		"^[A-Z]+$":        true,
		"(Latest|LATEST)": true,
		"x{2}Y":           true,
		"(?i):Latest":     false,
		":[A-Za-z]+":      false,
		"a|B":             false,
		"^B*$":            false,
		":latest$":        false,
		"[^a-z]":          false,
		"\\d+":            false,
	} {
		parsed, err := syntax.Parse(re, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := matchesOnlyCased(parsed, true); got != want {
			t.Errorf("%s: %v, want %v", re, got, want)
		}
	}
}
