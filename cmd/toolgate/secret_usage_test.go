package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestNoSecretInAnyOutput runs every command with a mistyped flag, --help
// and no arguments while $TOOLGATE_TOKEN holds a secret: usage text and
// errors name the variable, never its value (a command hook's stderr goes
// back to the model).
func TestNoSecretInAnyOutput(t *testing.T) {
	const secret = "tg_s3cret_value_never_shown"
	e := env(map[string]string{"TOOLGATE_TOKEN": secret, "TOOLGATE_URL": "http://127.0.0.1:1", "HOME": t.TempDir()})
	commands := [][]string{{"hook", "claude-code"}, {"hook", "codex"}, {"hook", "gemini"}, {"permissions"}, {"add-dir"},
		{"evaluate"}, {"setup", "claude-code"}, {"doctor"}, {"mcp"}, {"nonsense"}, {}}
	for _, c := range commands {
		for _, extra := range [][]string{{"--tokn", "x"}, {"--help"}, {"-h"}} {
			args := append(append([]string(nil), c...), extra...)
			var out, errb bytes.Buffer
			run(args, strings.NewReader("{}"), &out, &errb, e)
			if strings.Contains(out.String()+errb.String(), secret) {
				t.Errorf("toolgate %v printed the token:\n%s%s", args, out.String(), errb.String())
			}
		}
	}
}
