package main

import (
	"bytes"
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
	reports []string
	release string
	strict  bool
	verbose bool
	// failOnBuiltin counts the builtin runtimes' rejections in the exit
	// status; printAdmitted writes the documents as admitted.
	failOnBuiltin bool
	printAdmitted bool
	// listChecks prints the checks a load makes of a policy, and vets
	// nothing.
	listChecks bool
}

var releasePattern = regexp.MustCompile(`^v[0-9]+\.[0-9]+(\.[0-9]+)?$`)

func newVetCmd() *cobra.Command {
	o := &vetOptions{}
	cmd := &cobra.Command{
		Use:   "vet [-f] PATH... | --policy-dir DIR",
		Short: "Check runtimes and TrainJobs as the API server and Kubeflow's webhooks would",
		Long: `vet admits the documents of every PATH in order, like an API server with Kubeflow Trainer's
CRDs and webhooks: files, directories (recursively, in lexical order, .yaml .yml .json .cue)
and - for standard input. An admitted runtime exists for the TrainJobs after it; the runtimes
cuetrainer ships exist from the start (--no-builtin-runtimes leaves them out).

Findings go to standard error as FILE:LINE: Kind ns/name: field.path: message, warnings as
Warning: ...; -o json, -o junit and -o sarif write a report to standard output instead, and
--report FORMAT=FILE writes one more to a file (repeatable). Reports are written when the
policy does not load too: they list its problems.

With --policy-dir and no PATH, vet checks the policy alone, as an admin's CI would: it loads
(each rule linted and tried on probes made from every runtime) and the runtimes it ships and
declares are vetted.

The builtin runtimes (those cuetrainer ships and those the policy declares) are vetted first:
each one the policy's rules reject or warn of is printed, marked (shipped) or (declared by the
policy), and the summary line counts them apart from the documents given. --print-admitted
writes each admitted document to standard output as the API server would store it: with its
CRD's defaults and the mutating webhooks' changes (mutators).

Exit status: 0 when everything is admitted (warnings allowed), 1 when anything is rejected,
a builtin runtime included (--fail-on-builtin=false reports those and leaves them out), 2 for
usage errors, a policy that does not load or has a rule that fails, unreadable files and
YAML/JSON syntax errors. The highest wins; the summary line says what it counts.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, append(o.files, args...))
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringArrayVarP(&o.files, "filename", "f", nil, "a file or directory to vet, or - for standard input; repeatable")
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "the report on standard output: text (on standard error), json, junit or sarif")
	cmd.Flags().StringArrayVar(&o.reports, "report", nil, "also write a report to a file, as FORMAT=FILE (json, junit, sarif or text); repeatable")
	cmd.Flags().StringVar(&o.release, "release", "", "the Kubeflow Trainer release (vX.Y) to check deprecated runtimes' removal windows against")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "treat warnings as errors")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "also list the documents no rule reads")
	cmd.Flags().BoolVar(&o.failOnBuiltin, "fail-on-builtin", true, "exit 1 when the policy rejects a builtin runtime (shipped, or declared by the policy); false still reports it")
	cmd.Flags().BoolVar(&o.listChecks, "list-checks", false, "print the checks a load makes of a policy's CUE (the name each load problem carries), and vet nothing")
	cmd.Flags().BoolVar(&o.printAdmitted, "print-admitted", false, "write each admitted document to standard output as YAML, its CRD's defaults and the mutators' changes applied (with -o text; a report then goes to --report FORMAT=FILE)")
	return cmd
}

// vetted is one document's outcome.
type vetted struct {
	engine.Result
	errors   []engine.Finding
	warnings []engine.Finding
	// shipped is a runtime that exists from the start, which cuetrainer
	// ships or (declared) a policy declares.
	shipped, declared bool
}

// identity names the document's object, and says when it is one that
// exists from the start.
func (v vetted) identity() string {
	switch {
	case v.declared:
		return v.Identity() + " (declared by the policy)"
	case v.shipped:
		return v.Identity() + " (shipped)"
	}
	return v.Identity()
}

func (o *vetOptions) run(cmd *cobra.Command, paths []string) error {
	if o.listChecks {
		return writeChecks(cmd.OutOrStdout())
	}
	targets, err := o.reportTargets()
	if err != nil {
		return err
	}
	if o.release != "" && !releasePattern.MatchString(o.release) {
		return usageError{fmt.Errorf("--release %q: must be a release such as v2.3", o.release)}
	}
	if o.printAdmitted && o.output != "text" {
		return usageError{fmt.Errorf("--print-admitted writes the documents to standard output, where -o %s writes its report: give --report %s=FILE instead", o.output, o.output)}
	}
	if len(paths) == 0 && len(o.policyDirs) == 0 {
		return usageError{fmt.Errorf("nothing to vet: give one or more files, directories or -, or --policy-dir to check a policy alone")}
	}
	rep := &vetReport{}
	// The inputs are read while the policy loads (a CUE input waits for
	// the engine, which reads it); what reading says is held until the
	// policy has loaded, since a policy that does not load vets nothing.
	var e *engine.Engine
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		e, err = o.engine(cmd.ErrOrStderr())
	}()
	var readProblems bytes.Buffer
	docs, unreadable := readInputs(func() *engine.Engine { <-loaded; return e }, paths, cmd.InOrStdin(), &readProblems)
	<-loaded
	if err != nil {
		// The policy does not load: nothing is vetted, and the reports
		// say why, as CI reads them.
		rep.policy = loadProblems(err)
		if werr := writeReports(cmd, targets, rep, o.verbose); werr != nil {
			return werr
		}
		return err
	}
	stderr := cmd.ErrOrStderr()
	if _, err := stderr.Write(readProblems.Bytes()); err != nil {
		return err
	}
	s := e.NewSession(engine.SessionOptions{Release: o.release, NoBuiltinRuntimes: o.noBuiltinRuntimes, Mutate: true})

	code := exitOK
	if unreadable {
		code = exitUsage
	}
	// The shipped runtimes and the policy's exist from the start: those a
	// policy's rule finds fault with, and the policy's that draw warnings,
	// come first (a runtime a schema, CRD or webhook rule rejects does not
	// exist for the documents).
	shipped := len(s.BuiltinFindings())
	admitted := append(s.BuiltinFindings(), s.AdmitAll(cmd.Context(), docs, runtime.GOMAXPROCS(0))...)
	// As an API server would, one document after another; evaluated on
	// every CPU, with the same results.
	for i, r := range admitted {
		v := vetted{Result: r, errors: r.Errors, warnings: r.Warnings, shipped: i < shipped}
		v.declared = v.shipped && e.Declared(r.Doc.Name())
		if o.strict {
			v.errors = append(v.errors, v.warnings...)
			v.warnings = nil
		}
		if !v.shipped || o.failOnBuiltin {
			code = max(code, exitCode(v.errors))
		}
		rep.results = append(rep.results, v)
	}
	rep.builtinAdvisory = !o.failOnBuiltin
	rep.policyWarnings = e.Warnings()
	if err := writeReports(cmd, targets, rep, o.verbose); err != nil {
		return err
	}
	if o.printAdmitted {
		if err := writeAdmitted(cmd.OutOrStdout(), rep.results); err != nil {
			return err
		}
	}
	if code != exitOK {
		return exitError{code}
	}
	return nil
}

func writeText(w io.Writer, rep *vetReport, verbose bool) {
	results := rep.results
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
	fmt.Fprintln(w, summaryLine(results, verbose, rep.builtinAdvisory))
}

// writeAdmitted writes the documents given that were admitted (or kept as
// context, or read by no rule: the API server stores those too), each as
// admitting it made it: its CRD's defaults and the mutators' changes
// applied. A document that was not evaluated is written as given.
func writeAdmitted(w io.Writer, results []vetted) error {
	var objs []map[string]any
	for _, r := range results {
		if r.shipped || len(r.errors) > 0 || r.Doc.Object == nil {
			continue
		}
		obj := r.Object
		if obj == nil {
			obj = r.Doc.Object
		}
		objs = append(objs, obj)
	}
	return writeObjects(w, objs, "yaml")
}

// summaryLine says what vet did with the documents it was given: how many
// it admitted, rejected, kept for the rules to read and left unread, and
// how many warnings it gave; then, apart, how many builtin runtimes the
// policy rejects and warns of, which count in the exit status unless
// advisory (--fail-on-builtin=false). The line and the exit status agree.
func summaryLine(results []vetted, verbose, advisory bool) string {
	var docs, admitted, rejected, context, skipped, warnings int
	var builtinRejected, builtinWarned int
	for _, r := range results {
		if r.shipped {
			if len(r.errors) > 0 {
				builtinRejected++
			}
			if len(r.warnings) > 0 {
				builtinWarned++
			}
			continue
		}
		docs++
		warnings += len(r.warnings)
		switch {
		case len(r.errors) > 0:
			rejected++
		case r.Context:
			context++
		case r.Skipped:
			skipped++
		default:
			admitted++
		}
	}
	var builtin string
	if builtinRejected+builtinWarned > 0 {
		builtin = fmt.Sprintf("; builtin runtimes: %d rejected, %d with warnings", builtinRejected, builtinWarned)
		if builtinRejected > 0 && advisory {
			builtin += " (not in the exit status: --fail-on-builtin=false)"
		}
	}
	if docs == 0 {
		// The policy alone (or an empty directory): it loaded.
		return "cuetrainer vet: 0 documents; the policy loads" + builtin
	}
	line := fmt.Sprintf("cuetrainer vet: %s: %d admitted, %d rejected", plural(docs, "document"), admitted, rejected)
	if context > 0 {
		line += fmt.Sprintf(", %d read by the rules as context", context)
	}
	if skipped > 0 {
		line += fmt.Sprintf(", %d not read by any rule", skipped)
		if !verbose {
			line += " (-v lists them)"
		}
	}
	return line + "; " + plural(warnings, "warning") + builtin
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
