package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/engine"
)

var (
	admissionEngineOnce sync.Once
	admissionEngine     *engine.Engine
	admissionEngineErr  error
)

func testAdmissionEngine(t testing.TB) *engine.Engine {
	t.Helper()
	admissionEngineOnce.Do(func() { admissionEngine, admissionEngineErr = engine.New(engine.Options{}) })
	if admissionEngineErr != nil {
		t.Fatal(admissionEngineErr)
	}
	return admissionEngine
}

// runtimesCluster is a cluster holding the shipped runtimes, as one that
// applied deploy/runtimes does.
type runtimesCluster struct{ e *engine.Engine }

func (c runtimesCluster) Get(_ context.Context, group, kind, _, name string) (map[string]any, error) {
	for _, d := range c.e.Builtin() {
		if group == "trainer.kubeflow.org" && d.Kind() == kind && d.Name() == name {
			var copied map[string]any
			data, err := json.Marshal(d.Object)
			if err != nil {
				return nil, err
			}
			return copied, json.Unmarshal(data, &copied)
		}
	}
	return nil, nil
}

func (runtimesCluster) List(context.Context, string, string) ([]map[string]any, error) {
	return nil, nil
}

// serve posts body to an admission handler as the API server does, with
// controller-runtime's panic recovery off, and decodes the answer.
func serve(t testing.TB, body []byte, mutating bool) admissionv1.AdmissionReview {
	t.Helper()
	e := testAdmissionEngine(t)
	recoverPanic := false
	wh := &webhook.Admission{
		Handler: &Admission{
			Engine: func() *engine.Engine { return e }, Cluster: runtimesCluster{e}, Mutating: mutating,
			Now: func() time.Time { return time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC) },
		},
		RecoverPanic: &recoverPanic,
	}
	req := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if len(body) == 0 {
		req.Body = http.NoBody // as net/http's server gives it
	}
	rec := httptest.NewRecorder()
	wh.ServeHTTP(rec, req)
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
		t.Fatalf("answer is not an AdmissionReview (%v): %s", err, rec.Body.String())
	}
	return review
}

// review is an AdmissionReview request for a TrainJob.
func review(op, object, old string) []byte {
	r := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",` +
		`"kind":{"group":"trainer.kubeflow.org","version":"v1alpha1","kind":"TrainJob"},` +
		`"resource":{"group":"trainer.kubeflow.org","version":"v1alpha1","resource":"trainjobs"},` +
		`"namespace":"team","name":"j","operation":"` + op + `","userInfo":{}`
	if object != "" {
		r += `,"object":` + object
	}
	if old != "" {
		r += `,"oldObject":` + old
	}
	return []byte(r + `}}`)
}

const (
	goodJob = `{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"j","namespace":"team"},"spec":{"runtimeRef":{"name":"torch-distributed"}}}`
	// badJob's numNodes has the wrong type: the API server's words (422).
	badJob = `{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"j","namespace":"team"},"spec":{"runtimeRef":{"name":"torch-distributed"},"trainer":{"numNodes":"two"}}}`
	// reservedEnvJob sets an env the torch plugin injects: Kubeflow's
	// webhook's words (403).
	reservedEnvJob = `{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"j","namespace":"team"},"spec":{"runtimeRef":{"name":"torch-distributed"},"trainer":{"env":[{"name":"PET_NNODES","value":"3"}]}}}`
	// belowMinimumJob fails only the CRD's own checks (numNodes' minimum),
	// which the API server makes before it calls a validating webhook.
	belowMinimumJob = `{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"j","namespace":"team"},"spec":{"runtimeRef":{"name":"torch-distributed"},"trainer":{"numNodes":-1}}}`
	// patchedJob has a runtime patch without a time, which the mutating
	// handler stamps, and a string YAML reads otherwise than JSON: a raw
	// NEL, which YAML folds into a space (the patch then rewrote it).
	patchedJob = `{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"j","namespace":"team",` +
		`"annotations":{"note":"a` + "\u0085" + `b"}},"spec":{"runtimeRef":{"name":"torch-distributed"},` +
		`"runtimePatches":[{"manager":"acme.io/x"}]}}`
	// emojiJob has a surrogate pair escape, which YAML refuses.
	emojiJob = `{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"j","namespace":"team",` +
		`"annotations":{"note":"\ud83d\ude00"}},"spec":{"runtimeRef":{"name":"torch-distributed"}}}`
)

// TestAdmissionAnswers: the handlers answer every request with an
// AdmissionReview: a malformed body, request or object with 400, a rejected object
// with a denial, a good one allowed; the mutating handler patches only what
// the CUE mutates.
func TestAdmissionAnswers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     []byte
		mutating bool
		allowed  bool
		code     int32
		message  string
	}{
		{"not JSON", []byte("{"), false, false, 400, "unexpected end of JSON input"},
		{"empty body", []byte(""), false, false, 400, "request body is empty"},
		{"not an AdmissionReview", []byte(`[1,2]`), false, false, 400, ""},
		{"no request", []byte(`{}`), false, false, 400, "not an admission request: no uid"},
		{"whitespace", []byte(" \n"), true, false, 400, "not an admission request: no uid"},
		{"unknown operation", bytes.Replace(review("CREATE", goodJob, ""), []byte("CREATE"), []byte("PATCH"), 1), false, false, 400, `operation "PATCH"`},
		{"object not an object", review("CREATE", `[1]`, ""), false, false, 400, "not a Kubernetes object: the document is a list"},
		{"object nested too deep", review("CREATE", strings.Repeat(`{"a":`, 150)+"1"+strings.Repeat("}", 150), ""), false, false, 400, "nested deeper than 100 levels"},
		{"old object malformed", review("UPDATE", goodJob, `"x"`), false, false, 400, "decoding the old object"},
		{"rejected", review("CREATE", badJob, ""), false, false, 422, "spec.trainer.numNodes"},
		{"rejected by the webhook's rules", review("CREATE", reservedEnvJob, ""), false, false, 403, "must not have reserved envs"},
		{"the CRD's checks are the API server's", review("CREATE", belowMinimumJob, ""), false, true, 200, ""},
		{"admitted", review("CREATE", goodJob, ""), false, true, 200, ""},
		{"delete is allowed", review("DELETE", "", ""), false, true, 200, ""},
		{"mutating, nothing to mutate", review("CREATE", goodJob, ""), true, true, 200, ""},
		{"mutating, a runtime patch to stamp", review("CREATE", patchedJob, ""), true, true, 200, ""},
		{"mutating, not JSON", []byte("nope"), true, false, 400, ""},
		{"a surrogate pair escape", review("CREATE", emojiJob, ""), false, true, 200, ""},
		{"mutating, a surrogate pair escape", review("CREATE", emojiJob, ""), true, true, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := serve(t, tc.body, tc.mutating).Response
			if r.Allowed != tc.allowed {
				t.Errorf("allowed %v, want %v: %+v", r.Allowed, tc.allowed, r.Result)
			}
			code := int32(200)
			if r.Result != nil && r.Result.Code != 0 {
				code = r.Result.Code
			}
			if code != tc.code {
				t.Errorf("code %d, want %d: %+v", code, tc.code, r.Result)
			}
			if tc.message != "" && (r.Result == nil || !strings.Contains(r.Result.Message, tc.message)) {
				t.Errorf("message %+v, want it to contain %q", r.Result, tc.message)
			}
			checkPatch(t, r)
		})
	}
	r := serve(t, review("CREATE", patchedJob, ""), true).Response
	if !strings.Contains(string(r.Patch), `"path":"/spec/runtimePatches/0/time","value":"2026-11-23T10:00:00Z"`) {
		t.Errorf("the runtime patch is not stamped: %s", r.Patch)
	}
}

// unreachableCluster is a cluster whose API server cannot be reached.
type unreachableCluster struct{}

func (unreachableCluster) Get(context.Context, string, string, string, string) (map[string]any, error) {
	return nil, errors.New(`Get "https://10.0.0.1/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch-distributed": dial tcp 10.0.0.1:443: connect: connection refused`)
}

func (unreachableCluster) List(context.Context, string, string) ([]map[string]any, error) {
	return nil, nil
}

// TestAdmissionLookupFails: a runtime lookup that fails is the server's
// error (500, which clients may retry), not a denial of the object (403);
// the mutating handler leaves the object alone.
func TestAdmissionLookupFails(t *testing.T) {
	e := testAdmissionEngine(t)
	for _, mutating := range []bool{false, true} {
		a := &Admission{Engine: func() *engine.Engine { return e }, Cluster: unreachableCluster{}, Mutating: mutating}
		var req admission.Request
		if err := json.Unmarshal(review("CREATE", goodJob, ""), &admissionv1.AdmissionReview{Request: &req.AdmissionRequest}); err != nil {
			t.Fatal(err)
		}
		r := a.Handle(context.Background(), req)
		if mutating {
			if !r.Allowed || len(r.Patches) > 0 {
				t.Errorf("mutating: allowed %v, patches %v; want allowed, untouched", r.Allowed, r.Patches)
			}
			continue
		}
		if r.Allowed || r.Result == nil || r.Result.Code != 500 || !strings.Contains(r.Result.Message, "connection refused") {
			t.Errorf("validating: allowed %v, result %+v; want 500 naming the lookup's error", r.Allowed, r.Result)
		}
	}
}

// checkPatch fails when a patch touches anything but runtime patches' times,
// the only mutation the shipped CUE makes: reading the object otherwise
// than the API server wrote it would show as more operations.
func checkPatch(t testing.TB, r *admissionv1.AdmissionResponse) {
	t.Helper()
	if len(r.Patch) == 0 {
		return
	}
	var ops []struct{ Op, Path string }
	if err := json.Unmarshal(r.Patch, &ops); err != nil {
		t.Fatalf("patch %s: %v", r.Patch, err)
	}
	for _, op := range ops {
		if !strings.HasPrefix(op.Path, "/spec/runtimePatches/") || !strings.HasSuffix(op.Path, "/time") {
			t.Errorf("patch operation %s %s: the CUE mutates runtime patches' times only (%s)", op.Op, op.Path, r.Patch)
		}
	}
}

// FuzzAdmissionReview posts arbitrary bodies to both handlers: no panic
// (recovery is off), always an AdmissionReview, a body that is neither JSON
// nor YAML answered with 400, nothing allowed without a request uid, no
// denial outside 4xx, and no patch beyond what the CUE mutates.
func FuzzAdmissionReview(f *testing.F) {
	for _, body := range [][]byte{
		review("CREATE", goodJob, ""), review("CREATE", badJob, ""), review("CREATE", patchedJob, ""),
		review("UPDATE", patchedJob, goodJob), review("CREATE", emojiJob, ""), review("CREATE", `{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"ClusterTrainingRuntime","metadata":{"name":"r"},"spec":{}}`, ""),
		review("CREATE", `{"kind":"TrainJob"}`, ""), review("DELETE", "", ""), []byte("{"), []byte(`{"request":{"object":1}}`),
	} {
		f.Add(body, false)
		f.Add(body, true)
	}
	f.Fuzz(func(t *testing.T, body []byte, mutating bool) {
		r := serve(t, body, mutating).Response
		// controller-runtime reads YAML bodies too.
		var sent admissionv1.AdmissionReview
		var decodeErr error
		if json.Valid(body) {
			decodeErr = json.Unmarshal(body, &sent)
		} else if decodeErr = yaml.Unmarshal(body, &sent); decodeErr != nil {
			if _, err := yaml.YAMLToJSON(body); err != nil && (r.Allowed || r.Result == nil || r.Result.Code != 400) {
				t.Fatalf("a body that is neither JSON nor YAML: %+v", r)
			}
		}
		if r.Allowed && (decodeErr != nil || sent.Request == nil || sent.Request.UID == "") {
			t.Fatalf("allowed a body without a request uid (%v): %q", decodeErr, body)
		}
		if !r.Allowed && (r.Result == nil || r.Result.Code < 400 || r.Result.Code > 499) {
			t.Fatalf("a denial outside 4xx: %+v", r.Result)
		}
		checkPatch(t, r)
	})
}

// TestAdmissionMutationDefect: a mutation of the policy that cannot be
// made (its edit's object computed from the object, wrong) is the
// policy's defect: the object is admitted unchanged, and the user is told
// in a warning naming the mutation and its place in the admin's file.
func TestAdmissionMutationDefect(t *testing.T) {
	dir := t.TempDir()
	policy := `package schemas

mutators: (#APIVersion): TrainJob: {
	input: _
	reads: stamp: ["metadata", "annotations"]
	mutations: stamp: [if input.metadata.annotations["example.com/stamp"] != _|_ {
		object: input.metadata.annotations["example.com/stamp"]
		path: ["metadata", "labels"]
		op:    "merge"
		value: stamped: "yes"
	}]
}
`
	if err := os.WriteFile(filepath.Join(dir, "stamp.cue"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	a := &Admission{Engine: func() *engine.Engine { return e }, Cluster: runtimesCluster{e}, Mutating: true}
	job := `{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"j","namespace":"team",` +
		`"annotations":{"example.com/stamp":"objekt"}},"spec":{"runtimeRef":{"name":"torch-distributed"}}}`
	var req admission.Request
	if err := json.Unmarshal(review("CREATE", job, ""), &admissionv1.AdmissionReview{Request: &req.AdmissionRequest}); err != nil {
		t.Fatal(err)
	}
	r := a.Handle(context.Background(), req)
	warnings := strings.Join(r.Warnings, "\n")
	if !r.Allowed || len(r.Patches) > 0 || !strings.Contains(warnings, "the policy's mutation stamp (") ||
		!strings.Contains(warnings, "stamp.cue:6:") || !strings.Contains(warnings, `"objekt"`) {
		t.Errorf("allowed %v, patches %v, warnings %q; want allowed, untouched, a warning naming the mutation at stamp.cue:6", r.Allowed, r.Patches, warnings)
	}
}

// TestAdmissionClosed: with no policy in force (it did not load at start),
// both handlers refuse every request, saying why.
func TestAdmissionClosed(t *testing.T) {
	why := errors.New("cuetrainer's policy did not load, so admission is closed until it does: org.cue:3:1: a mistake")
	var req admission.Request
	if err := json.Unmarshal(review("CREATE", goodJob, ""), &admissionv1.AdmissionReview{Request: &req.AdmissionRequest}); err != nil {
		t.Fatal(err)
	}
	for _, mutating := range []bool{false, true} {
		a := &Admission{Engine: func() *engine.Engine { return nil }, Closed: func() error { return why }, Mutating: mutating}
		r := a.Handle(context.Background(), req)
		if r.Allowed || r.Result == nil || r.Result.Message != why.Error() {
			t.Errorf("mutating %v: allowed %v, result %+v; want denied with the reason", mutating, r.Allowed, r.Result)
		}
	}
}

// panickingCluster is a cluster whose reads panic, as a defect would.
type panickingCluster struct{}

func (panickingCluster) Get(context.Context, string, string, string, string) (map[string]any, error) {
	panic("the cluster's defect")
}

func (panickingCluster) List(context.Context, string, string) ([]map[string]any, error) {
	panic("the cluster's defect")
}

// TestAdmissionDefect: a review that panics (here in the cluster it reads)
// is answered 500 with the panic, as an error of the server's, and the
// handler, and the process, go on.
func TestAdmissionDefect(t *testing.T) {
	e, err := engine.New(engine.Options{}) // its runtime is replaced: not the shared one
	if err != nil {
		t.Fatal(err)
	}
	a := &Admission{Engine: func() *engine.Engine { return e }, Cluster: panickingCluster{}}
	var req admission.Request
	if err := json.Unmarshal(review("CREATE", goodJob, ""), &admissionv1.AdmissionReview{Request: &req.AdmissionRequest}); err != nil {
		t.Fatal(err)
	}
	r := a.Handle(context.Background(), req)
	if r.Allowed || r.Result == nil || r.Result.Code != http.StatusInternalServerError ||
		!strings.Contains(r.Result.Message, "panic: the cluster's defect") {
		t.Errorf("allowed %v, result %+v; want 500 naming the panic", r.Allowed, r.Result)
	}
}
