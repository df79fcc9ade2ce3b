package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/grant"
)

// TestPrintGrants: one line a grant, a digest grant said in words, the time
// left rounded to the second.
func TestPrintGrants(t *testing.T) {
	now := time.Date(2026, 12, 4, 13, 0, 0, 0, time.UTC)
	in := func(d time.Duration) time.Time { return now.Add(d) }
	for _, c := range []struct {
		note   string
		grants []grant.Grant
		want   []string
	}{
		{"none", nil, []string{"no live grants"}},
		{"a session grant", []grant.Grant{{ID: "g_1", ToolName: "bash", Scope: "session", Pattern: "npm test", SessionID: "s1", GrantedBy: "ana", ExpiresAt: in(90 * time.Minute)}},
			[]string{"g_1", "bash", "npm test", "session", "s1", "ana", "1h30m0s"}},
		{"a digest grant", []grant.Grant{{ID: "g_2", ToolName: "mcp__fs__edit_file", Scope: "timed", ArgsDigest: "0123456789abcdef0123", ExpiresAt: in(59 * time.Second)}},
			[]string{"this exact call (sha256 0123456789ab)", "timed", "59s"}},
		{"a long pattern stays on one line", []grant.Grant{{ID: "g_3", ToolName: "bash", Scope: "timed", Pattern: "echo " + strings.Repeat("x", 80) + "\nrm -rf ~", ExpiresAt: in(time.Hour)}},
			[]string{"echo xxx", "…"}},
	} {
		var b bytes.Buffer
		printGrants(&b, c.grants, now)
		out := b.String()
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: %q lacks %q", c.note, out, w)
			}
		}
		if strings.Count(out, "\n") != max(1, len(c.grants)+1) {
			t.Errorf("%s: want one line a grant and a header: %q", c.note, out)
		}
	}
}

// TestGrantsArguments: a bad argument is an error before any request.
func TestGrantsArguments(t *testing.T) {
	for _, c := range []struct {
		note string
		args []string
		want string
	}{
		{"revoke needs an id", []string{"revoke"}, "give one grant id"},
		{"revoke takes one id", []string{"revoke", "a", "b"}, "give one grant id"},
		{"list takes no argument", []string{"extra"}, "unexpected argument"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"grants"}, c.args...), nil, &out, &errb, func(string) string { return "" })
		if code != exitError || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", c.note, code, errb.String(), c.want)
		}
	}
}
