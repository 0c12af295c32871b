package engine

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// TestReviewMemo: a review is kept under everything it reads and given
// again, as a copy, to any session of the engine that reads the same; a
// change to any one of those inputs reviews it again.
func TestReviewMemo(t *testing.T) {
	t.Parallel()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	runtime := teamRuntime("", "", nodeJob("img:1")).YAML()
	job := func() Document { return readOne(t, teamJob("").Env("A", "1").YAML()) }
	// admit admits the documents before in a session of their own, then
	// doc with req, and reports whether its review was made.
	admit := func(opts SessionOptions, before []string, doc Document, req Request) (Result, bool) {
		t.Helper()
		opts.NoBuiltinRuntimes = true
		s := e.NewSession(opts)
		for _, b := range before {
			if r := s.Admit(readOne(t, b)); r.Rejected() {
				t.Fatalf("admitting what comes before: %v", findingStrings(r.Errors))
			}
		}
		made := e.reviewsMade.Load()
		r := s.AdmitRequest(context.Background(), doc, req)
		return r, e.reviewsMade.Load() != made
	}
	withRuntime := []string{runtime}

	first, made := admit(SessionOptions{}, withRuntime, job(), Request{})
	if !made || first.Rejected() {
		t.Fatalf("first review: made %v, errors %v", made, findingStrings(first.Errors))
	}
	again, made := admit(SessionOptions{}, withRuntime, job(), Request{})
	if made {
		t.Fatalf("the same TrainJob, runtime and request in a new session: reviewed again")
	}
	if !reflect.DeepEqual(again.Object, first.Object) || !reflect.DeepEqual(again.Errors, first.Errors) ||
		!reflect.DeepEqual(again.Warnings, first.Warnings) || again.runtime == nil {
		t.Fatalf("the memo's review differs from the first:\n%v\n%v", again, first)
	}
	// What a caller changes in its result does not reach the next one.
	k8s.Meta(again.Object)["name"] = "changed"
	if third, _ := admit(SessionOptions{}, withRuntime, job(), Request{}); k8s.Str(k8s.Meta(third.Object)["name"]) != "job" {
		t.Fatalf("a caller's change reached the memo: name %v", k8s.Meta(third.Object)["name"])
	}

	changed := func(edit func(map[string]any)) Document {
		d := job()
		edit(d.Object)
		return d
	}
	trainer := func(o map[string]any) map[string]any { return o["spec"].(map[string]any)["trainer"].(map[string]any) }
	pc := "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
	for _, c := range []struct {
		name   string
		opts   SessionOptions
		before []string
		doc    Document
		req    Request
		// refused: the review refuses it, unlike the first.
		refused bool
	}{
		{name: "another numNodes", before: withRuntime, doc: changed(func(o map[string]any) { trainer(o)["numNodes"] = int64(3) })},
		// JSON's text has 2 for both; the CUE is given 2.0.
		{name: "numNodes a float", before: withRuntime, doc: changed(func(o map[string]any) { trainer(o)["numNodes"] = float64(2) })},
		{name: "another env name", before: withRuntime, doc: changed(func(o map[string]any) {
			trainer(o)["env"].([]any)[0].(map[string]any)["name"] = "B"
		})},
		{name: "the runtime's content", before: []string{teamRuntime("", "", nodeJob("img:2")).YAML()}, doc: job()},
		{name: "no runtime", doc: job(), refused: true},
		{name: "a context object", before: []string{runtime, pc}, doc: job()},
		{name: "the release", opts: SessionOptions{Release: "v2.1"}, before: withRuntime, doc: job()},
		{name: "schema-checked", before: withRuntime, doc: serverDefaulted(t, job()), req: Request{SchemaChecked: true}},
		{name: "verdict only", before: withRuntime, doc: job(), req: Request{VerdictOnly: true}},
		{name: "an update", before: withRuntime, doc: job(), req: Request{Operation: "UPDATE", OldObject: changed(func(o map[string]any) { trainer(o)["numNodes"] = int64(4) }).Object}},
		{name: "an update from another object", before: withRuntime, doc: job(), req: Request{Operation: "UPDATE", OldObject: changed(func(o map[string]any) { trainer(o)["numNodes"] = int64(5) }).Object}},
	} {
		r, made := admit(c.opts, c.before, c.doc, c.req)
		if !made {
			t.Errorf("%s: not reviewed again", c.name)
		}
		if r.Rejected() != c.refused {
			t.Errorf("%s: refused %v, want %v: %v", c.name, r.Rejected(), c.refused, findingStrings(r.Errors))
		}
		// And kept in turn.
		if _, made := admit(c.opts, c.before, c.doc, c.req); made {
			t.Errorf("%s, again: reviewed again, want the memo's", c.name)
		}
	}
}

// TestReviewIsTimeless: only a mutator is given the request's time, so a
// review asked at another time is the memo's; and a review's rule that
// reads the time is the admin's mistake, at load, in the admin's file.
func TestReviewIsTimeless(t *testing.T) {
	t.Parallel()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := readOne(t, teamJob("").YAML())
	review := func(now time.Time) bool {
		s := e.NewSession(SessionOptions{})
		made := e.reviewsMade.Load()
		s.AdmitRequest(context.Background(), doc, Request{Now: now})
		return e.reviewsMade.Load() != made
	}
	if !review(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)) {
		t.Fatal("the first review was not made")
	}
	if review(time.Date(2026, 11, 26, 10, 0, 1, 0, time.UTC)) {
		t.Error("a second later: reviewed again")
	}

	dir := writePolicy(t, map[string]string{"late.cue": "package schemas\n\nadmission: (#APIVersion): TrainJob: {\n\tcontext: _\n\tpolicy: late: [if context.now != _|_ {detail: \"late\"}]\n}\n"})
	_, err = New(Options{PolicyDirs: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), "late.cue:5:28: context has no field now") {
		t.Errorf("a review's rule reading the time: %v, want a load error at late.cue:5:28", err)
	}
}

// TestMutateMemo: a mutation is kept under the object, the request and the
// time, and given again as a copy; another time gives its own.
func TestMutateMemo(t *testing.T) {
	t.Parallel()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := readOne(t, teamJob("").RuntimePatch("acme.io/tool", map[string]any{}).YAML())
	mutate := func(now time.Time) map[string]any {
		t.Helper()
		out, err := e.NewSession(SessionOptions{}).Mutate(doc, Request{Now: now})
		if err != nil || out == nil {
			t.Fatalf("mutate: %v %v", out, err)
		}
		return out
	}
	patchTime := func(out map[string]any) any {
		return out["spec"].(map[string]any)["runtimePatches"].([]any)[0].(map[string]any)["time"]
	}
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	mutate(at)
	first := mutate(at) // the memo's
	first["spec"].(map[string]any)["runtimePatches"].([]any)[0].(map[string]any)["time"] = "changed"
	if got := patchTime(mutate(at)); got != "2026-11-26T10:00:00Z" {
		t.Errorf("the same mutation again: time %v (a caller's change reached the memo?)", got)
	}
	if got := patchTime(mutate(at.Add(time.Second))); got != "2026-11-26T10:00:01Z" {
		t.Errorf("a second later: time %v", got)
	}

	// The mutator reads the runtime patches alone: another TrainJob with
	// the same patches shares the kept edits, made to its own object.
	other := readOne(t, wrapper.TrainJob("other").Namespace("elsewhere").RuntimeRef("rt").Args("other.py").
		RuntimePatch("acme.io/tool", map[string]any{}).YAML())
	made := e.mutationsMade.Load()
	out, err := e.NewSession(SessionOptions{}).Mutate(other, Request{Now: at})
	if err != nil || out == nil {
		t.Fatalf("mutate: %v %v", out, err)
	}
	if e.mutationsMade.Load() != made {
		t.Errorf("a TrainJob alike in its runtime patches: mutated again, want the memo's edits")
	}
	if md := out["metadata"].(map[string]any); md["name"] != "other" || md["namespace"] != "elsewhere" || patchTime(out) != "2026-11-26T10:00:00Z" {
		t.Errorf("the memo's edits made to another object: %v, time %v", md, patchTime(out))
	}
	if args := out["spec"].(map[string]any)["trainer"].(map[string]any)["args"]; fmt.Sprint(args) != "[other.py]" {
		t.Errorf("args %v, want the object's own", args)
	}
}

// TestMutatorReadsChecked: a mutation that reads a path its mutator's
// reads do not name fails the load at the mutation, in the admin's file;
// named under reads, it loads and is made.
func TestMutatorReadsChecked(t *testing.T) {
	t.Parallel()
	const head = "package schemas\n\nmutators: (#APIVersion): TrainJob: {\n\tinput: _\n"
	const rule = "\tmutations: jobName: [if input.metadata.name != _|_ {\n\t\tobject: \"input\", path: [\"metadata\", \"annotations\", \"example.com/job\"], op: \"set\", value: input.metadata.name\n\t}]\n"
	// The same rule with its read out of the load's syntax check's sight
	// (a key computed at evaluation): the trial on the probes finds it.
	const computed = "\tlet f = \"meta\" + \"data\"\n\tmutations: jobName: [if input[f].name != _|_ {\n\t\tobject: \"input\", path: [\"metadata\", \"annotations\", \"example.com/job\"], op: \"set\", value: input[f].name\n\t}]\n"
	// A read the probes cannot show (they have no labels): without the
	// syntax check, such a policy loads and its mutation is never made.
	const labels = "\tmutations: team: [if input.metadata.labels.team != _|_ {\n\t\tobject: \"input\", path: [\"metadata\", \"annotations\", \"example.com/team\"], op: \"set\", value: input.metadata.labels.team\n\t}]\n"
	for _, tc := range []struct {
		name, body, want string
	}{
		{"unnamed", rule, "extra.cue:5:41: this rule reads input.metadata.name, which the reads of mutators: \"trainer.kubeflow.org/v1alpha1\": TrainJob do not name: the rule is given spec.runtimePatches alone"},
		{"computed", computed, "extra.cue:6:13: mutations.jobName: mutations of TrainJob read a path of the input that their reads do not name"},
		{"labels", labels, "extra.cue:5:45: this rule reads input.metadata.labels.team, which the reads of mutators"},
		{"named", "\treads: jobName: [\"metadata\", \"name\"]\n" + rule, ""},
	} {
		e := loadPolicyWant(t, tc.name, map[string]string{"extra.cue": head + tc.body + "}\n"}, tc.want)
		if e == nil {
			continue
		}
		out, err := e.NewSession(SessionOptions{}).Mutate(readOne(t, teamJob("").YAML()), Request{Operation: "CREATE"})
		if err != nil || out == nil || out["metadata"].(map[string]any)["annotations"].(map[string]any)["example.com/job"] == nil {
			t.Errorf("%s: the mutation was not made: %v %v", tc.name, out, err)
		}
	}
}

// TestMutationWritesANumber: a mutation that writes an integer (a
// TrainJob's default numNodes) loads, and the object it makes holds the
// number as the reader gives one (int64), which the review admits; it
// was refused at load as "must be of type int32", the number decoded as
// text.
func TestMutationWritesANumber(t *testing.T) {
	t.Parallel()
	const policy = "package schemas\n\nmutators: (#APIVersion): TrainJob: {\n\tinput: _\n\treads: nodes: [\"spec\", \"trainer\"]\n" +
		"\tmutations: defaultNodes: [if input.spec.trainer == _|_ || input.spec.trainer.numNodes == _|_ {\n" +
		"\t\tobject: \"input\", path: [\"spec\", \"trainer\", \"numNodes\"], op: \"set\", value: 4\n\t}]\n}\n"
	e := loadPolicyWant(t, "int", map[string]string{"nodes.cue": policy}, "")
	if e == nil {
		return
	}
	s := e.NewSession(SessionOptions{})
	job := wrapper.TrainJob("job").Namespace("team").RuntimeRef("torch-distributed").Args("train.py")
	out, err := s.Mutate(readOne(t, job.YAML()), Request{Operation: "CREATE"})
	if err != nil || out == nil {
		t.Fatalf("mutate: %v %v", out, err)
	}
	if n := value.At(out, []string{"spec", "trainer", "numNodes"}); n != int64(4) {
		t.Errorf("numNodes %#v, want int64(4)", n)
	}
	if r := s.Admit(Document{File: "job.yaml", Line: 1, Object: out}); r.Rejected() {
		t.Errorf("the mutated TrainJob is refused: %v", r.Errors)
	}
}

// TestMutatorNeeds: a mutator all of whose mutations need what a request
// has not (#Mutator.needs: the shipped one needs a time) is not
// evaluated for it, as vet's and render's requests have no time; given a
// time it is. A policy's mutation that needs nothing makes the mutator
// evaluated for every request.
func TestMutatorNeeds(t *testing.T) {
	t.Parallel()
	doc := readOne(t, teamJob("").RuntimePatch("acme.io/tool", map[string]any{}).YAML())
	evaluated := func(e *Engine, req Request) bool {
		t.Helper()
		before := e.mutationsMade.Load()
		if _, err := e.NewSession(SessionOptions{}).Mutate(doc, req); err != nil {
			t.Fatal(err)
		}
		return e.mutationsMade.Load() != before
	}
	shipped, err := New(Options{NoMemo: true})
	if err != nil {
		t.Fatal(err)
	}
	if evaluated(shipped, Request{Operation: contract.OpCreate}) {
		t.Errorf("shipped mutator, no time: evaluated, want skipped (it needs one)")
	}
	if !evaluated(shipped, Request{Operation: contract.OpCreate, Now: time.Now()}) {
		t.Errorf("shipped mutator, with a time: not evaluated")
	}
	const queue = "package schemas\n\nmutators: (#APIVersion): TrainJob: {\n\tinput: _\n\treads: queue: [\"metadata\", \"labels\"]\n" +
		"\tmutations: queue: [if (*input.metadata.labels[\"example.com/queue\"] | null) == null {\n" +
		"\t\tobject: \"input\", path: [\"metadata\", \"labels\", \"example.com/queue\"], op: \"set\", value: \"batch\"\n\t}]\n}\n"
	e := loadPolicyWant(t, "queue", map[string]string{"queue.cue": queue}, "")
	if e != nil && !evaluated(e, Request{Operation: contract.OpCreate}) {
		t.Errorf("with a mutation that needs nothing, no time: not evaluated")
	}
}

// TestMutatorReadsOnCorpora: the shipped mutators, given the paths their
// reads name, make what they make with the whole object, for every
// document of every corpus the tests use, on a create and on updates from
// an older object and from itself: the load's check (checkMutatorReads),
// which the load runs on the probes alone.
func TestMutatorReadsOnCorpora(t *testing.T) {
	e := testEngine(t)
	c := e.compiled()
	s := e.NewSession(SessionOptions{})
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	corpus := memoCorpus(t)
	checked := 0
	for _, f := range value.SortedKeys(corpus) {
		for i, d := range corpus[f] {
			if _, ok := c.Mutators[d.APIVersion()][d.Kind()]; d.Err != nil || d.Object == nil || !ok {
				continue
			}
			older := value.DeepCopy(d.Object).(map[string]any)
			if spec, ok := older["spec"].(map[string]any); ok {
				delete(spec, "runtimePatches")
			}
			for _, req := range []Request{{Operation: "CREATE", Now: now}, {Operation: "UPDATE", OldObject: older, Now: now}, {Operation: "UPDATE", OldObject: d.Object, Now: now}} {
				if p := e.checkMutatorReads(c, s, d, req, fmt.Sprintf("(%s, document %d)", f, i+1)); p != nil {
					t.Errorf("%s, document %d, %s: %s", f, i+1, req.Operation, p)
				}
				checked++
			}
		}
	}
	if checked < 300 {
		t.Fatalf("%d mutations checked: the corpora lack TrainJobs?", checked)
	}
	t.Logf("%d mutations checked", checked)
}
