package main

import (
	"testing"

	"github.com/cuetrainer/cuetrainer/engine"
	"github.com/cuetrainer/cuetrainer/internal/objdiff"
)

func objects(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range engine.ReadYAML("x.yaml", data) {
		if d.Err != nil {
			t.Fatal(d.Err)
		}
		out = append(out, d.Object)
	}
	return out
}

func diffYAML(t *testing.T, want, got []byte) []string {
	return objdiff.Diff(objects(t, want), objects(t, got))
}
