package policy

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// testPattern stands in for engine.ValidatePattern (policy cannot import
// the engine): "re:(" does not compile.
func testPattern(p string) error {
	if strings.HasPrefix(p, "re:(") {
		return errors.New("invalid regular expression: missing closing )")
	}
	return nil
}

// TestDecodeOwnerScopesInputRefusals: every refusal names the field and
// says the message the API has always answered.
func TestDecodeOwnerScopesInputRefusals(t *testing.T) {
	cases := []struct {
		note  string
		body  string
		field string
		msg   string
	}{
		{"the earlier shape names the fix", `{"ou_1":{"tools":{"bash":"deny"}}}`, "owner_scopes.ou_1",
			`owner scopes are keyed by channel, then principal: "ou_1" is a scope in toolgate's earlier shape owner_scopes.<principal>.tools; move it under a channel, e.g. owner_scopes.feishu.ou_1`},
		{"the earlier shape with defaults only", `{"ou_1":{"defaults":{"*":"deny"}}}`, "owner_scopes.ou_1",
			`owner scopes are keyed by channel, then principal: "ou_1" is a scope in toolgate's earlier shape owner_scopes.<principal>.tools; move it under a channel, e.g. owner_scopes.feishu.ou_1`},
		{"a channel that is not an object", `{"feishu":"deny"}`, "owner_scopes.feishu",
			"a channel must be an object of principal user id to scope (owner_scopes.<channel>.<principal>)"},
		{"a null channel", `{"feishu":null}`, "owner_scopes.feishu",
			"a channel must be an object of principal user id to scope (owner_scopes.<channel>.<principal>)"},
		{"a scope that is not an object", `{"feishu":{"ou_1":"deny"}}`, "owner_scopes.feishu.ou_1",
			"a scope must be an object with tools and defaults"},
		{"an unknown scope field", `{"feishu":{"ou_1":{"mode":"strict"}}}`, "owner_scopes.feishu.ou_1.mode",
			`unknown field "mode" (allowed: tools, defaults)`},
		{"tools that are not an object", `{"feishu":{"ou_1":{"tools":["bash"]}}}`, "owner_scopes.feishu.ou_1.tools",
			`tools must be an object of tool name to level or {patterns, "*"}`},
		{"an invalid tool level", `{"feishu":{"ou_1":{"tools":{"bash":"never"}}}}`, "owner_scopes.feishu.ou_1.tools.bash",
			`无效级别 "never"，仅允许：allow、ask、deny (field owner_scopes.feishu.ou_1.tools.bash; owner-scope levels are lower case)`},
		{"owner levels are lower case", `{"feishu":{"ou_1":{"tools":{"bash":"Allow"}}}}`, "owner_scopes.feishu.ou_1.tools.bash",
			`无效级别 "Allow"，仅允许：allow、ask、deny (field owner_scopes.feishu.ou_1.tools.bash; owner-scope levels are lower case)`},
		{"a level that is not a string", `{"feishu":{"ou_1":{"tools":{"bash":3}}}}`, "owner_scopes.feishu.ou_1.tools.bash",
			`无效级别 "3"，仅允许：allow、ask、deny (field owner_scopes.feishu.ou_1.tools.bash; owner-scope levels are lower case)`},
		{"an invalid * level", `{"feishu":{"ou_1":{"tools":{"bash":{"*":"maybe"}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.*",
			`无效级别 "maybe"，仅允许：allow、ask、deny (field owner_scopes.feishu.ou_1.tools.bash.*; owner-scope levels are lower case)`},
		{"an unknown tool entry field", `{"feishu":{"ou_1":{"tools":{"bash":{"regex":"deny"}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.regex",
			`unknown field "regex" (allowed: patterns, "*")`},
		{"patterns that are not an object", `{"feishu":{"ou_1":{"tools":{"bash":{"patterns":"deny"}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.patterns",
			`owner_scopes.feishu.ou_1.tools.bash.patterns must be an object of levels such as {"*": "deny"}`},
		{"an invalid pattern level", `{"feishu":{"ou_1":{"tools":{"bash":{"patterns":{"git *":"yes"}}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.patterns['git *']",
			`无效级别 "yes"，仅允许：allow、ask、deny (field owner_scopes.feishu.ou_1.tools.bash.patterns['git *']; owner-scope levels are lower case)`},
		{"a pattern that does not compile", `{"feishu":{"ou_1":{"tools":{"bash":{"patterns":{"re:(":"deny"}}}}}}`, "owner_scopes.feishu.ou_1.tools.bash.patterns['re:(']",
			"invalid regular expression: missing closing )"},
		{"defaults that are not an object", `{"feishu":{"ou_1":{"defaults":"deny"}}}`, "owner_scopes.feishu.ou_1.defaults",
			`owner_scopes.feishu.ou_1.defaults must be an object of levels such as {"*": "deny"}`},
		{"defaults only take *", `{"feishu":{"ou_1":{"defaults":{"bash":"deny"}}}}`, "owner_scopes.feishu.ou_1.defaults.bash",
			`unknown key "bash" (only "*")`},
		{"an invalid defaults level", `{"feishu":{"ou_1":{"defaults":{"*":"Deny"}}}}`, "owner_scopes.feishu.ou_1.defaults.*",
			`无效级别 "Deny"，仅允许：allow、ask、deny (field owner_scopes.feishu.ou_1.defaults.*; owner-scope levels are lower case)`},
		{"the first bad channel in sorted order", `{"b":"x","a":{"ou":"y"}}`, "owner_scopes.a.ou",
			"a scope must be an object with tools and defaults"},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			got, err := DecodeOwnerScopesInput(MappingOf(jsonObject(t, c.body)), testPattern)
			if err == nil {
				t.Fatalf("got %+v, want an error on %s", got, c.field)
			}
			if err.Field != c.field || err.Message != c.msg {
				t.Errorf("got %s: %s\nwant %s: %s", err.Field, err.Message, c.field, c.msg)
			}
		})
	}
}

// TestDecodeOwnerScopesInputPatternKind: a pattern that does not compile
// is ErrBadPattern; other refusals are ErrInvalid.
func TestDecodeOwnerScopesInputPatternKind(t *testing.T) {
	_, err := DecodeOwnerScopesInput(MappingOf(jsonObject(t, `{"f":{"u":{"tools":{"bash":{"patterns":{"re:(":"deny"}}}}}}`)), testPattern)
	if !errors.Is(err, ErrBadPattern) {
		t.Errorf("got %v, want ErrBadPattern", err)
	}
	_, err = DecodeOwnerScopesInput(MappingOf(jsonObject(t, `{"f":"x"}`)), testPattern)
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("got %v, want ErrInvalid", err)
	}
}

// TestDecodeOwnerScopesInput: a valid request decodes to the typed scopes,
// and Map writes back what the request sent.
func TestDecodeOwnerScopesInput(t *testing.T) {
	cases := []struct {
		note string
		body string
		want OwnerScopes
	}{
		{"nothing", `{}`, OwnerScopes{}},
		{"the JiuwenSwarm shape", `{"feishu":{"ou_1":{"tools":{"bash":{"patterns":{"git *":"allow","re:^rm ":"deny"},"*":"ask"},"read_file":"allow"},"defaults":{"*":"deny"}}}}`,
			OwnerScopes{Configured: true, Channels: []OwnerChannel{{Channel: "feishu", Principals: []OwnerScope{{
				Principal: "ou_1",
				Tools: []OwnerTool{
					{Tool: "bash", Level: Ask, Star: true, Patterns: []LegacyPattern{{Pattern: "git *", Level: Allow}, {Pattern: "re:^rm ", Level: Deny}}},
					{Tool: "read_file", Level: Allow},
				},
				Defaults: Deny,
			}}}}}},
		{"an empty channel", `{"feishu":{}}`,
			OwnerScopes{Configured: true, Channels: []OwnerChannel{{Channel: "feishu", Principals: []OwnerScope{}}}}},
		{"empty objects stay", `{"feishu":{"ou_1":{"tools":{"bash":{"patterns":{}},"grep":{}}}}}`,
			OwnerScopes{Configured: true, Channels: []OwnerChannel{{Channel: "feishu", Principals: []OwnerScope{{
				Principal: "ou_1",
				Tools:     []OwnerTool{{Tool: "bash", Patterns: []LegacyPattern{}}, {Tool: "grep"}},
			}}}}}},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			in := jsonObject(t, c.body)
			got, err := DecodeOwnerScopesInput(MappingOf(in), testPattern)
			if err != nil {
				t.Fatalf("got %v, want valid", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
			if back := got.Map(); !reflect.DeepEqual(back, in) {
				t.Errorf("Map: got %v, want %v", back, in)
			}
		})
	}
}

// TestOwnerScopesInputMatchesLenient: what the strict decoding accepts,
// DecodeSection reads to the same OwnerScopes without a problem (one shape,
// two strictnesses).
func TestOwnerScopesInputMatchesLenient(t *testing.T) {
	body := `{"feishu":{"ou_1":{"tools":{"bash":{"patterns":{"git *":"allow"},"*":"ask"},"grep":{},"ls":{"patterns":{}},"read_file":"allow"},"defaults":{"*":"deny"}},"ou_2":{}},"slack":{}}`
	in := jsonObject(t, body)
	strict, err := DecodeOwnerScopesInput(MappingOf(in), testPattern)
	if err != nil {
		t.Fatal(err)
	}
	sec := DecodeSection(map[string]any{"owner_scopes": in})
	if len(sec.Problems) != 0 {
		t.Fatalf("problems: %v", sec.Problems)
	}
	if !reflect.DeepEqual(sec.Owners, strict) {
		t.Errorf("lenient %+v\nstrict %+v", sec.Owners, strict)
	}
}

func jsonObject(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCheckSectionInputOwnerScopes: a whole section's owner_scopes object
// is decoded as the owner-scopes route does, after the other entries;
// owner_scopes of another type are left to the lenient validation.
func TestCheckSectionInputOwnerScopes(t *testing.T) {
	cases := []struct {
		note  string
		sec   string
		field string // "" when the section passes
	}{
		{"valid owner scopes", `{"owner_scopes":{"feishu":{"ou_1":{"tools":{"bash":"deny"}}}}}`, ""},
		{"the earlier shape", `{"owner_scopes":{"ou_1":{"tools":{"bash":"deny"}}}}`, "owner_scopes.ou_1"},
		{"a pattern that does not compile", `{"owner_scopes":{"f":{"u":{"tools":{"bash":{"patterns":{"re:(":"deny"}}}}}}}`, "owner_scopes.f.u.tools.bash.patterns['re:(']"},
		{"rules are checked first", `{"rules":["x"],"owner_scopes":{"ou_1":{"tools":{}}}}`, "rules[0]"},
		{"owner_scopes that are not an object", `{"owner_scopes":"deny"}`, ""},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			err := CheckSectionInput(WrittenOf(jsonObject(t, c.sec)), testPattern)
			got := ""
			if err != nil {
				got = err.Field
			}
			if got != c.field {
				t.Errorf("got %q (%v), want %q", got, err, c.field)
			}
		})
	}
}
