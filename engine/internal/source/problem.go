// Package source names the files a load compiles and turns CUE errors
// and positions into problems at an admin's file, line and column, in
// words an admin can act on; and suggests the name meant for a slip.
package source

import "fmt"

// Problem is one mistake, at a position in a CUE file.
type Problem struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Message says what is wrong and what to do; it may hold more lines
	// (further positions, indented).
	Message string `json:"message"`
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
	switch w := p.Where(); {
	case w == "":
		return p.Message
	case p.Message == "":
		return w
	}
	return p.Where() + ": " + p.Message
}
