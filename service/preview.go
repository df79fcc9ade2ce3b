package service

import (
	"context"
	"strings"

	"github.com/toolgate/toolgate/logcall"
	"github.com/toolgate/toolgate/policy"
)

// Preview limits.
const (
	DefaultPreviewCalls = 1000
	MaxPreviewCalls     = 10000
)

// Draft is a change to preview: exactly one of a whole section, a rule to
// add or replace, or the id of a rule to delete. ReplaceID is the id of the
// rule Rule replaces (a rename on the rules page); empty means Rule's own.
type Draft struct {
	Permissions *policy.Written
	// Rule is the rule as given, compiled as written.
	Rule       *policy.Mapping
	ReplaceID  string
	DeleteRule *string
}

// Impact is what a draft would change among the last logged calls.
type Impact struct {
	Replayed int
	Changes  []logcall.Change
	Problems []policy.Problem
}

// Preview replays the last n logged calls (1 to MaxPreviewCalls; 0 means
// DefaultPreviewCalls) against the policy in force and against the draft,
// both compiled with the built-in rules in force and the server's engine
// options, and returns the calls whose level or rule differ. It is the one
// preview of REST, JSON-RPC and the rules page.
func (p *Policy) Preview(ctx context.Context, log RecentDecisions, d Draft, n int) (Impact, error) {
	switch {
	case n == 0:
		n = DefaultPreviewCalls
	case n < 0 || n > MaxPreviewCalls:
		return Impact{}, BadRequest("limit", "limit must be from 1 to %d", MaxPreviewCalls)
	}
	current, _, err := p.Section()
	if err != nil {
		return Impact{}, err
	}
	draft, err := d.apply(current)
	if err != nil {
		return Impact{}, err
	}
	before, _ := p.compileWritten(&current)
	after, problems := p.compileWritten(&draft)
	if problems == nil {
		problems = []policy.Problem{}
	}
	entries, err := log.Recent(ctx, n)
	if err != nil {
		return Impact{}, err
	}
	return Impact{Replayed: len(entries), Changes: logcall.Replay(entries, before, after), Problems: problems}, nil
}

// apply builds the draft section from the section in force.
func (d Draft) apply(current policy.Written) (policy.Written, error) {
	given := 0
	for _, set := range []bool{d.Permissions != nil, d.Rule != nil, d.DeleteRule != nil} {
		if set {
			given++
		}
	}
	if given != 1 {
		return policy.Written{}, BadRequest("", "give exactly one of permissions, rule or delete_rule")
	}
	switch {
	case d.Permissions != nil:
		return *d.Permissions, nil
	case d.Rule != nil:
		rule := policy.EntryOf(d.Rule.Any())
		id := rule.ID
		if strings.TrimSpace(id) == "" {
			return policy.Written{}, BadRequest("rule.id", "rule.id is required to add or replace a rule")
		}
		if d.ReplaceID != "" {
			id = d.ReplaceID
		}
		return withRule(current, id, rule), nil
	}
	draft, found := withoutRule(current, *d.DeleteRule)
	if !found {
		return policy.Written{}, &Error{Kind: KindNotFound, Code: CodeNotFound, Message: "no rule has id " + *d.DeleteRule,
			Details: []Detail{{Field: "delete_rule", Message: "no rule has this id"}}}
	}
	return draft, nil
}

// withRule is section whose rules have rule in the place of the rule with
// the id, or appended when no rule has it (section's entries are not
// changed).
func withRule(section policy.Written, id string, rule policy.Entry) policy.Written {
	rules := section.Rules.Entries
	out := make([]policy.Entry, 0, len(rules)+1)
	replaced := false
	for _, r := range rules {
		if r.ID == id {
			out = append(out, rule)
			replaced = true
			continue
		}
		out = append(out, r)
	}
	if !replaced {
		out = append(out, rule)
	}
	section.Rules = policy.ListOf(out)
	return section
}

// withoutRule is section without the rules with the id, and whether there
// were any.
func withoutRule(section policy.Written, id string) (policy.Written, bool) {
	rules := section.Rules.Entries
	out := make([]policy.Entry, 0, len(rules))
	for _, r := range rules {
		if r.ID != id {
			out = append(out, r)
		}
	}
	section.Rules = policy.ListOf(out)
	return section, len(out) < len(rules)
}
