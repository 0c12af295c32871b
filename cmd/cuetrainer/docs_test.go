package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFrameworksDoc runs the worked example of docs/frameworks.md as an
// admin would: the blocks after a "<!-- file: NAME -->" line are written
// to NAME, and each "$ cuetrainer ..." line of a block after "<!-- run -->"
// is run in that directory. Its output (standard output and error) must
// hold the lines the block shows after the command, in order ("..." for
// lines left out), and be empty when it shows none.
func TestFrameworksDoc(t *testing.T) {
	doc, err := filepath.Abs("../../docs/frameworks.md")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(doc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	type command struct {
		args []string
		want []string
	}
	files := map[string]string{}
	var commands []*command
	var file string // the file the next block is
	run, inBlock := false, false
	var block []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !inBlock && strings.HasPrefix(line, "<!-- file: "):
			file = strings.TrimSuffix(strings.TrimPrefix(line, "<!-- file: "), " -->")
		case !inBlock && line == "<!-- run -->":
			run = true
		case !inBlock && strings.HasPrefix(line, "```") && (file != "" || run):
			inBlock, block = true, nil
		case inBlock && line == "```":
			inBlock = false
			if file != "" {
				files[file] = strings.Join(block, "\n") + "\n"
				file = ""
				continue
			}
			run = false
			for _, l := range block {
				if cmd, ok := strings.CutPrefix(l, "$ cuetrainer "); ok {
					commands = append(commands, &command{args: strings.Fields(cmd)})
				} else if len(commands) > 0 && l != "..." {
					c := commands[len(commands)-1]
					c.want = append(c.want, l)
				}
			}
		case inBlock:
			block = append(block, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 || len(commands) < 4 {
		t.Fatalf("found %d files and %d commands in %s, want the worked example", len(files), len(commands), doc)
	}

	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, c := range commands {
		code, stdout, stderr := runCLI(t, "", c.args...)
		out := strings.Split(stdout+stderr, "\n")
		if len(c.want) == 0 {
			if code != 0 || strings.TrimSpace(stdout+stderr) != "" {
				t.Errorf("cuetrainer %s: exit %d, output %q; the doc shows none", strings.Join(c.args, " "), code, stdout+stderr)
			}
			continue
		}
		i := 0
		for _, l := range out {
			if i < len(c.want) && l == c.want[i] {
				i++
			}
		}
		if i < len(c.want) {
			t.Errorf("cuetrainer %s: the output lacks %q (after the doc's lines before it):\n%s", strings.Join(c.args, " "), c.want[i], stdout+stderr)
		}
	}
}
