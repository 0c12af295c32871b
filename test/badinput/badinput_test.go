// Package badinput holds the bad-input corpus: each testdata/*.txtar is one
// input with bad documents in it, read with engine.ReadYAML, admitted and
// rendered in one session, and, when the file has a vet.golden section,
// vetted by the cuetrainer binary. A case passes when nothing panics or
// hangs, the findings (file, line, field path, phase and rule) are the
// golden ones, and the documents after the bad ones are still checked:
// every input ends with a TrainJob named after-ok, which is admitted and
// rendered, and one named after-bad, which is rejected.
//
// A case file is a comment, then sections:
//
//	-- input.yaml --       the input; a line "#generate: NAME ARGS..." is
//	                       replaced by a generated document (big inputs are
//	                       not committed)
//	-- engine.golden --    what the engine gives, document by document
//	-- vet.golden --       optional: `cuetrainer vet input.yaml`'s standard
//	                       error and exit code
//
// UPDATE_GOLDEN=1 rewrites the golden sections from what the code gives.
package badinput

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/testcli"
)

// budget is how long one case may take on one path (the engine's, the
// binary's) before it counts as a hang. The slowest case (huge_lists) takes
// about 30 s under the race detector on two cores; with the quadratic
// duplicate rule it had, minutes.
const budget = 150 * time.Second

// maxLine is how much of one output line the golden files keep; a longer
// line is cut, with its length, so that a message carrying a huge value
// shows in the golden file without filling it.
const maxLine = 300

var update = testcli.Update

func TestMain(m *testing.M) {
	code := m.Run()
	testcli.Cleanup()
	os.Exit(code)
}

func TestBadInput(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d cases, want the corpus", len(files))
	}
	e, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			input, err := expand(section(t, ar, "input.yaml", true))
			if err != nil {
				t.Fatal(err)
			}
			changed := false

			got := within(t, "the engine", func() (string, error) { return checkEngine(t, e, input), nil })
			changed = testcli.Compare(t, ar, "engine.golden", got) || changed

			if has(ar, "vet.golden") {
				if testing.Short() {
					t.Log("-short: the binary is not run")
				} else {
					got := within(t, "cuetrainer vet", func() (string, error) { return checkVet(t, input) })
					changed = testcli.Compare(t, ar, "vet.golden", got) || changed
				}
			}
			if update && changed {
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// within runs fn, failing the test when it panics, fails or takes more
// than the budget (the goroutine is left behind: a hang cannot be stopped).
func within(t *testing.T, what string, fn func() (string, error)) string {
	t.Helper()
	type result struct {
		out   string
		err   error
		panic any
		stack []byte
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{panic: r, stack: debug.Stack()}
			}
		}()
		out, err := fn()
		done <- result{out: out, err: err}
	}()
	select {
	case r := <-done:
		if r.panic != nil {
			t.Fatalf("%s panicked: %v\n%s", what, r.panic, r.stack)
		}
		if r.err != nil {
			t.Fatalf("%s: %v", what, r.err)
		}
		return r.out
	case <-time.After(budget):
		t.Fatalf("%s did not finish within %v", what, budget)
	}
	return ""
}

// checkEngine reads, admits and renders the input in one session, and
// words every document's outcome. It fails the test when after-ok is not
// admitted and rendered or after-bad not rejected.
func checkEngine(t *testing.T, e *engine.Engine, input []byte) string {
	var b strings.Builder
	s := e.NewSession(engine.SessionOptions{})
	seen := map[string]bool{}
	for _, d := range engine.ReadYAML("input.yaml", input) {
		r := s.Admit(d)
		status := "admitted"
		switch {
		case d.Err != nil:
			status = "unreadable"
		case r.Rejected():
			status = "rejected"
		case r.Skipped:
			status = "skipped"
		case r.Context:
			status = "context"
		}
		line(&b, fmt.Sprintf("input.yaml:%d: %s: %s", d.Line, orNone(r.Identity()), status))
		for _, f := range r.Errors {
			line(&b, fmt.Sprintf("    error %s @%d: %s", phaseRule(f), d.LineOf(f.Path), f.String()))
		}
		for _, f := range r.Warnings {
			line(&b, fmt.Sprintf("    warning %s @%d: %s", phaseRule(f), d.LineOf(f.Path), f.Message()))
		}
		var objects []string
		rendered := false
		if status == "admitted" && e.Renders(engine.Kind{APIVersion: d.APIVersion(), Kind: d.Kind()}) {
			out := s.Render(r, engine.RenderOptions{})
			for _, o := range out.Objects {
				m, _ := o["metadata"].(map[string]any)
				objects = append(objects, fmt.Sprintf("%s %v/%v", o["kind"], m["namespace"], m["name"]))
			}
			line(&b, "    rendered: "+orNone(strings.Join(objects, ", ")))
			if imgs := images(out.Objects); len(imgs) > 0 {
				line(&b, "    images: "+strings.Join(imgs, ", "))
			}
			for _, f := range out.Errors {
				line(&b, fmt.Sprintf("    render error %s: %s", phaseRule(f), f.String()))
			}
			rendered = len(out.Errors) == 0 && len(objects) > 0
		}
		switch d.Name() {
		case "after-ok":
			seen["after-ok"] = true
			if status != "admitted" || !rendered {
				t.Errorf("after-ok, after the bad documents: %s, rendered %v", status, rendered)
			}
		case "after-bad":
			seen["after-bad"] = true
			if status != "rejected" {
				t.Errorf("after-bad, after the bad documents: %s, want rejected", status)
			}
		}
	}
	if !seen["after-ok"] || !seen["after-bad"] {
		t.Errorf("the documents after the bad ones were not all read: after-ok %v, after-bad %v", seen["after-ok"], seen["after-bad"])
	}
	return b.String()
}

// images lists the container images of rendered objects, sorted.
func images(objs []map[string]any) []string {
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if img, ok := v["image"].(string); ok {
				seen[img] = true
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, o := range objs {
		walk(o)
	}
	out := make([]string, 0, len(seen))
	for img := range seen {
		out = append(out, img)
	}
	sort.Strings(out)
	return out
}

func phaseRule(f engine.Finding) string {
	if f.Rule == "" {
		return string(f.Phase)
	}
	return string(f.Phase) + "/" + f.Rule
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cuePosition is a CUE source position in an internal error's message:
// left out, so that editing the schemas does not change the golden files.
var cuePosition = regexp.MustCompile(`\n\s+\S+\.cue:[0-9]+:[0-9]+`)

// line writes one line of output, cut at maxLine.
func line(b *strings.Builder, s string) {
	s = cuePosition.ReplaceAllString(s, "")
	if len(s) > maxLine {
		s = fmt.Sprintf("%s... [%d bytes]", s[:maxLine], len(s))
	}
	b.WriteString(s)
	b.WriteString("\n")
}

// checkVet runs `cuetrainer vet input.yaml` on the input, and gives its
// standard error and exit code.
func checkVet(t *testing.T, input []byte) (string, error) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "input.yaml"), input, 0o644); err != nil {
		return "", err
	}
	stdout, stderr, code, err := testcli.Run(t, "../..", dir, "vet", "input.yaml")
	if err != nil {
		return "", err
	}
	if stdout != "" {
		t.Errorf("vet wrote to standard output: %.300s", stdout)
	}
	var b strings.Builder
	for _, l := range strings.Split(cuePosition.ReplaceAllString(stderr, ""), "\n") {
		if l != "" {
			line(&b, l)
		}
	}
	fmt.Fprintf(&b, "exit %d\n", code)
	return b.String(), nil
}

func has(ar *txtar.Archive, name string) bool {
	for _, f := range ar.Files {
		if f.Name == name {
			return true
		}
	}
	return false
}

func section(t *testing.T, ar *txtar.Archive, name string, required bool) []byte {
	t.Helper()
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	if required {
		t.Fatalf("no %s section", name)
	}
	return nil
}

// expand replaces each "#generate: NAME ARGS" line of an input by the
// generated text.
func expand(input []byte) ([]byte, error) {
	var out bytes.Buffer
	for _, l := range bytes.SplitAfter(input, []byte("\n")) {
		rest, ok := bytes.CutPrefix(l, []byte("#generate: "))
		if !ok {
			out.Write(l)
			continue
		}
		args := strings.Fields(string(rest))
		gen, ok := generators[args[0]]
		if !ok {
			return nil, fmt.Errorf("no generator %q", args[0])
		}
		var ns []int
		for _, a := range args[1:] {
			n, err := strconv.Atoi(a)
			if err != nil {
				return nil, fmt.Errorf("generate %s: %v", args[0], err)
			}
			ns = append(ns, n)
		}
		gen(&out, ns...)
	}
	return out.Bytes(), nil
}

const trainJobHead = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"

// generators write big or binary documents.
var generators = map[string]func(b *bytes.Buffer, n ...int){
	// configmap SIZE: a ConfigMap of SIZE bytes of data.
	"configmap": func(b *bytes.Buffer, n ...int) {
		b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: team}\ndata:\n")
		for i, start := 0, b.Len(); b.Len()-start < n[0]; i++ {
			fmt.Fprintf(b, "  key%d: %s\n", i, strings.Repeat("x", 1000))
		}
	},
	// image SIZE: a TrainJob whose image is SIZE bytes long.
	"image": func(b *bytes.Buffer, n ...int) {
		b.WriteString(trainJobHead + "metadata: {name: big-image, namespace: team}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    image: ")
		b.WriteString(strings.Repeat("i", n[0]))
		b.WriteString("\n")
	},
	// nested DEPTH: a TrainJob with a mapping nested DEPTH levels under
	// spec.trainer (flow style: block style grows with the square).
	"nested": func(b *bytes.Buffer, n ...int) {
		b.WriteString(trainJobHead + "metadata: {name: deep, namespace: team}\nspec: {runtimeRef: {name: torch-distributed}, trainer: ")
		b.WriteString(strings.Repeat("{a: ", n[0]) + "1" + strings.Repeat("}", n[0]))
		b.WriteString("}\n")
	},
	// nested-list DEPTH: a TrainJob whose args are lists DEPTH deep.
	"nested-list": func(b *bytes.Buffer, n ...int) {
		b.WriteString(trainJobHead + "metadata: {name: deep-list, namespace: team}\nspec: {runtimeRef: {name: torch-distributed}, trainer: {args: ")
		b.WriteString(strings.Repeat("[", n[0]) + strings.Repeat("]", n[0]))
		b.WriteString("}}\n")
	},
	// args N: a TrainJob with N args.
	"args": func(b *bytes.Buffer, n ...int) {
		b.WriteString(trainJobHead + "metadata: {name: many-args, namespace: team}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    args:\n")
		for i := 0; i < n[0]; i++ {
			b.WriteString("    - a\n")
		}
	},
	// env N DUP: a TrainJob with N env entries, every DUP-th a duplicate of
	// the first (none when DUP is 0).
	"env": func(b *bytes.Buffer, n ...int) {
		b.WriteString(trainJobHead + "metadata: {name: many-env, namespace: team}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    env:\n")
		for i := 0; i < n[0]; i++ {
			name := fmt.Sprintf("E%d", i)
			if n[1] > 0 && i > 0 && i%n[1] == 0 {
				name = "E0"
			}
			fmt.Fprintf(b, "    - {name: %s, value: v}\n", name)
		}
	},
	// volumes N JOBS: a ClusterTrainingRuntime named volumes-N-JOBS whose
	// JOBS replicatedJobs (the first its trainer step) each run a pod of
	// N empty volumes, in flow style: each costs the CUE core/v1's Volume.
	"volumes": func(b *bytes.Buffer, n ...int) {
		fmt.Fprintf(b, "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: volumes-%d-%d, labels: {trainer.kubeflow.org/framework: torch}}\n", n[0], n[1])
		b.WriteString("spec:\n  mlPolicy: {torch: {}}\n  template:\n    spec:\n      replicatedJobs:\n")
		volumes := "[" + strings.TrimSuffix(strings.Repeat("{}, ", n[0]), ", ") + "]"
		for j := 0; j < n[1]; j++ {
			name, labels := fmt.Sprintf("job%d", j), ""
			if j == 0 {
				name, labels = "node", "metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}, "
			}
			fmt.Fprintf(b, "      - {name: %s, template: {%sspec: {template: {spec: {containers: [{name: node, image: x}], volumes: %s}}}}}\n", name, labels, volumes)
		}
	},
	// invalid-utf8: a TrainJob with bytes that are not UTF-8 in a value.
	"invalid-utf8": func(b *bytes.Buffer, n ...int) {
		b.WriteString(trainJobHead + "metadata: {name: latin1, namespace: team}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    image: caf\xe9\xff\n")
	},
	// control: a TrainJob with a control character in a value.
	"control": func(b *bytes.Buffer, n ...int) {
		b.WriteString(trainJobHead + "metadata: {name: bell, namespace: team}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    image: ding\x07\n")
	},
}
