// Package k8s is what the engine knows of Kubernetes objects, apart from
// any CUE runtime: documents read from YAML and JSON with the line of every
// field (as the API server reads JSON, within bounds of depth and size);
// findings in the API server's words (field.Error), from the CUE's
// findings and its schema errors; the checks the API server makes itself
// (object metadata, sizes against the CRD, list-type maps and sets);
// pruning nulls and whole floats as the API server does; quantities made
// canonical; views of the parts Kubeflow's controller reads as Go types;
// the known keys of labels and annotations; and opaque keys, the tokens
// labels and annotations reach the CUE as. It imports the engine's value,
// source and contract packages only.
package k8s

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
	"github.com/cuetrainer/cuetrainer/engine/internal/tokens"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"go.yaml.in/yaml/v3"
)

// Limits on one input, so that a hostile document cannot exhaust memory.
const (
	MaxDepth = 100
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

// withObject is the document read as obj (the object as admitted, with
// its defaults): at the document's file and lines.
func (d Document) WithObject(obj map[string]any) Document {
	return Document{File: d.File, Line: d.Line, Object: obj, lines: d.lines}
}

// Kind, APIVersion, Name and Namespace read the object's identity.
func (d Document) Kind() string       { return Str(d.Object["kind"]) }
func (d Document) APIVersion() string { return Str(d.Object["apiVersion"]) }
func (d Document) Name() string       { return Str(Meta(d.Object)["name"]) }
func (d Document) Namespace() string  { return Str(Meta(d.Object)["namespace"]) }

func Meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	return m
}

func Str(v any) string {
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

// ReadObject reads one object as an API server sends it to a webhook: one
// JSON object, read as ReadYAML reads it (its numbers int64 or float64,
// within the same bounds of depth and size), without the YAML reader's
// cost. Anything else is ReadYAML's to read, or to say what is wrong.
func ReadObject(file string, data []byte) Document {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err == nil && obj != nil && !dec.More() && utf8.Valid(data) && within(obj, 0, new(int)) {
		if _, list := obj["items"]; !list || obj["kind"] != "List" {
			return Document{File: file, Line: 1, Object: value.Numbers(obj).(map[string]any)}
		}
	}
	docs := ReadYAML(file, data)
	if len(docs) != 1 {
		return Document{File: file, Line: 1, Err: fmt.Errorf("%d documents, want one object", len(docs))}
	}
	return docs[0]
}

// within reports whether v is within the reader's bounds: nested no deeper
// than maxDepth, with no more than maxNodes values (*nodes counts them).
func within(v any, depth int, nodes *int) bool {
	*nodes++
	if *nodes > maxNodes || depth > MaxDepth {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		for _, c := range x {
			if !within(c, depth+1, nodes) {
				return false
			}
		}
	case []any:
		for _, c := range x {
			if !within(c, depth+1, nodes) {
				return false
			}
		}
	}
	return true
}

// ReadYAML reads every document of a YAML or JSON stream. A document that
// cannot be read (a syntax error, invalid UTF-8, too deep or too large)
// gives one Document with Err, and the documents after it are still read.
// A v1 List is read as its items.
func ReadYAML(file string, data []byte) []Document {
	var docs []Document
	for _, p := range splitDocuments(data) {
		docs = readDocuments(file, p, docs)
	}
	return docs
}

// piece is a part of a YAML stream that holds at most one document (more
// only after a "..." end marker), and the line it starts on.
type piece struct {
	data []byte
	line int
}

// splitDocuments cuts a YAML stream before every "---" document marker, as
// kubectl does, so that one document's syntax error does not hide the
// ones after it. A "---" at the start of a line always starts a document
// in YAML, even inside a block or quoted scalar, so the cut changes no
// document's text. Directive lines (%YAML) go with the document they
// precede. Each piece is decoded alone: an alias cannot name an anchor of
// another document (YAML's rule, kubectl's, though yaml.v3 reading the
// whole stream would allow it).
func splitDocuments(data []byte) []piece {
	var out []piece
	start, startLine := 0, 1
	// prefix is where the run of directive, comment and blank lines before
	// the current line starts, when it holds a directive; -1 otherwise.
	prefix, prefixLine, inRun, runStart, runLine := -1, 0, false, 0, 0
	for off, line := 0, 1; off < len(data); line++ {
		next := nextLine(data, off)
		l := data[off:next]
		trimmed := bytes.TrimSpace(l)
		switch {
		case isDocumentStart(l):
			cut, cutLine := off, line
			if prefix >= 0 {
				cut, cutLine = prefix, prefixLine
			}
			if cut > start {
				out = append(out, piece{data[start:cut], startLine})
				start, startLine = cut, cutLine
			}
			prefix, inRun = -1, false
		case len(trimmed) == 0 || trimmed[0] == '#' || l[0] == '%':
			if !inRun {
				inRun, runStart, runLine = true, off, line
			}
			if l[0] == '%' && prefix < 0 {
				prefix, prefixLine = runStart, runLine
			}
		default:
			prefix, inRun = -1, false
		}
		off = next
	}
	if start < len(data) || len(out) == 0 {
		out = append(out, piece{data[start:], startLine})
	}
	return out
}

// isDocumentStart reports whether a line is a "---" document marker.
func isDocumentStart(l []byte) bool {
	return bytes.HasPrefix(l, []byte("---")) && (len(l) == 3 || l[3] == ' ' || l[3] == '\t' || lineBreak(l[3:]) > 0)
}

// lineBreak returns the length of the line break b starts with, or 0: \n,
// \r\n, \r, NEL, LS and PS, each of which yaml.v3 counts as one line.
func lineBreak(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	switch b[0] {
	case '\n':
		return 1
	case '\r':
		if len(b) > 1 && b[1] == '\n' {
			return 2
		}
		return 1
	case 0xc2:
		if len(b) > 1 && b[1] == 0x85 {
			return 2
		}
	case 0xe2:
		if len(b) > 2 && b[1] == 0x80 && (b[2] == 0xa8 || b[2] == 0xa9) {
			return 3
		}
	}
	return 0
}

// nextLine returns where the line starting at off ends, after its break.
func nextLine(data []byte, off int) int {
	for i := off; i < len(data); i++ {
		if n := lineBreak(data[i:]); n > 0 {
			return i + n
		}
	}
	return len(data)
}

// countBreaks returns how many line breaks data holds, as yaml.v3 counts.
func countBreaks(data []byte) int {
	n := 0
	for i := 0; i < len(data); {
		if k := lineBreak(data[i:]); k > 0 {
			n++
			i += k
		} else {
			i++
		}
	}
	return n
}

// readDocuments appends the documents of one piece of a stream to docs.
func readDocuments(file string, p piece, docs []Document) []Document {
	offset := p.line - 1
	if !utf8.Valid(p.data) {
		bad := len(p.data)
		for i := 0; i < len(p.data); {
			r, size := utf8.DecodeRune(p.data[i:])
			if r == utf8.RuneError && size == 1 {
				bad = i
				break
			}
			i += size
		}
		return append(docs, Document{File: file, Line: offset + 1 + countBreaks(p.data[:bad]), Err: errors.New("not valid UTF-8")})
	}
	text := p.data
	isJSON := json.Valid(text)
	if isJSON {
		text = jsonForYAML(text)
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	first := len(docs)
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == io.EOF {
			return docs
		}
		if err != nil {
			line := yamlErrorLine(err)
			if at := blockErrorLine(text, line, err); at != line {
				// Name the line that breaks the block, as the message
				// says what it is.
				err = fmt.Errorf("%s", strings.Replace(err.Error(), fmt.Sprintf("line %d:", line), fmt.Sprintf("line %d:", at), 1))
				line = at
			}
			shift := offset
			if line == 0 {
				// No line (control characters, yaml.v3's depth limit):
				// the first character YAML does not allow, or the
				// document's first line.
				line = unprintableLine(p.data)
			} else if len(docs) > first && docs[len(docs)-1].Line > offset+line {
				// yaml.v3 gives a parser error's line counting from 0: an
				// error after a document is not before it.
				shift = docs[len(docs)-1].Line - line
			}
			return append(docs, Document{File: file, Line: shift + line, Err: fmt.Errorf("YAML: %s", shiftLines(cleanYAMLError(err), shift))})
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			n = *n.Content[0]
		}
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			continue // an empty document
		}
		c := converter{lines: map[string]int{}, offset: offset, yaml11: !isJSON}
		v, err := c.convert(&n, "", 0)
		if err != nil {
			docs = append(docs, Document{File: file, Line: c.errLine, Err: err})
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			docs = append(docs, Document{File: file, Line: c.line(&n), Err: fmt.Errorf("not a Kubernetes object: the document is a %s", kindName(v))})
			continue
		}
		docs = append(docs, expandList(Document{File: file, Line: c.line(&n), Object: obj, lines: c.lines})...)
	}
}

// jsonForYAML rewrites valid JSON so that YAML reads it as JSON does (the
// webhooks read the API server's JSON with ReadYAML), on the same lines:
// tabs between tokens become spaces (YAML refuses a tab that starts a
// line), line breaks before a key's colon go after it, and a key too long
// for an implicit YAML key becomes an explicit one (? key); in strings, \/ becomes /, a \u escape of a UTF-16 surrogate pair becomes one \U
// escape (YAML refuses surrogates; a lone one becomes U+FFFD, as
// encoding/json reads it), and a character YAML refuses or reads as a line
// break (DEL, C1 controls, NEL, LS, PS, BOM, U+FFFE, U+FFFF: YAML folds a raw
// NEL into a space) is escaped.
// longKey says whether the JSON string that starts at data[i] is an
// object's key longer than YAML's implicit keys may be (1,024 characters;
// 512 bytes of JSON, whatever its escapes become, stay under it).
func longKey(data []byte, i int) bool {
	j := i + 1
	for j < len(data) && data[j] != '"' {
		if data[j] == '\\' {
			j++
		}
		j++
	}
	if j-i < 512 {
		return false
	}
	j = skipJSONSpace(data, j+1)
	return j < len(data) && data[j] == ':'
}

// isJSONSpace says whether c is whitespace between JSON tokens.
func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipJSONSpace returns the index of the first non-whitespace byte of data
// from i on.
func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && isJSONSpace(data[i]) {
		i++
	}
	return i
}

// appendSpaces appends whitespace between JSON tokens, tabs as spaces.
func appendSpaces(out, ws []byte) []byte {
	for _, c := range ws {
		if c == '\t' {
			c = ' '
		}
		out = append(out, c)
	}
	return out
}

func jsonForYAML(data []byte) []byte {
	out := make([]byte, 0, len(data)+len(data)/8)
	inString := false
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case !inString && isJSONSpace(c):
			// Whitespace between tokens. Before a key's colon it moves
			// after the colon: YAML wants an implicit key's ':' on the
			// key's line, and the line count stays the same.
			j := skipJSONSpace(data, i)
			if j < len(data) && data[j] == ':' {
				out = append(out, ':')
				out = appendSpaces(out, data[i:j])
				i = j + 1
			} else {
				out = appendSpaces(out, data[i:j])
				i = j
			}
		case !inString:
			if c == '"' {
				inString = true
				if longKey(data, i) {
					// YAML takes an implicit key of at most 1024
					// characters; an explicit one (? key) has no limit.
					out = append(out, '?', ' ')
				}
			}
			out = append(out, c)
			i++
		case c == '"':
			inString = false
			out = append(out, c)
			i++
		case c == '\\' && data[i+1] == 'u':
			r := hex4(data[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				low := rune(-1)
				if i+6 <= len(data) && data[i] == '\\' && data[i+1] == 'u' {
					low = hex4(data[i+2 : i+6])
				}
				if pair := utf16.DecodeRune(r, low); pair != unicode.ReplacementChar {
					r = pair
					i += 6
				} else {
					r = unicode.ReplacementChar
				}
			}
			out = appendYAMLEscape(out, r)
		case c == '\\' && data[i+1] == '/':
			out = append(out, '/') // yaml.v3 knows no \/
			i += 2
		case c == '\\':
			out = append(out, c, data[i+1])
			i += 2
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff {
				out = appendYAMLEscape(out, r)
			} else {
				out = append(out, data[i:i+size]...)
			}
			i += size
		}
	}
	return out
}

// hex4 reads the four hex digits of a JSON \u escape (valid JSON).
func hex4(h []byte) rune {
	n, _ := strconv.ParseUint(string(h), 16, 32)
	return rune(n)
}

// appendYAMLEscape appends r as a YAML double-quoted escape.
func appendYAMLEscape(out []byte, r rune) []byte {
	if r > 0xffff {
		return fmt.Appendf(out, "\\U%08X", r)
	}
	return fmt.Appendf(out, "\\u%04X", r)
}

// unprintableLine returns the line of the first character YAML does not
// allow in a stream (YAML 1.2 c-printable), or 1.
func unprintableLine(data []byte) int {
	line := 1
	for i := 0; i < len(data); {
		if n := lineBreak(data[i:]); n > 0 {
			line++
			i += n
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if !(r == '\t' || r >= 0x20 && r <= 0x7e || r >= 0xa0 && r <= 0xd7ff ||
			r >= 0xe000 && r <= 0xfffd || r >= 0x10000 && r <= 0x10ffff) {
			return line
		}
		i += size
	}
	return 1
}

var yamlLineNumber = regexp.MustCompile(`\bline ([0-9]+)`)

// shiftLines adds offset to the line numbers of a yaml.v3 message about
// one piece of a stream.
func shiftLines(msg string, offset int) string {
	if offset == 0 {
		return msg
	}
	return yamlLineNumber.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(m[len("line "):])
		return fmt.Sprintf("line %d", n+offset)
	})
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

// maxBlockSearch is the largest document blockErrorLine searches.
const maxBlockSearch = 1 << 20

// blockErrorLine is the line a YAML block error is at. yaml.v3 reports a
// block that does not go on ("did not find expected key", a line indented
// wrong; "did not find expected ',' or ']'", a flow not closed) at the
// line where the block began, or the one before (spec: at line 6 for a
// key misplaced on line 11): the line that breaks it is the first at which
// the text up to it does not parse. Text cut within a multi-line scalar
// or flow (an "end of stream") is not taken for broken. Lines are counted
// as yaml.v3 counts them in text; line is returned for other errors.
func blockErrorLine(text []byte, line int, err error) int {
	// Each step parses the text again: a big document keeps yaml.v3's line.
	if line <= 0 || len(text) > maxBlockSearch || !strings.Contains(err.Error(), "did not find expected") {
		return line
	}
	// The offset each line starts at, lines broken as yaml.v3 breaks them.
	starts := []int{0}
	for off := nextLine(text, 0); off < len(text); off = nextLine(text, off) {
		starts = append(starts, off)
	}
	broken := func(n int) bool { // lines 1..n
		end := len(text)
		if n < len(starts) {
			end = starts[n]
		}
		var node yaml.Node
		err := yaml.Unmarshal(text[:end], &node)
		return err != nil && !strings.Contains(err.Error(), "end of stream")
	}
	lo, hi := line, len(starts) // lines 1..lo parse; 1..hi do not
	if broken(lo) || !broken(hi) {
		return line
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if broken(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// yaml11Scalar reads a plain scalar as kubectl does: sigs.k8s.io/yaml
// resolves it by YAML 1.1's rules (go-yaml v2: yes, no, on, off, y and n
// are booleans; 0x1F, 0o17, 017 and 1_000 integers; 1e3 a float), then
// goes through JSON, where a float with an integer value is written as an
// integer (1e3 is 1000, 2.0 is 2), which the API server reads as one. ok is
// false for a string or a value YAML 1.2 reads the same way.
func yaml11Scalar(s string) (any, bool) {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
		return true, true
	case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return false, true
	}
	if s == "" || !strings.ContainsAny(s[:1], "+-.0123456789") {
		return nil, false
	}
	plain := strings.ReplaceAll(s, "_", "")
	if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return i, true
	}
	if strings.HasPrefix(plain, "0b") || strings.HasPrefix(plain, "-0b") {
		if i, err := strconv.ParseInt(strings.Replace(plain, "0b", "", 1), 2, 64); err == nil {
			return i, true
		}
	}
	if yamlFloat.MatchString(plain) {
		f, err := strconv.ParseFloat(plain, 64)
		if err != nil {
			return nil, false
		}
		// encoding/json writes an integral float below 1e21 without a
		// fraction or an exponent: an integer to the API server.
		if f == math.Trunc(f) && math.Abs(f) < 1e21 && f >= math.MinInt64 && f < math.MaxInt64 {
			return int64(f), true
		}
		return f, true
	}
	return nil, false
}

// yamlFloat is go-yaml v2's float syntax.
var yamlFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

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
	// offset is how many lines of the stream precede the node's piece.
	offset int
	// yaml11 reads plain scalars as kubectl does (yaml11Scalar): YAML,
	// not JSON.
	yaml11 bool
}

// line is a node's line in the stream.
func (c *converter) line(n *yaml.Node) int { return n.Line + c.offset }

func (c *converter) fail(n *yaml.Node, format string, args ...any) error {
	c.errLine = c.line(n)
	return fmt.Errorf(format, args...)
}

func (c *converter) convert(n *yaml.Node, p string, depth int) (any, error) {
	c.nodes++
	if c.nodes > maxNodes {
		return nil, c.fail(n, "document too large: more than %d values", maxNodes)
	}
	if depth > MaxDepth {
		return nil, c.fail(n, "document nested deeper than %d levels at %s", MaxDepth, orRoot(p))
	}
	if p != "" {
		c.lines[p] = c.line(n)
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
			first[key] = c.line(k)
			child := childPath(p, key)
			val, err := c.convert(v, child, depth+1)
			if err != nil {
				return nil, err
			}
			c.lines[child] = c.line(k)
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
	if c.yaml11 && n.Style&(yaml.TaggedStyle|yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		if v, ok := yaml11Scalar(n.Value); ok {
			return v, nil
		}
	}
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
			// Beyond int64 (to 2^64, where yaml.v3 reads a float itself):
			// a float, as encoding/json, the API server's, reads it.
			if f, ferr := strconv.ParseFloat(n.Value, 64); ferr == nil {
				return f, nil
			}
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

func CUEErrLine(err error) int {
	for _, p := range cueErrPositions(err) {
		return p
	}
	return 0
}

// documentFromValue turns a concrete CUE value into a document, with the
// line of every field. file is empty for embedded CUE.
func DocumentFromValue(src *source.Files, v cue.Value, file string) (Document, error) {
	data, err := v.MarshalJSON()
	if err != nil {
		return Document{}, fmt.Errorf("CUE: %s", src.Details(err))
	}
	docs := ReadYAML(file, data)
	if len(docs) != 1 || docs[0].Err != nil {
		return Document{}, fmt.Errorf("CUE: the value is not an object")
	}
	d := docs[0]
	pos := v.Pos()
	if file == "" {
		pos = declaration(v)
		d.File = src.Display(pos.Filename())
	}
	d.Line = pos.Line()
	d.lines = map[string]int{}
	walkPositions(v, "", pos.Filename(), d.lines)
	return d, nil
}

// declaration is where a value declared in CUE was written: in the file
// most of its fields are written in (not a pattern it met, which adds a
// field or two), at its first value there.
func declaration(v cue.Value) token.Pos {
	count := map[string]int{}
	first := map[string]token.Pos{}
	note := func(p token.Pos) {
		if !p.IsValid() {
			return
		}
		if f, ok := first[p.Filename()]; !ok || p.Line() < f.Line() {
			first[p.Filename()] = p
		}
	}
	// The leaves of the value, by file.
	var leaves func(v cue.Value, depth int)
	leaves = func(v cue.Value, depth int) {
		var it interface {
			Next() bool
			Value() cue.Value
		}
		switch v.IncompleteKind() {
		case cue.StructKind:
			fields, err := v.Fields()
			if err != nil {
				return
			}
			it = fields
		case cue.ListKind:
			items, err := v.List()
			if err != nil {
				return
			}
			it = &items
		}
		if it == nil || depth > 20 {
			p := v.Pos()
			count[p.Filename()]++
			if depth == 1 {
				note(p)
			}
			return
		}
		for it.Next() {
			leaves(it.Value(), depth+1)
		}
	}
	leaves(v, 0)
	for _, p := range source.ConjunctPositions(v) {
		note(p)
	}
	best := v.Pos()
	for f, n := range count {
		if f != "" && (n > count[best.Filename()] || n == count[best.Filename()] && f < best.Filename()) {
			best = first[f]
		}
	}
	if p, ok := first[best.Filename()]; ok {
		return p
	}
	return best
}

// walkPositions records the line of each field written in file (another
// file's lines would mislead: a field a definition gives).
func walkPositions(v cue.Value, p, file string, lines map[string]int) {
	if pos := v.Pos(); p != "" && pos.Filename() == file {
		lines[p] = pos.Line()
	}
	switch v.IncompleteKind() {
	case cue.StructKind:
		it, err := v.Fields()
		if err != nil {
			return
		}
		for it.Next() {
			child := childPath(p, it.Selector().Unquoted())
			walkPositions(it.Value(), child, file, lines)
		}
	case cue.ListKind:
		it, err := v.List()
		if err != nil {
			return
		}
		for i := 0; it.Next(); i++ {
			walkPositions(it.Value(), fmt.Sprintf("%s[%d]", p, i), file, lines)
		}
	}
}

// childPath extends a Kubernetes field path by a key: spec.trainer for a
// field, metadata.labels[app.kubernetes.io/name] for a key that is not an
// identifier, or that is an opaque key's token (tokens.Key: its key, put
// back, may be either, and is a map's key).
func childPath(p, key string) string {
	if !isIdentifier(key) || strings.HasPrefix(key, tokens.Key.Prefix()) {
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

func GroupOf(apiVersion string) string {
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// probeFile names the file of a probe document (probe.go), before its
// runtime's name.
const ProbeFile = "probe of "
