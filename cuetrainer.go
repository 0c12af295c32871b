// Package cuetrainer embeds the CUE that defines cuetrainer: the module file,
// the Kubernetes and JobSet types generated into cue.mod/gen, the schemas and
// rules in schemas/, and the shipped runtimes in runtimes/.
package cuetrainer

import "embed"

// CUE is the CUE module, rooted at the repository root.
//
//go:embed cue.mod/module.cue cue.mod/gen schemas/*.cue runtimes/*.cue
var CUE embed.FS
