package main

import "github.com/spf13/cobra"

func newRuntimesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "runtimes", Short: "List, show and export training runtimes"}
	return cmd
}
