package main

import (
	"github.com/spf13/cobra"
)

func newExportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Generate manifests from the CUE",
	}
	cmd.AddCommand(newExportCRDsCmd())
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
			e, err := g.engine()
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
