package k8s

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The API server's words for a value of the wrong type in a custom
// resource. It validates the object against the CRD's structural schema
// with kube-openapi's validators (apiextensions-apiserver's
// ValidateCustomResource), whose results become field errors: a type
// error is `<path> in body must be of type <types>: "<found>"`, with the
// found type as the printed value; an int-or-string is also checked
// against each branch of its anyOf (the integer one is reported), a
// number against the range of its integer format ("Checked value ...");
// and any type error keeps the CRD's CEL rules from running
// (celNotChecked). CUE finds the error; these say it as the API server
// does, from the generated CRD's schema at its path.

// celNotChecked is the API server's note when a type error (or a value
// not in an enum) kept it from evaluating the CRD's CEL rules.
const CELNotChecked = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// schemaNode is the CRD's schema at an object path ("spec", "trainer",
// "numNodes"; list indices as numbers), or nil.
func schemaNode(root map[string]any, path []string) map[string]any {
	s := root
	for _, sel := range path {
		if s == nil {
			return nil
		}
		sel = strings.Trim(sel, `"`)
		if items, ok := s["items"].(map[string]any); ok {
			if _, err := strconv.Atoi(sel); err == nil {
				s = items
				continue
			}
		}
		s = fieldSchema(s, sel)
	}
	return s
}

// jsonType is the JSON type kube-openapi finds for a decoded value, and
// the format it names for a number (what the API server's JSON decoding
// gives: an int64 where the number is integral and fits, else a float64).
func jsonType(v any) (typ, format string) {
	switch v.(type) {
	case bool:
		return "boolean", ""
	case string:
		return "string", ""
	case []any:
		return "array", ""
	case map[string]any:
		return "object", ""
	case nil:
		return "null", ""
	case float64:
		return "number", "float64"
	case float32:
		return "number", "float32"
	case int, int64, int32:
		return "integer", "int64"
	}
	return "", ""
}

// typeErrors words a value of the wrong type at path as the API server
// does, given the CRD's schema there; nil when the schema gives no types
// (then the caller keeps its own words).
func typeErrors(path string, value any, node map[string]any) []Finding {
	if node == nil {
		return nil
	}
	var types []string
	if node["x-kubernetes-int-or-string"] == true {
		types = []string{"integer", "string"}
	} else if t, ok := node["type"].(string); ok {
		types = []string{t}
	} else {
		return nil
	}
	format, _ := node["format"].(string)
	intOrString := node["x-kubernetes-int-or-string"] == true
	out := openAPITypeErrors(path, value, types, format, !intOrString)
	if len(out) == 0 {
		// The type fits (a string for an int-or-string): what CUE found is
		// a branch's mismatch beside the branch that gives the reason.
		return []Finding{}
	}
	if intOrString {
		// The anyOf of an int-or-string: the value fits no branch; the
		// first branch's (integer's) reasons are reported.
		out = append(out, Finding{Phase: contract.PhaseSchema, Type: field.ErrorTypeInvalid.String(), Value: JSONValue(""),
			Detail: fmt.Sprintf("%q must validate at least one schema (anyOf)", path)})
		out = append(out, openAPITypeErrors(path, value, []string{"integer"}, "", true)...)
	}
	return out
}

// openAPITypeErrors is kube-openapi's type validator, then (numbers) its
// number validator's range check, for one schema (types and format).
func openAPITypeErrors(path string, value any, types []string, format string, numbers bool) []Finding {
	found, foundFormat := jsonType(value)
	has := func(t string) bool {
		for _, x := range types {
			if x == t {
				return true
			}
		}
		return false
	}
	f, isFloat := value.(float64)
	floatInt := found == "number" && isFloat && f == math.Trunc(f) && math.Abs(f) < 1<<53 && has("integer")
	intFloat := found == "integer" && has("number")
	invalid := func(typ, got string) Finding {
		// The API server prints the type it found as the value; the value
		// itself says more.
		return Finding{Phase: contract.PhaseSchema, Path: path, HasPath: true, Type: field.ErrorTypeTypeInvalid.String(), Value: JSONValue(value),
			Detail: fmt.Sprintf("%s in body must be of type %s: %q", path, typ, got)}
	}
	var out []Finding
	switch {
	case found != "string" && found != "array" && format != "" &&
		!(has(found) || foundFormat == format || floatInt || intFloat || format == "int64" && foundFormat == "int32" || format == "float64" && foundFormat == "float32"):
		out = append(out, invalid(format, foundFormat))
	case !(has(found) || floatInt || intFloat):
		out = append(out, invalid(strings.Join(types, ","), found))
	}
	if numbers && (found == "number" || found == "integer") && (has("integer") || has("number")) {
		if r := rangeError(path, value, types, format); r != nil {
			out = append(out, *r)
		}
	}
	return out
}

// rangeError is kube-openapi's check that a number is one of its schema's
// type and format (IsValueValidAgainstRange): nil when it is.
func rangeError(path string, value any, types []string, format string) *Finding {
	typ := types[0]
	if len(types) > 1 {
		typ = "integer" // an int-or-string's integer
	}
	var text string
	switch x := value.(type) {
	case float64:
		text = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		text = fmt.Sprint(x)
	}
	var err error
	switch typ {
	case "integer":
		bits := 64
		if format == "int32" {
			bits = 32
		}
		_, err = strconv.ParseInt(text, 10, bits)
	case "number":
		_, err = strconv.ParseFloat(text, 64)
	}
	if err == nil {
		return nil
	}
	detail := fmt.Sprintf("Checked value must be of type %s (default format) in %s", typ, path)
	if format != "" {
		detail = fmt.Sprintf("Checked value must be of type %s with format %s in %s", typ, format, path)
	}
	return &Finding{Phase: contract.PhaseSchema, Type: field.ErrorTypeInvalid.String(), Value: JSONValue(""), Detail: detail}
}

// apiWords gives the API server's words for a CUE schema error, where it
// has them: a value of the wrong type (CUE's "mismatched types"), and a
// number outside its integer format (CUE's int32 bounds), at a path the
// CRD's schema types.
func apiWords(msg, format string, args []any, path []string, value any, given bool, crd map[string]any) ([]Finding, bool) {
	if crd == nil || !given {
		return nil, false
	}
	node := schemaNode(crd, path)
	if node == nil {
		return nil, false
	}
	p := openAPIPath(path)
	if enum, ok := node["enum"].([]any); ok {
		// A value the enum does not have: "Unsupported value", with the
		// values it has.
		if s, isString := value.(string); isString && !slices.Contains(enum, any(s)) {
			var supported []string
			for _, v := range enum {
				supported = append(supported, fmt.Sprint(v))
			}
			return []Finding{{Phase: contract.PhaseSchema, Path: p, HasPath: true, Type: field.ErrorTypeNotSupported.String(), Value: JSONValue(s), Supported: supported}}, true
		}
	}
	switch {
	case strings.Contains(msg, "mismatched types"):
		words := typeErrors(p, value, node)
		return words, words != nil
	case strings.HasPrefix(format, "invalid value") && strings.Contains(format, "out of bound") && len(args) >= 2:
		bound := strings.TrimLeft(fmt.Sprint(args[len(args)-1]), "<>=")
		if _, ok := TypeLimits[bound]; !ok || node["type"] != "integer" {
			return nil, false
		}
		f, _ := node["format"].(string)
		if r := rangeError(p, value, []string{"integer"}, f); r != nil {
			return []Finding{*r}, true
		}
	}
	return nil, false
}

// hasCELRules says whether a schema has x-kubernetes-validations anywhere.
func hasCELRules(s map[string]any) bool {
	if _, ok := s["x-kubernetes-validations"]; ok {
		return true
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if c, ok := s[k].(map[string]any); ok && hasCELRules(c) {
			return true
		}
	}
	props, _ := s["properties"].(map[string]any)
	for _, p := range props {
		if c, ok := p.(map[string]any); ok && hasCELRules(c) {
			return true
		}
	}
	return false
}

// withCELNote adds to findings the API server's note that it did not
// evaluate the CRD's CEL rules, where it would: its schema validation
// found an error of a kind that blocks them (apiextensions-apiserver's
// hasBlockingErr: a wrong type, a value not in an enum, a required field
// left out, a string or list too long), and the CRD has CEL rules.
func WithCELNote(fs []Finding, crd map[string]any, phase contract.Phase) []Finding {
	if crd == nil {
		return fs
	}
	blocking := false
	for _, f := range fs {
		switch {
		case f.Detail == CELNotChecked:
			return fs
		case f.Phase != contract.PhaseSchema && f.Phase != contract.PhaseCRD:
		case strings.Contains(f.Detail, " in body must be of type "),
			f.Type == field.ErrorTypeNotSupported.String(), f.Type == field.ErrorTypeRequired.String(),
			f.Type == field.ErrorTypeTooLong.String(), f.Type == field.ErrorTypeTooMany.String():
			blocking = true
		}
	}
	if !blocking || !hasCELRules(crd) {
		return fs
	}
	return append(fs, Finding{Phase: phase, Type: field.ErrorTypeInvalid.String(), Value: JSONValue(nil), Detail: CELNotChecked})
}

// typeLimits are the bounds of CUE's sized integer types the CRD says with
// its format (Kubeflow's Go types are int32 and int64, which controller-gen
// writes as `format: int32` and `format: int64`), not with minimum and
// maximum.
var TypeLimits = map[string]string{
	"-2147483648": "int32", "2147483647": "int32", "-9223372036854775808": "int64", "9223372036854775807": "int64",
}
