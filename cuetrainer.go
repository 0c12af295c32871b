// Package cuetrainer embeds the CUE that defines cuetrainer: the module file,
// the schemas and rules in schemas/, the Kubernetes and JobSet types
// generated into schemas/gen (packages of the module itself, so that the
// module is whole for a CUE user who depends on it), and the shipped
// runtimes in runtimes/.
package cuetrainer

import "embed"

// CUE is the CUE module, rooted at the repository root.
//
//go:embed cue.mod/module.cue schemas/*.cue schemas/gen runtimes/*.cue
var CUE embed.FS
