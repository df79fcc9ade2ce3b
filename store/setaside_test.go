package store

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a log sink safe for the watcher's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSetAsideConfigSaysWhereAndRecovers: a config.yaml that does not
// parse is reported with the lines it names, as written, and as set aside
// whole; when it reads again, that is logged.
func TestSetAsideConfigSaysWhereAndRecovers(t *testing.T) {
	dir := t.TempDir()
	var logs lockedBuffer
	opts := testOptions()
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	path := filepath.Join(dir, ConfigFile)
	good, _ := os.ReadFile(path)
	lines := strings.Split(string(good), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "    read_file:") {
			lines[i+1] = "   " + lines[i+1] // one sibling indented deeper
			break
		}
	}
	writeFile(t, path, []byte(strings.Join(lines, "\n")))
	waitFor(t, "the broken file reported", func() bool { return hasProblem(s.Problems(), ConfigFile, MsgSetAside) })
	var msg string
	for _, p := range s.Problems() {
		if p.Path == ConfigFile {
			msg = p.Message
		}
	}
	if !strings.Contains(msg, "line ") || !strings.Contains(msg, `read_text_file: allow"`) {
		t.Errorf("the problem does not show the offending line: %s", msg)
	}
	writeFile(t, path, good)
	waitFor(t, "the fixed file read", func() bool { return len(s.Problems()) == 0 })
	waitFor(t, "the recovery logged", func() bool { return strings.Contains(logs.String(), "config.yaml reads again") })
}
