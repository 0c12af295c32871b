//go:build tools

package cuetrainer

// The Go packages `make cue-gen` generates cue.mod/gen from, kept in go.mod
// at the versions that generation must use.
import (
	_ "k8s.io/api/core/v1"
	_ "k8s.io/api/scheduling/v1"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1"
	_ "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)
