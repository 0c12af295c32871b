package k8s

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/errors"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Finding is one error or warning about an object.
type Finding struct {
	Phase contract.Phase `json:"phase"`
	// Rule names the CUE rule that produced it.
	Rule string `json:"rule,omitempty"`
	// Path is the Kubernetes field path; empty with HasPath false for an
	// error about the whole object.
	Path    string `json:"path,omitempty"`
	HasPath bool   `json:"-"`
	// Type is the field.ErrorType's text ("Invalid value"); empty for a
	// plain message.
	Type string `json:"type,omitempty"`
	// Value is the offending value as JSON; nil when none is printed.
	Value     json.RawMessage `json:"value,omitempty"`
	Supported []string        `json:"supported,omitempty"`
	Detail    string          `json:"detail"`
	// Source is where in the CUE a rule error is (FILE:LINE:COLUMN, the
	// admin's file when the rule is an admin's).
	Source string `json:"source,omitempty"`
}

var errorTypes = func() map[string]field.ErrorType {
	m := map[string]field.ErrorType{}
	for _, t := range []field.ErrorType{
		field.ErrorTypeNotFound, field.ErrorTypeRequired, field.ErrorTypeDuplicate,
		field.ErrorTypeInvalid, field.ErrorTypeNotSupported, field.ErrorTypeForbidden,
		field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeInternal,
		field.ErrorTypeTypeInvalid, field.ErrorTypeTooShort, field.ErrorTypeTooFew,
	} {
		m[t.String()] = t
	}
	return m
}()

// String prints the finding the way the API server prints a field.Error.
func (f Finding) String() string {
	if e := f.FieldError(); e != nil {
		return e.Error()
	}
	if f.HasPath {
		return f.Path + ": " + f.Detail
	}
	return f.Detail
}

// FieldError is the finding as a field.Error; nil for a plain message (no
// error type).
func (f Finding) FieldError() *field.Error {
	if f.Type == "" {
		return nil
	}
	t, ok := errorTypes[f.Type]
	if !ok {
		t = field.ErrorTypeInvalid
	}
	e := field.Error{Type: t, Field: f.Path, Detail: f.Detail, BadValue: badValue(f.Value)}
	if !f.HasPath {
		e.Field = "<nil>"
	}
	if t == field.ErrorTypeNotSupported {
		quoted := make([]string, len(f.Supported))
		for i, s := range f.Supported {
			quoted[i] = fmt.Sprintf("%q", s)
		}
		e.Detail = "supported values: " + strings.Join(quoted, ", ")
		if f.Detail != "" {
			e.Detail = f.Detail
		}
	}
	return &e
}

// badValue turns a JSON value into what field.Error prints: scalars as Go
// values, the rest as JSON.
func badValue(raw json.RawMessage) any {
	if raw == nil {
		return field.OmitValueType{}
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case string, bool:
		return x
	}
	return raw
}

// Message is the warning text, with its field path when it has one.
func (f Finding) Message() string {
	if f.HasPath {
		return f.Path + ": " + f.Detail
	}
	return f.Detail
}

// decodeFindings reads a struct of rule lists (#Errors or #Warnings). A
// rule that does not evaluate is a finding of its own (PhaseRuleError),
// and the other rules' findings stand.
func DecodeFindings(src *source.Files, v cue.Value, phase contract.Phase) ([]Finding, error) {
	it, err := v.Fields()
	if err != nil {
		return nil, err
	}
	var out []Finding
	for it.Next() {
		// Most rules find nothing: skip their empty lists without
		// exporting them. An empty list open to more items is no list of
		// findings: the rule's comprehension waited on a value CUE left
		// incomplete, and CUE unified the list with the contract's type
		// of findings ([...#Finding]) instead, which finds nothing
		// whatever the object (TestOpenRuleIsARuleError).
		if items, err := it.Value().List(); err == nil && !items.Next() {
			if it.Value().Allows(cue.AnyIndex) {
				out = append(out, openRule(src, phase, it.Selector().Unquoted(), it.Value()))
			}
			continue
		}
		data, err := it.Value().MarshalJSON()
		if err != nil {
			// The value's own errors are each of CUE's; the export's
			// sums them up in one.
			if verr := it.Value().Validate(cue.Concrete(true)); verr != nil {
				err = verr
			}
			f := ruleError(src, phase, it.Selector().Unquoted(), err)
			if f.Source == "" {
				// An error without a place (a builtin's): the rule's.
				f.Source = src.SourceOf(it.Value())
			}
			out = append(out, f)
			continue
		}
		var raws []contract.RawFinding
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, fmt.Errorf("rule %s: %w", it.Selector(), err)
		}
		for _, r := range raws {
			f := Finding{Phase: phase, Rule: it.Selector().Unquoted(), Value: r.Value, Supported: r.Supported, Detail: r.Detail}
			if r.Message != "" {
				f.Detail = r.Message
			}
			if r.Path != nil {
				f.Path, f.HasPath = *r.Path, true
			}
			if r.Type != nil {
				f.Type = *r.Type
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// ruleErrorsApart takes the rule errors out of the findings of warning
// rules: a warning rule that does not evaluate is a defect of the policy,
// as any rule's is, and not a warning for the object.
func RuleErrorsApart(fs []Finding) (warnings, ruleErrors []Finding) {
	for _, f := range fs {
		if f.Phase == contract.PhaseRuleError {
			ruleErrors = append(ruleErrors, f)
		} else {
			warnings = append(warnings, f)
		}
	}
	return warnings, ruleErrors
}

// ruleError is the finding for a rule that does not evaluate: at the
// rule's place in the CUE, in the words of a load error.
func ruleError(src *source.Files, phase contract.Phase, rule string, err error) Finding {
	f := Finding{Phase: contract.PhaseRuleError, Rule: string(phase) + "." + rule}
	var msgs []string
	for _, p := range src.CUEProblems(err) {
		if f.Source == "" {
			f.Source = p.Where()
		}
		msgs = append(msgs, p.Message)
	}
	f.Detail = strings.Join(msgs, "\n")
	if strings.Contains(f.Detail, "cannot reference optional field") || strings.Contains(f.Detail, "undefined field") {
		f.Detail += "\n    (a rule reads an optional field only once it has asked whether it is there: if x.field != _|_ {...})"
	}
	return f
}

// openRule is the finding for a rule whose value is an open list on an
// object: at the rule's place in the CUE.
func openRule(src *source.Files, phase contract.Phase, rule string, v cue.Value) Finding {
	return Finding{Phase: contract.PhaseRuleError, Rule: string(phase) + "." + rule, Source: src.SourceOf(v),
		Detail: "the rule is an open list here, not a list of findings: a comprehension in it did not evaluate (CUE leaves `(*x | y).f` incomplete when x is absent: bind the default first, `let v = *x | y`, and read v.f), or the rule is a type ([...])"}
}

// schemaFindings turns the CUE errors of unifying an object with its schema
// into field errors on the object's paths. prefix is the CUE path of the
// object within the review.
func SchemaFindings(err error, prefix []string, input map[string]any, object cue.Value, crd map[string]any) []Finding {
	var out []Finding
	seen := map[string]bool{}
	worded := map[string]bool{} // paths whose errors apiWords gave
	for _, ce := range errors.Errors(err) {
		p := ce.Path()
		if HasPrefix(p, prefix) {
			p = p[len(prefix):]
		}
		// Where the CRD's schema reaches, the API server's schema
		// validation says the path (openAPIPath); metadata it decodes.
		fpath := k8sPath(p)
		if crd != nil && schemaNode(crd, p) != nil {
			fpath = openAPIPath(p)
		}
		f := Finding{Phase: contract.PhaseSchema, Path: fpath, HasPath: len(p) > 0}
		format, args := ce.Msg()
		msg := fmt.Sprintf(format, args...)
		value, given := ValueAt(input, p)
		if words, ok := apiWords(msg, format, args, p, value, given, crd); ok {
			// The API server's own words, from the CRD's schema.
			if !worded[f.Path] {
				worded[f.Path] = true
				out = append(out, words...)
			}
			continue
		}
		switch {
		case strings.Contains(msg, "mismatched types") && given && len(args) == 4:
			// The API server's words: value of the wrong JSON type.
			want := fmt.Sprint(args[3])
			if want == kindOf(value) {
				want = fmt.Sprint(args[2])
			}
			f.Type = field.ErrorTypeTypeInvalid.String()
			f.Value = JSONValue(value)
			f.Detail = "must be of type " + openAPIType(want)
		case strings.Contains(msg, "field not allowed"):
			f.Type = field.ErrorTypeForbidden.String()
			f.Detail = "unknown field: the schema has no such field"
			if len(p) > 0 {
				var names []string
				for _, n := range source.FieldNames(object.LookupPath(source.ErrorPath(p[:len(p)-1]))) {
					if n != p[len(p)-1] {
						names = append(names, n)
					}
				}
				if s := source.Suggest(strings.Trim(p[len(p)-1], `"`), names); s != "" {
					f.Detail += fmt.Sprintf(" (did you mean %s?)", s)
				} else if len(names) > 0 && len(names) <= 6 {
					f.Detail += " (it has " + strings.Join(names, ", ") + ")"
				}
			}
		case given && boundError(format, args, fpath, value) != nil:
			// A bound of the schema (a policy's CUE bound, a marker made
			// one), in the API server's words.
			b := boundError(format, args, fpath, value)
			f.Type, f.Value, f.Detail = b.Type, b.Value, b.Detail
		case strings.HasPrefix(msg, "incomplete value") || strings.Contains(msg, "non-concrete value") || strings.Contains(msg, "field is required but not present"):
			f.Type = field.ErrorTypeRequired.String()
			f.Detail = ""
		default:
			f.Type = field.ErrorTypeInvalid.String()
			f.Detail = msg
		}
		key := f.String()
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, f)
	}
	// A disjunction reports a summary beside the reason of each branch:
	// keep the reasons; a value of none of the branches' types is one
	// error naming them all, as the API server says of an int-or-string
	// ("must be of type integer,string").
	paths := map[string]int{}
	for _, f := range out {
		paths[f.Path]++
	}
	const typeDetail = "must be of type "
	// A branch whose type the value has gave the reason (a Quantity's
	// string that its pattern does not match): the other branches' type
	// errors are not the value's.
	reasoned := map[string]bool{}
	for _, f := range out {
		if !strings.HasPrefix(f.Detail, typeDetail) && !strings.Contains(f.Detail, "errors in empty disjunction") && !strings.HasPrefix(f.Detail, "conflicting values") {
			reasoned[f.Path] = true
		}
	}
	typed := map[string]int{} // path: index in kept of its type error
	kept := out[:0]
	for _, f := range out {
		if strings.HasPrefix(f.Detail, typeDetail) && reasoned[f.Path] {
			continue
		}
		// Beside the reason, what the value is not: a disjunction's
		// branches (its default's "conflicting values 36000 and 80").
		if (strings.Contains(f.Detail, "errors in empty disjunction") || strings.HasPrefix(f.Detail, "conflicting values")) && paths[f.Path] > 1 {
			continue
		}
		if t, ok := strings.CutPrefix(f.Detail, typeDetail); ok && f.Type == field.ErrorTypeTypeInvalid.String() {
			if i, dup := typed[f.Path]; dup {
				// In the order the API server names them (integer,string).
				types := append(strings.Split(strings.TrimPrefix(kept[i].Detail, typeDetail), ","), t)
				sort.Strings(types)
				kept[i].Detail = typeDetail + strings.Join(slices.Compact(types), ",")
				continue
			}
			typed[f.Path] = len(kept)
		}
		kept = append(kept, f)
	}
	return WithCELNote(kept, crd, contract.PhaseSchema)
}

// openAPIPath prints CUE path selectors as the API server's schema
// validation does (kube-openapi): indices in brackets, every key after a
// dot, a map's key too (`limits.nvidia.com/gpu`).
func openAPIPath(sels []string) string {
	var b strings.Builder
	for _, s := range sels {
		if s != "" && s[0] >= '0' && s[0] <= '9' {
			b.WriteString("[" + s + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strings.Trim(s, `"`))
	}
	return b.String()
}

// k8sPath prints CUE path selectors as a Kubernetes field path.
// boundError words a bound CUE found broken as the API server words its
// OpenAPI check ("spec.x in body should be greater than or equal to 1024",
// "Too many: 3: must have at most 2 items"); nil for another error.
func boundError(format string, args []any, path string, value any) *Finding {
	if !strings.HasPrefix(format, "invalid value") || len(args) < 2 {
		return nil
	}
	invalid := func(detail string) *Finding {
		return &Finding{Type: field.ErrorTypeInvalid.String(), Value: JSONValue(value), Detail: detail}
	}
	bound := fmt.Sprint(args[len(args)-1])
	if strings.Contains(format, "out of bound") {
		if re, ok := strings.CutPrefix(bound, "=~"); ok {
			if uq, err := strconv.Unquote(re); err == nil {
				re = uq
			}
			return invalid(fmt.Sprintf("%s in body should match '%s'", path, re))
		}
		for _, b := range []struct{ op, words string }{
			{">=", "greater than or equal to"}, {"<=", "less than or equal to"}, {">", "greater than"}, {"<", "less than"},
		} {
			if n, ok := strings.CutPrefix(bound, b.op); ok {
				return invalid(fmt.Sprintf("%s in body should be %s %s", path, b.words, n))
			}
		}
		return nil
	}
	if !strings.Contains(format, "does not satisfy") {
		return nil
	}
	call, n, ok := strings.Cut(strings.TrimSuffix(bound, ")"), "(")
	if !ok {
		return nil
	}
	switch call {
	case "strings.MinRunes":
		return invalid(fmt.Sprintf("%s in body should be at least %s chars long", path, n))
	case "strings.MaxRunes":
		return &Finding{Type: field.ErrorTypeTooLong.String(), Detail: fmt.Sprintf("may not be more than %s bytes", n)}
	case "list.MinItems":
		return invalid(fmt.Sprintf("%s in body should have at least %s items", path, n))
	case "list.MaxItems":
		items, _ := value.([]any)
		return &Finding{Type: field.ErrorTypeTooMany.String(), Value: JSONValue(len(items)), Detail: fmt.Sprintf("must have at most %s items", n)}
	case "struct.MinFields":
		fields, _ := value.(map[string]any)
		return &Finding{Type: field.ErrorTypeInvalid.String(), Value: JSONValue(len(fields)), Detail: fmt.Sprintf("%s in body should have at least %s properties", path, n)}
	}
	return nil
}

func k8sPath(sels []string) string {
	p := ""
	for _, s := range sels {
		if s != "" && s[0] >= '0' && s[0] <= '9' {
			p += "[" + s + "]"
			continue
		}
		p = childPath(p, strings.Trim(s, `"`))
	}
	return p
}

func cueErrPositions(err error) []int {
	var lines []int
	for _, ce := range errors.Errors(err) {
		for _, p := range errors.Positions(ce) {
			lines = append(lines, p.Line())
		}
	}
	return lines
}

// hasPrefix reports whether the CUE path p starts with the selectors of
// prefix, quoted or not.
func HasPrefix(p, prefix []string) bool {
	if len(p) < len(prefix) {
		return false
	}
	for i, s := range prefix {
		if strings.Trim(p[i], `"`) != s {
			return false
		}
	}
	return true
}

// valueAt returns the input's value at a CUE path, if the input has one.
func ValueAt(v any, path []string) (any, bool) {
	for _, sel := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[strings.Trim(sel, `"`)]; !ok {
				return nil, false
			}
		case []any:
			var i int
			if _, err := fmt.Sscan(sel, &i); err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// kindOf names a decoded JSON value's kind as CUE does.
func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case map[string]any:
		return "struct"
	case []any:
		return "list"
	case nil:
		return "null"
	case float64, float32:
		return "float"
	}
	return "int"
}

// openAPIType names a CUE kind as OpenAPI does.
func openAPIType(kind string) string {
	switch kind {
	case "int":
		return "integer"
	case "float", "number":
		return "number"
	case "bool":
		return "boolean"
	case "struct":
		return "object"
	case "list":
		return "array"
	}
	return kind
}

func JSONValue(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// jsonText is a decoded JSON value as JSON.
func JSONText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
