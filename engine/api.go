package engine

import (
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// The contract's types and constants that the engine's API hands out, by
// the names cmd/ and controller/ use (engine/internal/contract declares
// them, beside the CUE fields they decode).

// Phase says which check produced a finding (contract.Phase).
type Phase = contract.Phase

// The phases of findings (contract.PhaseSchema and the others).
const (
	PhaseSchema    = contract.PhaseSchema
	PhaseCRD       = contract.PhaseCRD
	PhaseWebhook   = contract.PhaseWebhook
	PhasePolicy    = contract.PhasePolicy
	PhaseInput     = contract.PhaseInput
	PhaseRead      = contract.PhaseRead
	PhaseRender    = contract.PhaseRender
	PhaseRuleError = contract.PhaseRuleError
	PhaseDefect    = contract.PhaseDefect
)

// What a render's and a runtime review's CUE write, decoded.
type (
	ControllerDirectives = contract.ControllerDirectives
	Deadline             = contract.Deadline
	Condition            = contract.Condition
	RuntimeSummary       = contract.RuntimeSummary
)

// Problem is one mistake of a load, at a position in a CUE file
// (source.Problem).
type Problem = source.Problem

// Check is one class of load problem, by the name a problem carries
// (checks.Check); Checks are them all, by name.
type Check = checks.Check

// The levels of checks (checks.Sound, checks.Heuristic).
const (
	CheckSound     = checks.Sound
	CheckHeuristic = checks.Heuristic
)

// Checks are the checks a load makes of an admin's CUE, by name.
func Checks() []Check { return checks.All() }

// Document is one object read from an input, with where it came from
// (k8s.Document).
type Document = k8s.Document

// Finding is one result of a check, in the API server's words
// (k8s.Finding).
type Finding = k8s.Finding

// ReadYAML reads every document of a YAML or JSON stream (k8s.ReadYAML):
// a document that cannot be read gives one Document with Err, and the
// documents after it are still read; a v1 List is read as its items.
func ReadYAML(file string, data []byte) []Document { return k8s.ReadYAML(file, data) }

// ReadObject reads one object as an API server sends it to a webhook, as
// ReadYAML reads it, without the YAML reader's cost (k8s.ReadObject).
func ReadObject(file string, data []byte) Document { return k8s.ReadObject(file, data) }
