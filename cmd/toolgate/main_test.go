package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestHookFailsClosed checks that every way `toolgate hook` can fail
// exits 2 with the reason on stderr and prints nothing on stdout. The
// servers here stand for something other than toolgate answering at the
// URL (a proxy's page, a redirect); the integration tests run the real
// server.
func TestHookFailsClosed(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<html>proxy login</html>"))
	}))
	defer plain.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://example.invalid/steal", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	unauthorized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"code":"unauthorized","message":"invalid token"}}`))
	}))
	defer unauthorized.Close()
	cases := []struct {
		note   string
		args   []string
		env    map[string]string
		stdin  string
		stderr string
	}{
		{note: "no agent", args: []string{}, stderr: "claude-code, codex or gemini"},
		{note: "an unknown agent", args: []string{"cursor"}, stderr: "claude-code, codex or gemini"},
		{note: "a stray argument", args: []string{"gemini", "extra"}, stderr: "unexpected argument"},
		{note: "no token", args: []string{"gemini"}, env: map[string]string{"TOOLGATE_URL": plain.URL}, stderr: "no API token"},
		{note: "a wait over 600", args: []string{"codex", "--wait", "601"}, stderr: "--wait"},
		{note: "an unknown --hook-ask", args: []string{"gemini", "--hook-ask", "later"}, stderr: "--hook-ask must be wait or agent"},
		{note: "a relative --workspace", args: []string{"codex", "--workspace", "proj"}, stderr: "--workspace must be an absolute"},
		{note: "a 401 blocks", args: []string{"claude-code"}, env: map[string]string{"TOOLGATE_URL": unauthorized.URL, "TOOLGATE_TOKEN": "t"},
			stdin: "{}", stderr: "401"},
		{note: "an answer that is not JSON", args: []string{"claude-code"}, env: map[string]string{"TOOLGATE_URL": plain.URL, "TOOLGATE_TOKEN": "t"},
			stdin: "{}", stderr: "not a JSON object"},
		{note: "a redirect is not followed", args: []string{"claude-code"}, env: map[string]string{"TOOLGATE_URL": redirect.URL, "TOOLGATE_TOKEN": "t"},
			stdin: "{}", stderr: "307"},
		{note: "nothing listens", args: []string{"codex", "--url", "http://127.0.0.1:1"}, env: map[string]string{"TOOLGATE_TOKEN": "t"},
			stdin: "{}", stderr: "cannot reach toolgate"},
		{note: "an event over 1 MiB", args: []string{"gemini"}, env: map[string]string{"TOOLGATE_URL": plain.URL, "TOOLGATE_TOKEN": "t"},
			stdin: strings.Repeat(" ", maxBody+1), stderr: "larger than"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(append([]string{"hook"}, c.args...), strings.NewReader(c.stdin), &out, &errb, env(c.env))
		if code != exitBlock || out.Len() != 0 || !strings.Contains(errb.String(), c.stderr) {
			t.Errorf("%s: exit %d stdout %q stderr %q, want exit 2, no stdout, stderr naming %q", c.note, code, out.String(), errb.String(), c.stderr)
		}
	}
}

// TestPrintConfig checks each snippet: JSON, the server's URL, the wait in
// the URL or command and a timeout above it, and no token.
func TestPrintConfig(t *testing.T) {
	e := env(map[string]string{"TOOLGATE_URL": "https://tg.example:8443/", "TOOLGATE_TOKEN": "tg_secret"})
	cases := []struct {
		note string
		args []string
		want []string
	}{
		{note: "claude http: blocks on failure, sends the agent's home and user", args: []string{"claude-code", "--print-config", "--wait", "45"},
			want: []string{`"url":"https://tg.example:8443/api/v1/hooks/claude-code?on_error=deny&wait_seconds=45"`, `"timeout":60`, `"onFailure":"block"`,
				`"allowedEnvVars":["TOOLGATE_TOKEN","HOME","USER"]`, `"X-Toolgate-Home":"$HOME"`}},
		{note: "claude http with a pinned workspace and ask=agent", args: []string{"claude-code", "--print-config", "--workspace", "/src/my app", "--hook-ask", "agent"},
			want: []string{`?ask=agent&on_error=deny&wait_seconds=120&workspace=%2Fsrc%2Fmy+app"`}},
		{note: "claude command", args: []string{"claude-code", "--print-config", "--command", "--token-file", "/home/a b/token"},
			want: []string{`toolgate hook claude-code --url https://tg.example:8443 --token-file '/home/a b/token' --wait 120`, `"timeout":135`, `"onFailure":"block"`}},
		{note: "codex: both events wait for a person on an ask", args: []string{"codex", "--print-config", "--workspace", "/src/app"},
			want: []string{`"PreToolUse":[{"hooks":[{"command":"toolgate hook codex --url https://tg.example:8443 --wait 120 --workspace /src/app","timeout":135,"type":"command"}]}]`,
				`"PermissionRequest":[{"hooks":[{"command":"toolgate hook codex --url https://tg.example:8443 --wait 120 --workspace /src/app"`}},
		{note: "gemini", args: []string{"gemini", "--print-config", "--wait", "0"},
			want: []string{`"BeforeTool":[{"hooks":[`, `--wait 0"`, `"timeout":15000`, `"matcher":"*"`}},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := run(append([]string{"hook"}, c.args...), strings.NewReader(""), &out, &errb, e); code != exitOK {
			t.Errorf("%s: exit %d %s", c.note, code, errb.String())
			continue
		}
		var v any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Errorf("%s: not JSON: %v", c.note, err)
			continue
		}
		var cb bytes.Buffer
		enc := json.NewEncoder(&cb)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
		compact := strings.TrimSpace(cb.String())
		for _, w := range c.want {
			if !strings.Contains(compact, w) {
				t.Errorf("%s: %s lacks %s", c.note, compact, w)
			}
		}
		if strings.Contains(out.String(), "tg_secret") {
			t.Errorf("%s: the snippet holds the token", c.note)
		}
	}
}

// TestArgList checks --arg KEY=VALUE.
func TestArgList(t *testing.T) {
	cases := []struct {
		note string
		in   []string
		ok   bool
		want argList
	}{
		{note: "two arguments", in: []string{"command=ls -la", "path=/tmp"}, ok: true, want: argList{"command": "ls -la", "path": "/tmp"}},
		{note: "a value with =", in: []string{"command=a=b"}, ok: true, want: argList{"command": "a=b"}},
		{note: "an empty value", in: []string{"command="}, ok: true, want: argList{"command": ""}},
		{note: "no =", in: []string{"command"}},
		{note: "no key", in: []string{"=ls"}},
		{note: "a key twice", in: []string{"command=ls", "command=rm -rf /"}},
	}
	for _, c := range cases {
		a := argList{}
		var err error
		for _, s := range c.in {
			if err = a.Set(s); err != nil {
				break
			}
		}
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok=%v", c.note, err, c.ok)
			continue
		}
		if c.ok {
			got, _ := json.Marshal(a)
			want, _ := json.Marshal(c.want)
			if string(got) != string(want) {
				t.Errorf("%s: got %s, want %s", c.note, got, want)
			}
		}
	}
}

// TestShellQuote checks the quoting of words in hook commands.
func TestShellQuote(t *testing.T) {
	cases := []struct{ note, in, want string }{
		{note: "plain", in: "/usr/local/bin/toolgate", want: "/usr/local/bin/toolgate"},
		{note: "a URL", in: "http://127.0.0.1:8765", want: "http://127.0.0.1:8765"},
		{note: "a space", in: "/home/a b/token", want: "'/home/a b/token'"},
		{note: "a quote", in: "it's", want: `'it'\''s'`},
		{note: "shell syntax", in: "$(rm -rf ~)", want: "'$(rm -rf ~)'"},
		{note: "empty", in: "", want: "''"},
	}
	for _, c := range cases {
		if got := shellQuote(c.in); got != c.want {
			t.Errorf("%s: shellQuote(%q) = %s, want %s", c.note, c.in, got, c.want)
		}
	}
}
