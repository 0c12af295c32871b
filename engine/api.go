package engine

import (
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
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
