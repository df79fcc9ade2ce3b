package logcall

import (
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// Change is one logged call whose decision a draft policy changes.
type Change struct {
	Entry    decisionlog.Entry
	From, To engine.Decision
}

// Replay decides each logged call (those logged with their full,
// redacted arguments) under the policy in force and under a draft, and
// returns the calls whose level or matched rule would change. It is the
// impact preview of the API and of the rules page.
func Replay(entries []decisionlog.Entry, current, draft *engine.Engine) []Change {
	var out []Change
	for _, e := range entries {
		if e.Request == nil {
			continue
		}
		req := Request(e.Request)
		from, to := current.Evaluate(req), draft.Evaluate(req)
		if from.Level == to.Level && from.MatchedRule == to.MatchedRule {
			continue
		}
		out = append(out, Change{Entry: e, From: from, To: to})
	}
	return out
}
