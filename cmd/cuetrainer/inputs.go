package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cuetrainer/cuetrainer/engine"
)

// inputExts are the files read from a directory.
var inputExts = map[string]bool{".yaml": true, ".yml": true, ".json": true, ".cue": true}

// readInputs reads the documents of every path in order: files, directories
// (recursively, in lexical order) and "-" for standard input. A path that
// cannot be read is reported and skipped; unreadable is true then.
func readInputs(e func() *engine.Engine, paths []string, stdin io.Reader, stderr io.Writer) (docs []engine.Document, unreadable bool) {
	for _, p := range paths {
		if p == "-" {
			data, err := io.ReadAll(stdin)
			if err != nil {
				fmt.Fprintf(stderr, "-: %v\n", err)
				unreadable = true
				continue
			}
			docs = append(docs, engine.ReadYAML("-", data)...)
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", p, unwrapPathError(err))
			unreadable = true
			continue
		}
		if !info.IsDir() {
			d, err := readFile(e, p)
			if err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", p, err)
				unreadable = true
			}
			docs = append(docs, d...)
			continue
		}
		err = filepath.WalkDir(p, func(f string, d fs.DirEntry, err error) error {
			if err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", f, unwrapPathError(err))
				unreadable = true
				return nil
			}
			if d.IsDir() || !inputExts[strings.ToLower(filepath.Ext(f))] {
				return nil
			}
			fd, err := readFile(e, f)
			if err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", f, err)
				unreadable = true
			}
			docs = append(docs, fd...)
			return nil
		})
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", p, err)
			unreadable = true
		}
	}
	return docs, unreadable
}

// readFile reads one file's documents; a CUE file is read by the engine,
// which e gives once it is loaded (nil when it did not load).
func readFile(e func() *engine.Engine, path string) ([]engine.Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if strings.EqualFold(filepath.Ext(path), ".cue") {
		eng := e()
		if eng == nil {
			return nil, errors.New("not read: the policy did not load")
		}
		return eng.ReadCUE(path, data), nil
	}
	return engine.ReadYAML(path, data), nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
