package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/cuetrainer/cuetrainer/engine"
)

// SARIF 2.1.0 (OASIS), the format code-scanning tools read: one run of
// cuetrainer, a rule per rule name that found something, a result per
// finding at its file and line.

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	ShortDescription     sarifMessage   `json:"shortDescription"`
	DefaultConfiguration sarifRuleLevel `json:"defaultConfiguration"`
}

type sarifRuleLevel struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

// ruleDescriptions say what each phase's rules check, for the rules'
// short descriptions.
var ruleDescriptions = map[engine.Phase]string{
	engine.PhaseSchema:    "the object fits the CRD's schema (types, fields)",
	engine.PhaseCRD:       "the CRD's OpenAPI and CEL validations",
	engine.PhaseWebhook:   "Kubeflow Trainer's validating webhook",
	engine.PhasePolicy:    "cuetrainer's policy beyond Kubeflow",
	engine.PhaseInput:     "the document is an object the API server admits",
	engine.PhaseRead:      "the document can be read",
	engine.PhaseRender:    "the object renders",
	engine.PhaseRuleError: "a rule of the policy evaluates",
	engine.PhaseDefect:    "cuetrainer and CUE evaluate the object (a panic they recovered: their defect, to report)",
	"warning":             "a warning of the API server, Kubeflow or the policy",
}

// ruleID names a finding's rule: its phase, and its rule's name when it
// has one (webhook/trainerReservedEnv).
func ruleID(f engine.Finding) string {
	if f.Rule == "" {
		return string(f.Phase)
	}
	return string(f.Phase) + "/" + f.Rule
}

func writeSARIFReport(w io.Writer, rep *vetReport) error {
	v, _ := versions()
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "cuetrainer", Version: v,
		InformationURI: "https://github.com/cuetrainer/cuetrainer", Rules: []sarifRule{}}}, Results: []sarifResult{}}
	index := map[string]int{}
	rule := func(id, description, level string) int {
		if i, ok := index[id]; ok {
			return i
		}
		index[id] = len(run.Tool.Driver.Rules)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: id, ShortDescription: sarifMessage{description}, DefaultConfiguration: sarifRuleLevel{level}})
		return index[id]
	}
	at := func(file string, line, col int) []sarifLocation {
		if file == "" {
			return nil
		}
		loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: sarifURI(file)}}}
		if line > 0 {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: line, StartColumn: col}
		}
		return []sarifLocation{loc}
	}
	// A load problem's rule is its check (docs/checks.md), a warning's
	// too, at level warning.
	loadProblem := func(p engine.Problem, level string) {
		id, desc := "policy-load", "the policy directory loads"
		if c, ok := checkOf(p.Check); ok {
			id, desc = c.Name, firstSentence(c.Doc)
		}
		i := rule(id, desc, level)
		run.Results = append(run.Results, sarifResult{RuleID: id, RuleIndex: i, Level: level, Message: sarifMessage{p.Message}, Locations: at(p.File, p.Line, p.Column)})
	}
	for _, p := range rep.policy {
		loadProblem(p, "error")
	}
	for _, p := range rep.policyWarnings {
		loadProblem(p, "warning")
	}
	for _, r := range rep.results {
		id := ""
		if r.Doc.Object != nil && r.Identity() != "" {
			id = r.identity() + ": "
		}
		add := func(f engine.Finding, level, text string) {
			rid := ruleID(f)
			desc := ruleDescriptions[f.Phase]
			if f.Rule != "" {
				desc = fmt.Sprintf("%s (rule %s)", desc, f.Rule)
			}
			i := rule(rid, desc, level)
			line := r.Doc.Line
			if f.HasPath {
				line = r.Doc.LineOf(f.Path)
			}
			locs := at(r.Doc.File, line, 0)
			if f.Phase == engine.PhaseRuleError && f.Source != "" {
				file, l, c := splitSource(f.Source)
				locs = append(at(file, l, c), locs...)
			}
			run.Results = append(run.Results, sarifResult{RuleID: rid, RuleIndex: i, Level: level, Message: sarifMessage{id + text}, Locations: locs})
		}
		// A builtin runtime's rejection left out of the exit status
		// (--fail-on-builtin=false) fails no check either: a warning.
		level := "error"
		if r.shipped && rep.builtinAdvisory {
			level = "warning"
		}
		for _, f := range r.errors {
			add(f, level, f.String())
		}
		for _, f := range r.warnings {
			if f.Phase == "" {
				f.Phase = "warning"
			}
			add(f, "warning", f.Message())
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}

// sarifURI is a file's name as a SARIF artifact URI: relative paths with
// forward slashes, standard input as "stdin".
func sarifURI(file string) string {
	if file == "-" || file == "" {
		return "stdin"
	}
	return filepath.ToSlash(file)
}

// splitSource parses a rule error's FILE:LINE:COLUMN.
func splitSource(s string) (file string, line, col int) {
	parts := strings.Split(s, ":")
	if len(parts) >= 3 {
		if _, err := fmt.Sscanf(parts[len(parts)-2]+" "+parts[len(parts)-1], "%d %d", &line, &col); err == nil {
			return strings.Join(parts[:len(parts)-2], ":"), line, col
		}
	}
	return s, 0, 0
}
