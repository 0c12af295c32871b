package engine

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"sort"
	"strings"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
)

// LoadError is CUE that does not load: an admin's policy with mistakes in
// it (or, for the embedded CUE, a defect of cuetrainer's). It lists every
// problem found, each at the admin's file, line and column where one is
// known, so that a report can show them all.
type LoadError struct {
	// Summary says what kind of problems these are.
	Summary string
	// Problems are sorted by file, line and column.
	Problems []Problem
	// Defect is the panic that stopped the load, when one did: not the
	// admin's mistake (defect.go).
	Defect *Defect
}

// Unwrap is the load's defect, when it had one.
func (e *LoadError) Unwrap() error {
	if e.Defect == nil {
		return nil
	}
	return e.Defect
}

func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString(e.Summary)
	b.WriteString(":")
	for _, p := range e.Problems {
		b.WriteString("\n    ")
		b.WriteString(strings.ReplaceAll(p.String(), "\n", "\n    "))
	}
	return b.String()
}

// loadError returns the problems as a LoadError, sorted and without
// repeats; nil for none.
func loadError(summary string, problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	sort.SliceStable(problems, func(i, j int) bool {
		a, b := problems[i], problems[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	out := problems[:0]
	for i, p := range problems {
		if i > 0 && p == problems[i-1] {
			continue
		}
		out = append(out, p)
	}
	return &LoadError{Summary: summary, Problems: out}
}

// Defect is a panic recovered from an evaluation: a defect of cuetrainer
// or of CUE, not of the admin's CUE nor of the object.
type Defect struct {
	// What was being evaluated: "the review of TrainJob team-a/mnist".
	What string
	// Panic is the panic's value, as text; Stack the goroutine's stack
	// where it was recovered.
	Panic string
	Stack string

	// again makes the review that panicked again on a runtime, when a
	// review did, and reports whether it panics there too (culprits).
	again func(*compiled) bool
}

func (d *Defect) Error() string {
	return fmt.Sprintf("cuetrainer or CUE failed evaluating %s: panic: %s. A defect of cuetrainer's or of CUE's, not of the policy nor of the object: please report it, with the policy", d.What, d.Panic)
}

// defectFinding is the finding of an evaluation that panicked on the
// fallback too: it rejects the object, in words that say whose defect it
// is.
func defectFinding(d *Defect) Finding {
	return Finding{Phase: contract.PhaseDefect, Type: "Internal error", Detail: d.Error()}
}

// defectLoadError fails a load that panicked: cuetrainer's or CUE's
// defect, said as such, not as the admin's mistake.
func defectLoadError(summary string, d *Defect) error {
	return &LoadError{Summary: summary, Problems: []Problem{{Message: d.Error(), Check: checks.Defect.Name}}, Defect: d}
}
