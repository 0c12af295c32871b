// Package checks names the checks a load makes of an admin's CUE: one
// name per class of problem, the name a load problem carries, prints and
// gives SARIF as its rule id (`cuetrainer vet --list-checks` lists them,
// docs/checks.md documents them). A name is stable once released: a
// check that changes what it finds keeps its name, one that goes keeps
// its name unused.
//
// A check is sound or heuristic. A sound check rests on a fact of CUE, of
// the contract or of the schemas (a field the schema has not, a value of
// the wrong type, an entry the engine never reads): what it refuses is
// wrong whatever the admin meant. A heuristic check guesses what the
// admin meant (an allow- or a denylist, an anchor, a comparison that can
// never hold): it may be wrong about a correct policy, so it warns, and
// the load goes on. A heuristic check's warning is silenced where the
// admin says it is meant (lint/suppress.go): a // cuetrainer:ignore NAME
// REASON comment on the field, // cuetrainer:file-ignore NAME REASON for
// a file, a policy directory's lint: ignore: NAME: REASON. A sound check
// is never silenced.
package checks

import "sort"

// Level says whether a check is sound or guesses.
type Level string

const (
	// Sound: the problem is a fact of CUE, the contract or the schemas.
	Sound Level = "sound"
	// Heuristic: the problem is a guess at what the admin meant.
	Heuristic Level = "heuristic"
)

// Check is one class of load problem.
type Check struct {
	// Name is the check's name, in kebab case.
	Name string
	Level
	// Warns says the check's problems are warnings: the load goes on. A
	// check that does not warn refuses the load (exit 2). Every heuristic
	// check warns (TestHeuristicChecksWarn).
	Warns bool
	// Doc says, in a paragraph, what the check finds and why it matters.
	Doc string
}

var registered = map[string]Check{}

// register adds c to the checks a load makes.
func register(c Check) Check {
	if _, ok := registered[c.Name]; ok {
		panic("checks: " + c.Name + " registered twice")
	}
	registered[c.Name] = c
	return c
}

// Named is the check of that name.
func Named(name string) (Check, bool) {
	c, ok := registered[name]
	return c, ok
}

// Suppressible says whether a directive may silence c: a heuristic
// check's findings only.
func (c Check) Suppressible() bool { return c.Level == Heuristic }

// All are the checks, by name.
func All() []Check {
	out := make([]Check, 0, len(registered))
	for _, c := range registered {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
