package engine

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
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

// FuzzRender admits a TrainJob with fuzzed fields on a shipped runtime and,
// when admitted, renders it twice: no panic, the same objects both times
// (the plan cache serves the second), every object in the TrainJob's
// namespace and controlled by it, and a JobSet of its name. An admitted
// TrainJob renders without errors, unless a quantity of it does not parse
// (admission does not check quantities yet: #Quantity is _).
func FuzzRender(f *testing.F) {
	f.Add(uint8(3), int64(2), "img:1", "--epochs=1", "MY_ENV", "v", false, "2", "app", "x")
	f.Add(uint8(0), int64(4), "", "", "PET_NNODES", "4", true, "500m", "a/b", "")
	f.Add(uint8(8), int64(0), "x", "\n", "", "", false, "abc", "", "\x00")
	f.Add(uint8(1), int64(-1), strings.Repeat("i", 600), "a b", "E", "$(E)", false, "1Ei", "k", "v")
	e := testEngine(f)
	runtimes := e.Builtin()
	f.Fuzz(func(t *testing.T, rt uint8, numNodes int64, image, arg, envName, envValue string, suspend bool, cpu, labelKey, labelValue string) {
		trainer := map[string]any{"numNodes": numNodes}
		if image != "" {
			trainer["image"] = image
		}
		if arg != "" {
			trainer["args"] = []any{arg}
		}
		if envName != "" {
			trainer["env"] = []any{map[string]any{"name": envName, "value": envValue}}
		}
		if cpu != "" {
			trainer["resourcesPerNode"] = map[string]any{"limits": map[string]any{"cpu": cpu}}
		}
		md := map[string]any{"name": "fz", "namespace": "ns", "uid": "uid-1"}
		if labelKey != "" {
			md["labels"] = map[string]any{labelKey: labelValue}
		}
		obj := map[string]any{
			"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": md,
			"spec": map[string]any{"runtimeRef": map[string]any{"name": runtimes[int(rt)%len(runtimes)].Name()}, "suspend": suspend, "trainer": trainer},
		}
		s := e.NewSession(SessionOptions{})
		r := s.Admit(Document{File: "fuzz", Line: 1, Object: obj})
		for _, x := range append(r.Errors, r.Warnings...) {
			_ = x.String()
		}
		if r.Rejected() {
			return
		}
		first, second := s.Render(r, RenderOptions{}), s.Render(r, RenderOptions{})
		if a, b := withoutKeys(first.Objects), withoutKeys(second.Objects); !reflect.DeepEqual(a, b) || !reflect.DeepEqual(first.Errors, second.Errors) {
			t.Fatalf("two renders differ:\n%v\n%v", a, b)
		}
		if len(first.Errors) > 0 {
			if _, err := resource.ParseQuantity(cpu); cpu != "" && err != nil {
				return
			}
			t.Fatalf("an admitted TrainJob does not render: %v", findingStrings(first.Errors))
		}
		jobSet := false
		for _, o := range first.Objects {
			m := meta(o)
			if m["namespace"] != "ns" {
				t.Errorf("%v %v in namespace %v", o["kind"], m["name"], m["namespace"])
			}
			owners, _ := m["ownerReferences"].([]any)
			owned := false
			for _, ref := range owners {
				ref, _ := ref.(map[string]any)
				if ref["kind"] == "TrainJob" && ref["name"] == "fz" && ref["uid"] == "uid-1" && ref["controller"] == true {
					owned = true
				}
			}
			if !owned {
				t.Errorf("%v %v is not controlled by the TrainJob: %v", o["kind"], m["name"], owners)
			}
			if o["kind"] == "JobSet" && m["name"] == "fz" {
				jobSet = true
			}
		}
		if !jobSet {
			t.Errorf("no JobSet fz among %d objects", len(first.Objects))
		}
	})
}

// withoutKeys copies objects without the data of Secrets, whose keys each
// render generates afresh.
func withoutKeys(objs []map[string]any) []map[string]any {
	out := make([]map[string]any, len(objs))
	for i, o := range objs {
		out[i] = o
		if o["kind"] == "Secret" {
			c := make(map[string]any, len(o))
			for k, v := range o {
				if k != "data" && k != "stringData" {
					c[k] = v
				}
			}
			out[i] = c
		}
	}
	return out
}
