package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuetrainer/cuetrainer/engine"
)

// vetReport is what a vet run found: the documents' outcomes, or the
// problems of a policy that did not load.
type vetReport struct {
	results []vetted
	policy  []engine.Problem
	// policyWarnings are the load's warnings (heuristic checks': the
	// load went on), printed as it ended and kept for the reports.
	policyWarnings []engine.Problem
	// builtinAdvisory leaves the builtin runtimes' rejections out of the
	// exit status (--fail-on-builtin=false).
	builtinAdvisory bool
}

// summary counts a report's documents by outcome and its findings.
type summary struct {
	Documents      int `json:"documents"`
	Admitted       int `json:"admitted"`
	Rejected       int `json:"rejected"`
	Skipped        int `json:"skipped"`
	Context        int `json:"context"`
	Errors         int `json:"errors"`
	Warnings       int `json:"warnings"`
	RuleErrors     int `json:"ruleErrors"`
	PolicyProblems int `json:"policyProblems"`
	// BuiltinRejected and BuiltinWarned count the documents above that
	// are builtin runtimes (builtin: true), rejected and with warnings;
	// FailOnBuiltin says the exit status counts their rejections.
	BuiltinRejected int  `json:"builtinRejected"`
	BuiltinWarned   int  `json:"builtinWarned"`
	FailOnBuiltin   bool `json:"failOnBuiltin"`
}

func (rep *vetReport) summary() summary {
	s := summary{Documents: len(rep.results), PolicyProblems: len(rep.policy), FailOnBuiltin: !rep.builtinAdvisory}
	for _, r := range rep.results {
		if r.shipped && len(r.errors) > 0 {
			s.BuiltinRejected++
		}
		if r.shipped && len(r.warnings) > 0 {
			s.BuiltinWarned++
		}
		switch status(r) {
		case "admitted":
			s.Admitted++
		case "rejected":
			s.Rejected++
		case "skipped":
			s.Skipped++
		case "context":
			s.Context++
		}
		for _, f := range r.errors {
			if f.Phase == engine.PhaseRuleError {
				s.RuleErrors++
			} else {
				s.Errors++
			}
		}
		s.Warnings += len(r.warnings)
	}
	return s
}

// reportTarget is a report to write: a format, to a file or ("") to
// standard output.
type reportTarget struct{ format, file string }

var reportFormats = []string{"text", "json", "junit", "sarif"}

// reportTargets are the reports the flags ask for: -o's on standard
// output (text goes to standard error), and each --report FORMAT=FILE.
func (o *vetOptions) reportTargets() ([]reportTarget, error) {
	known := func(f string) bool {
		for _, k := range reportFormats {
			if f == k {
				return true
			}
		}
		return false
	}
	if !known(o.output) {
		return nil, usageError{fmt.Errorf("unknown output format %q: use %s", o.output, strings.Join(reportFormats, ", "))}
	}
	targets := []reportTarget{{format: o.output}}
	for _, r := range o.reports {
		format, file, ok := strings.Cut(r, "=")
		if !ok || file == "" || !known(format) {
			return nil, usageError{fmt.Errorf("--report %q: write FORMAT=FILE, FORMAT one of %s", r, strings.Join(reportFormats, ", "))}
		}
		targets = append(targets, reportTarget{format: format, file: file})
	}
	return targets, nil
}

// writeReports writes every report asked for.
func writeReports(cmd *cobra.Command, targets []reportTarget, rep *vetReport, verbose bool) error {
	for _, t := range targets {
		w := cmd.OutOrStdout()
		if t.file == "" && t.format == "text" {
			if rep.policy != nil {
				continue // the error says it, on standard error
			}
			w = cmd.ErrOrStderr()
		}
		var f *os.File
		if t.file != "" {
			var err error
			if f, err = os.Create(t.file); err != nil {
				return fmt.Errorf("--report: %w", err)
			}
			w = f
		}
		err := writeReport(w, t.format, rep, verbose)
		if f != nil {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("writing the %s report: %w", t.format, err)
		}
	}
	return nil
}

func writeReport(w io.Writer, format string, rep *vetReport, verbose bool) error {
	switch format {
	case "json":
		return writeJSONReport(w, rep)
	case "junit":
		return writeJUnitReport(w, rep)
	case "sarif":
		return writeSARIFReport(w, rep)
	}
	if rep.policy != nil {
		_, err := fmt.Fprintf(w, "%s\n", problemsText(rep.policy))
		return err
	}
	writeText(w, rep, verbose)
	return nil
}

// loadProblems are the problems of a policy that did not load; an error
// of another kind (a directory that does not exist) is one problem.
func loadProblems(err error) []engine.Problem {
	var le *engine.LoadError
	if errors.As(err, &le) {
		return le.Problems
	}
	var u usageError
	if errors.As(err, &u) {
		err = u.err
	}
	return []engine.Problem{{Message: err.Error()}}
}

func problemsText(ps []engine.Problem) string {
	var lines []string
	for _, p := range ps {
		lines = append(lines, p.String())
	}
	return strings.Join(lines, "\n")
}

type jsonFinding struct {
	Location string `json:"location"`
	engine.Finding
	Message string `json:"message"`
}

type jsonDocument struct {
	File       string        `json:"file"`
	Line       int           `json:"line"`
	APIVersion string        `json:"apiVersion,omitempty"`
	Kind       string        `json:"kind,omitempty"`
	Namespace  string        `json:"namespace,omitempty"`
	Name       string        `json:"name,omitempty"`
	Builtin    bool          `json:"builtin,omitempty"`
	Status     string        `json:"status"`
	Errors     []jsonFinding `json:"errors,omitempty"`
	Warnings   []jsonFinding `json:"warnings,omitempty"`
}

func status(r vetted) string {
	switch {
	case len(r.errors) > 0:
		return "rejected"
	case r.Skipped:
		return "skipped"
	case r.Context:
		return "context"
	}
	return "admitted"
}

func writeJSONReport(w io.Writer, rep *vetReport) error {
	report := struct {
		Documents []jsonDocument `json:"documents"`
		// PolicyProblems say why the policy did not load (nothing is
		// vetted then).
		PolicyProblems []engine.Problem `json:"policyProblems,omitempty"`
		// PolicyWarnings are what the load warned of, and went on.
		PolicyWarnings []engine.Problem `json:"policyWarnings,omitempty"`
		Summary        summary          `json:"summary"`
	}{Documents: []jsonDocument{}, PolicyProblems: rep.policy, PolicyWarnings: rep.policyWarnings, Summary: rep.summary()}
	for _, r := range rep.results {
		d := jsonDocument{File: r.Doc.File, Line: r.Doc.Line, Status: status(r), Builtin: r.shipped}
		if r.Doc.Object != nil {
			d.APIVersion, d.Kind, d.Name = r.Doc.APIVersion(), r.Doc.Kind(), r.Doc.Name()
			d.Namespace = r.Doc.Namespace()
			if r.Object != nil {
				d.Namespace, _ = r.Object["metadata"].(map[string]any)["namespace"].(string)
			}
		}
		for _, f := range r.errors {
			d.Errors = append(d.Errors, jsonFinding{Location: where(r.Result, &f), Finding: f, Message: f.String()})
		}
		for _, f := range r.warnings {
			d.Warnings = append(d.Warnings, jsonFinding{Location: where(r.Result, &f), Finding: f, Message: f.Message()})
		}
		report.Documents = append(report.Documents, d)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(report)
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	Skipped   *struct{}     `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnitReport writes one test case per document, named by what the
// document is (Kind namespace/name), so that a case keeps its name when
// lines move: a rejection is a failure (a builtin runtime's only when it
// counts in the exit status), a rule of the policy that failed an error. A policy that does not load is a suite of its own, a failing
// case per file; one that loads with warnings, a passing case per file
// that names them.
func writeJUnitReport(w io.Writer, rep *vetReport) error {
	var suites []junitSuite
	if rep.policy != nil {
		suite := junitSuite{Name: "cuetrainer policy"}
		byFile := map[string][]engine.Problem{}
		for _, p := range rep.policy {
			byFile[p.File] = append(byFile[p.File], p)
		}
		for _, file := range sortedStrings(byFile) {
			ps := byFile[file]
			suite.Cases = append(suite.Cases, junitCase{Classname: file, Name: "the policy loads",
				Failure: &junitFailure{Message: fmt.Sprintf("%d problem(s)", len(ps)), Text: problemsText(ps) + "\n"}})
			suite.Tests++
			suite.Failures++
		}
		suites = append(suites, suite)
	} else if len(rep.policyWarnings) > 0 {
		// A policy that loads with warnings: a passing case per file,
		// the warnings in its output, as a document's are.
		suite := junitSuite{Name: "cuetrainer policy"}
		byFile := map[string][]engine.Problem{}
		for _, p := range rep.policyWarnings {
			byFile[p.File] = append(byFile[p.File], p)
		}
		for _, file := range sortedStrings(byFile) {
			c := junitCase{Classname: file, Name: "the policy loads"}
			for _, p := range byFile[file] {
				c.SystemOut += "Warning: " + strings.ReplaceAll(p.String(), "\n", "\n    ") + "\n"
			}
			suite.Cases = append(suite.Cases, c)
			suite.Tests++
		}
		suites = append(suites, suite)
	}
	suite := junitSuite{Name: "cuetrainer vet"}
	named := map[string]int{}
	for i, r := range rep.results {
		name := r.identity()
		if r.Doc.Object == nil || r.Identity() == "" {
			name = fmt.Sprintf("document %d", i+1)
		}
		key := r.Doc.File + "\x00" + name
		if named[key]++; named[key] > 1 {
			name = fmt.Sprintf("%s (%d)", name, named[key])
		}
		c := junitCase{Classname: r.Doc.File, Name: name}
		var failures, ruleErrors []string
		for _, f := range r.errors {
			text := fmt.Sprintf("%s: %s", where(r.Result, &f), f.String())
			if f.Phase == engine.PhaseRuleError {
				ruleErrors = append(ruleErrors, fmt.Sprintf("%s: rule %s: %s", f.Source, f.Rule, f.Detail))
				continue
			}
			failures = append(failures, text)
		}
		switch {
		case len(ruleErrors) > 0:
			c.Error = &junitFailure{Message: fmt.Sprintf("%d rule(s) of the policy failed", len(ruleErrors)), Text: strings.Join(append(ruleErrors, failures...), "\n") + "\n"}
			suite.Errors++
		case len(failures) > 0 && r.shipped && rep.builtinAdvisory:
			// Left out of the exit status (--fail-on-builtin=false): no
			// failure either, and said.
			c.SystemOut += "Rejected, not in the exit status (--fail-on-builtin=false):\n" + strings.Join(failures, "\n") + "\n"
		case len(failures) > 0:
			c.Failure = &junitFailure{Message: fmt.Sprintf("%d error(s)", len(failures)), Text: strings.Join(failures, "\n") + "\n"}
			suite.Failures++
		case r.Skipped:
			c.Skipped = &struct{}{}
			suite.Skipped++
		}
		for _, f := range r.warnings {
			c.SystemOut += fmt.Sprintf("Warning: %s: %s\n", where(r.Result, &f), f.Message())
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	suites = append(suites, suite)
	all := junitSuites{Suites: suites}
	for _, s := range suites {
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Errors += s.Errors
		all.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func sortedStrings[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
