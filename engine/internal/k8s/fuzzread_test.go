package k8s

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"go.yaml.in/yaml/v3"
)

// FuzzReadYAML reads arbitrary bytes: no panic; every document is an
// object or an error; lines are lines of the input, in order; and an
// object read back from its own YAML is the same JSON value.
func FuzzReadYAML(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: [\n---\nkind: B\n",
		"%YAML 1.1\n---\na: &x [1, 2]\nb: *x\n...\n# c\n---\n- 1\n",
		"apiVersion: v1\nkind: List\nitems:\n- {kind: A, apiVersion: v1}\n- 3\n",
		"a: |\n  ---\n  text\n---\nb: \"q\\u00e9\"\r\n--- {c: 1}\n",
		"a: 1\nb: 2\na: 3\n",
		"\ufeffa: 1.5e3\nb: 0x1F\nc: .inf\nd: 10000000000000000000\n",
		"kind: \xff\n---\nkind: \x01\n---\nkind: ok\n",
		"{[a]: b}\n---\n<<: {a: 1}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := countBreaks(data) + 1 // as YAML counts: \r, NEL, LS, PS too
		prev := 0
		for i, d := range ReadYAML("f.yaml", data) {
			if (d.Err == nil) == (d.Object == nil) {
				t.Fatalf("document %d: Err %v with Object %v", i, d.Err, d.Object)
			}
			if d.Line < 1 || d.Line > lines {
				t.Fatalf("document %d: line %d of %d lines (%v)", i, d.Line, lines, d.Err)
			}
			if d.Line < prev {
				t.Fatalf("document %d: line %d before the previous document's %d", i, d.Line, prev)
			}
			prev = d.Line
			for p, l := range d.lines {
				if l < 1 || l > lines {
					t.Fatalf("document %d: %s at line %d of %d", i, p, l, lines)
				}
			}
			if d.Err != nil || (d.APIVersion() == "v1" && d.Kind() == "List") {
				continue
			}
			text, err := yaml.Marshal(d.Object)
			if err != nil {
				t.Fatalf("document %d: writing it: %v", i, err)
			}
			again := ReadYAML("again.yaml", text)
			if len(again) != 1 || again[0].Err != nil {
				t.Fatalf("document %d does not read back from\n%s\n%+v", i, text, again)
			}
			// As JSON numbers: 080 is read as the float 80, and written
			// back as 80, an int.
			if !reflect.DeepEqual(asFloats(again[0].Object), asFloats(d.Object)) {
				t.Fatalf("document %d reads back otherwise:\n%#v\n%#v", i, d.Object, again[0].Object)
			}
		}
	})
}

// FuzzReadJSON: a JSON object encoding/json reads (without duplicate keys,
// within the reader's bounds) must read with ReadYAML as one document with
// the same content; and the admission webhooks read the API server's JSON
// with ReadObject, which must read it exactly as ReadYAML does.
func FuzzReadJSON(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"a","namespace":"n"},"spec":{"runtimeRef":{"name":"torch-distributed"}}}`,
		`{"a":[1,-0,1.5e300,"\u003c\u0026\u2028",null,true,{}],"b":{"c":"\t\"\\/"}}`,
		`{"n":10000000000000000000,"m":-9223372036854775808,"f":1e20,"g":0.000001}`,
		`  {"a" : "x" , "b":[ ]}` + "\n\t",
		`{"---":"...","#":"%","key: x":"- y"}`,
		`{"a":"\ud83d\ude00","b":"\u00e9"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !plainJSONObject(data) {
			return
		}
		var want map[string]any
		if err := json.Unmarshal(data, &want); err != nil {
			return // a number out of float64's range, say
		}
		docs := ReadYAML("f.json", data)
		if len(docs) != 1 || docs[0].Err != nil {
			t.Fatalf("valid JSON not read as one object: %+v", docs)
		}
		if got := asFloats(docs[0].Object); !reflect.DeepEqual(got, asFloats(want)) {
			t.Fatalf("JSON read otherwise:\n%#v\nencoding/json:\n%#v", got, want)
		}
		// A webhook's reader (ReadObject) reads it as ReadYAML does, the
		// numbers' types included.
		if got := ReadObject("f.json", data); got.Err != nil || !reflect.DeepEqual(got.Object, docs[0].Object) {
			t.Fatalf("ReadObject read it otherwise:\n%#v (%v)\nReadYAML:\n%#v", got.Object, got.Err, docs[0].Object)
		}
		// What the memos keep of it (pack.go) is it.
		if p, ok := value.Pack(docs[0].Object); !ok || !reflect.DeepEqual(p.Value(), docs[0].Object) {
			t.Fatalf("packed (%v) and unpacked otherwise:\n%#v", ok, p.Value())
		}
	})
}

// plainJSONObject reports whether data is one JSON object in UTF-8 (the
// reader refuses other bytes, where encoding/json would replace them), with
// no key twice in an object, nested at most 90 deep, of fewer than 2^19
// values: what the reader must take.
func plainJSONObject(data []byte) bool {
	if !utf8.Valid(data) || !json.Valid(data) || !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys   map[string]bool
		object bool
		key    bool // the next string is a key
	}
	var stack []frame
	values := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		values++
		if values > 1<<19 {
			return false
		}
		top := len(stack) - 1
		isKey := top >= 0 && stack[top].object && stack[top].key
		if top >= 0 && stack[top].object {
			stack[top].key = !stack[top].key
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				stack = append(stack, frame{keys: map[string]bool{}, object: tok == '{', key: true})
				if len(stack) > 90 {
					return false
				}
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].key = true
				}
			}
		case string:
			if isKey {
				if stack[top].keys[tok] {
					return false
				}
				stack[top].keys[tok] = true
			}
		}
	}
}

// asFloats turns every number into a float64, as encoding/json reads them.
func asFloats(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = asFloats(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = asFloats(x)
		}
		return out
	case int64:
		return float64(v)
	}
	return v
}

// TestReadYAMLJSON: JSON is read as encoding/json reads it (the webhooks
// read the API server's JSON with ReadYAML), on its lines.
func TestReadYAMLJSON(t *testing.T) {
	for _, tc := range []struct{ name, input string }{
		{"NEL, LS and PS are not line breaks", "{\"a\": \"x\u0085y\u2028z\u2029\"}"},
		{"DEL and C1 controls", "{\"a\": \"\x7f\u0080\u009f\ufeff\"}"},
		{"a surrogate pair", `{"a": "\ud83d\ude00 \u00e9"}`},
		{"lone surrogates", `{"a": "\ud800x\udc00\ud83d\u0041"}`},
		{"escaped backslashes", `{"a": "\\ud83d\\ude00\\", "b": "\"\\\/\b\f\n\r\t"}`},
		{"tabs between tokens", "\t{\n\t\"a\":\t[1,\t2]\n}\n\t"},
		{"integers beyond int64", `{"a": 10000000000000000000, "b": -9223372036854775808, "c": 18446744073709551615}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.input), &want); err != nil {
				t.Fatal(err)
			}
			docs := ReadYAML("x.json", []byte(tc.input))
			if len(docs) != 1 || docs[0].Err != nil {
				t.Fatalf("read %+v", docs)
			}
			if got := asFloats(docs[0].Object); !reflect.DeepEqual(got, want) {
				t.Errorf("read %#v, encoding/json reads %#v", got, want)
			}
		})
	}
	docs := ReadYAML("x.json", []byte("{\n\t\"kind\": \"A\",\n\t\"spec\": {\"s\": \"\\ud83d\\ude00\",\n\t\t\"n\": 1}\n}\n"))
	if len(docs) != 1 || docs[0].Err != nil || docs[0].LineOf("spec.n") != 4 || docs[0].LineOf("spec.s") != 3 {
		t.Errorf("lines of a tab-indented JSON object: %+v", docs)
	}
}
