package service

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/toolgate/toolgate/policy"
)

// Prefixes of the ids NewID makes.
const (
	PrefixRule     = "rule_"
	PrefixOverride = "override_"
)

var idJunk = regexp.MustCompile(`[^a-z0-9]+`)

// NewID is the one generator of ids for rules and approval overrides that
// arrive without one (REST, JSON-RPC, the rules page): prefix, the first
// tool and the pattern, lower-cased with every run of other characters as
// "_", cut to policy.MaxOverrideID bytes; when taken reports the id in use,
// "_2", "_3", ... is appended. The same rule typed on the page or posted to
// the API gets the same id. (Two ids are fixed by the spec instead: an
// "always allow" override's, docs/decisions.md, policy.OverrideID, and a
// /permissions rule's, docs/agents.md#editing-the-policy-over-the-api, CLIRuleID.)
func NewID(prefix string, tools []string, pattern string, taken func(id string) bool) string {
	tool := ""
	if len(tools) > 0 {
		tool = tools[0]
	}
	slug := strings.Trim(idJunk.ReplaceAllString(strings.ToLower(tool+"_"+pattern), "_"), "_")
	if slug == "" {
		slug = "entry"
	}
	base := prefix + slug
	if len(base) > policy.MaxOverrideID-4 { // room for a _NNN suffix
		base = base[:policy.MaxOverrideID-4]
	}
	id := base
	for n := 2; taken != nil && taken(id); n++ {
		id = base + "_" + strconv.Itoa(n)
	}
	return id
}

// CLIRuleID is the id of a rule made by /permissions (docs/agents.md#editing-the-policy-over-the-api, so fixed
// by the spec rather than NewID): cli_rule_<tool>_<pattern>, the pattern
// kept as written except that each whitespace character becomes "_", so
// `ls *` gives cli_rule_bash_ls_*. The same command always yields the same
// id, which is what makes a repeat fall back from create to update.
func CLIRuleID(tool, pattern string) string {
	esc := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return '_'
		}
		return r
	}, pattern)
	return "cli_rule_" + tool + "_" + esc
}

// takenIDs returns a "taken" function over the ids of rules or overrides.
func takenIDs(list []policy.Rule) func(string) bool {
	ids := make(map[string]bool, len(list))
	for i := range list {
		if list[i].ID != "" {
			ids[list[i].ID] = true
		}
	}
	return func(id string) bool { return ids[id] }
}
