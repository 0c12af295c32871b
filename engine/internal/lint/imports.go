package lint

import (
	"fmt"
	"github.com/cuetrainer/cuetrainer/engine/internal/checks"
	"io/fs"
	"path"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"

	"github.com/cuetrainer/cuetrainer"
	"github.com/cuetrainer/cuetrainer/engine/internal/source"
)

// An admin's policy is pure CUE: it reads the objects the engine gives it
// and nothing else. CUE can read more: @extern(embed) with @embed(...)
// reads files beside the CUE file (cuecontext.New in cuelang.org/go v0.17
// always adds the embed injection, and neither it nor cue/load has an
// option to leave it out; cue/load's Overlay serves the embedded schemas
// and falls back to the host's files), tool/... packages run commands and
// read files, the environment and the network (under `cue cmd`; the engine
// runs no tasks, but a policy has no use for them), and an import of a
// module the binary does not carry would go to a module registry.
// Refusals refuses all of it before the file is compiled.

// pureStdlib are the packages of CUE's standard library (cuelang.org/go
// v0.17.1 pkg/) a policy may import: all but tool and tool/..., which do
// I/O. A package a later CUE adds is refused until it is listed here.
var pureStdlib = map[string]bool{
	"crypto/ed25519": true, "crypto/hmac": true, "crypto/md5": true, "crypto/sha1": true,
	"crypto/sha256": true, "crypto/sha512": true,
	"encoding/base64": true, "encoding/csv": true, "encoding/hex": true, "encoding/json": true,
	"encoding/openapi": true, "encoding/toml": true, "encoding/yaml": true,
	"html": true, "list": true, "math": true, "math/bits": true, "net": true, "path": true,
	"regexp": true, "strconv": true, "strings": true, "struct": true,
	"text/tabwriter": true, "text/template": true, "time": true, "uuid": true,
}

// Refusals are why a policy file may not be loaded, a problem per refused
// import or attribute, each at its file:line:column; none when it may.
// The file was parsed under the name the user knows it by.
func Refusals(f *ast.File) []source.Problem {
	var refused []source.Problem
	refuse := func(pos token.Pos, what, why string) {
		refused = append(refused, source.Problem{File: pos.Filename(), Line: pos.Line(), Column: pos.Column(), Message: what + ": " + why, Check: checks.PolicyFile.Name})
	}
	ast.Walk(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			p, err := literal.Unquote(n.Path.Value)
			if err != nil {
				refuse(n.Path.Pos(), "import "+n.Path.Value, "not a valid import path")
				return false
			}
			if why := importRefusal(p); why != "" {
				refuse(n.Path.Pos(), fmt.Sprintf("import %q", p), why)
			}
		case *ast.Attribute:
			switch name, body := n.Split(); name {
			case "extern":
				refuse(n.Pos(), "@extern("+body+")", "a policy may not use extern attributes: @extern(embed) would read files")
			case "embed":
				refuse(n.Pos(), "@embed("+body+")", "a policy may not embed files")
			}
		}
		return true
	}, nil)
	return refused
}

// importRefusal says why a policy may not import a package, or "" when it
// may: CUE's standard library but tool/..., and the packages the binary
// carries: the module's own, the Kubernetes and JobSet types among them
// (cuetrainer.dev/cuetrainer/schemas/gen/k8s.io/api/core/v1), and the same
// types by their own import paths (k8s.io/api/core/v1, see source.GenPrefix).
func importRefusal(p string) string {
	ip := ast.ParseImportPath(p)
	first, _, _ := strings.Cut(ip.Path, "/")
	switch {
	case ip.Path == "tool" || strings.HasPrefix(ip.Path, "tool/"):
		return "a policy may not import tool packages: they run commands and read files, the environment and the network"
	case !strings.Contains(first, "."):
		if pureStdlib[ip.Path] {
			return ""
		}
		return "not a package of CUE's standard library a policy may import"
	case ip.Path == source.ModulePath || strings.HasPrefix(ip.Path, source.ModulePath+"/"):
		return ""
	}
	if info, err := fs.Stat(cuetrainer.CUE, path.Join(source.GenDir, ip.Path)); err == nil && info.IsDir() {
		return ""
	}
	return "a policy may import only CUE's standard library and the packages cuetrainer carries; this one would be fetched from a module registry"
}
