package main

import (
	"fmt"
	"io"

	"github.com/cuetrainer/cuetrainer/engine"
)

// where prints FILE:LINE for a finding (nil: the document's first line).
func where(r engine.Result, f *engine.Finding) string {
	line := r.Doc.Line
	if f != nil && f.HasPath {
		line = r.Doc.LineOf(f.Path)
	}
	return fmt.Sprintf("%s:%d", r.Doc.File, line)
}

// printFindings writes a document's warnings and errors, one a line:
// FILE:LINE: Kind ns/name: field.path: message, warnings after "Warning: ".
func printFindings(w io.Writer, r engine.Result, warnings, errors []engine.Finding) {
	id := ""
	if r.Doc.Object != nil && r.Identity() != "" {
		id = r.Identity() + ": "
	}
	printFindingsAs(w, r, id, warnings, errors)
}

// printFindingsAs is printFindings with the object named as id says.
func printFindingsAs(w io.Writer, r engine.Result, id string, warnings, errors []engine.Finding) {
	for _, f := range warnings {
		fmt.Fprintf(w, "Warning: %s: %s%s\n", where(r, &f), id, f.Message())
	}
	for _, f := range errors {
		fmt.Fprintf(w, "%s: %s%s\n", where(r, &f), id, f.String())
	}
}

// printRuleError writes a rule that failed to evaluate, at the rule: the
// policy's defect, found on a document.
func printRuleError(w io.Writer, r engine.Result, f engine.Finding) {
	at := f.Source
	if at == "" {
		at = "policy"
	}
	fmt.Fprintf(w, "%s: rule %s failed on %s (%s), a defect of the policy: %s\n", at, f.Rule, r.Identity(), where(r, nil), f.Detail)
}

// exitCode is the exit status errors call for: 2 when a document could not
// be read, a rule of the policy failed or cuetrainer could not evaluate it
// (a defect), 1 when one was rejected, 0 for none.
func exitCode(errors []engine.Finding) int {
	code := exitOK
	for _, f := range errors {
		c := exitRejected
		if f.Phase == engine.PhaseRead || f.Phase == engine.PhaseRuleError || f.Phase == engine.PhaseDefect {
			c = exitUsage
		}
		code = max(code, c)
	}
	return code
}
