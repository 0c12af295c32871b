package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/cuetrainer/cuetrainer/controller/webhooks"
)

func newExportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Generate manifests from the CUE",
	}
	cmd.AddCommand(newExportCRDsCmd(), newExportWebhooksCmd())
	return cmd
}

func newExportCRDsCmd() *cobra.Command {
	g := &globals{}
	var dir string
	cmd := &cobra.Command{
		Use:   "crds [--dir DIR] [--policy-dir DIR]",
		Short: "Generate the CustomResourceDefinitions from the CUE schemas",
		Long: `export crds writes the CustomResourceDefinitions of TrainJob, TrainingRuntime and
ClusterTrainingRuntime, their structural schemas (types, required fields, defaults, enums)
generated from the CUE definitions the schemas' crds field names — with --policy-dir, the ones
an admin's CUE adds or extends. The admission rules are served by the webhooks, not the CRDs.
Without --dir, one multi-document YAML stream on standard output; with --dir, one file each,
named <plural>.<group>.yaml.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := g.engine(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			crds, err := e.CRDs()
			if err != nil {
				return err
			}
			if dir == "" {
				return writeObjects(cmd.OutOrStdout(), crds, "yaml")
			}
			return writeFiles(dir, crds)
		},
	}
	g.addFlags(cmd)
	cmd.Flags().StringVar(&dir, "dir", "", "write one file per CRD into this directory")
	return cmd
}

func newExportWebhooksCmd() *cobra.Command {
	g := &globals{}
	var namespace, service string
	cmd := &cobra.Command{
		Use:   "webhooks [--namespace NS] [--service NAME] [--policy-dir DIR]",
		Short: "Generate the admission webhook configurations",
		Long: `export webhooks writes the ValidatingWebhookConfiguration (one webhook per kind the CUE
admits, a policy directory's kinds included) and the MutatingWebhookConfiguration (the kinds
whose CUE mutates) that send requests to the controller's webhook Service. The controller puts
its CA into them (--self-signed-certs).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := g.engine(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			v, m := webhooks.Configurations(e, namespace, service)
			var objs []map[string]any
			for _, o := range []any{v, m} {
				b, err := json.Marshal(o)
				if err != nil {
					return err
				}
				var obj map[string]any
				if err := json.Unmarshal(b, &obj); err != nil {
					return err
				}
				delete(obj["metadata"].(map[string]any), "creationTimestamp")
				objs = append(objs, obj)
			}
			return writeObjects(cmd.OutOrStdout(), objs, "yaml")
		},
	}
	g.addFlags(cmd)
	cmd.Flags().StringVar(&namespace, "namespace", "cuetrainer-system", "the controller's namespace")
	cmd.Flags().StringVar(&service, "service", "cuetrainer-webhook", "the webhook Service")
	return cmd
}
