package testenv

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Eventually polls check every interval until it passes, or fails the test
// with its last error once within has passed.
func Eventually(t testing.TB, within, interval time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, within, err)
		}
		time.Sleep(interval)
	}
}

// FreeAddress is FreePort as host:port, "0" (any port) when there is none.
func FreeAddress() string {
	p, err := FreePort()
	if err != nil {
		return "0"
	}
	return fmt.Sprintf("127.0.0.1:%d", p)
}

// PrintLogs writes the tail (up to tail bytes) of every *.log file of dir:
// the logs of the processes a suite started.
func PrintLogs(w io.Writer, dir string, tail int) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if len(data) > tail {
			data = data[len(data)-tail:]
		}
		fmt.Fprintf(w, "=== %s (tail)\n%s\n", filepath.Base(f), data)
	}
}

// NeedProcesses is Need for a suite of processes logging into logDir: a
// test that fails also logs the tail of each process's log.
func NeedProcesses(t *testing.T, up bool, why, logDir string, tail int) {
	t.Helper()
	Need(t, up, why)
	t.Cleanup(func() {
		if t.Failed() {
			var b strings.Builder
			PrintLogs(&b, logDir, tail)
			t.Log(b.String())
		}
	})
}

// Publish lays files out in dir as the kubelet updates a ConfigMap volume:
// a new hidden directory ..vN, the ..data link switched to it atomically,
// and a link per file from the top; files no longer there lose their link.
func Publish(dir string, version int, files map[string][]byte) error {
	v := fmt.Sprintf("..v%d", version)
	if err := os.Mkdir(filepath.Join(dir, v), 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, v, name), data, 0o644); err != nil {
			return err
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(v, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		return err
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			if _, keep := files[e.Name()]; !keep {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	for name := range files {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
			return err
		}
	}
	return nil
}
