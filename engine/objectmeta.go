package engine

import (
	"encoding/json"
	"fmt"
	"sort"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// objectMetaFindings are the API server's checks of an object's metadata,
// which every custom resource gets before its schema's (apiextensions-
// apiserver's customResourceStrategy.Validate, ValidateObjectMetaAccessor
// with NameIsDNSSubdomain): the name a lowercase RFC 1123 subdomain, label
// keys qualified names and values label values, annotation keys qualified
// names within their total size. They are apimachinery's own checks, in
// its words, on the real keys (the CUE gets label and annotation keys as
// tokens, aliases.go). The namespace is the request's, set before.
func objectMetaFindings(obj map[string]any) []Finding {
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		return nil
	}
	path := field.NewPath("metadata")
	var errs field.ErrorList
	if name, ok := md["name"].(string); ok && name != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
			errs = append(errs, field.Invalid(path.Child("name"), name, msg))
		}
	}
	// Each check goes over a map: its errors in a stable order.
	sorted := func(l field.ErrorList) field.ErrorList {
		sort.SliceStable(l, func(i, j int) bool { return fmt.Sprint(l[i].BadValue) < fmt.Sprint(l[j].BadValue) })
		return l
	}
	if labels, ok := stringMap(md["labels"]); ok {
		errs = append(errs, sorted(metav1validation.ValidateLabels(labels, path.Child("labels")))...)
	}
	if annotations, ok := stringMap(md["annotations"]); ok {
		errs = append(errs, sorted(apivalidation.ValidateAnnotations(annotations, path.Child("annotations")))...)
	}
	out := make([]Finding, 0, len(errs))
	for _, e := range errs {
		f := Finding{Phase: PhaseCRD, Rule: "objectMeta", Path: e.Field, HasPath: true, Type: e.Type.String(), Detail: e.Detail}
		if _, omit := e.BadValue.(field.OmitValueType); !omit && e.Type != field.ErrorTypeTooLong {
			f.Value, _ = json.Marshal(e.BadValue)
		}
		out = append(out, f)
	}
	return out
}

// stringMap is m when it is a map of strings (a map of other values is the
// schema's to report); ok false otherwise.
func stringMap(m any) (map[string]string, bool) {
	in, ok := m.(map[string]any)
	if !ok || len(in) == 0 {
		return nil, false
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}
