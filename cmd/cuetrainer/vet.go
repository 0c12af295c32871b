package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/cuetrainer/cuetrainer/engine"
)

type vetOptions struct {
	globals
	files   []string
	output  string
	release string
	strict  bool
	verbose bool
}

var releasePattern = regexp.MustCompile(`^v[0-9]+\.[0-9]+(\.[0-9]+)?$`)

func newVetCmd() *cobra.Command {
	o := &vetOptions{}
	cmd := &cobra.Command{
		Use:   "vet [-f] PATH...",
		Short: "Check runtimes and TrainJobs as the API server and Kubeflow's webhooks would",
		Long: `vet admits the documents of every PATH in order, like an API server with Kubeflow Trainer's
CRDs and webhooks: files, directories (recursively, in lexical order, .yaml .yml .json .cue)
and - for standard input. An admitted runtime exists for the TrainJobs after it; the runtimes
cuetrainer ships exist from the start (--no-builtin-runtimes leaves them out).

Findings go to standard error as FILE:LINE: Kind ns/name: field.path: message, warnings as
Warning: ...; -o json and -o junit write a report to standard output instead.

Exit status: 0 when everything is admitted (warnings allowed), 1 when anything is rejected,
2 for usage errors, unreadable files and YAML/JSON syntax errors. The highest wins.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, append(o.files, args...))
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringArrayVarP(&o.files, "filename", "f", nil, "a file or directory to vet, or - for standard input; repeatable")
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text, json or junit")
	cmd.Flags().StringVar(&o.release, "release", "", "the Kubeflow Trainer release (vX.Y) to check deprecated runtimes' removal windows against")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "treat warnings as errors")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "also list the documents no rule reads")
	return cmd
}

// vetted is one document's outcome.
type vetted struct {
	engine.Result
	errors   []engine.Finding
	warnings []engine.Finding
	// shipped is a runtime cuetrainer ships (or a policy declares), which
	// exists from the start.
	shipped bool
}

// identity names the document's object, and says when it is one that
// exists from the start.
func (v vetted) identity() string {
	if v.shipped {
		return v.Identity() + " (built in)"
	}
	return v.Identity()
}

func (o *vetOptions) run(cmd *cobra.Command, paths []string) error {
	switch o.output {
	case "text", "json", "junit":
	default:
		return usageError{fmt.Errorf("unknown output format %q: use text, json or junit", o.output)}
	}
	if o.release != "" && !releasePattern.MatchString(o.release) {
		return usageError{fmt.Errorf("--release %q: must be a release such as v2.3", o.release)}
	}
	if len(paths) == 0 {
		return usageError{fmt.Errorf("nothing to vet: give one or more files, directories or -")}
	}
	e, err := o.engine()
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	docs, unreadable := readInputs(e, paths, cmd.InOrStdin(), stderr)
	s := e.NewSession(engine.SessionOptions{Release: o.release, NoBuiltinRuntimes: o.noBuiltinRuntimes})

	code := exitOK
	if unreadable {
		code = exitUsage
	}
	var results []vetted
	// The shipped runtimes exist from the start: those a policy's rule
	// finds fault with come first (a runtime a schema, CRD or webhook rule
	// rejects does not exist for the documents).
	shipped := len(s.BuiltinErrors())
	admitted := append(s.BuiltinErrors(), s.AdmitAll(cmd.Context(), docs, runtime.GOMAXPROCS(0))...)
	// As an API server would, one document after another; evaluated on
	// every CPU, with the same results.
	for i, r := range admitted {
		v := vetted{Result: r, errors: r.Errors, warnings: r.Warnings, shipped: i < shipped}
		if o.strict {
			v.errors = append(v.errors, v.warnings...)
			v.warnings = nil
		}
		code = max(code, exitCode(v.errors))
		results = append(results, v)
	}

	switch o.output {
	case "json":
		err = writeJSONReport(cmd.OutOrStdout(), results)
	case "junit":
		err = writeJUnitReport(cmd.OutOrStdout(), results)
	default:
		writeText(stderr, results, o.verbose)
	}
	if err != nil {
		return err
	}
	if code != exitOK {
		return exitError{code}
	}
	return nil
}

func writeText(w io.Writer, results []vetted, verbose bool) {
	reported := map[string]bool{}
	for _, r := range results {
		// A rule that fails is the policy's defect, said once, at the
		// rule, naming the first document it failed on.
		var errs []engine.Finding
		for _, f := range r.errors {
			if f.Phase != engine.PhaseRuleError {
				errs = append(errs, f)
				continue
			}
			if key := f.Rule + "\x00" + f.Detail; !reported[key] {
				reported[key] = true
				printRuleError(w, r.Result, f)
			}
		}
		if r.shipped {
			printFindingsAs(w, r.Result, r.identity()+": ", r.warnings, errs)
		} else {
			printFindings(w, r.Result, r.warnings, errs)
		}
		if verbose && r.Skipped {
			fmt.Fprintf(w, "%s: %s: skipped: %s is not read by any rule\n", where(r.Result, nil), r.Identity(), r.Doc.APIVersion())
		}
	}
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

func writeJSONReport(w io.Writer, results []vetted) error {
	report := struct {
		Documents []jsonDocument `json:"documents"`
	}{Documents: []jsonDocument{}}
	for _, r := range results {
		d := jsonDocument{File: r.Doc.File, Line: r.Doc.Line, Status: status(r)}
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
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *struct{}     `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func writeJUnitReport(w io.Writer, results []vetted) error {
	suite := junitSuite{Name: "cuetrainer vet"}
	for _, r := range results {
		c := junitCase{Classname: r.Doc.File, Name: fmt.Sprintf("%s (line %d)", r.Identity(), r.Doc.Line)}
		if r.Doc.Object == nil {
			c.Name = fmt.Sprintf("document at line %d", r.Doc.Line)
		}
		if len(r.errors) > 0 {
			text := ""
			for _, f := range r.errors {
				text += fmt.Sprintf("%s: %s\n", where(r.Result, &f), f.String())
			}
			c.Failure = &junitFailure{Message: fmt.Sprintf("%d error(s)", len(r.errors)), Text: text}
			suite.Failures++
		} else if r.Skipped {
			c.Skipped = &struct{}{}
			suite.Skipped++
		}
		for _, f := range r.warnings {
			c.SystemOut += fmt.Sprintf("Warning: %s: %s\n", where(r.Result, &f), f.Message())
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{suite}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
