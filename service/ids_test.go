package service_test

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
)

func TestNewID(t *testing.T) {
	taken := map[string]bool{"rule_bash_make_test": true, "rule_bash_make_test_2": true}
	cases := []struct {
		note    string
		prefix  string
		tools   []string
		pattern string
		want    string
	}{
		{note: "tool and pattern, lower-cased", prefix: service.PrefixRule, tools: []string{"Bash"}, pattern: "Git Push *", want: "rule_bash_git_push"},
		{note: "taken ids get a number", prefix: service.PrefixRule, tools: []string{"bash"}, pattern: "make test", want: "rule_bash_make_test_3"},
		{note: "override prefix", prefix: service.PrefixOverride, tools: []string{"read_file"}, pattern: "/tmp/**", want: "override_read_file_tmp"},
		{note: "nothing usable", prefix: service.PrefixRule, tools: nil, pattern: "***", want: "rule_entry"},
	}
	for _, c := range cases {
		if got := service.NewID(c.prefix, c.tools, c.pattern, func(id string) bool { return taken[id] }); got != c.want {
			t.Errorf("%s: got %q, want %q", c.note, got, c.want)
		}
	}
	long := service.NewID(service.PrefixRule, []string{"bash"}, strings.Repeat("a", 500), nil)
	if len(long) > policy.MaxOverrideID {
		t.Errorf("a long pattern gives a %d-byte id, want at most %d", len(long), policy.MaxOverrideID)
	}
}
