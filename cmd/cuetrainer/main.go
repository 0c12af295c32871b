// Command cuetrainer checks and renders Kubeflow Trainer objects with rules
// written in CUE.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
