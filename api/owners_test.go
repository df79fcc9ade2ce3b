package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestCheckOwnerScopes: owner scopes are checked in the channel ->
// principal shape, and the earlier shape is refused with the fix.
func TestCheckOwnerScopes(t *testing.T) {
	cases := []struct {
		note  string
		body  string
		field string // "" when valid
		msg   string
	}{
		{"the JiuwenSwarm shape", `{"feishu":{"ou_1":{"tools":{"bash":{"patterns":{"git *":"allow","re:^rm ":"deny"},"*":"ask"},"read_file":"allow"},"defaults":{"*":"deny"}}}}`, "", ""},
		{"an empty channel", `{"feishu":{}}`, "", ""},
		{"the earlier shape names the fix", `{"ou_1":{"tools":{"bash":"deny"}}}`, "owner_scopes.ou_1", "move it under a channel, e.g. owner_scopes.feishu.ou_1"},
		{"the earlier shape with defaults only", `{"ou_1":{"defaults":{"*":"deny"}}}`, "owner_scopes.ou_1", "earlier shape"},
		{"a channel that is not an object", `{"feishu":"deny"}`, "owner_scopes.feishu", "principal user id to scope"},
		{"a scope that is not an object", `{"feishu":{"ou_1":"deny"}}`, "owner_scopes.feishu.ou_1", "must be an object"},
		{"an unknown scope field", `{"feishu":{"ou_1":{"mode":"strict"}}}`, "owner_scopes.feishu.ou_1.mode", "unknown field"},
		{"an invalid tool level", `{"feishu":{"ou_1":{"tools":{"bash":"never"}}}}`, "owner_scopes.feishu.ou_1.tools.bash", "无效级别"},
		{"owner levels are lower case", `{"feishu":{"ou_1":{"tools":{"bash":"Allow"}}}}`, "owner_scopes.feishu.ou_1.tools.bash", "lower case"},
		{"an invalid * level", `{"feishu":{"ou_1":{"tools":{"bash":{"*":"maybe"}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.*", "无效级别"},
		{"an invalid pattern level", `{"feishu":{"ou_1":{"tools":{"bash":{"patterns":{"git *":"yes"}}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.patterns['git *']", "无效级别"},
		{"a pattern that does not compile", `{"feishu":{"ou_1":{"tools":{"bash":{"patterns":{"re:(":"deny"}}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.patterns['re:(']", "invalid regular expression"},
		{"an unknown tool entry field", `{"feishu":{"ou_1":{"tools":{"bash":{"regex":"deny"}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.regex", "unknown field"},
		{"defaults only take *", `{"feishu":{"ou_1":{"defaults":{"bash":"deny"}}}}`, "owner_scopes.feishu.ou_1.defaults.bash", "only"},
		{"tools that are not an object", `{"feishu":{"ou_1":{"tools":["bash"]}}}`, "owner_scopes.feishu.ou_1.tools", "must be an object"},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			var scopes map[string]any
			if err := json.Unmarshal([]byte(c.body), &scopes); err != nil {
				t.Fatal(err)
			}
			_, err := decodeOwnerScopes(policy.MappingOf(scopes))
			if c.field == "" {
				if err != nil {
					t.Fatalf("got %v, want valid", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got valid, want an error on %s", c.field)
			}
			if len(err.Details) == 0 || err.Details[0].Field != c.field || !strings.Contains(err.Message, c.msg) {
				t.Errorf("got %+v, want field %s and a message containing %q", err, c.field, c.msg)
			}
		})
	}
}
