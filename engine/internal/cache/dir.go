package cache

import (
	"bytes"
	"cmp"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Dir keeps results in files of a directory, one per key, for other
// processes to find: a key names a result only when it is made of all the
// result depends on (a content hash), so an entry is never stale, only
// unused. Reads and writes that fail are misses: a result kept is a saving,
// never a requirement. At most max entries stay, the least recently
// written dropped first.
type Dir struct {
	path string
	max  int
}

// NewDir returns the cache in the directory path (made when first
// written), keeping at most max entries.
func NewDir(path string, max int) *Dir { return &Dir{path: path, max: max} }

// Path is the cache's directory.
func (d *Dir) Path() string { return d.path }

// Get returns the bytes kept under key, and whether there are any.
func (d *Dir) Get(key string) ([]byte, bool) {
	data, err := os.ReadFile(filepath.Join(d.path, key))
	return data, err == nil
}

// Put keeps data under key: written to a file of its own, then renamed, so
// that a reader never sees half of it.
func (d *Dir) Put(key string, data []byte) {
	if err := os.MkdirAll(d.path, 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(d.path, ".tmp-*")
	if err != nil {
		return
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), filepath.Join(d.path, key)) != nil {
		os.Remove(f.Name())
		return
	}
	d.trim()
}

// trim drops the oldest entries past max.
func (d *Dir) trim() {
	entries, err := os.ReadDir(d.path)
	if err != nil || len(entries) <= d.max {
		return
	}
	type aged struct {
		name string
		mod  int64
	}
	var all []aged
	for _, e := range entries {
		if info, err := e.Info(); err == nil && !e.IsDir() && !strings.HasPrefix(e.Name(), ".tmp-") {
			all = append(all, aged{e.Name(), info.ModTime().UnixNano()})
		}
	}
	slices.SortFunc(all, func(a, b aged) int { return cmp.Compare(a.mod, b.mod) })
	for _, a := range all[:max(len(all)-d.max, 0)] {
		os.Remove(filepath.Join(d.path, a.name))
	}
}

// ExecutableID identifies the running binary by its Go build ID (what `go
// tool buildid` prints), which changes with any change of its code or its
// embedded files; "" when it cannot be read, and then nothing is to be
// kept on disk for it.
func ExecutableID() string {
	executableID.once.Do(func() {
		if exe, err := os.Executable(); err == nil {
			executableID.id = readBuildID(exe)
		}
	})
	return executableID.id
}

var executableID struct {
	once sync.Once
	id   string
}

// readBuildID reads a Go binary's build ID: an ELF binary's from its
// note section, another's (Mach-O, PE) from the start of its text, where
// the linker writes `\xff Go build ID: "…"\n \xff`.
func readBuildID(name string) string {
	if f, err := elf.Open(name); err == nil {
		defer f.Close()
		if s := f.Section(".note.go.buildid"); s != nil {
			if data, err := s.Data(); err == nil && len(data) > 16 {
				// namesz, descsz, type (4 bytes each), "Go\x00\x00", desc.
				desc := data[16:]
				if n := int(f.ByteOrder.Uint32(data[4:8])); n <= len(desc) {
					return string(desc[:n])
				}
			}
		}
		return ""
	}
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 32<<10)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	const prefix = "\xff Go build ID: \""
	i := bytes.Index(head, []byte(prefix))
	if i < 0 {
		return ""
	}
	rest := head[i+len(prefix):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}
