// Command image writes cuetrainer's container image as an OCI image layout
// from a static binary, offline (`make image`):
//
//	go run ./hack/image -binary bin/linux_amd64/cuetrainer -out bin/image -tag v0.1.0
//
// The image has no base: the binary at /cuetrainer (the entry point), the
// nonroot user 65532 of distroless, its home and /tmp. SOURCE_DATE_EPOCH
// sets the time it records (0 when unset), so a build is reproducible.
// Push it with `skopeo copy oci:bin/image:v0.1.0 docker://REPO:v0.1.0`.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/cuetrainer/cuetrainer/internal/ociimage"
)

func main() {
	var s ociimage.Spec
	var out, source string
	flag.StringVar(&s.Binary, "binary", "", "the static binary")
	flag.StringVar(&s.Name, "name", "cuetrainer", "its file name in the image, /NAME, the entry point")
	flag.StringVar(&s.Tag, "tag", "", "the image's tag in the layout (the release, vX.Y.Z)")
	flag.StringVar(&s.OS, "os", "linux", "the binary's GOOS")
	flag.StringVar(&s.Arch, "arch", runtime.GOARCH, "the binary's GOARCH")
	flag.StringVar(&out, "out", "bin/image", "the OCI image layout directory to write")
	flag.StringVar(&source, "source", "https://github.com/cuetrainer/cuetrainer", "the org.opencontainers.image.source label")
	flag.Parse()
	if s.Binary == "" || s.Tag == "" {
		fmt.Fprintln(os.Stderr, "image: -binary and -tag are required")
		os.Exit(2)
	}
	epoch := int64(0)
	if v := os.Getenv("SOURCE_DATE_EPOCH"); v != "" {
		var err error
		if epoch, err = strconv.ParseInt(v, 10, 64); err != nil {
			fmt.Fprintf(os.Stderr, "image: SOURCE_DATE_EPOCH %q: %v\n", v, err)
			os.Exit(2)
		}
	}
	s.Created = time.Unix(epoch, 0)
	s.Labels = map[string]string{
		"org.opencontainers.image.title":   "cuetrainer",
		"org.opencontainers.image.version": s.Tag,
		"org.opencontainers.image.source":  source,
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	desc, err := ociimage.Write(out, s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Printf("image %s (%s/%s) %s in %s\n", s.Tag, s.OS, s.Arch, desc.Digest, out)
}
