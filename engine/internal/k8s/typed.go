package k8s

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	sigsjson "sigs.k8s.io/json"
)

// Typed parts.
//
// Kubeflow's controller reads a runtime's JobSet template and a TrainJob's
// runtimePatches into Go types, and builds from what they marshal to:
// encoding/json leaves out a field tagged omitempty that holds its zero
// value (false, 0, "", an empty list or map; a pointer's value stays). So
// `readOnly: false` in a patch leaves the runtime's `readOnly: true` as it
// is, `tolerations: []` leaves the runtime's tolerations, and a template's
// `tty: false` is not in the JobSet. The CUE names such parts and their
// types (`typedParts`); the engine gives a render, its plan and the kind's
// merges the parts with those fields left out (typedView).

// typedTypes are the Go types a typed part may name.
var TypedTypes = map[string]reflect.Type{
	"jobset.x-k8s.io/v1alpha2.JobSetSpec":          reflect.TypeFor[jobsetv1alpha2.JobSetSpec](),
	"trainer.kubeflow.org/v1alpha1.RuntimePatches": reflect.TypeFor[[]runtimePatch](),
}

// fitTypes are the Go types of the kinds the renders build, by apiVersion
// and kind (Misfit decodes each object into its type; the policy's lint
// checks a literal path into one against it).
var FitTypes = map[string]func() any{
	"jobset.x-k8s.io/v1alpha2\x00JobSet": func() any { return &jobsetv1alpha2.JobSet{} },
	"v1\x00ConfigMap":                    func() any { return &corev1.ConfigMap{} },
	"v1\x00Secret":                       func() any { return &corev1.Secret{} },
}

// The shape of Kubeflow Trainer v2.3.0's runtime patches
// (pkg/apis/trainer/v1alpha1/trainjob_types.go): the fields and their json
// tags are what the omission depends on, and their order what its
// webhook prints.
type runtimePatch struct {
	Manager             string                    `json:"manager,omitempty"`
	Time                *metav1.Time              `json:"time,omitempty"`
	TrainingRuntimeSpec *trainingRuntimeSpecPatch `json:"trainingRuntimeSpec,omitempty"`
}

type trainingRuntimeSpecPatch struct {
	Template *jobSetTemplatePatch `json:"template,omitempty"`
}

type jobSetTemplatePatch struct {
	Metadata *metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec     *jobSetSpecPatch   `json:"spec,omitempty"`
}

type jobSetSpecPatch struct {
	ReplicatedJobs []replicatedJobPatch `json:"replicatedJobs,omitempty"`
}

type replicatedJobPatch struct {
	Name     string            `json:"name,omitempty"`
	Template *jobTemplatePatch `json:"template,omitempty"`
}

type jobTemplatePatch struct {
	Metadata *metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec     *jobSpecPatch      `json:"spec,omitempty"`
}

type jobSpecPatch struct {
	Template *podTemplatePatch `json:"template,omitempty"`
}

type podTemplatePatch struct {
	Metadata *metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec     *podSpecPatch      `json:"spec,omitempty"`
}

type podSpecPatch struct {
	ServiceAccountName            *string                       `json:"serviceAccountName,omitempty"`
	Volumes                       []corev1.Volume               `json:"volumes,omitempty"`
	InitContainers                []containerPatch              `json:"initContainers,omitempty"`
	Containers                    []containerPatch              `json:"containers,omitempty"`
	ImagePullSecrets              []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	SecurityContext               *corev1.PodSecurityContext    `json:"securityContext,omitempty"`
	NodeSelector                  map[string]string             `json:"nodeSelector,omitempty"`
	Affinity                      *corev1.Affinity              `json:"affinity,omitempty"`
	Tolerations                   []corev1.Toleration           `json:"tolerations,omitempty"`
	SchedulingGates               []corev1.PodSchedulingGate    `json:"schedulingGates,omitempty"`
	TerminationGracePeriodSeconds *int64                        `json:"terminationGracePeriodSeconds,omitempty"`
}

type containerPatch struct {
	Name            string                  `json:"name,omitempty"`
	Env             []corev1.EnvVar         `json:"env,omitempty"`
	VolumeMounts    []corev1.VolumeMount    `json:"volumeMounts,omitempty"`
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}

// typedPart is one entry of typedParts: where in the kind's objects, and
// the Go type it is read as.
type TypedPart struct {
	Path []string `json:"path"`
	Type string   `json:"type"`
	T    reflect.Type
}

// typedView is obj with its typed parts as their Go types marshal them:
// obj itself when it holds none of them or nothing they leave out, else
// a copy along the changed paths (obj is left as it is).
func TypedView(obj map[string]any, parts []TypedPart) map[string]any {
	var out any = obj
	for _, p := range parts {
		out = atPath(out, p.Path, func(v any) any { return omitZeros(v, p.T) })
	}
	return out.(map[string]any)
}

// atPath gives the values at path (`*` for every list item) to f, and
// returns v with what f returns in their place, copied along the path
// where anything changed.
func atPath(v any, path []string, f func(any) any) any {
	if len(path) == 0 {
		return f(v)
	}
	if path[0] == "*" {
		if l, ok := v.([]any); ok {
			return eachItem(l, func(item any) any { return atPath(item, path[1:], f) })
		}
		return v
	}
	if m, ok := v.(map[string]any); ok {
		return eachValue(m, func(k string, x any) (any, bool) {
			if k != path[0] {
				return x, true
			}
			return atPath(x, path[1:], f), true
		})
	}
	return v
}

// eachItem is l with each item as f returns it: l itself when f changed
// none, else a copy.
func eachItem(l []any, f func(any) any) any {
	var out []any
	for i, item := range l {
		if n := f(item); !same(n, item) {
			if out == nil {
				out = append([]any(nil), l...)
			}
			out[i] = n
		}
	}
	if out == nil {
		return l
	}
	return out
}

// eachValue is m with each value as f returns it, or without the key
// when f says not to keep it: m itself when f changed none, else a copy.
func eachValue(m map[string]any, f func(k string, v any) (any, bool)) any {
	var out map[string]any
	for k, x := range m {
		n, keep := f(k, x)
		if keep && same(n, x) {
			continue
		}
		if out == nil {
			out = maps.Clone(m)
		}
		if keep {
			out[k] = n
		} else {
			delete(out, k)
		}
	}
	if out == nil {
		return m
	}
	return out
}

// omitZeros is v, read as Go type t, without the fields t's json tags
// omit at their zero value; v itself when there is none.
func omitZeros(v any, t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if m, ok := v.(map[string]any); ok {
			fields := JSONFields(t)
			return eachValue(m, func(k string, x any) (any, bool) {
				f, ok := fields[k]
				switch {
				case !ok:
					return x, true // not the type's: the API server's to prune
				case f.omitEmpty && isZeroOf(x, f.T):
					return nil, false
				}
				return omitZeros(x, f.T), true
			})
		}
	case reflect.Slice:
		if l, ok := v.([]any); ok && t.Elem().Kind() != reflect.Uint8 {
			return eachItem(l, func(item any) any { return omitZeros(item, t.Elem()) })
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok {
			return eachValue(m, func(_ string, x any) (any, bool) { return omitZeros(x, t.Elem()), true })
		}
	}
	return v
}

// isZeroOf reports whether a JSON value is the zero value encoding/json's
// omitempty leaves out for a field of type t: a pointer's never is (but
// null), a struct's never is.
func isZeroOf(v any, t reflect.Type) bool {
	if v == nil {
		return true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Struct, reflect.Interface:
		return false
	case reflect.Bool:
		return v == false
	case reflect.String:
		return v == ""
	case reflect.Slice, reflect.Map:
		switch x := v.(type) {
		case []any:
			return len(x) == 0
		case map[string]any:
			return len(x) == 0
		case string:
			return x == "" // a []byte, as base64
		}
		return false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		switch x := v.(type) {
		case int64:
			return x == 0
		case float64:
			return x == 0
		case int:
			return x == 0
		}
	}
	return false
}

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	T         reflect.Type
	omitEmpty bool
}

var jsonFieldsCache sync.Map // reflect.Type → map[string]jsonField

// jsonFields are a struct type's fields by their JSON names, an inline
// (embedded or `json:",inline"`) struct's fields among them.
func JSONFields(t reflect.Type) map[string]jsonField {
	if f, ok := jsonFieldsCache.Load(t); ok {
		return f.(map[string]jsonField)
	}
	out := map[string]jsonField{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if name == "" && (sf.Anonymous || strings.Contains(opts, "inline")) {
			inner := ft
			for inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.Struct {
				for k, f := range JSONFields(inner) {
					out[k] = f
				}
				continue
			}
		}
		if name == "" {
			name = sf.Name
		}
		out[name] = jsonField{T: ft, omitEmpty: strings.Contains(","+opts+",", ",omitempty,")}
	}
	jsonFieldsCache.Store(t, out)
	return out
}

// Values of findings.
//
// Kubeflow's webhooks print an error's value as field.Error does a typed
// value: encoding/json's marshalling of its Go type, the fields in the
// type's order, zero values tagged omitempty left out and a struct field
// without the tag as {} ("resources":{}). A finding of the kind's webhook
// whose path lies in a typed part has its value so (typedValue).

// pathStep is one step of a field path: a field's name, or an index or
// key in brackets.
type PathStep struct {
	Name    string
	Bracket bool
}

// fieldPathSteps splits a field path as findings name it
// (spec.replicatedJobs[0].template, metadata.labels[a.b/c]).
func FieldPathSteps(path string) []PathStep {
	var steps []PathStep
	for path != "" {
		switch {
		case path[0] == '.':
			path = path[1:]
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return append(steps, PathStep{Name: path})
			}
			steps = append(steps, PathStep{Name: path[1:end], Bracket: true})
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			steps = append(steps, PathStep{Name: path[:end]})
			path = path[end:]
		}
	}
	return steps
}

// typeAt is the Go type at steps below a value of type t; nil when the
// type has no such field.
func TypeAt(t reflect.Type, steps []PathStep) reflect.Type {
	for _, s := range steps {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case s.Bracket && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map):
			t = t.Elem()
		case !s.Bracket && t.Kind() == reflect.Struct:
			f, ok := JSONFields(t)[s.Name]
			if !ok {
				return nil
			}
			t = f.T
		default:
			return nil
		}
	}
	return t
}

// typedValue is a value at path in an object as the Go type of the typed
// part (of the object's kind) that holds the path marshals it; value as
// it is when no part holds it, or it does not decode as that type.
func typedValue(parts []TypedPart, path string, value json.RawMessage) json.RawMessage {
	if len(value) == 0 || string(value) == "null" {
		return value
	}
	steps := FieldPathSteps(path)
	for _, p := range parts {
		if len(steps) < len(p.Path) || !slices.EqualFunc(p.Path, steps[:len(p.Path)], func(name string, s PathStep) bool {
			return s.Bracket == (name == "*") && (s.Bracket || s.Name == name)
		}) {
			continue
		}
		t := TypeAt(p.T, steps[len(p.Path):])
		if t == nil {
			return value
		}
		v := reflect.New(t)
		if json.Unmarshal(value, v.Interface()) != nil {
			return value
		}
		out, err := json.Marshal(v.Elem().Interface())
		if err != nil {
			return value
		}
		return out
	}
	return value
}

// typedValues are findings of a kind's webhook with their values as
// typedValue gives them, parts the kind's typed parts.
func TypedValues(parts []TypedPart, fs []Finding) []Finding {
	for i, f := range fs {
		if f.HasPath && len(f.Value) > 0 {
			fs[i].Value = typedValue(parts, f.Path, f.Value)
		}
	}
	return fs
}

// coreKinds are the kinds of objects of the core group (v1), of which
// every API server serves the same: Kubernetes' own Go types with object
// metadata, lists left out.
var CoreKinds = sync.OnceValue(func() map[string]bool {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err) // the package's own registration
	}
	kinds := map[string]bool{}
	for kind, t := range s.KnownTypes(corev1.SchemeGroupVersion) {
		if _, ok := t.FieldByName("ObjectMeta"); ok && !strings.HasSuffix(kind, "List") {
			kinds[kind] = true
		}
	}
	return kinds
})

// Misfit says why obj does not fit its kind's Go type, "" when it does or
// when the engine carries no type for its kind.
func Misfit(obj map[string]any) string {
	d := Document{Object: obj}
	newType, ok := FitTypes[d.APIVersion()+"\x00"+d.Kind()]
	if !ok {
		return ""
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return err.Error()
	}
	strict, err := sigsjson.UnmarshalStrict(data, newType(), sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	var whys []string
	if err != nil {
		whys = append(whys, err.Error())
	}
	for _, e := range strict {
		whys = append(whys, e.Error())
	}
	sort.Strings(whys)
	return strings.Join(whys, "; ")
}
