package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/cuetrainer/cuetrainer/engine"
)

// checkOf is the check a load problem names.
func checkOf(name string) (engine.Check, bool) {
	for _, c := range engine.Checks() {
		if c.Name == name {
			return c, true
		}
	}
	return engine.Check{}, false
}

// checkAction says what a check's problems do to a load.
func checkAction(c engine.Check) string {
	if c.Warns {
		return "warns"
	}
	return "refuses"
}

// firstSentence is a check's doc up to its first full stop.
func firstSentence(doc string) string {
	if i := strings.Index(doc, ". "); i >= 0 {
		return doc[:i+1]
	}
	return doc
}

// writeChecks lists the checks a load makes (vet --list-checks): a line
// each, its name, level, what it does to the load, and its doc's first
// sentence; docs/checks.md has them whole.
func writeChecks(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tLEVEL\tLOAD\tFINDS")
	for _, c := range engine.Checks() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, c.Level, checkAction(c), firstSentence(c.Doc))
	}
	return tw.Flush()
}
