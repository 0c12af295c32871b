package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// writePolicy writes files into a new policy directory.
func writePolicy(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadPolicyWant loads the CUE with a policy directory of files and
// reports, under name, a load that fails when want is "", or one whose
// error lacks want; it returns the engine when the policy loaded.
func loadPolicyWant(t *testing.T, name string, files map[string]string, want string) *Engine {
	t.Helper()
	e, err := New(Options{PolicyDirs: []string{writePolicy(t, files)}})
	warning, warns := strings.CutPrefix(want, warnPrefix)
	switch {
	case warns:
		// A heuristic check's finding: the load goes on, with it.
		if err != nil || !strings.Contains(warningsText(e), warning) {
			t.Errorf("%s: load: %v, warnings:\n%s\nwant the warning %q", name, err, warningsText(e), warning)
		}
	case want == "" && err != nil:
		t.Errorf("%s: load: %v", name, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("%s: load: %v, want %q", name, err, want)
	}
	return e
}

// warnPrefix marks a want of loadPolicyWant and checkLoad that is a
// warning, a heuristic check's: the load goes on.
const warnPrefix = "warn:"

// warningsText is the load's warnings, one a line (and its further
// lines); "" for no engine.
func warningsText(e *Engine) string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	for _, w := range e.Warnings() {
		b.WriteString(w.String() + "\n")
	}
	return b.String()
}

// checkLoad loads a policy of files in which each want is found: those
// marked warnPrefix as the load's warnings, the others as its refusals,
// and nothing more at p.cue. A policy's wants are all refusals or all
// warnings: a load refused says no warning.
func checkLoad(t *testing.T, name string, files map[string]string, wants []string) {
	t.Helper()
	e, err := New(Options{PolicyDirs: []string{writePolicy(t, files)}})
	text, warned := "", 0
	if err != nil {
		text = err.Error()
	}
	for _, w := range wants {
		if strings.HasPrefix(w, warnPrefix) {
			warned++
		}
	}
	if warned > 0 {
		text = warningsText(e)
		if warned != len(wants) || err != nil {
			t.Errorf("%s: load: %v, want %d warnings and no refusal", name, err, warned)
		}
	}
	for _, w := range wants {
		if !strings.Contains(text+"\n", strings.TrimPrefix(w, warnPrefix)) {
			t.Errorf("%s: load: %v, warnings:\n%s\nwant %q", name, err, warningsText(e), w)
		}
	}
	if n := strings.Count(text, "p.cue:"); n != len(wants) {
		t.Errorf("%s: %d problems at p.cue, want %d:\n%s", name, n, len(wants), text)
	}
}

// TestPolicyRefused: a policy that embeds files, or imports a package
// that does I/O, is refused at load with its file, line:column and the
// rule, before anything is compiled.
func TestPolicyRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"embed", map[string]string{
			"p.cue": "@extern(embed)\n\npackage schemas\n\nleaked: _ @embed(file=\"x.txt\", type=text)\n",
			"x.txt": "top secret\n",
		}, []string{
			"p.cue:1:1: @extern(embed): a policy may not use extern attributes: @extern(embed) would read files",
			`p.cue:5:11: @embed(file="x.txt", type=text): a policy may not embed files`,
		}},
		// Without the check this one loads: the loader holds the policy
		// beside the embedded schemas, and embeds their text.
		{"embed of a file the loader holds", map[string]string{
			"p.cue": "@extern(embed)\npackage schemas\n\nleaked: _ @embed(file=\"jobset.cue\", type=text)\n",
		}, []string{
			"p.cue:1:1: @extern(embed):",
			`p.cue:4:11: @embed(file="jobset.cue", type=text): a policy may not embed files`,
		}},
		{"embed glob in a nested struct", map[string]string{
			"sub/p.cue": "@extern(embed)\npackage schemas\n\nx: y: {\n\t@embed(glob=\"*.txt\", type=text)\n}\n",
		}, []string{
			"p.cue:1:1: @extern(embed):",
			`p.cue:5:2: @embed(glob="*.txt", type=text): a policy may not embed files`,
		}},
		{"tool/exec", map[string]string{
			"p.cue": "package schemas\n\nimport \"tool/exec\"\n\nrun: exec.Run & {cmd: [\"touch\", \"/tmp/pwned\"]}\n",
		}, []string{
			`p.cue:3:8: import "tool/exec": a policy may not import tool packages: they run commands and read files, the environment and the network`,
		}},
		{"tool/os", map[string]string{
			"p.cue": "package schemas\n\nimport (\n\t\"strings\"\n\tos \"tool/os\"\n)\n\nhome: os.Getenv & {HOME: string}\nx: strings.ToUpper(\"a\")\n",
		}, []string{
			`p.cue:5:5: import "tool/os": a policy may not import tool packages`,
		}},
		{"tool/http, tool/file, tool/cli and tool", map[string]string{
			"a.cue": "package schemas\n\nimport \"tool/http\"\n\nget: http.Get & {url: \"http://example.com\"}\n",
			"b.cue": "package schemas\n\nimport (\n\t\"tool/file\"\n\t\"tool/cli\"\n\t\"tool\"\n)\n",
		}, []string{
			`a.cue:3:8: import "tool/http": a policy may not import tool packages`,
			`b.cue:4:2: import "tool/file": a policy may not import tool packages`,
			`b.cue:5:2: import "tool/cli": a policy may not import tool packages`,
			`b.cue:6:2: import "tool": a policy may not import tool packages`,
		}},
		{"a module from a registry", map[string]string{
			"p.cue": "package schemas\n\nimport \"example.com/policies@v0:rules\"\n\nx: rules.x\n",
		}, []string{
			`p.cue:3:8: import "example.com/policies@v0:rules": a policy may import only CUE's standard library and the packages cuetrainer carries; this one would be fetched from a module registry`,
		}},
		{"not CUE's standard library", map[string]string{
			"p.cue": "package schemas\n\nimport \"os\"\n",
		}, []string{
			`p.cue:3:8: import "os": not a package of CUE's standard library a policy may import`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writePolicy(t, tc.files)
			_, err := New(Options{PolicyDirs: []string{dir}})
			if err == nil {
				t.Fatal("the policy was loaded")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "policy refused: a policy is pure CUE, with no access to files, commands, the environment or the network:\n") {
				t.Errorf("error does not say why:\n%s", msg)
			}
			lines := strings.Split(msg, "\n")[1:]
			if len(lines) != len(tc.want) {
				t.Errorf("%d refusals, want %d:\n%s", len(lines), len(tc.want), msg)
			}
			for _, w := range tc.want {
				found := false
				for _, l := range lines {
					// Each line names the file by its path.
					if strings.HasPrefix(strings.TrimSpace(l), dir) && strings.Contains(l, w) {
						found = true
					}
				}
				if !found {
					t.Errorf("no refusal %q in:\n%s", w, msg)
				}
			}
			if strings.Contains(msg, "top secret") {
				t.Errorf("the error carries the embedded file's content:\n%s", msg)
			}
		})
	}
}

// TestPolicyFilesLeftOut: a policy file CUE's loader would leave out of
// the package (*_test.cue, *_tool.cue, a name starting with _ or ., an
// upper-case .CUE) fails the load with its path, rather than leaving its
// rules silently unenforced; files that are not CUE, and an editor's lock
// file, are left alone.
func TestPolicyFilesLeftOut(t *testing.T) {
	t.Parallel()
	dir := writePolicy(t, map[string]string{
		"rules.cue":         "package schemas\n",
		"rules_test.cue":    "package schemas\n\nadmission: x: y: {}\n",
		"sub/more_tool.cue": "package schemas\n",
		"_scratch.cue":      "package schemas\nthis is not CUE\n",
		".hidden.cue":       "package schemas\n",
		"upper.CUE":         "package schemas\n",
		"notes.md":          "not CUE",
	})
	_, err := New(Options{PolicyDirs: []string{dir}})
	if err == nil {
		t.Fatal("the policy was loaded without the files CUE leaves out")
	}
	msg := err.Error()
	for _, want := range []string{"CUE leaves files named *_test.cue and *_tool.cue out of a package",
		filepath.Join(dir, "rules_test.cue"), filepath.Join(dir, "sub", "more_tool.cue"),
		filepath.Join(dir, "_scratch.cue") + `: CUE leaves files whose names begin with "_" or "."`,
		filepath.Join(dir, ".hidden.cue") + `: CUE leaves files whose names begin with "_" or "."`,
		filepath.Join(dir, "upper.CUE") + ": CUE reads only files whose names end in .cue, in lower case"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "notes.md") {
		t.Errorf("the error names a file that is not CUE:\n%s", msg)
	}
	lock := writePolicy(t, map[string]string{"rules.cue": "package schemas\n", "notes.md": "not CUE"})
	if err := os.Symlink("admin@host.42", filepath.Join(lock, ".#rules.cue")); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{PolicyDirs: []string{lock}}); err != nil {
		t.Errorf("a policy with an editor's lock file and a README: %v", err)
	}
}

func TestExamplePoliciesLoad(t *testing.T) {
	t.Parallel()
	e, err := New(Options{PolicyDirs: []string{"../examples/policies/tensorflow", "../examples/policies/ome"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range e.Builtin() {
		names = append(names, d.Name())
	}
	if !strings.Contains(strings.Join(names, " "), "tensorflow-distributed") {
		t.Errorf("the TensorFlow example's runtime is not there: %v", names)
	}
	admitted := fmt.Sprint(e.Admitted())
	if !strings.Contains(admitted, "ome.io/v1beta1") {
		t.Errorf("the OME example's kinds are not admitted: %s", admitted)
	}
}

// TestPolicyReadsNoEnvironment: the load sets no tags, and refuses a
// policy's @tag fields (CUE's only way into the environment besides
// tool/os, which is refused) at their lines, rather than let them keep
// their defaults unseen: neither an environment variable nor the tag
// variables (cwd, hostname, username, now) reach the CUE or its errors.
func TestPolicyReadsNoEnvironment(t *testing.T) {
	const secret = "s3cr3t-4b1d"
	t.Setenv("CUETRAINER_SECRET", secret)
	t.Setenv("HOME", "/home/"+secret)
	dir := writePolicy(t, map[string]string{"env.cue": `package schemas

#probe: {
	secret:   *"unset" | string @tag(CUETRAINER_SECRET)
	home:     *"unset" | string @tag(HOME)
	cwd:      *"unset" | string @tag(cwd, var=cwd)
	hostname: *"unset" | string @tag(hostname, var=hostname)
	username: *"unset" | string @tag(username, var=username)
	now:      *"unset" | string @tag(now, var=now)
}

admission: "trainer.kubeflow.org/v1alpha1": TrainJob: webhook: envProbe: [{
	path:   "metadata.name"
	type:   "Invalid value"
	detail: "secret=\(#probe.secret) home=\(#probe.home) cwd=\(#probe.cwd) hostname=\(#probe.hostname) username=\(#probe.username) now=\(#probe.now)"
}]
`})
	_, err := New(Options{PolicyDirs: []string{dir}})
	if err == nil {
		t.Fatal("a policy with @tag fields loads")
	}
	for _, line := range []int{4, 5, 6, 7, 8, 9} {
		if want := fmt.Sprintf("env.cue:%d:30: @tag(", line); !strings.Contains(err.Error(), want) {
			t.Errorf("no problem at %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("an environment variable reached the load's error: %v", err)
	}
}

// TestPolicyCRDChecks: a policy's crdChecks join its kind's review, for vet
// and for a schema-checked request (a webhook's) too: the API server's CRD
// of the kind (the TrainJob's is Kubeflow's) does not hold them, so no one
// else would check them. The shipped CRD checks stay the API server's
// where no policy adds to them. Checks for a kind without a review are
// refused at load, naming the kind.
func TestPolicyCRDChecks(t *testing.T) {
	t.Parallel()
	dir := writePolicy(t, map[string]string{"p.cue": `package schemas

crdChecks: (#APIVersion): TrainJob: {
	object: _
	crd: teamLabel: [if object.metadata.labels.team == _|_ {path: "metadata.labels", type: "Required value", detail: "team"}]
}
`})
	e, err := New(Options{PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	d := k8s.ReadYAML("j.yaml", []byte(jobYAML("torch-distributed", "{numNodes: 1}")))[0]
	if r := e.NewSession(SessionOptions{}).AdmitRequest(context.Background(), d, Request{}); !hasPhase(r.Errors, contract.PhaseCRD) {
		t.Errorf("vet: %v, want the policy's CRD check", r.Errors)
	}
	if r := e.NewSession(SessionOptions{}).AdmitRequest(context.Background(), serverDefaulted(t, d), Request{SchemaChecked: true}); !hasPhase(r.Errors, contract.PhaseCRD) {
		t.Errorf("schema-checked: %v, want the policy's CRD check, which the API server does not hold", r.Errors)
	}
	// A check the shipped CRD holds (runtimeRef.apiGroup's length): left
	// to the API server without a policy's CRD checks.
	long := k8s.ReadYAML("j.yaml", []byte(strings.Replace(jobYAML("torch-distributed", "{numNodes: 1}"), "{name: torch-distributed}", "{name: torch-distributed, apiGroup: "+strings.Repeat("a", 254)+"}", 1)))[0]
	if r := testEngine(t).NewSession(SessionOptions{}).AdmitRequest(context.Background(), serverDefaulted(t, long), Request{SchemaChecked: true}); hasPhase(r.Errors, contract.PhaseCRD) {
		t.Errorf("schema-checked, no policy: %v, want the CRD's checks left to the API server", r.Errors)
	}
	if r := testEngine(t).NewSession(SessionOptions{}).AdmitRequest(context.Background(), long, Request{}); !hasPhase(r.Errors, contract.PhaseCRD) {
		t.Errorf("vet, no policy: %v, want the CRD's check of apiGroup (else the case shows nothing)", r.Errors)
	}

	dir = writePolicy(t, map[string]string{"p.cue": "package schemas\n\ncrdChecks: \"example.com/v1\": Widget: crd: x: []\n"})
	if _, err := New(Options{PolicyDirs: []string{dir}}); err == nil || !strings.Contains(err.Error(), "crdChecks: example.com/v1 Widget has no review") {
		t.Errorf("crdChecks for a kind without a review: %v", err)
	}
}

// TestPolicyManifests: a policy directory's YAML or JSON file that holds an
// object of a kind the engine reviews fails the load at the object's
// line; one that holds other objects (a kustomization) does not.
func TestPolicyManifests(t *testing.T) {
	t.Parallel()
	runtime := `{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime", "metadata": {"name": "org-torch"}, "spec": {}}`
	dir := writePolicy(t, map[string]string{
		"rules.cue":               "package schemas\n",
		"runtimes/org-torch.json": runtime,
		"jobs.yml":                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: example\n",
	})
	_, err := New(Options{PolicyDirs: []string{dir}})
	if err == nil {
		t.Fatal("the policy loaded without its runtime's JSON and a TrainJob's YAML")
	}
	msg := err.Error()
	for _, want := range []string{
		filepath.Join(dir, "jobs.yml") + `:4: TrainJob "example" (trainer.kubeflow.org/v1alpha1) would not be loaded`,
		filepath.Join(dir, "runtimes", "org-torch.json") + `:1: ClusterTrainingRuntime "org-torch" (trainer.kubeflow.org/v1alpha1) would not be loaded`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "Kustomization") {
		t.Errorf("the error names the kustomization:\n%s", msg)
	}
	ok := writePolicy(t, map[string]string{"rules.cue": "package schemas\n", "kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n", "broken.yaml": "a: [\n"})
	if _, err := New(Options{PolicyDirs: []string{ok}}); err != nil {
		t.Errorf("a policy with a kustomization and a YAML that does not parse: %v", err)
	}
}

// TestPolicyDirGivenTwice: a policy file reached through two policy
// directories (one given twice, or a directory and its subdirectory) is
// loaded once: its rule is one rule, which fires once.
func TestPolicyDirGivenTwice(t *testing.T) {
	t.Parallel()
	dir := writePolicy(t, map[string]string{"team/image.cue": `package schemas

admission: (#APIVersion): TrainJob: {
	object: _
	webhook: requireImage: [if object.spec.trainer.image == _|_ {path: "spec.trainer.image", type: "Required value", detail: "no image"}]
}
`})
	for _, dirs := range [][]string{{dir, dir}, {dir, filepath.Join(dir, "team")}} {
		e, err := New(Options{PolicyDirs: dirs})
		if err != nil {
			t.Errorf("%v: %v", dirs, err)
			continue
		}
		r := e.NewSession(SessionOptions{}).Admit(readOne(t, jobYAML("torch-distributed", "{}")))
		if len(r.Errors) != 1 || r.Errors[0].Detail != "no image" {
			t.Errorf("%v: errors %v, want the rule's one", dirs, r.Errors)
		}
	}
}

// BenchmarkLoadPolicy loads the engine with the OME example's policy
// directory, the largest the repository holds (its reads walked for the
// carried values they look at, its rules tried on the probes), and
// BenchmarkLoadNoPolicy without one, the baseline in the same run. Nothing
// repeats: each iteration compiles afresh, and tries the rules afresh
// (the process's kept trials dropped first).
func BenchmarkLoadPolicy(b *testing.B) { benchmarkLoad(b, loadAfresh, "../examples/policies/ome") }

func BenchmarkLoadNoPolicy(b *testing.B) { benchmarkLoad(b, loadAfresh) }

// BenchmarkLoadRulesPolicy loads the engine with a policy of rules alone
// (testdata/rules: rules of the TrainJob's and the runtimes' reviews),
// nothing repeating, as BenchmarkLoadPolicy: its files reach only reviews,
// so it is tried on its reviews and mutations alone (trialScope).
func BenchmarkLoadRulesPolicy(b *testing.B) { benchmarkLoad(b, loadAfresh, "testdata/rules") }

// BenchmarkLoadPolicyKept loads the same, its trials' outcome kept in
// memory by an earlier load (a controller's reload of unchanged files);
// BenchmarkLoadPolicyKeptOnDisk with it kept in a cache directory alone
// (the next `cuetrainer vet --policy-dir` of unchanged files). Each
// iteration compiles afresh; only the trials' outcome is reused.
func BenchmarkLoadPolicyKept(b *testing.B) { benchmarkLoad(b, loadKept, "../examples/policies/ome") }

func BenchmarkLoadPolicyKeptOnDisk(b *testing.B) {
	benchmarkLoad(b, loadKeptOnDisk, "../examples/policies/ome")
}

type loadReuse int

const (
	loadAfresh loadReuse = iota
	loadKept
	loadKeptOnDisk
)

func benchmarkLoad(b *testing.B, reuse loadReuse, dirs ...string) {
	opts := Options{PolicyDirs: dirs}
	if reuse == loadKeptOnDisk {
		opts.TrialCacheDir = b.TempDir()
	}
	if reuse != loadAfresh {
		// Kept by this load alone: another benchmark's load of the same
		// files kept the outcome in memory, not in this directory.
		keptTrials.Clear()
		if _, err := New(opts); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if reuse != loadKept {
			keptTrials.Clear()
		}
		if _, err := New(opts); err != nil {
			b.Fatal(err)
		}
	}
}

// TestProbesThatCannotBeMade: a probes entry whose documents cannot be
// made for a runtime (here the runtime's reference limited to names no
// shipped runtime has), or whose variant's edit cannot be made on it,
// fails the load at the entry or the edit: its rules would otherwise go
// untried on every such runtime, in silence.
func TestProbesThatCannotBeMade(t *testing.T) {
	t.Parallel()
	loadPolicyWant(t, "names limited", map[string]string{"p.cue": `package schemas

probes: (#APIVersion): ClusterTrainingRuntime: #ref: name: =~"^org-"
`}, `p.cue:3:60: the probes of the ClusterTrainingRuntime deepspeed-distributed cannot be made: `)
	// A variant's edit is made in Go: its failure is said at the edit.
	loadPolicyWant(t, "variant's edit", map[string]string{"p.cue": `package schemas

probes: (#APIVersion): ClusterTrainingRuntime: #variants: doubled: {
	edits: [{object: "runtime", path: ["spec", "template", "spec", "replicatedJobs", {name: "nodes"}, "replicas"], op: "set", value: 2}]
	documents: []
}
`}, `p.cue:4:10: the probes of the ClusterTrainingRuntime deepspeed-distributed cannot be made: the variant doubled: its set edit cannot be made on the runtime: spec.template.spec.replicatedJobs[name=nodes]: no item of the list is [name=nodes]`)
}

// TestDeclaredRuntimeRefusedByJobSet: a runtime declared in CUE whose template
// names its jobs where JobSet's webhook refuses the names (a dependsOn on
// the first job, or naming no job before it; a success or failure policy
// target, or the coordinator's job, that is no job; a failure reason Job
// has not; a job's name or a group's that makes no DNS-1035 label; a pod
// template's restartPolicy, a container's requests above its limits, or a
// value not of core/v1's list (imagePullPolicy: always), that the Job API
// refuses) fails the load at each one's line: Kubeflow admits it, and
// every TrainJob of it would fail to start. Names it accepts load.
func TestDeclaredRuntimeRefusedByJobSet(t *testing.T) {
	t.Parallel()
	runtime := func(jobs, more, policies string) map[string]string {
		return map[string]string{"runtime.cue": `package schemas

clusterTrainingRuntimes: "org-torch": {
	apiVersion: #APIVersion
	kind:       "ClusterTrainingRuntime"
	metadata: name: "org-torch"
	spec: {
		mlPolicy: {numNodes: 1, torch: {}}
		template: spec: {
			replicatedJobs: [{
				name: "init"
` + jobs + `
				template: spec: template: spec: containers: [{name: "init", image: "busybox"}]
			}, {
				name: "node"
				dependsOn: [{name: "init", status: "Complete"}, {name: "initialiser", status: "Complete"}]
				template: {
					metadata: labels: "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
					spec: template: spec: containers: [{name: "node", image: "registry.example.com/pytorch:2.13"}]
				}
			}` + more + `]
` + policies + `
		}
	}
}
`}
	}
	_, err := New(Options{PolicyDirs: []string{writePolicy(t, runtime(`				dependsOn: [{name: "node", status: "Ready"}]
				groupName: "Init_Group"`, `, {name: "Eval_1", template: spec: template: spec: {restartPolicy: "Always", containers: [{name: "eval", image: "busybox", resources: {requests: {cpu: "4", "nvidia.com/gpu": 1}, limits: cpu: "2"}}, {name: "gpu", image: "busybox", imagePullPolicy: "always", ports: [{containerPort: 80, protocol: "tcp"}, {containerPort: 70000}, {containerPort: 36000, name: "paddle-master-port"}], env: [{name: "A=B", value: "1"}, {name: "RANK", value: "0", valueFrom: fieldRef: fieldPath: "metadata.annotation['x']"}, {name: "CPUS", valueFrom: resourceFieldRef: resource: "limit.cpu"}], volumeMounts: [{name: "scratch", mountPath: "/scratch"}], resources: {requests: {"nvidia.com/gpu": 1, gpu: 1}, limits: "nvidia.com/gpu": 2}}], initContainers: [{name: "gpu", image: "busybox"}, {name: "Side_Car"}], volumes: [{name: "Data_1", configMap: {name: "data", defaultMode: 755}}]}}`, `
			successPolicy: {operator: "All", targetReplicatedJobs: ["nodes"]}
			failurePolicy: rules: [{name: "fail", action: "FailJobSet", targetReplicatedJobs: ["node", "launcher"], onJobFailureReasons: ["BackoffLimitExceded"]}]
			coordinator: replicatedJob: "nod"
			network: subdomain: "Org_Sub"`))}})
	for _, want := range []string{
		`runtime.cue:12: ClusterTrainingRuntime org-torch: spec.template.spec.replicatedJobs[0].dependsOn: Forbidden: JobSet's webhook would refuse the JobSet of every TrainJob of this runtime: DependsOn can't be set for the first ReplicatedJob`,
		`runtime.cue:17: ClusterTrainingRuntime org-torch: spec.template.spec.replicatedJobs[1].dependsOn[1].name: Invalid value: "initialiser": JobSet's webhook would refuse the JobSet of every TrainJob of this runtime: replicatedJob: node cannot depend on replicatedJob: initialiser (a job depends on itself or on one before it: init, node)`,
		`runtime.cue:24: ClusterTrainingRuntime org-torch: spec.template.spec.successPolicy.targetReplicatedJobs[0]: Invalid value: "nodes": JobSet's webhook would refuse the JobSet of every TrainJob of this runtime: invalid replicatedJob name 'nodes' does not appear in .spec.ReplicatedJobs (init, node, Eval_1)`,
		`spec.template.spec.failurePolicy.rules[0].targetReplicatedJobs[1]: Invalid value: "launcher"`,
		`runtime.cue:25: ClusterTrainingRuntime org-torch: spec.template.spec.failurePolicy.rules[0].onJobFailureReasons[0]: Unsupported value: "BackoffLimitExceded": JobSet's webhook would refuse the JobSet of every TrainJob of this runtime: invalid job failure reason 'BackoffLimitExceded' in failure policy is not a recognized job failure reason (BackoffLimitExceeded, DeadlineExceeded, FailedIndexes, MaxFailedIndexesExceeded, PodFailurePolicy)`,
		`runtime.cue:26: ClusterTrainingRuntime org-torch: spec.template.spec.coordinator.replicatedJob: Invalid value: "nod"`,
		`runtime.cue:13: ClusterTrainingRuntime org-torch: spec.template.spec.replicatedJobs[0].groupName: Invalid value: "Init_Group": JobSet's webhook would refuse the JobSet of every TrainJob of this runtime: a DNS-1035 label must consist of`,
		`runtime.cue:22: ClusterTrainingRuntime org-torch: spec.template.spec.replicatedJobs[2].name: Invalid value: "Eval_1": JobSet's webhook would refuse the JobSet of every TrainJob of this runtime: the names of the Jobs it makes of it (<jobset>-Eval_1-0) are no DNS-1035 labels`,
		`runtime.cue:22: ClusterTrainingRuntime org-torch: spec.template.spec.replicatedJobs[2].template.spec.template.spec.restartPolicy: Unsupported value: "Always": the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: a Job's pods restart OnFailure or Never`,
		`runtime.cue:22: ClusterTrainingRuntime org-torch: spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[0].resources.requests: Invalid value: "4": the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: must be less than or equal to cpu limit of 2`,
		`runtime.cue:22: ClusterTrainingRuntime org-torch: spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[0].resources.limits: Required value: the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: Limit must be set for non overcommitable resources (nvidia.com/gpu)`,
		`runtime.cue:22: ClusterTrainingRuntime org-torch: spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[1].resources.requests: Invalid value: "1": the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: must be equal to nvidia.com/gpu limit of 2`,
		`runtime.cue:22: ClusterTrainingRuntime org-torch: spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[1].imagePullPolicy: Unsupported value: "always": the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: supported values: "Always", "IfNotPresent", "Never"`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[1].ports[0].protocol: Unsupported value: "tcp"`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[1].ports[1].containerPort: Invalid value: 70000: the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: must be between 1 and 65535, inclusive`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[1].env[0].name: Invalid value: "A=B": the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: a valid environment variable name must consist only of printable ASCII characters other than '='`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[1].volumeMounts[0].name: Not found: "scratch": the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: no volume of the pod has that name (Data_1)`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[1].ports[2].name: Invalid value: "paddle-master-port": the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: must be no more than 15 characters`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[1].env[1].valueFrom: Invalid value: {"fieldRef":{"fieldPath":"metadata.annotation['x']"}}: the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: may not be specified when ` + "`value`" + ` is not empty`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[1].env[1].valueFrom.fieldRef.fieldPath: Unsupported value: "metadata.annotation['x']"`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[1].env[2].valueFrom.resourceFieldRef.resource: Unsupported value: "limit.cpu"`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[1].resources.requests[gpu]: Invalid value: "gpu": the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: must be a standard resource for containers`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.volumes[0].name: Invalid value: "Data_1": the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: a lowercase RFC 1123 label must consist of`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.volumes[0].configMap.defaultMode: Invalid value: 755: the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: must be a number between 0 and 0777 (octal), both inclusive`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.containers[1].name: Duplicate value: "gpu"`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.initContainers[1].image: Required value: the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: a container needs an image, and no TrainJob gives this one`,
		`spec.template.spec.replicatedJobs[2].template.spec.template.spec.initContainers[1].name: Invalid value: "Side_Car": the Job API would refuse every Job of it, so every TrainJob of this runtime would fail to start: a lowercase RFC 1123 label must consist of`,
		`runtime.cue:27: ClusterTrainingRuntime org-torch: spec.template.spec.network.subdomain: Invalid value: "Org_Sub": JobSet's webhook would refuse the JobSet of every TrainJob of this runtime: a DNS-1035 label must consist of`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("load: %v\nwant %q", err, want)
		}
	}
	if err != nil && strings.Count(err.Error(), "ClusterTrainingRuntime org-torch:") != 28 {
		t.Errorf("load: %v\nwant 28 problems", err)
	}
	// A job may depend on itself or on one before it, and the policies
	// name the runtime's jobs.
	ok := runtime(`				groupName: "init-group"`, `, {name: "eval-1", template: spec: template: spec: {restartPolicy: "Never", containers: [{name: "eval", image: "busybox", imagePullPolicy: "IfNotPresent", ports: [{containerPort: 80, protocol: "UDP", name: "http-2"}], env: [{name: "A.B-c", value: "1"}, {name: "RANK", value: "", valueFrom: fieldRef: fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}, {name: "CPUS", valueFrom: resourceFieldRef: resource: "limits.cpu"}, {name: "NODE", valueFrom: fieldRef: fieldPath: "spec.nodeName"}], volumeMounts: [{name: "scratch", mountPath: "/scratch"}], resources: {requests: {cpu: "500m", "nvidia.com/gpu": 1}, limits: {cpu: 1, "nvidia.com/gpu": "1"}}}], initContainers: [{name: "warm", image: "busybox"}], volumes: [{name: "scratch", emptyDir: {}}, {name: "cfg", configMap: {name: "cfg", defaultMode: 0o644}}]}}`, `
			network: subdomain: "org-sub"
			successPolicy: {operator: "All", targetReplicatedJobs: ["node"]}
			failurePolicy: rules: [{name: "fail", action: "FailJobSet", targetReplicatedJobs: ["init", "node"], onJobFailureReasons: ["BackoffLimitExceeded", "PodFailurePolicy"]}]`)
	ok["runtime.cue"] = strings.Replace(ok["runtime.cue"], `{name: "initialiser", status: "Complete"}`, `{name: "node", status: "Ready"}`, 1)
	// The trainer's node container takes a TrainJob's image.
	ok["runtime.cue"] = strings.Replace(ok["runtime.cue"], `{name: "node", image: "registry.example.com/pytorch:2.13"}`, `{name: "node"}`, 1)
	loadPolicyWant(t, "names right", ok, "")
}

// TestDeclaredCheckThatFails: a declared check of the admin's own that
// cannot be evaluated for a declared runtime fails the load at the rule,
// named as the declaredChecks rule it is, as any rule that fails does.
func TestDeclaredCheckThatFails(t *testing.T) {
	t.Parallel()
	loadPolicyWant(t, "index out of range", map[string]string{"p.cue": `package schemas

import "strings"

clusterTrainingRuntimes: "org-torch": {
	apiVersion: #APIVersion
	kind:       "ClusterTrainingRuntime"
	metadata: name: "org-torch"
	spec: {
		mlPolicy: {numNodes: 1, torch: {}}
		template: spec: replicatedJobs: [{
			name: "node"
			template: {
				metadata: labels: "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
				spec: template: spec: containers: [{name: "node", image: "busybox"}]
			}
		}]
	}
}

declaredChecks: (#APIVersion): ClusterTrainingRuntime: {
	object: _
	errors: orgTeam: [
		if strings.Split(object.metadata.name, "-")[2] != "team" {path: "metadata.name", detail: "a runtime's name ends with its team"},
	]
}
`}, "p.cue:24:47: rule declaredChecks.orgTeam cannot be evaluated for ClusterTrainingRuntime org-torch: declaredChecks.\"trainer.kubeflow.org/v1alpha1\".ClusterTrainingRuntime.errors.orgTeam: index out of range [2] with length 2")
}

// TestDeclaredChecksPassTheShippedRuntimes: the checks of a declared
// runtime find nothing in the runtimes cuetrainer ships, nor in those
// Kubeflow ships as YAML: every TrainJob of them starts, and a runtime
// declared like one of them loads.
func TestDeclaredChecksPassTheShippedRuntimes(t *testing.T) {
	e := testEngine(t)
	c := e.cur.Load()
	docs := e.Builtin()
	files, err := filepath.Glob("../test/conformance/testdata/kubeflow/runtimes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("Kubeflow's runtimes: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, k8s.ReadYAML(f, data)...)
	}
	checked := 0
	for _, d := range docs {
		s := e.NewSession(SessionOptions{NoBuiltinRuntimes: true})
		r, st := s.evaluate(context.Background(), d, Request{})
		if st == nil || r.Rejected() {
			t.Errorf("%s %s: not admitted: %v", d.File, r.Identity(), r.Errors)
			continue
		}
		checked++
		for _, p := range e.checkDeclared(c, st) {
			t.Errorf("%s: %s", d.File, p.Message)
		}
	}
	if checked < 2*len(files) {
		t.Errorf("%d runtimes checked, want ours and Kubeflow's %d", checked, len(files))
	}
}
