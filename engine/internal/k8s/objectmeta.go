package k8s

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
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
func ObjectMetaFindings(obj map[string]any) []Finding {
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		return nil
	}
	errs := metaErrors(md, field.NewPath("metadata"), true)
	out := make([]Finding, 0, len(errs))
	for _, e := range errs {
		f := Finding{Phase: contract.PhaseCRD, Rule: "objectMeta", Path: e.Field, HasPath: true, Type: e.Type.String(), Detail: e.Detail}
		if _, omit := e.BadValue.(field.OmitValueType); !omit && e.Type != field.ErrorTypeTooLong {
			f.Value, _ = json.Marshal(e.BadValue)
		}
		out = append(out, f)
	}
	return out
}

// metaErrors are apimachinery's checks of the metadata md at path: its
// labels and annotations, and its name when name says so.
func metaErrors(md map[string]any, path *field.Path, name bool) field.ErrorList {
	var errs field.ErrorList
	if n, ok := md["name"].(string); ok && n != "" && name {
		for _, msg := range apivalidation.NameIsDNSSubdomain(n, false) {
			errs = append(errs, field.Invalid(path.Child("name"), n, msg))
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
	return errs
}

// allMetaErrors are metaErrors' label and annotation checks of every
// metadata in v, the object's own and its templates' (a JobSet's jobs',
// their pods'), at their paths from path, each with its opaque keys put
// back by a (an evaluation's objects hold tokens for them).
func AllMetaErrors(v any, path *field.Path, a *KeyAliases) field.ErrorList {
	var errs field.ErrorList
	switch x := v.(type) {
	case map[string]any:
		for _, k := range value.SortedKeys(x) {
			if md, ok := x[k].(map[string]any); ok && k == "metadata" {
				md, _ = a.Restore(md).(map[string]any)
				errs = append(errs, metaErrors(md, path.Child(k), false)...)
				continue
			}
			errs = append(errs, AllMetaErrors(x[k], path.Child(k), a)...)
		}
	case []any:
		for i, item := range x {
			errs = append(errs, AllMetaErrors(item, path.Index(i), a)...)
		}
	}
	return errs
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

// MetadataDecodeError is the API server's refusal of a custom resource
// whose metadata does not decode into an ObjectMeta: an annotation's or a
// label's value that is no string (`debug: yes` and `replicas: 3` in YAML
// are a bool and a number), a name that is a bool. The API server decodes
// the metadata so before it validates anything (apiextensions-apiserver's
// schema coercion, objectmeta.GetObjectMetaWithOptions, which does not
// drop malformed fields of a request) and fails the request with its
// decoder's words (apiserver's transformDecodeError): one error, no field
// path. nil when the metadata decodes.
func MetadataDecodeError(apiVersion, kind string, obj map[string]any) *Finding {
	md, ok := obj["metadata"]
	if !ok {
		return nil
	}
	data, err := utiljson.Marshal(md)
	if err != nil {
		return nil
	}
	if err := utiljson.Unmarshal(data, &metav1.ObjectMeta{}); err != nil {
		version := apiVersion[strings.LastIndex(apiVersion, "/")+1:]
		return &Finding{Phase: contract.PhaseSchema, Detail: fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", kind, version, kind, err)}
	}
	return nil
}
