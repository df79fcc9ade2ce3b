package redact

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
)

func TestRedact(t *testing.T) {
	cases := []struct {
		note     string
		in       string
		want     string
		mustLose []string
	}{
		{note: "bearer header in curl", in: `curl -H "Authorization: Bearer abc.def-123" https://api.example.com`,
			want: `curl -H "Authorization: Bearer [REDACTED]" https://api.example.com`},
		{note: "basic header", in: `curl -H 'Authorization: Basic dXNlcjpwYXNz' x`, want: `curl -H 'Authorization: Basic [REDACTED]' x`},
		{note: "api key header", in: `curl -H "X-Api-Key: k123" u`, want: `curl -H "X-Api-Key: [REDACTED]" u`},
		{note: "mysql glued password", in: `mysql -u root -pSECRET db`, want: `mysql -u root -p[REDACTED] db`},
		{note: "mysqldump glued password", in: `mysqldump -pS3cr3t! --all-databases`, want: `mysqldump -p[REDACTED] --all-databases`},
		{note: "mkdir -p is not a password", in: `mkdir -p build/out`, want: `mkdir -p build/out`},
		{note: "export aws secret", in: `export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG && aws s3 ls`,
			want: `export AWS_SECRET_ACCESS_KEY=[REDACTED] && aws s3 ls`},
		{note: "quoted assignment", in: `GITHUB_TOKEN="a b c" gh pr list`, want: `GITHUB_TOKEN=[REDACTED] gh pr list`},
		{note: "password flag with equals", in: `psql --password=hunter2 -h db`, want: `psql --password=[REDACTED] -h db`},
		{note: "password flag with space", in: `tool --api-key abc123 run`, want: `tool --api-key [REDACTED] run`},
		{note: "token in url query", in: `curl "https://x.io/cb?token=abc123&page=2"`, want: `curl "https://x.io/cb?token=[REDACTED]&page=2"`},
		{note: "access_token in url", in: `wget https://x.io/?access_token=zz`, want: `wget https://x.io/?access_token=[REDACTED]`},
		{note: "url userinfo", in: `git clone https://bob:pa55@github.com/o/r`, want: `git clone https://bob:[REDACTED]@github.com/o/r`},
		{note: "private key block", in: "echo '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA\nAAAA\n-----END OPENSSH PRIVATE KEY-----' > k",
			want: "echo '-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]-----END OPENSSH PRIVATE KEY-----' > k"},
		{note: "cut-off private key block", in: "-----BEGIN RSA PRIVATE KEY-----\nMIIE", mustLose: []string{"MIIE"}},
		{note: "github token", in: `git push https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/o/r`, mustLose: []string{"ghp_abcdefghij"}},
		{note: "openai style key", in: `echo sk-proj-abcdefghijklmnop1234`, want: `echo [REDACTED]`},
		{note: "aws access key id", in: `echo AKIAIOSFODNN7EXAMPLE`, want: `echo [REDACTED]`},
		{note: "plain command untouched", in: `git status && ls -la /tmp`, want: `git status && ls -la /tmp`},
		{note: "empty", in: ``, want: ``},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			got := Text(c.in)
			if c.want != "" || c.in == "" {
				if got != c.want {
					t.Errorf("Redact(%q)\n got %q\nwant %q", c.in, got, c.want)
				}
			}
			for _, s := range c.mustLose {
				if strings.Contains(got, s) {
					t.Errorf("Redact(%q) = %q still contains %q", c.in, got, s)
				}
			}
		})
	}
}

func TestRedactArgs(t *testing.T) {
	in := map[string]any{
		"command":   "mysql -pSECRET",
		"password":  "hunter2",
		"env":       map[string]any{"API_TOKEN": "t0k", "HOME": "/home/u"},
		"list":      []any{"--token=abc", 3.0},
		"count":     2.0,
		"pin_token": 123456.0,
		"auth":      map[string]any{"user": "me", "code": 4711.0, "scopes": []any{"repo", true}, "none": nil},
	}
	got := Args(in)
	checks := []struct {
		note string
		got  any
		want any
	}{
		{"command redacted", got["command"], "mysql -p[REDACTED]"},
		{"secret key masked whole", got["password"], Redacted},
		{"nested secret key", got["env"].(map[string]any)["API_TOKEN"], Redacted},
		{"nested plain kept", got["env"].(map[string]any)["HOME"], "/home/u"},
		{"list strings redacted", got["list"].([]any)[0], "--token=[REDACTED]"},
		{"numbers kept", got["count"], 2.0},
		{"input untouched", in["password"], "hunter2"},
		{"a number under a secret key masked", got["pin_token"], Redacted},
		{"a string in an object under a secret key", got["auth"].(map[string]any)["user"], Redacted},
		{"a number in an object under a secret key", got["auth"].(map[string]any)["code"], Redacted},
		{"a string in a list under a secret key", got["auth"].(map[string]any)["scopes"].([]any)[0], Redacted},
		{"a boolean under a secret key kept", got["auth"].(map[string]any)["scopes"].([]any)[1], true},
		{"a null under a secret key stays null", got["auth"].(map[string]any)["none"], nil},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.note, c.got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	long := strings.Repeat("x", 1000)
	cases := []struct {
		note string
		tool string
		args map[string]any
		want string
	}{
		{"shell command, redacted", "bash", map[string]any{"command": "export AWS_SECRET_ACCESS_KEY=abc"}, "export AWS_SECRET_ACCESS_KEY=[REDACTED]"},
		{"newlines escaped", "bash", map[string]any{"command": "a\nb"}, `a\nb`},
		{"path tool, path first", "write_file", map[string]any{"path": "a.txt", "content": "hi"}, "path=a.txt content=hi"},
		{"other tool as json", "mcp_fetch_webpage", map[string]any{"url": "https://x/?token=1"}, `{"url":"https://x/?token=[REDACTED]"}`},
		{"no args", "custom", nil, ""},
		{"MCP tool as canonical JSON, redacted", "mcp__db__query", map[string]any{"sql": "select 1 where a < b", "password": "hunter2", "opts": map[string]any{"z": 1.0, "a": "x"}},
			`{"opts":{"a":"x","z":1},"password":"[REDACTED]","sql":"select 1 where a < b"}`},
		{"MCP tool with a path, still JSON", "mcp__fs__read_file", map[string]any{"path": "/ws/a", "token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
			`{"path":"/ws/a","token":"[REDACTED]"}`},
		{"MCP tool, a long value cut alone", "mcp__fs__write_file", map[string]any{"content": strings.Repeat("y", 500), "path": "/ws/b"},
			`{"content":"` + strings.Repeat("y", 80) + `… [420 more bytes not shown]","path":"/ws/b"}`},
	}
	for _, c := range cases {
		if got := Summarize(engine.NewCall(c.tool, c.args)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.note, got, c.want)
		}
	}
	if got := Summarize(engine.NewCall("bash", map[string]any{"command": long})); len(got) > SummaryMax {
		t.Errorf("long summary has %d bytes, want at most %d", len(got), SummaryMax)
	}
}

// TestRedactBareRandomTokens: a generated key passed without a name (echo
// <token>) is masked; a git SHA-1 and ordinary words are not.
func TestRedactBareRandomTokens(t *testing.T) {
	tok := "3f9c1e0a7b2d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6"
	cases := []struct{ in, want string }{
		{"echo " + tok, "echo " + Redacted},
		{"curl -d key=" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd" + " x", "curl -d key=" + Redacted + " x"},
		{"git show 4b825dc642cb6eb9a060e54bf8d69288fbee4904", "git show 4b825dc642cb6eb9a060e54bf8d69288fbee4904"},
		{"npm run build-production-bundle-for-everything-now", "npm run build-production-bundle-for-everything-now"},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.want {
			t.Errorf("Redact(%q): got %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMayHoldSecretMissesNothing: whenever the redaction rules would change
// a text, the shortcut lets them run, on random texts made of secret-like
// and ordinary words in mixed case, with Unicode case folds (K, ſ).
func TestMayHoldSecretMissesNothing(t *testing.T) {
	words := []string{"git", "push", "--token", "TOKEN=", "Authorization:", "Bearer", "x", "=", "://", "user:pw@host",
		"mysql", "-phunter2", "ghp_abcdefghijklmnop1234", "sk-abcdefghijklmn", "AKIAABCDEFGHIJKLMNOP", "-----BEGIN RSA PRIVATE KEY-----",
		"api_key=", "to\u212aen=", "\u017fecret=", "pa\u017f\u017fwd=", "secret", "hunter2", " ", ";", "'q'", `"dq"`,
		"Q2hhbmdlIHRoaXMgdG8gYSByZWFsIHNlY3JldCBiZWZvcmUgdXNl", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3.abcdefghijkl", "npm", "run", "build"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := 1 + rng.IntN(6); n > 0; n-- {
			w := words[rng.IntN(len(words))]
			if rng.IntN(3) == 0 {
				w = strings.ToUpper(w)
			}
			b.WriteString(w)
			if rng.IntN(2) == 0 {
				b.WriteByte(' ')
			}
		}
		s := b.String()
		if applyRedactRules(s) != s && !mayHoldSecret(s) {
			t.Fatalf("mayHoldSecret(%q) = false, but the rules redact it to %q", s, applyRedactRules(s))
		}
	}
}
