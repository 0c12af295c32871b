package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of cuetrainer and of the CUE it evaluates with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, cueVersion := versions()
			fmt.Fprintf(cmd.OutOrStdout(), "cuetrainer %s\nAPI: trainer.kubeflow.org/v1alpha1\nCUE: %s\n", v, cueVersion)
			return nil
		},
	}
}

// versions are cuetrainer's version and the CUE's it evaluates with.
func versions() (cuetrainer, cue string) {
	v, cueVersion := version, "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = info.Main.Version
		}
		for _, d := range info.Deps {
			if d.Path == "cuelang.org/go" {
				cueVersion = d.Version
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	return v, cueVersion
}
