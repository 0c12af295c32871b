package engine

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// TestCarriedValuesShareReviews: objects alike but for the values their
// kind carries (a name, a namespace, a uid, env values) share one review,
// and each gets its own values back, in its object and its findings. A
// value outside its entry's constraint, one the CUE's sources hold, and
// one the object holds elsewhere too, are not carried.
func TestCarriedValuesShareReviews(t *testing.T) {
	t.Parallel()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	admit := func(text string) (Result, bool) {
		t.Helper()
		s := e.NewSession(SessionOptions{})
		made := e.reviewsMade.Load()
		r := s.AdmitRequest(context.Background(), readOne(t, text), Request{})
		return r, e.reviewsMade.Load() != made
	}
	job := func(name, ns, uid, env string) string {
		return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: " + name + ", namespace: " + ns + ", uid: " + uid + "}\n" +
			"spec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    image: img:1\n    numNodes: 2\n    env: [{name: RUN, value: '" + env + "'}]\n"
	}
	first, made := admit(job("job-a", "team-a", "uid-a", "run a"))
	if !made || first.Rejected() {
		t.Fatalf("first: made %v, errors %v", made, findingStrings(first.Errors))
	}
	second, made := admit(job("job-b", "team-b", "uid-b", "run b"))
	if made {
		t.Errorf("a TrainJob alike but for its carried values: reviewed again, want the memo's review")
	}
	m := k8s.Meta(second.Object)
	env := second.Object["spec"].(map[string]any)["trainer"].(map[string]any)["env"].([]any)[0].(map[string]any)
	if m["name"] != "job-b" || m["namespace"] != "team-b" || m["uid"] != "uid-b" || env["value"] != "run b" {
		t.Errorf("the memo's review holds other values: %v, env %v", m, env)
	}
	// A fresh engine reviews it alike.
	fresh, err := New(Options{NoMemo: true})
	if err != nil {
		t.Fatal(err)
	}
	want := fresh.NewSession(SessionOptions{}).AdmitRequest(context.Background(), readOne(t, job("job-b", "team-b", "uid-b", "run b")), Request{})
	if !reflect.DeepEqual(want.Object, second.Object) || !reflect.DeepEqual(want.Errors, second.Errors) || !reflect.DeepEqual(want.Warnings, second.Warnings) {
		t.Errorf("the memo's review differs from a fresh one:\n%v\n%v", second.Object, want.Object)
	}

	// A runtime's name reaches a warning: each gets its own.
	runtime := func(name string) string {
		return torchRuntime(name, 1, nodeJob("img:1")).Label("trainer.kubeflow.org/support", "deprecated").YAML()
	}
	if _, made := admit(runtime("old-a")); !made {
		t.Fatal("the first runtime was not reviewed")
	}
	r, made := admit(runtime("old-b"))
	if made {
		t.Errorf("a runtime alike but for its name: reviewed again")
	}
	if w := strings.Join(findingStrings(r.Warnings), "\n"); !strings.Contains(w, `"old-b" is deprecated`) || strings.Contains(w, "old-a") {
		t.Errorf("the memo's warnings name another runtime: %s", w)
	}

	for _, c := range []struct{ what, text string }{
		// The CRD's pattern refuses it: not carried, and refused.
		{"a name outside its pattern", job("Job-C", "team-a", "uid-a", "run a")},
		// The CUE's sources hold "torch".
		{"a value the CUE names", job("job-d", "team-a", "uid-a", "torch")},
		// The same text as the image, which is not carried.
		{"a value the object holds elsewhere", job("job-e", "team-a", "uid-a", "img:1")},
	} {
		if _, made := admit(c.text); !made {
			t.Errorf("%s: carried (the memo's review), want it reviewed", c.what)
		}
	}
	if r, _ := admit(job("Job-C", "team-a", "uid-a", "run a")); !r.Rejected() {
		t.Errorf("a name outside the pattern was admitted")
	}
}

// TestCarriedCheckedAtLoad: a policy whose rule looks at a value its kind
// carries where its syntax does not say so (withoutPolicyReads switches
// off the entries whose values the syntax shows looked at: a field
// reached by its key in a comprehension does not, under a name no other
// file gives a read, as v and e are), or whose carried entry
// the tokens do not meet, fails the load at the entry, in the file that
// declares it.
func TestCarriedCheckedAtLoad(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, policy, want string
	}{
		{"a prefix", `admission: (#APIVersion): TrainJob: {
	object: _
	policy: probing: [for k, metaValue in object.metadata if k == "name" if strings.HasPrefix(metaValue, "pro") {path: "metadata.name", detail: "a probe"}]
}`, `p.cue:7:10: rule probing looks at values the review is given as tokens (carried: "trainer.kubeflow.org/v1alpha1": TrainJob: name, at `},
		{"a changed token", `admission: (#APIVersion): TrainJob: {
	object: _
	warnings: loud: [for k, metaValue in object.metadata if k == "name" {message: strings.ToUpper(metaValue)}]
}`, "a rule changed the token"},
		{"a constraint no token meets", `carried: (#APIVersion): TrainJob: image: {path: ["spec", "trainer", "image"], value: =~"^[A-Z]+$"}`,
			`p.cue:5:35: carried: "trainer.kubeflow.org/v1alpha1": TrainJob: image: the engine's tokens`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writePolicy(t, map[string]string{"p.cue": "package schemas\n\nimport \"strings\"\n\n" + c.policy + "\n\n_x: strings.ToUpper(\"\")\n"})
			_, err := New(Options{PolicyDirs: []string{dir}})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("load: %v\nwant %q", err, c.want)
			}
		})
	}
}

// TestCarryOff: a policy whose rule looks at a carried value switches its
// entry off, and the rule then sees every value.
func TestCarryOff(t *testing.T) {
	t.Parallel()
	dir := writePolicy(t, map[string]string{"p.cue": `package schemas

import "strings"

carried: (#APIVersion): TrainJob: name: carry: false

admission: (#APIVersion): TrainJob: {
	object: _
	policy: probing: [for k, metaValue in object.metadata if k == "name" if strings.HasPrefix(metaValue, "pro") {path: "metadata.name", detail: "a probe"}]
}
`})
	e, err := New(Options{PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		refused bool
	}{{"job-a", false}, {"pro-a", true}, {"job-b", false}, {"pro-b", true}} {
		r := e.NewSession(SessionOptions{}).Admit(readOne(t, wrapper.TrainJob(c.name).Namespace("team").RuntimeRef("torch-distributed").YAML()))
		if r.Rejected() != c.refused {
			t.Errorf("%s: refused %v, want %v: %v", c.name, r.Rejected(), c.refused, findingStrings(r.Errors))
		}
	}
}

// TestCarriedLeftOver: a token a rule changed is seen, so that the result
// is thrown away rather than given with the token's text.
func TestCarriedLeftOver(t *testing.T) {
	tokens := &valueTokens{}
	tok, _ := tokens.token("job-a")
	r := Result{Object: map[string]any{"a": "x-" + tok}, Warnings: []Finding{{Detail: "name " + tok}}}
	got, _, ok := tokens.putBack(r, nil)
	if !ok || got.Object["a"] != "x-job-a" || got.Warnings[0].Detail != "name job-a" {
		t.Errorf("put back: %v %v %v", ok, got.Object, got.Warnings)
	}
	if r.Warnings[0].Detail != "name "+tok {
		t.Errorf("putBack changed the findings it was given (the memo's)")
	}
	r.Warnings[0].Detail = strings.ToUpper(tok)
	if _, _, ok := tokens.putBack(r, nil); ok {
		t.Errorf("an upper-cased token was not seen")
	}
}

// TestCarriedLookups: the lookups of objects alike but for their carried
// values are the memo's, each with its own values; a lookup that looks at
// a carried value fails the load at the lookup.
func TestCarriedLookups(t *testing.T) {
	t.Parallel()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession(SessionOptions{Controller: true})
	c := e.compiled()
	refs := func(name, runtime string) (*lookupRefs, bool) {
		made := e.lookupsMade.Load()
		d := readOne(t, wrapper.TrainJob(name).Namespace("team").RuntimeRef(runtime).YAML())
		return s.lookupsFor(c, d, Request{}, false), e.lookupsMade.Load() != made
	}
	if _, made := refs("job-a", "torch-distributed"); !made {
		t.Fatal("the first lookups were not evaluated")
	}
	r, made := refs("job-b", "torch-distributed")
	if made {
		t.Errorf("lookups alike but for the name: evaluated again")
	}
	if r == nil || r.existing["snapshot"].Name != "job-b-runtime-snapshot" || r.runtime == nil || r.runtime.Pinned == nil || r.runtime.Pinned.Name != "job-b-runtime-snapshot" {
		t.Errorf("the memo's lookups name another TrainJob's objects: %v", r)
	}
	// The runtime's name is carried too, unless the CUE names it (the
	// shipped runtimes' are): the lookups of two teams' runtimes are one.
	if _, made := refs("job-c", "team-a-torch"); !made {
		t.Error("lookups of a runtime of another name were not evaluated")
	}
	r, made = refs("job-d", "team-b-torch")
	if made {
		t.Errorf("lookups alike but for the runtime's name: evaluated again")
	}
	if r == nil || r.runtime == nil || r.runtime.Name != "team-b-torch" || r.runtime.Kind != "ClusterTrainingRuntime" {
		t.Errorf("the memo's lookups name another runtime: %+v", r.runtime)
	}

	dir := writePolicy(t, map[string]string{"p.cue": `package schemas

import "strings"

lookups: (#APIVersion): TrainJob: {
	input: _
	for k, nameText in {name: input.metadata.name} if k == "name" {
		existing: loud: {group: "", kind: "ConfigMap", namespace: "default", name: strings.ToUpper(nameText)}
	}
}
`})
	_, err = New(Options{PolicyDirs: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), "p.cue:8:") || !strings.Contains(err.Error(), "lookups of TrainJob look at a value the kind carries") {
		t.Errorf("a lookup that upper-cases the name: %v", err)
	}
}

// TestCarriedRenders: TrainJobs alike but for their carried values share
// one render, each with its own names and uid; generators run for each
// caller (no two share a key pair; a seed is hashed from the value
// itself); a render rule that looks at a carried value fails the load.
func TestCarriedRenders(t *testing.T) {
	t.Parallel()
	e, fresh := memoAndFresh(t)
	render := func(e *Engine, runtime, name, uid string) (Rendered, bool) {
		t.Helper()
		s := e.NewSession(SessionOptions{})
		r := s.Admit(readOne(t, wrapper.TrainJob(name).Namespace("team").UID(uid).RuntimeRef(runtime).YAML()))
		if r.Rejected() {
			t.Fatalf("%s: %v", name, findingStrings(r.Errors))
		}
		return renderCounted(t, e, s, r)
	}
	secretData := func(out Rendered, kind string) string {
		for _, o := range out.Objects {
			if o["kind"] == kind {
				return fmt.Sprint(o["data"])
			}
		}
		return ""
	}
	for _, runtime := range []string{"torch-distributed", "deepspeed-distributed"} {
		first, made := render(e, runtime, "first-one", "u-first")
		if !made {
			t.Fatalf("%s: the first render was not made", runtime)
		}
		second, made := render(e, runtime, "second-two", "u-second")
		if made {
			t.Errorf("%s: a TrainJob alike but for its name and uid: rendered again", runtime)
		}
		want, _ := render(fresh, runtime, "second-two", "u-second")
		if len(second.Objects) != len(want.Objects) {
			t.Fatalf("%s: %d objects, want %d", runtime, len(second.Objects), len(want.Objects))
		}
		for i := range want.Objects {
			w, g := value.DeepCopy(want.Objects[i]).(map[string]any), value.DeepCopy(second.Objects[i]).(map[string]any)
			if w["kind"] == "Secret" {
				// A key pair is random: each render its own, under the
				// same keys.
				wd, _ := w["data"].(map[string]any)
				gd, _ := g["data"].(map[string]any)
				if len(wd) == 0 || !reflect.DeepEqual(value.SortedKeys(wd), value.SortedKeys(gd)) {
					t.Errorf("%s: secret data %v, want keys %v", runtime, value.SortedKeys(gd), value.SortedKeys(wd))
				}
				delete(w, "data")
				delete(g, "data")
			}
			if !reflect.DeepEqual(w, g) {
				t.Errorf("%s: object %d differs from a fresh render:\n%v\n%v", runtime, i, g, w)
			}
		}
		if d := secretData(first, "Secret"); d != "" && d == secretData(second, "Secret") {
			t.Errorf("%s: two TrainJobs share a key pair", runtime)
		}
		if strings.Contains(fmt.Sprint(second.Objects), "first") {
			t.Errorf("%s: the render of second-two names first-one", runtime)
		}
	}

	dir := writePolicy(t, map[string]string{"p.cue": `package schemas

import "strings"

render: (#APIVersion): TrainJob: {
	input: _
	objects: short: {
		apiVersion: "v1"
		kind:       "ConfigMap"
		metadata: name: "\(input.metadata.name)-short"
		data: {for k, metaValue in input.metadata if k == "name" {long: "\(len(metaValue) > 10)"}}
	}
}

_x: strings.ToUpper("")
`})
	_, err := New(Options{PolicyDirs: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), `carried: "trainer.kubeflow.org/v1alpha1": TrainJob: name: the render of TrainJob, a probe of the runtime`) {
		t.Errorf("a render rule that looks at the name's length: %v", err)
	}
}

// TestPatchLabelValuesCarried: TrainJobs alike but for the values of the
// JobSet labels and annotations their runtime patch gives (a run's id)
// share one review and one render, and each JobSet gets its own values.
func TestPatchLabelValuesCarried(t *testing.T) {
	t.Parallel()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	job := func(name, run string) Document {
		return readOne(t, "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: "+name+", namespace: team-a}\n"+
			"spec:\n  runtimeRef: {name: torch-distributed}\n  runtimePatches:\n  - manager: example.com/ci\n"+
			"    trainingRuntimeSpec: {template: {metadata: {labels: {example.com/run: "+run+"}, annotations: {example.com/note: note-"+run+"}}}}\n")
	}
	var reviews, renders []int64
	for _, tc := range []struct{ name, run string }{{"job-a", "r41x7"}, {"job-b", "r98q2"}} {
		s := e.NewSession(SessionOptions{})
		r := s.AdmitRequest(context.Background(), job(tc.name, tc.run), Request{})
		if r.Rejected() {
			t.Fatalf("%s: %v", tc.name, findingStrings(r.Errors))
		}
		reviews = append(reviews, e.reviewsMade.Load())
		out := s.Render(r, RenderOptions{})
		renders = append(renders, e.rendersMade.Load())
		var md map[string]any
		for _, o := range out.Objects {
			if o["kind"] == "JobSet" {
				md = o["metadata"].(map[string]any)
			}
		}
		if md == nil || md["labels"].(map[string]any)["example.com/run"] != tc.run || md["annotations"].(map[string]any)["example.com/note"] != "note-"+tc.run {
			t.Errorf("%s: the JobSet's metadata %v, want example.com/run: %s and example.com/note: note-%s", tc.name, md, tc.run, tc.run)
		}
	}
	if reviews[1] != reviews[0] || renders[1] != renders[0] {
		t.Errorf("reviews made %v, renders made %v: the second TrainJob was evaluated again", reviews, renders)
	}
}

// TestPolicyLooksSwitchCarryingOff: a policy that looks at a carried value
// (a pattern, a call, a comparison), directly or through a let, a
// comprehension or a field of the render defined as the read, gets its
// values: the entry is switched off at load, where no probe would have
// shown the look. A value only copied, or tested for existence, stays
// carried, and so does a value another path ends alike but for its last
// two labels.
func TestPolicyLooksSwitchCarryingOff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, policy string
		off          []string
	}{
		{"a pattern on the name", `admission: (#APIVersion): TrainJob: {
	object: _
	policy: r: [if object.metadata.name =~ "^tmp-" {path: "metadata.name", detail: "no"}]
}`, []string{"name"}},
		{"env values through a default let and a comprehension", `admission: (#APIVersion): TrainJob: {
	object: _
	let env = *object.spec.trainer.env | []
	policy: r: [for e in env if e.value != _|_ if strings.Contains(e.value, "AKIA") {path: "spec.trainer.env", detail: "no"}]
}`, []string{"envValues"}},
		{"the render's #name in a call", `renderParts: (#APIVersion): TrainJob: torch: {
	#name: _
	if strings.HasPrefix(#name, "debug-") {#podAnnotations: "example.com/debug": "true"}
}`, []string{"name"}},
		{"the runtime's name", `admission: (#APIVersion): TrainJob: {
	object: _
	policy: r: [if object.spec.runtimeRef.name =~ "^team-" {path: "spec.runtimeRef.name", detail: "no"}]
}`, []string{"runtimeName"}},
		{"copied and tested for existence", `admission: (#APIVersion): TrainJob: {
	object: _
	policy: r: [if object.metadata.name != _|_ if object.spec.trainer.numNodes != _|_ if object.spec.trainer.numNodes > 8 {path: "spec.trainer.numNodes", detail: "\(object.metadata.name): at most 8 nodes"}]
}`, nil},
		{"texts made of reads, measured and matched", `admission: (#APIVersion): TrainJob: {
	object: _
	let wl = "\(object.metadata.namespace)-\(object.metadata.name)"
	let env = *object.spec.trainer.env | []
	policy: workload: [if len(wl) > 63 {path: "metadata.name", detail: "too long"}]
	policy: keys: [for e in env if e.value != _|_ let line = "\(e.name)=\(e.value)" if line =~ "=AKIA" {path: "spec.trainer.env", detail: "no"}]
}`, []string{"name", "namespace", "envValues"}},
		{"an env item's name", `crdCheckParts: (#APIVersion): TrainJob: badEnv: {
	path: ["spec", "trainer", "env", "*"]
	self: _
	at: [int]
	crd: {if self.name == "BAD" {badEnv: [{path: "spec.trainer.env[\(at[0])]", detail: "BAD holds \(self.value)"}]}}
}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writePolicy(t, map[string]string{"p.cue": "package schemas\n\nimport \"strings\"\n\n" + c.policy + "\n\n_x: strings.ToUpper(\"\")\n"})
			e, err := New(Options{PolicyDirs: []string{dir}})
			if err != nil {
				t.Fatal(err)
			}
			carried := map[string]bool{}
			for _, p := range e.compiled().carried["trainer.kubeflow.org/v1alpha1"]["TrainJob"] {
				carried[p.name] = true
			}
			for _, name := range []string{"name", "runtimeName", "namespace", "uid", "envValues"} {
				if want := !slices.Contains(c.off, name); carried[name] != want {
					t.Errorf("entry %s carried: %v, want %v", name, carried[name], want)
				}
			}
		})
	}
}

// TestCarriedCheckMakesWhatTokensChange: the load's check of the carried
// values reviews and renders a document again with its values as tokens
// only when some value of it is one. A document none of whose values is a
// token (its name is its runtime's, which the review sees there too) would
// be reviewed and rendered as it was, and is not again; one whose name is
// a token is, both ways. Neither finds a problem.
func TestCarriedCheckMakesWhatTokensChange(t *testing.T) {
	t.Parallel()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.cur.Load()
	for _, tc := range []struct {
		what             string
		name             string
		reviews, renders int64
	}{
		{"a TrainJob named as its runtime", "torch-distributed", 1, 1},
		{"a TrainJob of a name of its own", "job-one", 2, 2},
	} {
		s := e.NewSession(SessionOptions{})
		doc := readOne(t, wrapper.TrainJob(tc.name).RuntimeRef("torch-distributed").YAML())
		reviews, renders := e.reviewsMade.Load(), e.rendersMade.Load()
		if p := e.checkCarried(c, s, doc, tc.what, true, true); p != nil {
			t.Errorf("%s: %s", tc.what, p.Message)
		}
		if got := e.reviewsMade.Load() - reviews; got != tc.reviews {
			t.Errorf("%s: reviewed %d times, want %d", tc.what, got, tc.reviews)
		}
		if got := e.rendersMade.Load() - renders; got != tc.renders {
			t.Errorf("%s: rendered %d times, want %d", tc.what, got, tc.renders)
		}
	}
}
