package approval

import "github.com/toolgate/toolgate/redact"

// resolvedArgMax is the longest argument string an answered approval keeps
// in memory, in bytes. An answered ask is kept only to be shown (for a
// while, see Options.Retention) and its full arguments were already
// decided on, so a flood of large asks leaves no large residue.
const resolvedArgMax = 4 << 10

// clipArgs is a copy of args whose strings are cut to resolvedArgMax bytes,
// each cut saying how much it left out (redact.ClipArgs, as the pages cut
// what they show); args itself is not changed, and nil stays nil.
func clipArgs(args map[string]any) map[string]any {
	if args == nil {
		return nil
	}
	return redact.ClipArgs(args, resolvedArgMax)
}
