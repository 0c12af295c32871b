package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/cuetrainer/cuetrainer/controller/metrics"
	"github.com/cuetrainer/cuetrainer/engine"
)

// Admission answers admission requests for the kinds the engine admits, with
// the engine `cuetrainer vet` runs: a validating handler denies what vet
// rejects, with the same messages, and returns vet's warnings; a mutating
// handler applies the CUE's mutations as a JSON patch.
type Admission struct {
	// Engine returns the engine to use now (policies may be reloaded);
	// nil while none is in force.
	Engine func() *engine.Engine
	// Closed says why no engine is in force, nil while one is: every
	// request is refused, with the reason (nil: never closed).
	Closed func() error
	// Cluster is where the lookups read the objects a review needs.
	Cluster engine.Cluster
	// Release is the Kubeflow Trainer release the cluster runs (vet
	// --release), for the deprecation rules; empty for none.
	Release string
	// Mutating makes this the mutating handler.
	Mutating bool
	// Now is the request time; time.Now when nil.
	Now func() time.Time
	// Metrics records the answers' and the evaluations' durations; none
	// when nil.
	Metrics *metrics.Metrics
}

var _ admission.Handler = (*Admission)(nil)

// Handle admits one request.
func (a *Admission) Handle(ctx context.Context, req admission.Request) admission.Response {
	start := time.Now()
	resp := a.handle(ctx, req)
	a.Metrics.ObserveAdmission(req.Kind.Kind, string(req.Operation), handlerName(a.Mutating), outcome(resp), time.Since(start))
	return resp
}

func (a *Admission) handle(ctx context.Context, req admission.Request) admission.Response {
	// A body controller-runtime decodes is not yet a request: `{}` or
	// whitespace decode to an empty one.
	if req.UID == "" {
		return admission.Errored(http.StatusBadRequest, errors.New("not an admission request: no uid"))
	}
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
	case admissionv1.Delete, admissionv1.Connect:
		return admission.Allowed("")
	default:
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("not an admission request: operation %q", req.Operation))
	}
	obj, err := decodeObject(req.Object.Raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the object: %w", err))
	}
	var old map[string]any
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		if old, err = decodeObject(req.OldObject.Raw); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the old object: %w", err))
		}
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	e := a.Engine()
	if e == nil {
		// No policy in force (it did not load at start): closed, as a
		// webhook that cannot decide is, with the reason.
		why := errors.New("cuetrainer has no policy in force")
		if a.Closed != nil {
			if err := a.Closed(); err != nil {
				why = err
			}
		}
		return admission.Denied(why.Error())
	}
	s := e.NewSession(engine.SessionOptions{Release: a.Release, NoBuiltinRuntimes: true, Cluster: a.Cluster})
	doc := engine.Document{File: "request", Object: obj}
	ereq := engine.Request{Operation: string(req.Operation), OldObject: old, Now: now()}
	evalStart := time.Now()
	if a.Mutating {
		// Only the mutations are evaluated: validation is the validating
		// handler's, and a mutation that cannot be worked out leaves the
		// object as it is. That is the policy's defect, not the user's:
		// the object is let through, the admin told in the log and the
		// user in a warning, never in silence.
		mutated, err := s.Mutate(doc, ereq)
		a.Metrics.ObserveEvaluation("mutate", time.Since(evalStart))
		if mErr := (*engine.MutationError)(nil); errors.As(err, &mErr) {
			log.FromContext(ctx).Error(err, "a mutation of the policy was not made: the object is admitted as it is",
				"rule", mErr.Rule, "source", mErr.Source, "kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name)
			return admission.Allowed("").WithWarnings(fmt.Sprintf("cuetrainer: the policy's mutation %s (%s) was not made: %s", mErr.Rule, mErr.Source, mErr.Detail))
		}
		if d := (*engine.Defect)(nil); errors.As(err, &d) {
			// cuetrainer's or CUE's defect, not the policy's nor the
			// object's: as a mutation that cannot be made, let through,
			// said in the log and in a warning.
			log.FromContext(ctx).Error(err, "the mutations could not be evaluated (a defect): the object is admitted as it is",
				"kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name)
			return admission.Allowed("").WithWarnings("cuetrainer: the policy's mutations were not made: " + d.Error())
		}
		if err != nil || mutated == nil {
			return admission.Allowed("")
		}
		raw, err := json.Marshal(mutated)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		return admission.PatchResponseFromRaw(req.Object.Raw, raw)
	}
	// The answer is allowed or denied, with warnings: the object with its
	// defaults is not needed. The API server calls a validating webhook once
	// the object passed its CRD's checks, so the review leaves out the
	// CUE's copy of them.
	ereq.VerdictOnly = true
	ereq.SchemaChecked = true
	r := s.AdmitRequest(ctx, doc, ereq)
	a.Metrics.ObserveEvaluation("admit", time.Since(evalStart))

	// A lookup that failed (the API server unreachable, say), a rule that
	// did not evaluate, or an evaluation that panicked (a defect of
	// cuetrainer's or CUE's, logged) is the server's fault, not the
	// object's: 500, which a client may retry, rather than a 403 denial.
	for _, f := range r.Errors {
		if f.Phase == engine.PhaseDefect {
			log.FromContext(ctx).Error(errors.New(f.Detail), "the object could not be evaluated: a defect of cuetrainer's or CUE's, to report",
				"kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name)
		}
		if f.Phase == engine.PhaseInput && f.Type == "Internal error" || f.Phase == engine.PhaseDefect {
			return admission.Errored(http.StatusInternalServerError, errors.New(f.String()))
		}
	}
	var warnings []string
	for _, w := range r.Warnings {
		warnings = append(warnings, w.Message())
	}
	if !r.Rejected() {
		return admission.Allowed("").WithWarnings(warnings...)
	}
	return deny(req, r.Errors).WithWarnings(warnings...)
}

// deny words a rejection as the cluster would: errors of the CRD's own rules
// as the API server's 422 Invalid (with a cause per field), the webhook's and
// the policies' as Kubeflow's webhooks do (the field errors aggregated, 403).
func deny(req admission.Request, fs []engine.Finding) admission.Response {
	var crd field.ErrorList
	var msgs []error
	for _, f := range fs {
		if f.Phase == engine.PhaseCRD || f.Phase == engine.PhaseSchema {
			if e := f.FieldError(); e != nil {
				crd = append(crd, e)
				continue
			}
		}
		msgs = append(msgs, errors.New(f.String()))
	}
	if len(crd) > 0 {
		st := apierrors.NewInvalid(schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}, req.Name, crd).Status()
		return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &st}}
	}
	return admission.Denied(utilerrors.NewAggregate(msgs).Error())
}

// decodeObject reads a request's object with the engine's reader, which
// bounds depth and size as it does for vet's files.
func decodeObject(raw []byte) (map[string]any, error) {
	doc := engine.ReadObject("request", raw)
	if doc.Err != nil {
		return nil, doc.Err
	}
	return doc.Object, nil
}

func handlerName(mutating bool) string {
	if mutating {
		return "mutating"
	}
	return "validating"
}

func outcome(r admission.Response) string {
	switch {
	case r.Result != nil && r.Result.Code >= 500:
		return "error"
	case !r.Allowed:
		return "denied"
	case len(r.Patches) > 0:
		return "patched"
	}
	return "allowed"
}
