package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
)

// partPolicy adds a CRD check part to the TrainJob: an env entry named
// BAD is refused, its value in the message (a carried value, which the
// part gets as a token).
const partPolicy = `package schemas

crdCheckParts: (#APIVersion): TrainJob: badEnv: {
	path: ["spec", "trainer", "env", "*"]
	self: _
	at: [int]
	crd: {
		if self.name == "BAD" {
			badEnv: [{path: "spec.trainer.env[\(at[0])]", detail: "BAD holds \(self.value)"}]
		}
	}
}
`

// partJob is a TrainJob of the shipped torch runtime whose env holds
// BAD=value; with a uid, the object has one carried value more before its
// env's, so its env value's token has another number.
func partJob(name, value, uid string) Document {
	uidLine := ""
	if uid != "" {
		uidLine = "  uid: " + uid + "\n"
	}
	return k8s.ReadYAML("job.yaml", []byte(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: `+name+`
  namespace: team-a
`+uidLine+`spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    env: [{name: BAD, value: `+value+`}]
`))[0]
}

// TestCRDCheckPartsMemo: a CRD check part is evaluated once for objects
// alike in it, and each object gets its own carried values back in the
// part's errors, also when its tokens are numbered otherwise (a uid
// before them). An engine without memos evaluates each and agrees.
func TestCRDCheckPartsMemo(t *testing.T) {
	t.Parallel()
	memo, fresh := memoAndFresh(t, writePolicy(t, map[string]string{"part.cue": partPolicy}))
	jobs := []Document{
		partJob("job-a", "first-secret", ""),
		partJob("job-b", "second-secret", ""),
		partJob("job-c", "third-secret", "00000000-0000-4000-8000-000000000001"),
	}
	want := []string{"first-secret", "second-secret", "third-secret"}
	var made []int64
	for i, d := range jobs {
		got := memo.NewSession(SessionOptions{}).AdmitRequest(context.Background(), d, Request{})
		made = append(made, memo.crdPartsMade.Load())
		wantResult := fresh.NewSession(SessionOptions{}).AdmitRequest(context.Background(), d, Request{})
		if g, w := strings.Join(findingStrings(got.Errors), "\n"), strings.Join(findingStrings(wantResult.Errors), "\n"); g != w {
			t.Errorf("%s: errors with the memo\n%s\nwithout\n%s", d.Name(), g, w)
		}
		if !contains(findingStrings(got.Errors), "spec.trainer.env[0]: Invalid value: BAD holds "+want[i]) {
			t.Errorf("%s: errors %q, want BAD holds %s", d.Name(), findingStrings(got.Errors), want[i])
		}
	}
	// The first evaluates its parts; the others are alike in every part
	// (their names and uids are carried), so none is evaluated again.
	if made[0] == 0 || made[1] != made[0] || made[2] != made[0] {
		t.Errorf("parts evaluated after each TrainJob: %v, want the first's count throughout", made)
	}
}

// TestCRDCheckPartReadsSelfAlone: a part is given its value and indexes
// alone, so a rule of it that reads the object does not evaluate: a rule
// error at its line in the admin's file, not a check silently passed.
func TestCRDCheckPartReadsSelfAlone(t *testing.T) {
	t.Parallel()
	dir := writePolicy(t, map[string]string{"part.cue": `package schemas

crdCheckParts: (#APIVersion): TrainJob: nameOfJob: {
	path: ["spec", "trainer"]
	self: _
	crd: tooShort: [if len(object.metadata.name) < 2 {path: "metadata.name", detail: "short"}]
}
`})
	_, err := New(Options{PolicyDirs: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), "part.cue:6:") {
		t.Fatalf("load: %v, want an error at part.cue:6", err)
	}
}

// TestCRDCheckPartPaths: a part whose path names a field the kind's CRD
// does not have, or puts "*" where there is no list, fails the load at
// its path: its checks would run on no object. The shipped parts' paths
// all lead somewhere.
func TestCRDCheckPartPaths(t *testing.T) {
	t.Parallel()
	e := testEngine(t)
	if problems := e.checkPartPaths(e.compiled()); len(problems) > 0 {
		t.Errorf("the shipped parts: %v", problems)
	}
	for _, tc := range []struct{ path, want string }{
		{`["spec", "trainr"]`, `part.cue:4:2: crdCheckParts: "trainer.kubeflow.org/v1alpha1": TrainJob: typo: path ["spec" "trainr"]: spec has no field trainr (did you mean trainer?), so the part's checks would run on no object`},
		{`["spec", "trainer", "*"]`, `path ["spec" "trainer" "*"]: spec.trainer is not a list`},
		{`["spec", "trainer", "env", "*", "name"]`, ""},
		{`["metadata", "labels"]`, ""},
	} {
		loadPolicyWant(t, tc.path, map[string]string{"part.cue": "package schemas\n\ncrdCheckParts: (#APIVersion): TrainJob: typo: {\n\tpath: " + tc.path + "\n\tself: _\n\tcrd: {}\n}\n"}, tc.want)
	}
}

// TestPolicyCRDPartsSchemaChecked: a policy's CRD check part runs for a
// schema-checked request (a webhook's) too, as its crdChecks do
// (TestPolicyCRDChecks): the API server's CRD of the kind does not hold it.
func TestPolicyCRDPartsSchemaChecked(t *testing.T) {
	t.Parallel()
	e := loadPolicyWant(t, "part", map[string]string{"part.cue": partPolicy}, "")
	if e == nil {
		return
	}
	r := e.NewSession(SessionOptions{}).AdmitRequest(context.Background(), serverDefaulted(t, partJob("a", "x", "")), Request{SchemaChecked: true})
	if got := strings.Join(findingStrings(r.Errors), "\n"); !strings.Contains(got, "spec.trainer.env[0]: Invalid value: BAD holds x") {
		t.Errorf("schema-checked: %q, want the part's finding", got)
	}
}
