package lint

import (
	"strings"
	"testing"
)

// TestPartSetsOptionalDefinition: a render part may set a definition its
// render declares optional (#wrapCommand?, which a framework that wraps
// the trainer's program sets, as Flux's part does): the render reads it,
// so it is no definition that reaches nothing. One the render has not
// declared at all is still refused.
func TestPartSetsOptionalDefinition(t *testing.T) {
	t.Parallel()
	const refusal = "is no definition of the TrainJob render"
	for _, tc := range []struct {
		name, text string
		refused    bool
	}{
		{"the render's optional definition", "package schemas\n\nrenderParts: (#APIVersion): TrainJob: orgwrap: {\n\t#wrapCommand: [\"/bin/launch\"]\n}\n", false},
		{"a definition the render has not", "package schemas\n\nrenderParts: (#APIVersion): TrainJob: orgwrap: {\n\t#wrapCommands: [\"/bin/launch\"]\n}\n", true},
	} {
		r := Run(withPolicy(t, "p.cue", tc.text))
		var got []string
		for _, p := range r.Problems {
			if strings.Contains(p.Message, refusal) {
				got = append(got, p.String())
			}
		}
		if refused := len(got) > 0; refused != tc.refused {
			t.Errorf("%s: refused %v (%q), want %v", tc.name, refused, got, tc.refused)
		}
	}
}
