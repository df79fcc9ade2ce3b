package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// BenchmarkReloadAfterEdit measures the time from writing a config.yaml
// edit to the new policy deciding: store.Open on a temp dir, then per
// iteration an edit that flips one rule's action, polled through Engine()
// until the decision changes. It includes the watcher's debounce
// (reloadDelay) and the compile.
func BenchmarkReloadAfterEdit(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(dir, testOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	base := string(readFileB(b, filepath.Join(dir, ConfigFile)))
	req := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "make reload-probe"})}
	action := "deny"
	for b.Loop() {
		want := policy.Deny
		if action == "allow" {
			want = policy.Allow
		}
		text := strings.Replace(base, "  rules: []", "  rules:\n    - {id: probe, tools: [bash], pattern: \"make reload-probe\", action: "+action+"}", 1)
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(text), 0o600); err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for inForce(s).Evaluate(req).Level != want {
			if time.Now().After(deadline) {
				b.Fatal("the edit was not picked up within 10s")
			}
			time.Sleep(200 * time.Microsecond)
		}
		if action == "deny" {
			action = "allow"
		} else {
			action = "deny"
		}
	}
}

func readFileB(b *testing.B, path string) []byte {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}
