// Package crd generates the CustomResourceDefinitions the CUE declares
// (crds): each kind's structural schema made from its CUE definition, with
// the Kubebuilder validation markers of its doc comments and of an admin's
// fields (markers.go), and the schemas of the embedded CUE made ahead at
// build time (crdschemas.go). It reads compiled CUE values and keeps no
// state; the engine caches what it makes.
package crd

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
)

// maxSchemaDepth bounds the schema walk (core types are deep, not cyclic).
const maxSchemaDepth = 64

// Of generates the CRD of kind from its `crds` entry v.
func Of(src *source.Files, kind string, v cue.Value) (map[string]any, error) {
	str := func(f string) string {
		s, _ := v.LookupPath(cue.ParsePath(f)).String()
		return s
	}
	schema, err := openAPI(v.LookupPath(contract.PathCRDSchema), 0, true)
	if err != nil {
		return nil, fmt.Errorf("crd %s: %w", kind, err)
	}
	if err := markers(v.LookupPath(contract.PathCRDSchema), schema); err != nil {
		return nil, fmt.Errorf("crd %s: %w", kind, err)
	}
	props := schema["properties"].(map[string]any)
	props["metadata"] = map[string]any{"type": "object"}
	props["apiVersion"] = map[string]any{"type": "string"}
	props["kind"] = map[string]any{"type": "string"}
	// Kubeflow's CRDs require no spec at the root: the webhooks say what
	// an object without one lacks.
	delete(schema, "required")
	version := map[string]any{
		"name": str("version"), "served": true, "storage": true,
		"schema": map[string]any{"openAPIV3Schema": schema},
	}
	if status, _ := v.LookupPath(contract.PathCRDStatus).Bool(); status {
		version["subresources"] = map[string]any{"status": map[string]any{}}
	}
	if cols := v.LookupPath(contract.PathCRDPrinterColumns); cols.Exists() {
		var columns []any
		if err := cols.Decode(&columns); err != nil {
			return nil, fmt.Errorf("crd %s printerColumns: %s", kind, src.Details(err))
		}
		version["additionalPrinterColumns"] = columns
	}
	names := map[string]any{"kind": kind, "listKind": kind + "List", "plural": str("plural"), "singular": str("singular")}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": str("plural") + "." + str("group")},
		"spec": map[string]any{
			"group":    str("group"),
			"names":    names,
			"scope":    str("scope"),
			"versions": []any{version},
		},
	}, nil
}

// HasMarker reports whether a field's doc comment holds a marker line.
func hasMarker(v cue.Value, marker string) bool {
	for _, doc := range v.Doc() {
		for _, line := range strings.Split(doc.Text(), "\n") {
			if strings.TrimSpace(line) == marker {
				return true
			}
		}
	}
	return false
}

// OpenAPI turns a CUE schema into a structural OpenAPI v3 schema: the type
// of every node, properties and required fields of structs, the items of
// lists, the values of maps, defaults and string enums. Values of any type
// (CUE's _) keep what they are given.
func openAPI(v cue.Value, depth int, root bool) (map[string]any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("schema deeper than %d levels", maxSchemaDepth)
	}
	s := map[string]any{}
	if d, ok := v.Default(); ok && d.IsConcrete() && !root {
		var dv any
		if err := d.Decode(&dv); err == nil {
			switch x := dv.(type) {
			case map[string]any:
			case []any:
				if len(x) > 0 {
					s["default"] = dv
				}
			default:
				s["default"] = dv
			}
		}
	}
	k := v.IncompleteKind()
	if k&^cue.NullKind != 0 {
		// A structural schema has no null: the API server drops a null
		// where the field is not nullable (the zero metav1.Time is null).
		k &^= cue.NullKind
	}
	switch {
	case k == cue.TopKind || k == cue.BottomKind:
		s["x-kubernetes-preserve-unknown-fields"] = true
		return s, nil
	case k&cue.StructKind != 0 && k&^(cue.StructKind|cue.NullKind) == 0:
		s["type"] = "object"
		props := map[string]any{}
		var required []any
		it, err := v.Fields(cue.Optional(true))
		if err != nil {
			return nil, err
		}
		for it.Next() {
			name := it.Selector().Unquoted()
			if it.Selector().IsDefinition() || it.Selector().PkgPath() != "" {
				continue
			}
			if err := it.Value().Err(); err != nil && strings.Contains(err.Error(), "field not allowed") {
				continue // a field of one conjunct that another closes out
			}
			p, err := openAPI(it.Value(), depth+1, false)
			if err != nil {
				return nil, fmt.Errorf("%s.%w", name, err)
			}
			if a := it.Value().Attribute("crd"); a.Err() == nil && a.Contents() == "embedded" {
				// An embedded object's metadata: controller-gen writes its
				// fields' types alone, none of the core type's list types.
				stripListTypes(p)
			}
			if err := markers(it.Value(), p); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			// A rule of the field's type (JobSetSpec's), as controller-gen
			// puts a type's markers on every field of that type.
			if err := referencedMarkers(it.Value(), p); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			props[name] = p
			// +optional: a field the CUE needs (a regular one) that the
			// API server does not, as controller-gen reads the marker.
			if !it.IsOptional() && !hasMarker(it.Value(), "+optional") {
				if _, hasDefault := p["default"]; !hasDefault {
					required = append(required, name)
				}
			}
		}
		if len(props) > 0 {
			s["properties"] = props
		}
		if len(required) > 0 {
			sort.Slice(required, func(i, j int) bool { return fmt.Sprint(required[i]) < fmt.Sprint(required[j]) })
			s["required"] = required
		}
		elem := v.LookupPath(cue.MakePath(cue.AnyString))
		switch {
		case elem.Exists() && len(props) == 0:
			p, err := openAPI(elem, depth+1, false)
			if err != nil {
				return nil, err
			}
			// The values' type may carry markers (#Quantity's pattern) on
			// the definition it names.
			if err := referencedMarkers(elem, p); err != nil {
				return nil, err
			}
			s["additionalProperties"] = p
		case len(props) == 0 && !elem.Exists() && !v.Allows(cue.AnyString):
			// A closed empty struct (a policy with no fields): an object with
			// none.
		case elem.Exists() || len(props) == 0:
			// Open, or fields beside a pattern, which a structural schema
			// cannot say: keep what is given.
			s["x-kubernetes-preserve-unknown-fields"] = true
		}
	case k == cue.ListKind:
		s["type"] = "array"
		elem := listElem(v)
		p, err := openAPI(elem, depth+1, false)
		if err != nil {
			return nil, err
		}
		// The rules of the items' type (VolumeClaimPolicy's).
		if err := referencedMarkers(elem, p); err != nil {
			return nil, err
		}
		s["items"] = p
		cueBounds(v, s)
	case k == cue.StringKind:
		s["type"] = "string"
		if enum := stringEnum(v); len(enum) > 0 {
			s["enum"] = enum
		}
		cueBounds(v, s)
	case k == cue.IntKind:
		s["type"] = "integer"
		cueBounds(v, s)
	case k&cue.NumberKind != 0 && k&^cue.NumberKind == 0:
		s["type"] = "number"
		cueBounds(v, s)
	case k == cue.BoolKind:
		s["type"] = "boolean"
	case k&(cue.IntKind|cue.StringKind) == cue.IntKind|cue.StringKind && k&^(cue.IntKind|cue.StringKind|cue.NullKind) == 0:
		s["x-kubernetes-int-or-string"] = true
		s["anyOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
		if re := stringPattern(v, 0); re != "" {
			s["pattern"] = re // a Quantity's (int | =~"...")
		}
	default:
		s["x-kubernetes-preserve-unknown-fields"] = true
	}
	return s, nil
}

// cueBounds writes into a field's schema the bounds its CUE constraints
// say, so that a bound an admin writes once in CUE (>=1024, =~"^[a-z]+$",
// strings.MaxRunes(63), list.MaxItems(8)) reaches the CRD as well as vet:
// minimum, maximum (exclusive for > and <), pattern, minLength,
// maxLength, minItems, maxItems. A marker on the field says the same or
// more, and is written after.
func cueBounds(v cue.Value, s map[string]any) {
	limits := map[string]int{} // format: the type's bounds seen
	defer func() {
		for format, n := range limits {
			if n >= 2 && s["type"] == "integer" {
				s["format"] = format
			}
		}
	}()
	var walk func(v cue.Value, depth int)
	walk = func(v cue.Value, depth int) {
		if depth > 8 {
			return
		}
		op, args := v.Expr()
		switch op {
		case cue.OrOp:
			// `*1 | int32`: the format of the type beside the default.
			// Bounds of one disjunct are not the value's.
			for _, a := range args {
				if format := integerFormat(a); format != "" {
					limits[format] = 2
				}
			}
		case cue.AndOp, cue.NoOp:
			if op == cue.NoOp && len(args) == 1 && args[0] == v {
				return
			}
			for _, a := range args {
				walk(a, depth+1)
			}
		case cue.GreaterThanEqualOp, cue.GreaterThanOp, cue.LessThanEqualOp, cue.LessThanOp:
			if len(args) != 1 {
				return
			}
			if format, ok := k8s.TypeLimits[fmt.Sprint(args[0])]; ok {
				limits[format]++
				return
			}
			n, err := args[0].Float64()
			if err != nil {
				return
			}
			var num any = n
			if i, err := args[0].Int64(); err == nil {
				num = i
			}
			lower := op == cue.GreaterThanEqualOp || op == cue.GreaterThanOp
			key, exclusive := "maximum", "exclusiveMaximum"
			if lower {
				key, exclusive = "minimum", "exclusiveMinimum"
			}
			if old, ok := s[key]; ok {
				of, _ := strconv.ParseFloat(fmt.Sprint(old), 64)
				if lower && n <= of || !lower && n >= of {
					return // a weaker bound
				}
			}
			s[key] = num
			if op == cue.GreaterThanOp || op == cue.LessThanOp {
				s[exclusive] = true
			} else {
				delete(s, exclusive)
			}
		case cue.RegexMatchOp:
			if len(args) == 1 {
				if re, err := args[0].String(); err == nil {
					s["pattern"] = re
				}
			}
		case cue.CallOp:
			if len(args) != 2 {
				return
			}
			n, err := args[1].Int64()
			if err != nil {
				return
			}
			if key, ok := map[string]string{
				"strings.MinRunes": "minLength", "strings.MaxRunes": "maxLength",
				"list.MinItems": "minItems", "list.MaxItems": "maxItems", "struct.MinFields": "minProperties",
			}[fmt.Sprint(args[0])]; ok {
				s[key] = n
			}
		}
	}
	walk(v, 0)
}

// stripListTypes takes the list and map types out of a schema, deep.
func stripListTypes(s map[string]any) {
	delete(s, "x-kubernetes-list-type")
	delete(s, "x-kubernetes-list-map-keys")
	delete(s, "x-kubernetes-map-type")
	for _, k := range []string{"items", "additionalProperties"} {
		if c, ok := s[k].(map[string]any); ok {
			stripListTypes(c)
		}
	}
	props, _ := s["properties"].(map[string]any)
	for _, p := range props {
		if c, ok := p.(map[string]any); ok {
			stripListTypes(c)
		}
	}
}

// integerFormat is the format of a sized integer type (CUE's int32 is
// int & >=-2147483648 & <=2147483647): "int32", "int64", or "".
func integerFormat(v cue.Value) string {
	seen := map[string]int{}
	var walk func(v cue.Value, depth int)
	walk = func(v cue.Value, depth int) {
		op, args := v.Expr()
		switch {
		case depth > 4:
		case op == cue.AndOp:
			for _, a := range args {
				walk(a, depth+1)
			}
		case (op == cue.GreaterThanEqualOp || op == cue.LessThanEqualOp) && len(args) == 1:
			seen[k8s.TypeLimits[fmt.Sprint(args[0])]]++
		}
	}
	walk(v, 0)
	for _, f := range []string{"int32", "int64"} {
		if seen[f] >= 2 {
			return f
		}
	}
	return ""
}

// stringPattern is the regular expression a value's strings must match
// (`int | =~"^[0-9]+$"`), or "".
func stringPattern(v cue.Value, depth int) string {
	op, args := v.Expr()
	switch {
	case depth > 6:
	case op == cue.RegexMatchOp && len(args) == 1:
		re, _ := args[0].String()
		return re
	case op == cue.AndOp || op == cue.OrOp:
		for _, a := range args {
			if re := stringPattern(a, depth+1); re != "" {
				return re
			}
		}
	default:
		// A reference (resource.#Quantity): what it names.
		if root, path := v.ReferencePath(); root.Exists() && len(path.Selectors()) > 0 {
			return stringPattern(root.LookupPath(path), depth+1)
		}
	}
	return ""
}

// stringEnum lists the values of a disjunction of string literals.
func stringEnum(v cue.Value) []any {
	op, args := v.Expr()
	if op != cue.OrOp {
		return nil
	}
	var out []any
	for _, a := range args {
		s, err := a.String()
		if err != nil || !a.IsConcrete() {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// listElem returns the type of a list's elements. A list type made of
// several (a generated type and ours) may not evaluate as one element: then
// the element of the conjunct that says the most.
func listElem(v cue.Value) cue.Value {
	usable := func(e cue.Value) bool {
		k := e.IncompleteKind()
		return e.Exists() && k != cue.TopKind && k != cue.BottomKind
	}
	// The element of a list of one, evaluated as an item is: a list type
	// made of several (`[...#Volume]` where #Volume embeds the core type
	// and our defaults) reads, through AnyIndex, as the conjuncts closed
	// one against the other, which an item is not.
	if one := v.Unify(v.Context().CompileString("[_]")).LookupPath(cue.MakePath(cue.Index(0))); usable(one) && one.Err() == nil {
		return one
	}
	elem := v.LookupPath(cue.MakePath(cue.AnyIndex))
	if usable(elem) {
		return elem
	}
	best, bestFields := elem, -1
	if _, args := v.Expr(); len(args) > 1 {
		for _, a := range args {
			e := a.LookupPath(cue.MakePath(cue.AnyIndex))
			if !usable(e) {
				continue
			}
			n := 0
			if it, err := e.Fields(cue.Optional(true)); err == nil {
				for it.Next() {
					n++
				}
			}
			if n > bestFields {
				best, bestFields = e, n
			}
		}
	}
	return best
}

// markers carries the kubebuilder markers a field's doc comment holds, as
// the generated Kubernetes types keep them and our own schemas write them
// (Kubeflow's Go types carry the same), into the schema: list types and
// map keys (`+listType=map`, `+listMapKey=name`: server-side apply merges
// such lists by key), and the validations the API server checks itself
// (`+kubebuilder:validation:MaxLength=253`, MinLength, MinItems, MaxItems,
// Minimum, Maximum, MinProperties, and XValidation's CEL rule and message),
// with `items:` the same of a list's items.
func markers(v cue.Value, s map[string]any) error {
	var lines []string
	for _, doc := range v.Doc() {
		lines = append(lines, strings.Split(doc.Text(), "\n")...)
	}
	return applyMarkers(lines, s)
}

func applyMarkers(lines []string, s map[string]any) error {
	var listType, mapType string
	var keys []any
	var rules []any
	{
		for _, line := range lines {
			line = strings.TrimSpace(line)
			if t, ok := strings.CutPrefix(line, "+listType="); ok {
				listType = t
			}
			if t, ok := strings.CutPrefix(line, "+structType="); ok {
				mapType = t
			}
			if t, ok := strings.CutPrefix(line, "+mapType="); ok {
				mapType = t
			}
			if k, ok := strings.CutPrefix(line, "+listMapKey="); ok && !containsAny(keys, k) {
				keys = append(keys, k) // a field's doc can come from several conjuncts
			}
			m, ok := strings.CutPrefix(line, "+kubebuilder:validation:")
			if !ok {
				continue
			}
			if im, ok := strings.CutPrefix(m, "items:"); ok {
				// A marker of the list's items (items:MaxLength=63).
				if items, ok := s["items"].(map[string]any); ok {
					if err := applyMarkers([]string{"+kubebuilder:validation:" + im}, items); err != nil {
						return err
					}
				}
				continue
			}
			if x, ok := strings.CutPrefix(m, "XValidation:"); ok {
				rule, err := CELRule(x)
				if err != nil {
					return fmt.Errorf("marker %q: %w", line, err)
				}
				if !containsRule(rules, rule) {
					rules = append(rules, rule)
				}
				continue
			}
			name, value, ok := strings.Cut(m, "=")
			if !ok {
				continue
			}
			name = strings.TrimSuffix(name, ":") // Enum:=a;b, as controller-gen takes it too
			switch name {
			case "Pattern":
				if uq, err := strconv.Unquote(value); err == nil {
					value = uq // `...` or "..."
				}
				s["pattern"] = value
				continue
			case "Format":
				s["format"] = value // date-time: the schema's type is string
				continue
			case "Enum":
				var enum []any
				for _, e := range strings.Split(value, ";") {
					if uq, err := strconv.Unquote(e); err == nil {
						e = uq // "" is the empty string, as controller-gen reads it
					}
					enum = append(enum, e)
				}
				s["enum"] = enum
				continue
			}
			field := map[string]string{
				"MinLength": "minLength", "MaxLength": "maxLength", "MinItems": "minItems", "MaxItems": "maxItems",
				"Minimum": "minimum", "Maximum": "maximum", "MinProperties": "minProperties",
			}[name]
			if field == "" {
				continue // Optional, Required, Type...: the schema says these itself
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return fmt.Errorf("marker %q: %w", line, err)
			}
			s[field] = n
		}
	}
	if len(rules) > 0 {
		s["x-kubernetes-validations"] = rules
	}
	if s["type"] == "object" && (mapType == "atomic" || mapType == "granular") {
		// +structType / +mapType: how server-side apply merges the object.
		s["x-kubernetes-map-type"] = mapType
	}
	if s["type"] != "array" {
		return nil // a list marker on what the schema made no list (an embedded type's items)
	}
	switch listType {
	case "map":
		if len(keys) == 0 {
			return nil
		}
		s["x-kubernetes-list-type"] = "map"
		s["x-kubernetes-list-map-keys"] = keys
	case "set", "atomic":
		s["x-kubernetes-list-type"] = listType
	}
	return nil
}

// CELRule reads an XValidation marker's arguments: rule="...",message="..."
// (Go-quoted strings).
func CELRule(args string) (map[string]any, error) {
	out := map[string]any{}
	for args != "" {
		key, rest, ok := strings.Cut(args, "=")
		if !ok {
			return nil, fmt.Errorf("want key=\"value\" at %q", args)
		}
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		val, _ := strconv.Unquote(q)
		switch key {
		case "rule", "message", "messageExpression", "reason", "fieldPath":
			out[key] = val
		default:
			return nil, fmt.Errorf("unknown argument %q", key)
		}
		args = strings.TrimPrefix(rest[len(q):], ",")
	}
	if out["rule"] == nil {
		return nil, fmt.Errorf("no rule")
	}
	return out, nil
}

func containsRule(rules []any, r map[string]any) bool {
	for _, x := range rules {
		if fmt.Sprint(x) == fmt.Sprint(r) {
			return true
		}
	}
	return false
}

func containsAny(l []any, v any) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// referencedMarkers carries into s the markers of the definitions v names
// (`[string]: #Quantity`): a pattern constraint's value has no doc comment
// of its own; and those of the definitions they embed (#JobSetSpec
// embeds jobset's JobSetSpec, whose type-level CEL rule the CRD carries).
func referencedMarkers(v cue.Value, s map[string]any) error {
	return referencedMarkersDepth(v, s, 0)
}

func referencedMarkersDepth(v cue.Value, s map[string]any, depth int) error {
	if depth > 3 {
		return nil
	}
	vals := []cue.Value{v}
	if op, args := v.Expr(); op == cue.AndOp {
		vals = args
	}
	for _, a := range vals {
		root, path := a.ReferencePath()
		if !root.Exists() || len(path.Selectors()) == 0 {
			continue
		}
		def := root.LookupPath(path)
		if err := markers(def, s); err != nil {
			return err
		}
		if err := referencedMarkersDepth(def, s, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// Schema makes the kind's CRD schema from the CUE (the compiled
// schemas), as JSON would read it (schemaFromJSON), as the schemas made
// ahead are; nil when the kind has no CRD.
func Schema(src *source.Files, schemas cue.Value, apiVersion, kind string) map[string]any {
	v := schemas.LookupPath(contract.PathCRDs.Append(cue.Str(kind)))
	if !v.Exists() {
		return nil
	}
	crd, err := Of(src, kind, v)
	if err != nil {
		return nil
	}
	spec, _ := crd["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	for _, ver := range versions {
		vm, _ := ver.(map[string]any)
		if k8s.Str(spec["group"])+"/"+k8s.Str(vm["name"]) != apiVersion {
			continue
		}
		data, err := json.Marshal(value.At(vm, []string{"schema", "openAPIV3Schema"}))
		if err != nil {
			return nil
		}
		schema, _ := SchemaFromJSON(data)
		return schema
	}
	return nil
}
