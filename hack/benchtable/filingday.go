package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cuetrainer/cuetrainer/internal/testing/benchinput"
)

// filingDayRev is the engine as it was the day issue 19 was filed, whose
// vet of the corpus where nothing repeats the goal is relative to
// ("≥ 1.5× today's engine on the same corpus").
const filingDayRev = "d967708"

// Names of the end-to-end vet runs in the results.
const (
	vetDistinctOurs  = "VetDistinctEndToEnd"
	vetDistinctFiled = "VetDistinctFilingDay"
)

// vetFilingDay builds `cuetrainer` from the working tree and from
// filingDayRev (a git worktree), writes the corpus where nothing repeats
// to files, and runs each binary's `vet` over them count times, one after
// the other, alternating which goes first. Every run must pass. Each
// run's docs/s goes into rs.
func vetFilingDay(count int, rs map[string]result) error {
	dir, err := os.MkdirTemp("", "benchtable-filingday-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	runtimes, err := benchinput.ShippedRuntimes(".")
	if err != nil {
		return err
	}
	rts, jobs, err := benchinput.VetDistinct(runtimes, benchinput.VetSize)
	if err != nil {
		return err
	}
	files := []string{filepath.Join(dir, "runtimes.yaml"), filepath.Join(dir, "trainjobs.yaml")}
	for i, docs := range [][]string{rts, jobs} {
		if err := os.WriteFile(files[i], []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
			return err
		}
	}
	ours, filed := filepath.Join(dir, "cuetrainer"), filepath.Join(dir, "cuetrainer-"+filingDayRev)
	if err := command(".", "go", "build", "-o", ours, "./cmd/cuetrainer"); err != nil {
		return err
	}
	tree := filepath.Join(dir, "tree")
	if err := command(".", "git", "worktree", "add", "--detach", tree, filingDayRev); err != nil {
		return err
	}
	defer func() { _ = command(".", "git", "worktree", "remove", "--force", tree) }()
	if err := command(tree, "go", "build", "-o", filed, "./cmd/cuetrainer"); err != nil {
		return err
	}
	docs := float64(len(rts) + len(jobs))
	for i := 0; i < count; i++ {
		order := []struct{ bin, name string }{{ours, vetDistinctOurs}, {filed, vetDistinctFiled}}
		if i%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, o := range order {
			start := time.Now()
			cmd := exec.Command(o.bin, append([]string{"vet"}, files...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s vet: %v\n%s", o.name, err, out)
			}
			r := rs[o.name]
			if r == nil {
				r = result{}
				rs[o.name] = r
			}
			r["docs/s"] = append(r["docs/s"], docs/time.Since(start).Seconds())
		}
	}
	return nil
}

// command runs name with args in dir, its output on stderr.
func command(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Fprintf(os.Stderr, "%s %s\n", name, strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}
