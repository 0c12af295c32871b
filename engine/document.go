package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"go.yaml.in/yaml/v3"
)

// Limits on one input, so that a hostile document cannot exhaust memory.
const (
	maxDepth = 100
	maxNodes = 1 << 20
)

// Document is one object read from an input, with where it came from.
type Document struct {
	// File is the input's name ("-" for standard input); Line the line of
	// the document's first key.
	File string
	Line int
	// Object is the document as read; nil when Err is set.
	Object map[string]any
	// Err is why the document could not be read (a syntax error, not an
	// object). Such errors are input errors, not rule findings.
	Err error
	// lines maps Kubernetes field paths (spec.trainer.env[0].name) to lines.
	lines map[string]int
}

// Kind, APIVersion, Name and Namespace read the object's identity.
func (d Document) Kind() string       { return str(d.Object["kind"]) }
func (d Document) APIVersion() string { return str(d.Object["apiVersion"]) }
func (d Document) Name() string       { return str(meta(d.Object)["name"]) }
func (d Document) Namespace() string  { return str(meta(d.Object)["namespace"]) }

func meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	return m
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// LineOf returns the line of the deepest field of path the document has,
// or the document's line.
func (d Document) LineOf(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := d.lines[p]; ok {
			return l
		}
		// Kubeflow spells one path spec.RuntimeRef.
		for q, l := range d.lines {
			if strings.EqualFold(q, p) {
				return l
			}
		}
	}
	return d.Line
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i <= 0 {
		return ""
	}
	return p[:i]
}

// ReadYAML reads every document of a YAML or JSON stream. A syntax error
// ends the stream: the documents before it are returned, then one with Err.
// A v1 List is read as its items.
func ReadYAML(file string, data []byte) []Document {
	var docs []Document
	if !utf8.Valid(data) {
		return []Document{{File: file, Line: 1, Err: errors.New("not valid UTF-8")}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == io.EOF {
			return docs
		}
		if err != nil {
			return append(docs, Document{File: file, Line: yamlErrorLine(err), Err: fmt.Errorf("YAML: %s", cleanYAMLError(err))})
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			n = *n.Content[0]
		}
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			continue // an empty document
		}
		c := converter{lines: map[string]int{}}
		v, err := c.convert(&n, "", 0)
		if err != nil {
			docs = append(docs, Document{File: file, Line: c.errLine, Err: err})
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			docs = append(docs, Document{File: file, Line: n.Line, Err: fmt.Errorf("not a Kubernetes object: the document is a %s", kindName(v))})
			continue
		}
		docs = append(docs, expandList(Document{File: file, Line: n.Line, Object: obj, lines: c.lines})...)
	}
}

// expandList turns a v1 List into its items.
func expandList(d Document) []Document {
	if d.APIVersion() != "v1" || d.Kind() != "List" {
		return []Document{d}
	}
	items, _ := d.Object["items"].([]any)
	var out []Document
	for i, item := range items {
		prefix := fmt.Sprintf("items[%d]", i)
		doc := Document{File: d.File, Line: d.LineOf(prefix), lines: map[string]int{}}
		for p, l := range d.lines {
			if rest, ok := strings.CutPrefix(p, prefix); ok {
				doc.lines[strings.TrimPrefix(rest, ".")] = l
			}
		}
		obj, ok := item.(map[string]any)
		if !ok {
			doc.Err = fmt.Errorf("not a Kubernetes object: List item %d is a %s", i, kindName(item))
		}
		doc.Object = obj
		out = append(out, doc)
	}
	return out
}

func kindName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "mapping"
	case []any:
		return "list"
	case nil:
		return "null"
	default:
		return "scalar"
	}
}

var yamlLine = strings.NewReplacer("yaml: ", "")

func cleanYAMLError(err error) string { return yamlLine.Replace(err.Error()) }

func yamlErrorLine(err error) int {
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		j := i + 5
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(s[i+5 : j]); err == nil {
			return n
		}
	}
	return 0
}

// converter turns a YAML node into plain Go values, recording the line of
// every field path.
type converter struct {
	lines   map[string]int
	nodes   int
	errLine int
}

func (c *converter) fail(n *yaml.Node, format string, args ...any) error {
	c.errLine = n.Line
	return fmt.Errorf(format, args...)
}

func (c *converter) convert(n *yaml.Node, p string, depth int) (any, error) {
	c.nodes++
	if c.nodes > maxNodes {
		return nil, c.fail(n, "document too large: more than %d values", maxNodes)
	}
	if depth > maxDepth {
		return nil, c.fail(n, "document nested deeper than %d levels at %s", maxDepth, orRoot(p))
	}
	if p != "" {
		c.lines[p] = n.Line
	}
	switch n.Kind {
	case yaml.AliasNode:
		return c.convert(n.Alias, p, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		first := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				return nil, c.fail(k, "merge keys (<<) are not supported")
			}
			if k.Kind != yaml.ScalarNode {
				return nil, c.fail(k, "a mapping key must be a string, at %s", orRoot(p))
			}
			key := k.Value
			if l, dup := first[key]; dup {
				return nil, c.fail(k, "duplicate key %q in %s (first at line %d)", key, orRoot(p), l)
			}
			first[key] = k.Line
			child := childPath(p, key)
			val, err := c.convert(v, child, depth+1)
			if err != nil {
				return nil, err
			}
			c.lines[child] = k.Line
			m[key] = val
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			val, err := c.convert(item, fmt.Sprintf("%s[%d]", p, i), depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, val)
		}
		return l, nil
	case yaml.ScalarNode:
		return c.scalar(n)
	}
	return nil, c.fail(n, "unexpected YAML node")
}

func orRoot(p string) string {
	if p == "" {
		return "the document"
	}
	return p
}

func (c *converter) scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, c.fail(n, "%v", err)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return nil, c.fail(n, "integer %s out of range", n.Value)
		}
		return i, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, c.fail(n, "%v", err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, c.fail(n, "%s is not a JSON number", n.Value)
		}
		return f, nil
	default:
		return n.Value, nil
	}
}

// ReadCUE reads CUE source that evaluates to objects: one object (a struct
// with a kind), a list of objects, or a struct whose fields are objects.
func (e *Engine) ReadCUE(file string, data []byte) []Document {
	v := e.compiled().ctx.CompileBytes(data, cue.Filename(file))
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return []Document{{File: file, Line: cueErrLine(err), Err: fmt.Errorf("CUE: %s", e.Details(err))}}
	}
	var docs []Document
	add := func(v cue.Value) {
		d, err := e.documentFromValue(v, file)
		if err != nil {
			d = Document{File: file, Line: v.Pos().Line(), Err: err}
		}
		docs = append(docs, d)
	}
	switch {
	case v.IncompleteKind() == cue.ListKind:
		it, _ := v.List()
		for it.Next() {
			add(it.Value())
		}
	case v.LookupPath(cue.ParsePath("kind")).Exists():
		add(v)
	default:
		it, err := v.Fields()
		if err != nil {
			return []Document{{File: file, Line: 1, Err: fmt.Errorf("CUE: %s", e.Details(err))}}
		}
		for it.Next() {
			add(it.Value())
		}
	}
	return docs
}

func cueErrLine(err error) int {
	for _, p := range cueErrPositions(err) {
		return p
	}
	return 0
}

// documentFromValue turns a concrete CUE value into a document, with the
// line of every field. file is empty for embedded CUE.
func (e *Engine) documentFromValue(v cue.Value, file string) (Document, error) {
	data, err := v.MarshalJSON()
	if err != nil {
		return Document{}, fmt.Errorf("CUE: %s", e.Details(err))
	}
	docs := ReadYAML(file, data)
	if len(docs) != 1 || docs[0].Err != nil {
		return Document{}, fmt.Errorf("CUE: the value is not an object")
	}
	d := docs[0]
	if file == "" {
		d.File = e.displayFile(v.Pos().Filename())
	}
	d.Line = v.Pos().Line()
	d.lines = map[string]int{}
	walkPositions(v, "", d.lines)
	return d, nil
}

func (e *Engine) displayFile(f string) string {
	if r, ok := e.files[f]; ok {
		return r
	}
	return f
}

func walkPositions(v cue.Value, p string, lines map[string]int) {
	if p != "" {
		lines[p] = v.Pos().Line()
	}
	switch v.IncompleteKind() {
	case cue.StructKind:
		it, err := v.Fields()
		if err != nil {
			return
		}
		for it.Next() {
			child := childPath(p, it.Selector().Unquoted())
			walkPositions(it.Value(), child, lines)
		}
	case cue.ListKind:
		it, err := v.List()
		if err != nil {
			return
		}
		for i := 0; it.Next(); i++ {
			walkPositions(it.Value(), fmt.Sprintf("%s[%d]", p, i), lines)
		}
	}
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// childPath extends a Kubernetes field path by a key: spec.trainer for a
// field, metadata.labels[app.kubernetes.io/name] for a key that is not an
// identifier.
func childPath(p, key string) string {
	if !isIdentifier(key) {
		return p + "[" + key + "]"
	}
	if p == "" {
		return key
	}
	return p + "." + key
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
