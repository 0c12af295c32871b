package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// A grammar of admins' policies, for FuzzPolicy: rules over the TrainJob's
// contract (object, #jobs, #resourcesPerNode), helper definitions applied
// by unification, lets at the review's level and as comprehension clauses,
// comprehensions over the runtime's jobs and their containers, and string
// builtins (strings.Join, HasPrefix, ToLower, interpolation). The fuzzer's
// bytes choose among the productions; a production that needs a let or a
// helper adds it, so that what is generated is correct CUE that reads
// only what the contract has, as an admin writes it, and most of it loads.

// policyGen draws choices from the fuzzer's bytes (zeros once they run
// out).
type policyGen struct {
	data    []byte
	i       int
	helpers map[string]string
	lets    map[string]string
	letKeys []string
}

func (g *policyGen) pick(n int) int {
	if g.i >= len(g.data) {
		return 0
	}
	b := g.data[g.i]
	g.i++
	return int(b) % n
}

// helper declares a helper definition once.
func (g *policyGen) helper(name string) string {
	if _, ok := g.helpers[name]; !ok {
		switch name {
		case "#missing":
			fields := [][]string{{"memory"}, {"memory", "cpu"}, {`"nvidia.com/gpu"`}}[g.pick(3)]
			var items []string
			for _, f := range fields {
				items = append(items, fmt.Sprintf("if #res.limits.%s == _|_ {%q}", f, "limits."+strings.Trim(f, `"`)))
			}
			g.helpers[name] = fmt.Sprintf("#missing: {#res: _, out: [%s]}", strings.Join(items, ", "))
		case "#prefixed":
			g.helpers[name] = "#prefixed: {#s: string, #p: string, out: strings.HasPrefix(#s, #p)}"
		case "#jobNames":
			g.helpers[name] = "#jobNames: {#js: [...], out: [for j in #js {j.name}]}"
		}
	}
	return name
}

// let declares a let of the review once, and names it.
func (g *policyGen) let(name string) string {
	if _, ok := g.lets[name]; ok {
		return name
	}
	var expr string
	switch name {
	case "m":
		expr = [...]string{
			fmt.Sprintf("(%s & {#res: #resourcesPerNode}).out", g.helper("#missing")),
			fmt.Sprintf("(%s & {#res: *object.spec.trainer.resourcesPerNode | {}}).out", g.helper("#missing")),
		}[g.pick(2)]
	case "img":
		expr = `*object.spec.trainer.image | ""`
	case "ns":
		expr = [...]string{"object.metadata.namespace", "strings.ToLower(object.metadata.namespace)"}[g.pick(2)]
	case "names":
		expr = [...]string{
			fmt.Sprintf("(%s & {#js: #jobs}).out", g.helper("#jobNames")),
			"[for job in #jobs {job.name}]",
		}[g.pick(2)]
	}
	g.lets[name] = expr
	g.letKeys = append(g.letKeys, name)
	return name
}

// finding is a rule's finding in block: a field error, or a warning.
func (g *policyGen) finding(block, path, typ, detail string) string {
	if block == "warnings" {
		return fmt.Sprintf("\n\t\t\tpath:    %q\n\t\t\tmessage: %s\n\t\t", path, detail)
	}
	return fmt.Sprintf("\n\t\t\tpath:   %q\n\t\t\ttype:   %q\n\t\t\tdetail: %s\n\t\t", path, typ, detail)
}

// element is one element of a rule's list in block: a finding under a
// comprehension.
func (g *policyGen) element(block string) string {
	k := g.pick(5) + 1
	switch g.pick(8) {
	case 0:
		m := g.let("m")
		return fmt.Sprintf(`if len(%s) > 0 {`+g.finding(block, "spec.trainer.resourcesPerNode", "Required value", `%s`)+`}`, m, [...]string{`"set " + strings.Join(` + m + `, ", ")`, `"set \(strings.Join(` + m + `, " and "))"`}[g.pick(2)])
	case 1:
		return fmt.Sprintf(`for job in #jobs if job.replicas > %d {`+g.finding(block, "spec.runtimeRef.name", "Invalid value", `"\(job.name) has too many replicas"`)+`}`, k)
	case 2:
		img := g.let("img")
		prefix := [...]string{"docker.io/", "registry.example.com/", "ghcr.io/"}[g.pick(3)]
		test := fmt.Sprintf("strings.HasPrefix(%s, %q)", img, prefix)
		if g.pick(2) == 1 {
			test = fmt.Sprintf("(%s & {#s: %s, #p: %q}).out", g.helper("#prefixed"), img, prefix)
		}
		return fmt.Sprintf(`if %s {`+g.finding(block, "spec.trainer.image", "Forbidden", `"images from %s are not allowed: " + %s`)+`}`, test, strings.TrimSuffix(prefix, "/"), img)
	case 3:
		ns := g.let("ns")
		return fmt.Sprintf(`if %s =~ "^(kube|%s)-" {`+g.finding(block, "metadata.namespace", "Forbidden", `"no TrainJobs in \(%s)"`)+`}`, ns, [...]string{"system", "default", "infra"}[g.pick(3)], ns)
	case 4:
		names := g.let("names")
		return fmt.Sprintf(`if len(%s) > %d {`+g.finding(block, "spec.runtimeRef", "Invalid value", `"at most %d jobs: " + strings.Join(%s, ",")`)+`}`, names, k, k, names)
	case 5:
		return `for job in #jobs for c in job.template.spec.template.spec.containers if c.resources.limits == _|_ {` + g.finding(block, "spec.trainer.resourcesPerNode", "Required value", `"container \(c.name) of job \(job.name) sets no limits"`) + `}`
	case 6:
		return fmt.Sprintf(`if object.spec.trainer.numNodes != _|_ if object.spec.trainer.numNodes > %d {`+g.finding(block, "spec.trainer.numNodes", "Invalid value", `"at most %d nodes"`)+`}`, k, k)
	default:
		// A let as a comprehension clause, over the jobs.
		m := g.helper("#missing")
		return fmt.Sprintf(`for job in #jobs for c in job.template.spec.template.spec.containers
		let miss = (%s & {#res: *c.resources | {}}).out
		if len(miss) > 0 {`+g.finding(block, "spec.runtimeRef", "Invalid value", `"\(job.name)/\(c.name): " + strings.Join(miss, ", ")`)+`}`, m)
	}
}

// policy is the generated policy file.
func (g *policyGen) policy() string {
	g.helpers, g.lets, g.letKeys = map[string]string{}, map[string]string{}, nil
	var rules []string
	for r := range g.pick(3) + 1 {
		block := [...]string{"policy", "warnings"}[g.pick(2)]
		var elems []string
		for range g.pick(2) + 1 {
			elems = append(elems, g.element(block))
		}
		rules = append(rules, fmt.Sprintf("\t%s: rule%d: [\n\t\t%s,\n\t]", block, r, strings.Join(elems, ",\n\t\t")))
	}
	var b strings.Builder
	b.WriteString("package schemas\n\nimport \"strings\"\n\n")
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range g.helpers {
			if !yield(k) {
				return
			}
		}
	}) {
		b.WriteString(g.helpers[name] + "\n\n")
	}
	b.WriteString("admission: (#APIVersion): TrainJob: {\n\tobject: _\n\t#jobs: _\n\t#resourcesPerNode: _\n")
	for _, name := range g.letKeys {
		fmt.Fprintf(&b, "\tlet %s = %s\n", name, g.lets[name])
	}
	b.WriteString(strings.Join(rules, "\n") + "\n}\n")
	return b.String()
}

// fuzzPolicyJobs are the TrainJobs a generated policy is evaluated on: on
// a torch and an MPI runtime, with and without images and limits.
var fuzzPolicyJobs = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: a, namespace: team-a}
spec: {runtimeRef: {name: torch-distributed}, trainer: {numNodes: 2, image: docker.io/pytorch:2}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: b, namespace: kube-ml}
spec: {runtimeRef: {name: deepspeed-distributed}, trainer: {numNodes: 6, resourcesPerNode: {limits: {memory: 64Gi, cpu: "8"}}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: c, namespace: team-b}
spec: {runtimeRef: {name: mlx-distributed}, trainer: {image: registry.example.com/mlx:1}}
`

// evaluatePolicy loads the policy src and admits and renders
// fuzzPolicyJobs with it. It fails t for a panic that escapes the engine
// (none may), for a load that fails as a defect and for a finding of
// PhaseDefect (a panic even the fallback met). It reports whether the
// policy loaded and was evaluated.
func evaluatePolicy(t *testing.T, src string) bool {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "org.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{PolicyDirs: []string{dir}})
	if d := (*Defect)(nil); errors.As(err, &d) {
		t.Fatalf("the load failed as a defect: %v\n%s\n%s", err, d.Stack, src)
	}
	if err != nil {
		var le *LoadError
		if !errors.As(err, &le) {
			t.Fatalf("the load failed with no load error: %v\n%s", err, src)
		}
		if testing.Verbose() {
			t.Logf("%v", err)
		}
		return false
	}
	if testing.Verbose() && e.Defects() > 0 {
		t.Logf("%d panics recovered; fallbacks %v", e.Defects(), e.Fallbacks())
	}
	s := e.NewSession(SessionOptions{})
	for _, doc := range k8s.ReadYAML("jobs.yaml", []byte(fuzzPolicyJobs)) {
		r := s.Admit(doc)
		for _, f := range r.Errors {
			if f.Phase == contract.PhaseDefect {
				t.Fatalf("%s: %s\n%s", r.Identity(), f.Detail, src)
			}
		}
		if !r.Rejected() && r.Object != nil {
			for _, f := range s.Render(r, RenderOptions{}).Errors {
				if f.Phase == contract.PhaseDefect {
					t.Fatalf("render of %s: %s\n%s", r.Identity(), f.Detail, src)
				}
			}
		}
	}
	return true
}

// FuzzPolicy loads the policies the grammar above builds from the
// fuzzer's bytes and evaluates them: no panic escapes the engine, and none
// remains a defect (CUE's own are evaluated again without structure
// sharing). Each input is a whole load, a second or two: make fuzz runs
// few.
func FuzzPolicy(f *testing.F) {
	// The shape of CUE v0.17.1's panic (testdata/cuepanic): a helper through
	// a let, strings.Join in a detail, beside a for over #jobs.
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 3})
	f.Add([]byte{2, 1, 1, 2, 1, 2, 1, 2, 0, 3, 1, 4, 1, 5, 7, 1, 6})
	f.Add([]byte{1, 0, 1, 3, 1, 4, 0, 0, 7, 0, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &policyGen{data: data}
		evaluatePolicy(t, g.policy())
	})
}

// TestPolicyGrammarReachesEvaluation: most policies the grammar builds
// load and are evaluated (the fuzzer would test little else), and none
// panics out of the engine. It logs the share.
func TestPolicyGrammarReachesEvaluation(t *testing.T) {
	t.Parallel()
	const n = 8
	r := rand.New(rand.NewPCG(1, 2))
	evaluated := 0
	for i := range n {
		data := make([]byte, 32)
		for j := range data {
			data[j] = byte(r.IntN(256))
		}
		src := (&policyGen{data: data}).policy()
		if evaluatePolicy(t, src) {
			evaluated++
		} else if testing.Verbose() {
			t.Logf("policy %d did not load:\n%s", i, src)
		}
	}
	t.Logf("%d of %d generated policies loaded and were evaluated", evaluated, n)
	if evaluated*2 < n {
		t.Errorf("%d of %d generated policies reached evaluation, want at least half", evaluated, n)
	}
}
