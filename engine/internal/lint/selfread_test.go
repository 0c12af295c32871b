package lint

import (
	"strings"
	"testing"
)

// TestSelfReadInArguments: an argument to a helper that reads itself by
// the parameter's name, as the whole value or inside it (an
// interpolation), is refused at the read, since the name is the field,
// not the one around the call; a path from it into a part of its own
// value is CUE's to allow, and is not.
func TestSelfReadInArguments(t *testing.T) {
	t.Parallel()
	const helper = "package schemas\n\n#greet: {\n\t#who: string\n\t#cfg: {...}\n\tout: \"hello \\(#who)\"\n}\n\nadmission: (#APIVersion): TrainJob: {\n\tobject: _\n\t#who: object.metadata.name\n\twarnings: hi: [{message: "
	for _, tc := range []struct{ name, call, want string }{
		{"the whole value", `(#greet & {#who: #who}).out`, "p.cue:12:38: #who: #who refers to the field it is in, not to the #who around it, so #greet is given no value"},
		{"in an interpolation", `(#greet & {#who: "team \(#who)"}).out`, `p.cue:12:52: #who: "team \(#who)" reads #who, which refers to the field it is in, not to the #who around it, so #greet is given no value and the rule fails where it fires`},
		{"a path into its own value", `(#greet & {#who: "x", #cfg: {a: "b", c: #cfg.a}}).out`, ""},
		{"the outer one named", `(#greet & {#who: W}).out`, ""},
	} {
		text := helper + tc.call + "}]\n}\n"
		if tc.name == "the outer one named" {
			text = strings.Replace(text, "\t#who: object", "\tW=#who: object", 1)
		}
		var got []string
		for _, p := range Run(withPolicy(t, "p.cue", text)).Problems {
			if strings.Contains(p.Message, "refers to the field it is in") {
				got = append(got, p.String())
			}
		}
		if tc.want == "" && len(got) > 0 || tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
