// Command release writes what a cuetrainer release ships (`make release`):
// install.yaml and runtimes.yaml, built from deploy/ (internal/release).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cuetrainer/cuetrainer/internal/release"
)

func main() {
	deploy := flag.String("deploy", "deploy", "the deploy directory")
	out := flag.String("out", "bin/release", "where to write install.yaml and runtimes.yaml")
	version := flag.String("version", "", "the release; must be the tag deploy/kustomization.yaml gives the image")
	flag.Parse()
	if err := run(*deploy, *out, *version); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(deploy, out, version string) error {
	install, runtimes, err := release.Build(deploy, version)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "install.yaml"), install, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "runtimes.yaml"), runtimes, 0o644); err != nil {
		return err
	}
	chart, err := release.Chart(deploy, install)
	if err != nil {
		return err
	}
	archive, err := release.ChartArchive(chart)
	if err != nil {
		return err
	}
	chartFile := filepath.Join(out, "cuetrainer-chart.tgz")
	if err := os.WriteFile(chartFile, archive, 0o644); err != nil {
		return err
	}
	fmt.Printf("release %s: %s/install.yaml (%d documents), %s/runtimes.yaml (%d documents), %s (%d files)\n",
		version, out, release.Documents(install), out, release.Documents(runtimes), chartFile, len(chart))
	return nil
}
