package policy

import (
	"net/url"
	"reflect"
	"testing"
)

func TestFormMap(t *testing.T) {
	cases := []struct {
		note string
		form url.Values
		want map[string]any
	}{
		{"fields trimmed, tools split, empty left out", url.Values{
			"tools": {" bash, sh  zsh "}, "pattern": {" rm * "}, "action": {"deny"}, "severity": {""}, "id": {""},
		}, map[string]any{"tools": []any{"bash", "sh", "zsh"}, "pattern": "rm *", "action": "deny"}},
		{"unknown fields ignored", url.Values{"pattern": {"x"}, "csrf_token": {"t"}, "etag": {"e"}},
			map[string]any{"pattern": "x"}},
		{"empty form", url.Values{}, map[string]any{}},
	}
	for _, c := range cases {
		if got := FormMap(c.form); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.note, got, c.want)
		}
	}
}

func TestRuleFromForm(t *testing.T) {
	cases := []struct {
		note      string
		form      url.Values
		wantTools []string
		problem   string // path of the first problem, "" for none
	}{
		{"a rule", url.Values{"tools": {"bash"}, "pattern": {"ls"}, "action": {"ask"}}, []string{"bash"}, ""},
		{"no tools", url.Values{"pattern": {"ls"}, "action": {"ask"}}, nil, "rule.tools"},
		{"bad action", url.Values{"tools": {"bash"}, "pattern": {"ls"}, "action": {"block"}}, []string{"bash"}, "rule.action"},
		{"bad match type", url.Values{"tools": {"bash"}, "pattern": {"ls"}, "match_type": {"url"}}, []string{"bash"}, "rule.match_type"},
	}
	for _, c := range cases {
		r, ps := RuleFromForm(c.form)
		got := ""
		if len(ps) > 0 {
			got = ps[0].Path
		}
		if got != c.problem || !reflect.DeepEqual(r.Tools, c.wantTools) {
			t.Errorf("%s: got tools %v problems %v, want %v and %q", c.note, r.Tools, ps, c.wantTools, c.problem)
		}
	}
	if got := ToolsText([]string{"bash", "sh"}); got != "bash, sh" {
		t.Errorf("ToolsText: got %q", got)
	}
}
