package engine

import (
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// FuzzCompileGlob: any pattern compiles (or is refused) and matches without
// panicking.
func FuzzCompileGlob(f *testing.F) {
	for _, s := range []string{"ls *", "**/.ssh/**", "[abc]*", "re:(a|b", "re:(?=x)|y", `C:\x\*`, "?", "re:", " *", "*\\"} {
		f.Add(s, "ls -la /home/u/.ssh/id_rsa")
	}
	f.Fuzz(func(t *testing.T, pattern, value string) {
		m, _, err := compilePattern(pattern)
		if err != nil {
			return
		}
		m.matchShell(value)
		m.matchPath(value)
	})
}

// FuzzEvaluate: random policies (JSON) and calls never panic, and decide
// one of the three levels.
func FuzzEvaluate(f *testing.F) {
	f.Add(`{"schema":"tiered_policy","tools":{"bash":"allow"},"rules":[{"id":"r","tools":["bash"],"pattern":"re:^rm","action":"deny"}],"external_directory":{"*":"ask","/tmp":"allow"}}`,
		"bash", `{"command":"rm -rf / && cat ~/.ssh/x"}`, "web")
	f.Add(`{"tools":{"read_file":{"*":"allow","patterns":{"*.pem":"deny"}}},"defaults":{"*":"ask"}}`, "read_file", `{"path":"C:\\x\\k.pem"}`, "")
	f.Add(`{"owner_scopes":{"u":{"tools":{"bash":"deny"}}}}`, "bash", `{"cmd":"$(id)"}`, "cli")
	f.Add(`{"owner_scopes":{"feishu":{"feishu":{"tools":{"bash":{"patterns":{"re:^rm":"deny","git *":"allow"},"*":"ask"}},"defaults":{"*":"allow"}}}}}`, "bash", `{"command":["rm","-rf","x"],"url":"https://a@b/"}`, "feishu")
	f.Fuzz(func(t *testing.T, perms, tool, args, channel string) {
		var p map[string]any
		if json.Unmarshal([]byte(perms), &p) != nil {
			p = nil
		}
		var a map[string]any
		_ = json.Unmarshal([]byte(args), &a)
		e, _ := Compile(p, nil, testOpts)
		d := e.Evaluate(&Request{Call: NewCall(tool, a), ChannelID: channel, Explain: true,
			Scope: &Scope{AvatarMode: len(tool)%2 == 0, GroupDigitalAvatar: len(args)%2 == 0, PrincipalUserID: channel}})
		if d.Level != policy.Allow && d.Level != policy.Ask && d.Level != policy.Deny {
			t.Fatalf("level %d is not a decision", d.Level)
		}
	})
}
