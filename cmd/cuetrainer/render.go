package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/cuetrainer/cuetrainer/engine"
)

type renderOptions struct {
	globals
	files     []string
	output    string
	runtime   string
	namespace string
}

func newRenderCmd() *cobra.Command {
	o := &renderOptions{}
	cmd := &cobra.Command{
		Use:   "render [-f] PATH... [-o yaml|json] | render --runtime NAME [-n NAMESPACE]",
		Short: "Print the objects the controller would apply for each TrainJob",
		Long: `render admits the documents of every PATH in order, exactly as vet does, then renders every
admitted TrainJob into the objects Kubeflow Trainer's controller applies: the JobSet, the
runtime snapshot ConfigMap, and what the runtime's policies add (a PodGroup, ConfigMaps,
Secrets).

Standard output carries only those objects: multi-document YAML sorted by apiVersion, kind
and name, or with -o json one v1 List. Warnings and errors go to standard error; when any
document is rejected, render prints the errors, renders nothing and exits 1.

With --runtime NAME and no TrainJob, render shows the shape of a runtime: the objects of a
TrainJob named example that references it and sets nothing else but an empty trainer (-n
for a TrainingRuntime of that namespace).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, append(o.files, args...))
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringArrayVarP(&o.files, "filename", "f", nil, "a file or directory to render, or - for standard input; repeatable")
	cmd.Flags().StringVarP(&o.output, "output", "o", "yaml", "output format: yaml or json")
	cmd.Flags().StringVar(&o.runtime, "runtime", "", "render this runtime with a default TrainJob")
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "with --runtime: the namespace of a TrainingRuntime")
	return cmd
}

func (o *renderOptions) run(cmd *cobra.Command, paths []string) error {
	if o.output != "yaml" && o.output != "json" {
		return usageError{fmt.Errorf("unknown output format %q: use yaml or json", o.output)}
	}
	if len(paths) == 0 && o.runtime == "" {
		return usageError{fmt.Errorf("nothing to render: give files, directories or -, or --runtime NAME")}
	}
	e, err := o.engine(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	docs, unreadable := readInputs(func() *engine.Engine { return e }, paths, cmd.InOrStdin(), stderr)
	if o.runtime != "" {
		docs = append(docs, exampleTrainJob(o.runtime, o.namespace))
	}
	s := e.NewSession(engine.SessionOptions{NoBuiltinRuntimes: o.noBuiltinRuntimes, Mutate: true})
	code := exitOK
	if unreadable {
		code = exitUsage
	}
	var admitted []engine.Result
	for _, r := range s.AdmitAll(cmd.Context(), docs, runtime.GOMAXPROCS(0)) {
		printFindings(stderr, r, r.Warnings, r.Errors)
		code = max(code, exitCode(r.Errors))
		if !r.Rejected() {
			admitted = append(admitted, r)
		}
	}
	if code != exitOK {
		return exitError{code}
	}
	var objects []map[string]any
	for _, r := range admitted {
		out := s.Render(r, engine.RenderOptions{})
		printFindings(stderr, r, out.Warnings, out.Errors)
		code = max(code, exitCode(out.Errors))
		objects = append(objects, out.Objects...)
	}
	if code != exitOK {
		return exitError{code}
	}
	engine.SortObjects(objects)
	if o.output == "json" {
		return writeList(cmd.OutOrStdout(), objects)
	}
	return writeObjects(cmd.OutOrStdout(), objects, "yaml")
}

// exampleTrainJob is the TrainJob render --runtime shows a runtime with.
func exampleTrainJob(runtime, namespace string) engine.Document {
	ref := map[string]any{"name": runtime}
	ns := namespace
	if namespace != "" {
		ref["kind"] = "TrainingRuntime"
	} else {
		ns = "default"
	}
	return engine.Document{File: "--runtime", Line: 0, Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1",
		"kind":       "TrainJob",
		"metadata":   map[string]any{"name": "example", "namespace": ns},
		"spec":       map[string]any{"runtimeRef": ref, "trainer": map[string]any{}},
	}}
}
