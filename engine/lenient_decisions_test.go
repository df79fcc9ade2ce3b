package engine_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/engine"
)

// lenientDecisionsGolden holds, for every mutated policy of lenientCases, a
// hash of the decisions (level, matched_rule, reason) for lenientCalls. It
// was written by the compiler of the fast start after a reviewer compared the
// same decisions (and the same with no built-in rules) against the
// map-walking compiler of 43bea64: 131,250 decisions, none different. The
// problems golden (lenient-problems.golden) does not see a decoding change
// that keeps the problems but reads a value of another type more loosely
// (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm); this one does. -update-lenient rewrites it too.
const lenientDecisionsGolden = "testdata/lenient-decisions.golden"

// lenientCalls are calls the base policy's rules, tools, overrides,
// external directories and owner scopes decide, in a few spellings.
func lenientCalls() []engine.Request {
	persona := func() *engine.Scope {
		return &engine.Scope{AvatarMode: true, GroupDigitalAvatar: true, PrincipalUserID: "ou_1"}
	}
	sh := func(c string) engine.Request {
		return engine.Request{Call: engine.NewCall("bash", map[string]any{"command": c})}
	}
	rd := func(p string) engine.Request {
		return engine.Request{Call: engine.NewCall("read_file", map[string]any{"path": p})}
	}
	return []engine.Request{
		sh("rm -rf /"), sh("rm x"), sh("'rm' x"), sh("$'rm' x"), sh("r{m,} x"), sh("$UNSET rm x"),
		sh("env rm x"), sh("git status"), sh("git status; rm x"), sh("ls /tmp/x/y"), sh("make t5 all"),
		{Call: engine.NewCall("bash", map[string]any{"cmd": []any{"rm", "x"}})},
		rd("/etc/passwd"), rd("/etc/../etc/passwd"), rd("/tmp/a"), rd("/ws/a"), rd("c:/x"),
		{Call: engine.NewCall("web_fetch", map[string]any{"url": "http://x"})},
		{Call: engine.NewCall("bash", map[string]any{"command": "git log"}), ChannelID: "feishu", Scope: persona()},
		{Call: engine.NewCall("read_file", map[string]any{"path": "/ws/a"}), ChannelID: "feishu", Scope: persona()},
		{Call: engine.NewCall("write_file", map[string]any{"path": "/ws/a"})},
	}
}

// TestLenientDecisionsGolden: the decisions of 3,000 broken policies stay
// as they are: a value of another type anywhere in the policy is read as
// before (docs/configuration.md#validation, D6). Run with -update-lenient after a deliberate
// change, and say why in the commit.
func TestLenientDecisionsGolden(t *testing.T) {
	cases := lenientCases(t)
	calls := lenientCalls()
	opts := engine.Options{Workspace: "/ws", HomeDir: "/home/u"}
	got := make([]string, len(cases))
	for i, c := range cases {
		e, _ := engine.Compile(c, lenientBuiltin, opts)
		h := sha256.New()
		for j := range calls {
			d := e.Evaluate(&calls[j])
			fmt.Fprintf(h, "%v\t%s\t%s\n", d.Level, d.MatchedRule, d.Reason)
		}
		got[i] = fmt.Sprintf("%d %s", i, hex.EncodeToString(h.Sum(nil))[:16])
	}
	checkLenientGolden(t, lenientDecisionsGolden, got, func(i int, got, want string) {
		e, _ := engine.Compile(cases[i], lenientBuiltin, opts)
		for j := range calls {
			d := e.Evaluate(&calls[j])
			t.Logf("case %d call %v: %v %q", i, calls[j].Call.Args(), d.Level, d.MatchedRule)
		}
		t.Errorf("case %d: got %s, want %s; policy %v", i, got, want, cases[i])
	})
}
