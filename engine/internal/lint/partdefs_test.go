package lint

import "testing"

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
		got := refusals(t, tc.text, refusal)
		if refused := len(got) > 0; refused != tc.refused {
			t.Errorf("%s: refused %v (%q), want %v", tc.name, refused, got, tc.refused)
		}
	}
}

// TestPlanFieldNothingGives: a plan's field written _ reads what the
// kind's plan computes (replacesPlainML, as the shipped plainml.cue reads
// it); a misspelt one is a new field nothing gives a value, which the
// load refused before at cuetrainer's own file, with a problem of carried
// values. It is refused at the admin's line, with the name meant. The
// input and the context, which the engine gives, load.
func TestPlanFieldNothingGives(t *testing.T) {
	t.Parallel()
	plan := func(field string) string {
		return "package schemas\n\nplans: (#APIVersion): TrainJob: {\n\t" + field + ": _\n\tparts: orgPart: !" + field + "\n}\n"
	}
	const refusal = "is declared _ and nothing gives it a value"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"the plan's field", plan("replacesPlainML"), ""},
		{"a misspelt field", plan("replacesPlainMl"), `p.cue:4:2: plans."trainer.kubeflow.org/v1alpha1".TrainJob.replacesPlainMl is declared _ and nothing gives it a value, so every read of it is absent: did you mean replacesPlainML? (declared-unset)`},
		{"the input", "package schemas\n\nplans: (#APIVersion): TrainJob: {\n\tinput: _\n\tcontext: _\n}\n", ""},
		// Computed by a comprehension over the runtime's jobs: _ until
		// the plan has a runtime, and given all the same (torch.cue reads
		// it so).
		{"a field the plan computes from the runtime", plan("podSet"), ""},
	} {
		got := refusals(t, tc.text, refusal)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: %q, want no such refusal", tc.name, got)
		case tc.want != "" && (len(got) != 1 || got[0] != tc.want):
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
