// Package corpus reads the conformance corpus (test/conformance/testdata,
// README.md there): each case's input, and what Kubeflow Trainer created,
// rejected or warned about.
package corpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/cuetrainer/cuetrainer/engine"
)

// Case is one directory of the corpus.
type Case struct {
	Name     string
	Dir      string
	Errors   []ExpectedError // from expected-errors.json; nil for a rendered case
	Warnings []string        // the text of each expected warning
}

// ExpectedError is one entry of expected-errors.json.
type ExpectedError struct {
	Path   *string `json:"path"`
	Type   *string `json:"type"`
	Detail string  `json:"detail"`
}

// Dir is the corpus copy in the repository.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// Cases reads every case of the Kubeflow corpus.
func Cases() ([]Case, error) {
	dirs, err := filepath.Glob(filepath.Join(Dir(), "kubeflow", "cases", "*"))
	if err != nil || len(dirs) == 0 {
		return nil, fmt.Errorf("no cases under testdata/kubeflow/cases (run make conformance-data): %v", err)
	}
	var out []Case
	for _, dir := range dirs {
		c := Case{Name: filepath.Base(dir), Dir: dir}
		if data, err := os.ReadFile(filepath.Join(dir, "expected-errors.json")); err == nil {
			if err := json.Unmarshal(data, &c.Errors); err != nil {
				return nil, fmt.Errorf("%s: %v", dir, err)
			}
			if len(c.Errors) == 0 {
				return nil, fmt.Errorf("%s: expected-errors.json lists no error", dir)
			}
		} else if _, err := os.Stat(filepath.Join(dir, "expected.yaml")); err != nil {
			return nil, fmt.Errorf("%s: neither expected-errors.json nor expected.yaml", dir)
		}
		if data, err := os.ReadFile(filepath.Join(dir, "expected-warnings.txt")); err == nil {
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				_, text, ok := strings.Cut(line, "(create): ")
				if !ok {
					return nil, fmt.Errorf("%s: warning line without (create): %q", dir, line)
				}
				c.Warnings = append(c.Warnings, text)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// Input reads the case's input documents, in order.
func (c Case) Input() ([]engine.Document, error) {
	return read(filepath.Join(c.Dir, "input.yaml"))
}

// Expected reads the objects Kubeflow created for a rendered case.
func (c Case) Expected() ([]map[string]any, error) {
	docs, err := read(filepath.Join(c.Dir, "expected.yaml"))
	if err != nil {
		return nil, err
	}
	objs := make([]map[string]any, len(docs))
	for i, d := range docs {
		objs[i] = d.Object
	}
	return objs, nil
}

func read(path string) ([]engine.Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	docs := engine.ReadYAML(filepath.Base(path), data)
	for _, d := range docs {
		if d.Err != nil {
			return nil, d.Err
		}
	}
	return docs, nil
}
