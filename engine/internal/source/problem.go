// Package source names the files a load compiles and turns CUE errors
// and positions into problems at an admin's file, line and column, in
// words an admin can act on; and suggests the name meant for a slip.
package source

import (
	"fmt"
	"strings"
)

// Problem is one mistake, at a position in a CUE file.
type Problem struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Message says what is wrong and what to do; it may hold more lines
	// (further positions, indented).
	Message string `json:"message"`
	// Check names the check that found it (package checks): printed
	// after the message's first line, and SARIF's rule id.
	Check string `json:"check,omitempty"`
}

// Where prints the problem's position as FILE:LINE:COLUMN, or "" when none
// is known.
func (p Problem) Where() string {
	switch {
	case p.File == "":
		return ""
	case p.Line == 0:
		return p.File
	case p.Column == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

func (p Problem) String() string {
	msg := p.Message
	if p.Check != "" {
		// After the first line, as staticcheck names its checks.
		first, rest, _ := strings.Cut(msg, "\n")
		msg = first + " (" + p.Check + ")"
		if rest != "" {
			msg += "\n" + rest
		}
	}
	w := p.Where()
	switch {
	case w == "":
		return msg
	case p.Message == "" && p.Check != "":
		return w + " (" + p.Check + ")"
	case p.Message == "":
		return w
	}
	return w + ": " + msg
}
