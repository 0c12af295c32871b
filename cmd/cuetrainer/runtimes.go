package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/controller"
	"github.com/cuetrainer/cuetrainer/engine"
)

func newRuntimesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runtimes",
		Short: "List, show and export training runtimes",
		Long: `runtimes lists and shows the training runtimes a TrainJob can reference: the ones
cuetrainer ships, and those in the files given with -f (admitted as vet admits them).`,
	}
	cmd.AddCommand(newRuntimesListCmd(), newRuntimesGetCmd(), newRuntimesExportCmd(), newRuntimesPackagesCmd())
	return cmd
}

// runtimeSource is the flags of list and get: where runtimes come from.
type runtimeSource struct {
	globals
	files []string
	// cluster reads the runtimes of a cluster instead.
	cluster                            bool
	kubeconfig, kubeContext, namespace string
	// cfg is the kubeconfig's, once read (restConfig).
	cfg *rest.Config
}

func (o *runtimeSource) addFlags(cmd *cobra.Command) {
	o.globals.addFlags(cmd)
	cmd.Flags().StringArrayVarP(&o.files, "filename", "f", nil, "a file or directory of runtimes (or -) to add to the shipped ones; repeatable")
	cmd.Flags().BoolVar(&o.cluster, "cluster", false, "read the runtimes of a cluster (ClusterTrainingRuntimes, and TrainingRuntimes of the namespace) instead of the shipped ones")
	cmd.Flags().StringVar(&o.kubeconfig, "kubeconfig", "", "with --cluster: the kubeconfig file")
	cmd.Flags().StringVar(&o.kubeContext, "context", "", "with --cluster: the kubeconfig context")
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "the namespace of TrainingRuntimes (get: the runtime's; with --cluster: the one to read, default the context's)")
}

// restConfig is the kubeconfig's client configuration, read once; it sets
// the namespace to the context's when none was given.
func (o *runtimeSource) restConfig() (*rest.Config, error) {
	if o.cfg != nil {
		return o.cfg, nil
	}
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	loading.ExplicitPath = o.kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, &clientcmd.ConfigOverrides{CurrentContext: o.kubeContext})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, usageError{fmt.Errorf("kubeconfig: %w", err)}
	}
	if o.namespace == "" {
		if o.namespace, _, err = cc.Namespace(); err != nil {
			return nil, usageError{fmt.Errorf("kubeconfig: %w", err)}
		}
	}
	o.cfg = cfg
	return cfg, nil
}

// clusterDocs reads the runtimes of the cluster the kubeconfig names.
func (o *runtimeSource) clusterDocs(cmd *cobra.Command, e *engine.Engine) ([]engine.Document, error) {
	cfg, err := o.restConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	docs, err := controller.ReadRuntimes(cmd.Context(), e, c, c.RESTMapper(), o.namespace)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster's runtimes: %w", err)
	}
	return docs, nil
}

// load admits the files and returns the runtimes the session holds. Files
// that cannot be read, and runtimes that are rejected, are reported.
func (o *runtimeSource) load(cmd *cobra.Command) ([]engine.Listed, error) {
	e, err := o.engine(cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	if o.cluster {
		if len(o.files) > 0 {
			return nil, usageError{fmt.Errorf("--cluster and -f do not go together")}
		}
		docs, err := o.clusterDocs(cmd, e)
		if err != nil {
			return nil, err
		}
		// They exist: what the rules say of them now is for information.
		s := e.NewSession(engine.SessionOptions{NoBuiltinRuntimes: true})
		for _, doc := range docs {
			r := s.AdmitRequest(cmd.Context(), doc, engine.Request{Operation: "UPDATE", OldObject: doc.Object})
			printFindings(cmd.ErrOrStderr(), r, r.Errors, nil)
		}
		return s.Listed(), nil
	}
	s := e.NewSession(engine.SessionOptions{NoBuiltinRuntimes: o.noBuiltinRuntimes})
	docs, unreadable := readInputs(func() *engine.Engine { return e }, o.files, cmd.InOrStdin(), cmd.ErrOrStderr())
	code := exitOK
	if unreadable {
		code = exitUsage
	}
	for _, doc := range docs {
		r := s.Admit(doc)
		printFindings(cmd.ErrOrStderr(), r, nil, r.Errors)
		code = max(code, exitCode(r.Errors))
	}
	if code != exitOK {
		return s.Listed(), exitError{code}
	}
	return s.Listed(), nil
}

func newRuntimesListCmd() *cobra.Command {
	o := &runtimeSource{}
	var output string
	cmd := &cobra.Command{
		Use:   "list [-f PATH...] [-o table|wide|json|yaml]",
		Short: "List runtimes, as the Kubeflow SDK's list_runtimes does",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch output {
			case "table", "wide", "json", "yaml":
			default:
				return usageError{fmt.Errorf("unknown output format %q: use table, wide, json or yaml", output)}
			}
			list, err := o.load(cmd)
			if werr := writeRuntimeList(cmd.OutOrStdout(), list, output); werr != nil {
				return werr
			}
			return err
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table, wide, json or yaml")
	return cmd
}

// runtimeRow is one runtime in a listing.
type runtimeRow struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Framework  string `json:"framework"`
	Deprecated bool   `json:"deprecated"`
	NumNodes   int64  `json:"numNodes"`
	Image      string `json:"image"`
	Policy     string `json:"mlPolicy,omitempty"`
	PodGroup   string `json:"podGroupPolicy,omitempty"`
	Source     string `json:"source"`
}

func rowOf(l engine.Listed) runtimeRow {
	md, _ := l.Object["metadata"].(map[string]any)
	sum := l.RuntimeSummary()
	r := runtimeRow{
		Name:       fmt.Sprint(md["name"]),
		Kind:       fmt.Sprint(l.Object["kind"]),
		Framework:  sum.Framework,
		Deprecated: sum.Deprecated,
		NumNodes:   sum.NumNodes,
		Image:      sum.Image,
		Policy:     sum.Policy,
		PodGroup:   sum.PodGroup,
		Source:     fmt.Sprintf("%s:%d", l.File, l.Line),
	}
	if ns, ok := md["namespace"].(string); ok {
		r.Namespace = ns
	}
	if l.Builtin {
		r.Source = "builtin"
	}
	return r
}

func writeRuntimeList(w io.Writer, list []engine.Listed, output string) error {
	rows := make([]runtimeRow, 0, len(list))
	for _, l := range list {
		rows = append(rows, rowOf(l))
	}
	switch output {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "yaml":
		b, err := yaml.Marshal(rows)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	header := "NAME\tSCOPE\tFRAMEWORK\tDEPRECATED\tNODES\tIMAGE"
	if output == "wide" {
		header += "\tMLPOLICY\tPODGROUP\tSOURCE"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		scope := "Cluster"
		if r.Namespace != "" {
			scope = "Namespace/" + r.Namespace
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%d\t%s", r.Name, scope, orNone(r.Framework), r.Deprecated, r.NumNodes, orNone(r.Image))
		if output == "wide" {
			fmt.Fprintf(tw, "\t%s\t%s\t%s", orNone(r.Policy), orNone(r.PodGroup), r.Source)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func newRuntimesGetCmd() *cobra.Command {
	o := &runtimeSource{}
	var output string
	cmd := &cobra.Command{
		Use:   "get NAME [-f PATH...] [-n NAMESPACE] [-o yaml|json]",
		Short: "Show one runtime as the API server stores it, with every default applied",
		Long: `get shows one runtime as the API server would store it, with its CRD defaults applied.
Without -n it looks for a ClusterTrainingRuntime; with -n, for a TrainingRuntime in that namespace.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "yaml" && output != "json" {
				return usageError{fmt.Errorf("unknown output format %q: use yaml or json", output)}
			}
			list, err := o.load(cmd)
			if err != nil {
				return err
			}
			for _, l := range list {
				r := rowOf(l)
				if r.Name == args[0] && r.Namespace == o.namespace {
					return writeObjects(cmd.OutOrStdout(), []map[string]any{l.Object}, output)
				}
			}
			where := "ClusterTrainingRuntime"
			if o.namespace != "" {
				where = "TrainingRuntime in namespace " + o.namespace
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Error: no %s named %q\n", where, args[0])
			return exitError{exitRejected}
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	return cmd
}

func newRuntimesExportCmd() *cobra.Command {
	var dir string
	g := &globals{}
	cmd := &cobra.Command{
		Use:   "export [--dir DIR] [--policy-dir DIR...]",
		Short: "Write the shipped runtimes, and those policies declare, as YAML, as authored",
		Long: `export writes the ClusterTrainingRuntimes cuetrainer ships as YAML manifests, as authored
(semantically equal to Kubeflow Trainer's manifests/base/runtimes; CRD defaults are not filled
in), with those the --policy-dir directories declare in CUE (one of a shipped runtime's name
replaces it; --no-builtin-runtimes writes only the policies'). Without --dir they go to
standard output as one multi-document stream; with --dir, one file NAME.yaml each.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := g.engine(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			var objs []map[string]any
			for _, d := range e.Builtin() {
				if g.noBuiltinRuntimes && !e.Declared(d.Name()) {
					continue
				}
				objs = append(objs, d.Object)
			}
			if dir == "" {
				return writeObjects(cmd.OutOrStdout(), objs, "yaml")
			}
			return writeFiles(dir, objs)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "write one file per runtime into this directory")
	g.addFlags(cmd)
	return cmd
}

// writeFiles writes each object as YAML into dir, in NAME.yaml.
func writeFiles(dir string, objs []map[string]any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		name := fmt.Sprint(o["metadata"].(map[string]any)["name"])
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeList writes objects as one v1 List in JSON.
func writeList(w io.Writer, objs []map[string]any) error {
	if objs == nil {
		objs = []map[string]any{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
}

// writeObjects writes objects as multi-document YAML, or as JSON: one
// object alone, or a v1 List.
func writeObjects(w io.Writer, objs []map[string]any, output string) error {
	if output == "json" {
		var v any = map[string]any{"apiVersion": "v1", "kind": "List", "items": objs}
		if len(objs) == 1 {
			v = objs[0]
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	for i, o := range objs {
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
