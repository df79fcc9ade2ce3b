package engine_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// TestShellPositionalParameters: a `sh -c` script's $0, $1..., $@ and $*
// are bound to the words after it, so a denied command spelled through
// them is denied as written plainly. Each spelling is first run in real
// bash, with echo standing in for git, to show it runs the same command.
// The last rows are ordinary uses that stay allowed.
func TestShellPositionalParameters(t *testing.T) {
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "ask"}, "tools": map[string]any{"bash": "allow"},
		"rules":              []any{map[string]any{"id": "no_push", "tools": []any{"bash"}, "pattern": "git push *", "action": "deny"}},
		"external_directory": map[string]any{"*": "allow"}}
	e, problems := engine.Compile(perms, nil, engine.Options{Workspace: "/ws", HomeDir: "/home/u"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	cases := []struct {
		note, cmd string
		want      policy.Level
	}{
		{"$0 is the program", `sh -c '"$0" push origin main' git`, policy.Deny},
		{"$@ is the whole command", `bash -c '"$@"' _ git push origin main`, policy.Deny},
		{"$1 unquoted", `bash -c '$1 push origin main' _ git`, policy.Deny},
		{"exec $0 $@", `sh -c 'exec "$0" "$@"' git push origin main`, policy.Deny},
		{"${1} in braces", `bash -c '${1} push origin main' _ git`, policy.Deny},
		{"$* joined", `bash -c '$*' _ git push origin main`, policy.Deny},
		{"an ordinary $0", `sh -c 'echo "$0"' hello`, policy.Allow},
		{"an ordinary $1", `bash -c 'ls "$1"' _ src`, policy.Allow},
	}
	bash, err := exec.LookPath("bash")
	for _, c := range cases {
		if err == nil && c.want == policy.Deny {
			out, runErr := exec.Command(bash, "-c", strings.ReplaceAll(c.cmd, "git", "echo")).Output()
			if runErr != nil || strings.TrimSpace(string(out)) != "push origin main" {
				t.Errorf("%s: in bash, %q printed %q (%v), want it to run echo push origin main", c.note, c.cmd, out, runErr)
			}
		}
		d := e.Evaluate(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": c.cmd}), ChannelID: "web"})
		if d.Level != c.want {
			t.Errorf("%s: %q is %s (%s), want %s", c.note, c.cmd, d.Level, d.MatchedRule, c.want)
		}
	}
}
